//! Strings (`str`): plain (the string itself, every byte above the delimiter, checked value by
//! value), escaped (bytes <= `-` as `-` and two hex digits) or descending (each byte as two
//! inverted hex digits, then `z`). The byte-level forms are `text.rs`'s, shared with `bytes` and
//! `char`.

use std::borrow::Cow;

use crate::bin_io::{BinReader, BinWriter};
use crate::error::{Error, Result};
use crate::field::{DecodeField, KeyField};
use crate::field_spec::FieldSpec;
use crate::io::{KeyReader, KeyWriter, lead_plain_str_at, push_lead_plain_str};
use crate::kinds::Order;
use crate::text;

use super::{Kind, Value};

impl KeyWriter<'_> {
    /// Writes a string (plain, escaped or descending, as the spec says).
    ///
    /// # Errors
    ///
    /// [`Error::CharBelowDelimiter`](crate::Error::CharBelowDelimiter) when a plain string holds a byte at or below the delimiter.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn str(&mut self, spec: &FieldSpec, field: &str, s: &str) -> Result<()> {
        if spec.is_descending() || spec.is_escaped() {
            self.str_encoded(spec, s);
            return Ok(());
        }
        // The plain form, inlined: one scan checks the bytes, one copy writes them.
        if self.try_plain_str(s) {
            Ok(())
        } else {
            Err(Self::below_delimiter(self.delimiter, field, s))
        }
    }

    /// The escaped and descending string forms, which accept every string.
    #[cfg_attr(not(debug_assertions), inline(never))]
    #[cfg_attr(debug_assertions, inline)]
    fn str_encoded(&mut self, spec: &FieldSpec, s: &str) {
        if spec.is_descending() {
            text::write_desc_bytes(self.out, s.as_bytes());
        } else {
            text::write_escaped(self.out, s);
        }
    }

    #[cold]
    #[cfg_attr(not(debug_assertions), inline(never))]
    #[cfg_attr(debug_assertions, inline)]
    fn below_delimiter(delimiter: u8, field: &str, s: &str) -> Error {
        let offset = text::plain_len(s.as_bytes(), delimiter);
        Error::CharBelowDelimiter {
            field: field.to_owned(),
            // At or below an ASCII delimiter: an ASCII byte, a whole character.
            ch: char::from(s.as_bytes()[offset]),
            offset,
            delimiter: char::from(delimiter),
        }
    }

    /// Writes `s` in the plain ascending string form, answering whether it could: nothing is
    /// written for a string with a byte at or below the delimiter.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn try_plain_str(&mut self, s: &str) -> bool {
        self.try_lead_plain_str::<false>(s)
    }

    /// [`KeyWriter::try_plain_str`], after the delimiter when `LEAD` (for a runtime layout, see
    /// [`KeyWriter::delimiter`]); when it declines, it writes nothing, delimiter included.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn try_lead_plain_str<const LEAD: bool>(&mut self, s: &str) -> bool {
        push_lead_plain_str::<LEAD>(self.out, self.delimiter, s)
    }
}

impl<'a> KeyReader<'a> {
    /// Reads a string.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) for a byte the form cannot hold, a bad escape or bad descending text.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn str(&mut self, spec: &FieldSpec, field: &str) -> Result<String> {
        if spec.is_descending() || spec.is_escaped() {
            return self.str_encoded(spec, field);
        }
        // The plain form, inlined: the borrowed read and one allocation.
        let start = self.pos;
        let len = self.plain_str(field)?.len();
        Ok(text::owned_str(self.key, start, len))
    }

    /// The escaped and descending string forms.
    #[cfg_attr(not(debug_assertions), inline(never))]
    #[cfg_attr(debug_assertions, inline)]
    fn str_encoded(&mut self, spec: &FieldSpec, field: &str) -> Result<String> {
        match spec.order() {
            Order::Desc => {
                let start = self.pos;
                let bytes = self.desc_bytes(field)?;
                String::from_utf8(bytes).map_err(|e| {
                    // Each byte is two characters of the key: the bad sequence starts there.
                    let at = start + 2 * e.utf8_error().valid_up_to();
                    Self::fault(field, at, format!("descending string is not UTF-8: {e}"))
                })
            }
            Order::Asc if spec.is_escaped() => {
                let (start, text) = self.take_until_delimiter();
                text::read_escaped(text).map_err(|(at, why)| Self::fault(field, start + at, why))
            }
            Order::Asc => self.plain_str(field).map(str::to_owned),
        }
    }

    /// Reads a plain ascending string as a slice of the key, without allocating: what a borrowing
    /// decode (`&'a str` fields) calls.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidLayout`](crate::Error::InvalidLayout) naming the field when its form is escaped or descending (their
    /// text is not the string's bytes: read them with [`KeyReader::str_cow`] or
    /// [`KeyReader::str`]); [`Error::Malformed`](crate::Error::Malformed) for a byte a plain string cannot hold.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{FieldSpec, IntBits, Kind, KeyShape};
    ///
    /// let shape = KeyShape::new(b',');
    /// let key = String::from("a100,7");
    /// let seller: &str = shape.decode_with(&key, |r| {
    ///     r.begin_field("seller_id")?;
    ///     let seller = r.str_ref(&FieldSpec::new(Kind::Str), "seller_id")?;
    ///     r.begin_field("n")?;
    ///     r.uint64(&FieldSpec::new(Kind::Uint { bits: IntBits::B8 }).with_width(1), "n", 9)?;
    ///     Ok(seller)
    /// })?;
    /// assert_eq!(seller, "a100");
    ///
    /// let escaped = FieldSpec::new(Kind::Str).escaped();
    /// assert!(shape.decode_with("a-2cb", |r| { r.begin_field("s")?; r.str_ref(&escaped, "s") }).is_err());
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    #[inline]
    pub fn str_ref(&mut self, spec: &FieldSpec, field: &str) -> Result<&'a str> {
        if spec.is_descending() || spec.is_escaped() {
            return Err(not_borrowable(field));
        }
        self.plain_str(field)
    }

    /// Reads a string of any form: borrowed from the key when its text is the string (plain
    /// ascending, or escaped text without an escape), owned otherwise.
    ///
    /// # Errors
    ///
    /// As [`KeyReader::str`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::borrow::Cow;
    /// use pk_codec::{FieldSpec, Kind, KeyShape};
    ///
    /// let shape = KeyShape::new(b',');
    /// let escaped = FieldSpec::new(Kind::Str).escaped();
    /// let read = |key| shape.decode_with(key, |r| { r.begin_field("s")?; r.str_cow(&escaped, "s") });
    /// assert!(matches!(read("a100")?, Cow::Borrowed("a100")));
    /// assert_eq!(read("a-2cb")?, "a,b");
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    #[inline]
    pub fn str_cow(&mut self, spec: &FieldSpec, field: &str) -> Result<Cow<'a, str>> {
        match spec.order() {
            Order::Asc if !spec.is_escaped() => self.plain_str(field).map(Cow::Borrowed),
            Order::Asc => {
                let (start, text) = self.take_until_delimiter();
                if !text.as_bytes().contains(&text::ESCAPE) {
                    if let Some((at, why)) = text::escaped_fault(text) {
                        return Err(Self::fault(field, start + at, why));
                    }
                    return Ok(Cow::Borrowed(text));
                }
                text::read_escaped(text)
                    .map(Cow::Owned)
                    .map_err(|(at, why)| Self::fault(field, start + at, why))
            }
            Order::Desc => self.str(spec, field).map(Cow::Owned),
        }
    }

    /// A plain string: the text up to the next delimiter, every byte above it. One scan finds
    /// the end and checks the bytes: the first byte at or below the delimiter must be the
    /// delimiter (or the key must end there).
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn plain_str(&mut self, field: &str) -> Result<&'a str> {
        match self.try_plain_str() {
            Some(s) => Ok(s),
            None => Err(Self::not_plain(self.key, self.pos, self.delimiter, field)),
        }
    }

    /// [`KeyReader::plain_str`] answering `None`, consuming nothing, for a byte a plain string
    /// cannot hold (the caller's general path then says what is wrong).
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn try_plain_str(&mut self) -> Option<&'a str> {
        let start = self.pos;
        let rest = &self.key.as_bytes()[start..];
        let len = text::plain_len(rest, self.delimiter);
        if rest.get(len).is_some_and(|&b| b != self.delimiter) {
            return None;
        }
        self.pos += len;
        // The byte after the text is the ASCII delimiter or the end: a character boundary.
        Some(&self.key[start..start + len])
    }

    /// [`KeyReader::try_plain_str`] for a runtime layout, as [`KeyReader::lead_uint64_fast`]:
    /// after the delimiter when `LEAD`, counting the field as begun; declining, it consumes and
    /// counts nothing.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn lead_try_plain_str<const LEAD: bool>(&mut self) -> Option<&'a str> {
        let (s, end) = lead_plain_str_at::<LEAD>(self.key, self.pos, self.delimiter)?;
        self.pos = end;
        self.fields += 1;
        Some(s)
    }

    /// What [`KeyReader::try_plain_str`] declined: the first byte a plain string cannot hold.
    #[cold]
    #[cfg_attr(not(debug_assertions), inline(never))]
    #[cfg_attr(debug_assertions, inline)]
    fn not_plain(key: &str, pos: usize, delimiter: u8, field: &str) -> Error {
        let rest = &key.as_bytes()[pos..];
        let len = text::plain_len(rest, delimiter);
        match rest.get(len) {
            Some(&b) => Self::below_delimiter(delimiter, field, pos + len, b),
            None => Self::fault(field, pos, "a plain string was expected"),
        }
    }

    #[cold]
    #[cfg_attr(not(debug_assertions), inline(never))]
    #[cfg_attr(debug_assertions, inline)]
    fn below_delimiter(delimiter: u8, field: &str, at: usize, b: u8) -> Error {
        Self::fault(
            field,
            at,
            format!(
                "{:?} sorts below the delimiter {:?}, so no plain string holds it",
                char::from(b),
                char::from(delimiter)
            ),
        )
    }
}

ref_field!(
    str => Kind::Str, str;
    String => Kind::Str, str;
    Cow<'_, str> => Kind::Str, str;
);
decode_field!(String, str);

impl From<String> for Value {
    #[cfg_attr(debug_assertions, inline)]
    fn from(v: String) -> Self {
        Self::Str(v)
    }
}

impl From<&str> for Value {
    #[cfg_attr(debug_assertions, inline)]
    fn from(v: &str) -> Self {
        Self::Str(v.to_owned())
    }
}

#[cold]
#[cfg_attr(not(debug_assertions), inline(never))]
#[cfg_attr(debug_assertions, inline)]
fn not_borrowable(field: &str) -> Error {
    Error::layout(
        Some(field),
        "only a plain ascending string can be borrowed from the key: its escaped or descending \
         text is not the string's bytes (read it as a `String` or a `Cow<str>`)",
    )
}

#[cfg_attr(debug_assertions, inline)]
pub(super) const fn expects(_: Kind) -> &'static str {
    "a string"
}

value_io!(Str, str, borrow);

#[cfg_attr(debug_assertions, inline)]
pub(super) fn parse_text(_: &FieldSpec, text: &str) -> Result<Value, &'static str> {
    Ok(Value::Str(text.to_owned()))
}

// ---- The binary form: the UTF-8 bytes escaped and terminated (`text.rs`'s
// `write_bin_escaped`: `0x00` as `0x00 0xff`, then `0x00 0x01`), inverted when descending. Any
// string: the binary form has no delimiter to stay above.

impl BinWriter<'_> {
    /// Writes a string in the binary form.
    #[inline]
    pub fn str(&mut self, spec: &FieldSpec, field: &str, s: &str) {
        let _ = field;
        text::write_bin_escaped(self.out, s.as_bytes(), spec.is_descending());
    }
}

impl BinReader<'_> {
    /// Reads a string in the binary form.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] for a missing end mark, a bad escape or bytes that are not UTF-8.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn str(&mut self, spec: &FieldSpec, field: &str) -> Result<String> {
        // Ascending, no escape (most strings): one scan and one fixed-size copy, inlined.
        if !spec.is_descending()
            && let Some((s, used)) = text::read_bin_plain_str(&self.key[self.pos..])
        {
            self.pos += used;
            return Ok(s);
        }
        self.str_general(spec, field)
    }

    /// [`BinReader::str`] of a descending or escaped string, or of bytes that are not one.
    #[cfg_attr(not(debug_assertions), inline(never))]
    #[cfg_attr(debug_assertions, inline)]
    fn str_general(&mut self, spec: &FieldSpec, field: &str) -> Result<String> {
        let start = self.pos;
        let bytes = self.bytes_form(spec, field)?;
        String::from_utf8(bytes).map_err(|e| {
            self.pos = start;
            Self::fault(field, start, format!("the string is not UTF-8: {e}"))
        })
    }

    /// The escaped and terminated bytes of a string or byte string field.
    #[inline]
    pub(crate) fn bytes_form(&mut self, spec: &FieldSpec, field: &str) -> Result<Vec<u8>> {
        let start = self.pos;
        let (bytes, used) = text::read_bin_escaped(&self.key[start..], spec.is_descending())
            .map_err(|(at, why)| Self::fault(field, start + at, why))?;
        self.pos += used;
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::Kind;
    use crate::shape::KeyShape;

    const SHAPE: KeyShape = KeyShape::new(b',');

    fn read<'k, T>(key: &'k str, body: impl FnOnce(&mut KeyReader<'k>) -> Result<T>) -> Result<T> {
        SHAPE.decode_with(key, |r| {
            r.begin_field("s")?;
            body(r)
        })
    }

    #[test]
    fn str_ref_borrows_plain_text_and_names_the_field_of_other_forms() {
        let plain = FieldSpec::new(Kind::Str);
        assert_eq!(read("a100", |r| r.str_ref(&plain, "s")).unwrap(), "a100");
        for spec in [plain.escaped(), plain.descending()] {
            match read("a100", |r| r.str_ref(&spec, "seller")) {
                Err(Error::InvalidLayout { field, .. }) => {
                    assert_eq!(field.as_deref(), Some("seller"));
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn plain_reads_report_the_byte_below_the_delimiter_at_its_position() {
        let plain = FieldSpec::new(Kind::Str);
        for key in ["ab c", "ab\u{1}c"] {
            let owned = read(key, |r| r.str(&plain, "s")).unwrap_err();
            let borrowed = read(key, |r| r.str_ref(&plain, "s")).unwrap_err();
            assert_eq!(owned, borrowed);
            assert!(
                matches!(owned, Error::Malformed { position: 2, .. }),
                "{owned:?}"
            );
        }
    }

    #[test]
    fn str_cow_borrows_when_the_text_is_the_string() {
        let escaped = FieldSpec::new(Kind::Str).escaped();
        assert!(matches!(
            read("a.b", |r| r.str_cow(&escaped, "s")).unwrap(),
            Cow::Borrowed("a.b")
        ));
        assert_eq!(read("a-2cb", |r| r.str_cow(&escaped, "s")).unwrap(), "a,b");
        assert!(matches!(
            read("a b", |r| r.str_cow(&escaped, "s")),
            Err(Error::Malformed { position: 1, .. })
        ));
        let desc = FieldSpec::new(Kind::Str).descending();
        let mut key = String::new();
        text::write_desc_bytes(&mut key, b"ab");
        assert_eq!(read(&key, |r| r.str_cow(&desc, "s")).unwrap(), "ab");
        assert_eq!(
            read(&key, |r| r.str_cow(&desc, "s")).unwrap(),
            read(&key, |r| r.str(&desc, "s")).unwrap()
        );
    }
}
