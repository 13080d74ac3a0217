//! Characters (`char`): a one-character escaped string; descending, as a descending string
//! (`text.rs`'s forms).

use crate::bin_io::{BinReader, BinWriter};
use crate::error::Result;
use crate::field::{DecodeField, KeyField};
use crate::field_spec::FieldSpec;
use crate::io::{KeyReader, KeyWriter};
use crate::kinds::Order;
use crate::text;

use super::{Kind, Value};

impl KeyWriter<'_> {
    /// Writes a character.
    #[cfg_attr(debug_assertions, inline)]
    pub fn char(&mut self, spec: &FieldSpec, field: &str, c: char) {
        // Every value has this form: the name is taken to mirror the reader, not for errors.
        let _ = field;
        let mut buf = [0u8; 4];
        let s = c.encode_utf8(&mut buf);
        match spec.order() {
            Order::Asc => text::write_escaped(self.out, s),
            Order::Desc => text::write_desc_bytes(self.out, s.as_bytes()),
        }
    }
}

impl<'a> KeyReader<'a> {
    /// Reads a character.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) unless the field holds exactly one character in the field's form.
    #[cfg_attr(debug_assertions, inline)]
    pub fn char(&mut self, spec: &FieldSpec, field: &str) -> Result<char> {
        let start = self.pos;
        let s = match spec.order() {
            Order::Asc => {
                let (start, text) = self.take_until_delimiter();
                text::read_escaped(text).map_err(|(at, why)| Self::fault(field, start + at, why))?
            }
            Order::Desc => String::from_utf8(self.desc_bytes(field)?)
                .map_err(|_| Self::fault(field, start, "descending character is not UTF-8"))?,
        };
        let mut chars = s.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => Ok(c),
            _ => Err(Self::fault(
                field,
                start,
                format!(
                    "expected one character, found {} ({s:?})",
                    s.chars().count()
                ),
            )),
        }
    }
}

copy_field!(char => Kind::Char, char);

impl From<char> for Value {
    #[cfg_attr(debug_assertions, inline)]
    fn from(v: char) -> Self {
        Self::Char(v)
    }
}

#[cfg_attr(debug_assertions, inline)]
pub(super) const fn expects(_: Kind) -> &'static str {
    "a character"
}

value_io!(Char, char, copy);

#[cfg_attr(debug_assertions, inline)]
pub(super) fn parse_text(_: &FieldSpec, text: &str) -> Result<Value, &'static str> {
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => Ok(Value::Char(c)),
        _ => Err("one character"),
    }
}

// ---- The binary form: the scalar value as 4 big-endian bytes, inverted when descending.

impl BinWriter<'_> {
    /// Writes a character in the binary form.
    #[inline]
    pub fn char(&mut self, spec: &FieldSpec, field: &str, c: char) {
        let _ = field;
        self.put(&u32::from(c).to_be_bytes(), spec.is_descending());
    }
}

impl BinReader<'_> {
    /// Reads a character in the binary form.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) unless the 4 bytes are a Unicode scalar value.
    #[cfg_attr(debug_assertions, inline)]
    pub fn char(&mut self, spec: &FieldSpec, field: &str) -> Result<char> {
        let start = self.pos;
        let v = u32::from_be_bytes(self.take_array::<4>(field, spec.is_descending())?);
        char::from_u32(v).ok_or_else(|| {
            self.pos = start;
            Self::fault(
                field,
                start,
                format!("{v:#x} is not a Unicode scalar value"),
            )
        })
    }
}
