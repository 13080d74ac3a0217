//! The typed side: [`KeyPart`] for a derived key's fields, [`PartitionKey`] and [`DecodeKey`] for
//! whole keys.

use std::borrow::Cow;

use crate::bin_io::{BinReader, BinWriter};
use crate::error::{Error, Result};
use crate::field::{DecodeField, KeyField, read_optional};
use crate::field_spec::FieldSpec;
use crate::io::{KeyReader, KeyWriter};
use crate::kinds::Form;
use crate::layout::Layout;
use crate::prefix::BucketValue;
use crate::scratch::encode_new;
use crate::shape::KeyShape;

/// One field of a derived key, as the field's type says: a [`KeyField`] value (every `KeyField`
/// type is one), or a whole key spliced in (`#[derive(PartitionKey)]` implements it for the key).
///
/// The derive writes, reads, checks and describes every field whose type it cannot name by
/// syntax through this trait, so a type alias (`type DeviceId = u32`), a type parameter or a new
/// field kind is exactly what its impls say, and a derived key can be a field of another.
///
/// # Examples
///
/// ```
/// use pk_codec::{DecodeKey, KeyPart, PartitionKey};
///
/// type DeviceId = u32;
///
/// #[derive(PartitionKey, Debug, PartialEq)]
/// struct Card {
///     #[pk(width = 6)]
///     device: DeviceId,
///     seller: String,
/// }
///
/// let key = Card { device: 54, seller: "a100".into() }.encode()?;
/// assert_eq!(key, "000054,a100");
/// assert_eq!(Card::decode(&key)?.device, 54);
/// assert!(!<DeviceId as KeyPart>::NESTED && <Card as KeyPart>::NESTED);
/// # Ok::<(), pk_codec::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a field of a key",
    label = "neither a key field nor a key",
    note = "a field is an integer, String, &str, Vec<u8>, &[u8], bool, char or an Option of one of them, \
            or a struct that derives `PartitionKey` (spliced in)"
)]
pub trait KeyPart {
    /// Whether the part is a whole key spliced in (its own fields, each after the delimiter).
    const NESTED: bool;

    /// The field's spec before the field's attributes: [`FieldSpec::of`] for a [`KeyField`];
    /// unused for a nested key.
    const BASE_SPEC: FieldSpec;

    /// For a nested key, its [`PartitionKey::FIELD_FLOOR`]; `u8::MAX` otherwise.
    const NESTED_FLOOR: u8 = u8::MAX;

    /// Writes the part: [`KeyWriter::begin_field`] then the value for a field, each field of the
    /// key for a nested key.
    ///
    /// # Errors
    ///
    /// As [`KeyField::encode_field`] and [`PartitionKey::write_fields`].
    fn write_part(&self, spec: &FieldSpec, field: &str, w: &mut KeyWriter<'_>) -> Result<()>;

    /// Writes the part in the binary form: the value for a field, each field of the key, one
    /// after another, for a nested key (binary forms are self-delimiting).
    ///
    /// # Errors
    ///
    /// As [`KeyField::encode_field_binary`] and [`PartitionKey::write_fields_binary`].
    fn write_part_binary(&self, spec: &FieldSpec, field: &str, w: &mut BinWriter<'_>)
    -> Result<()>;

    /// The value a modulo bucket prefix takes of this part ([`KeyField`] integers only).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    fn part_bucket_value(&self) -> Option<BucketValue> {
        None
    }

    /// Appends the part's fields to a runtime layout's field list: `(field, spec)` for a field,
    /// `(field.sub, spec)` for each field of a nested key.
    fn layout_fields(field: &str, spec: FieldSpec, out: &mut Vec<(String, FieldSpec)>);
}

/// A [`KeyPart`] that can be read back.
pub trait DecodePart: KeyPart + Sized {
    /// Reads the part, the mirror of [`KeyPart::write_part`].
    ///
    /// # Errors
    ///
    /// As [`DecodeField::decode_field`] and [`DecodeKey::read_fields`].
    fn read_part(spec: &FieldSpec, field: &str, r: &mut KeyReader<'_>) -> Result<Self>;

    /// Reads the part in the binary form, the mirror of [`KeyPart::write_part_binary`].
    ///
    /// # Errors
    ///
    /// As [`DecodeField::decode_field_binary`] and [`DecodeKey::read_fields_binary`].
    fn read_part_binary(spec: &FieldSpec, field: &str, r: &mut BinReader<'_>) -> Result<Self>;
}

impl<T: KeyField + ?Sized> KeyPart for T {
    const NESTED: bool = false;
    const BASE_SPEC: FieldSpec = FieldSpec::of::<T>();

    #[inline]
    fn write_part(&self, spec: &FieldSpec, field: &str, w: &mut KeyWriter<'_>) -> Result<()> {
        w.begin_field();
        self.encode_field(spec, field, w)
    }

    #[inline]
    fn write_part_binary(
        &self,
        spec: &FieldSpec,
        field: &str,
        w: &mut BinWriter<'_>,
    ) -> Result<()> {
        self.encode_field_binary(spec, field, w)
    }

    #[inline]
    fn part_bucket_value(&self) -> Option<BucketValue> {
        self.bucket_value()
    }

    #[cfg_attr(debug_assertions, inline)]
    fn layout_fields(field: &str, spec: FieldSpec, out: &mut Vec<(String, FieldSpec)>) {
        out.push((field.to_owned(), spec));
    }
}

impl<T: DecodeField> DecodePart for T {
    #[inline]
    fn read_part(spec: &FieldSpec, field: &str, r: &mut KeyReader<'_>) -> Result<Self> {
        r.begin_field(field)?;
        T::decode_field(spec, field, r)
    }

    #[inline]
    fn read_part_binary(spec: &FieldSpec, field: &str, r: &mut BinReader<'_>) -> Result<Self> {
        T::decode_field_binary(spec, field, r)
    }
}

/// A [`KeyPart`] read back borrowing from the key where it can: every [`DecodePart`] (owned), a
/// `&str` of a plain ascending string (the key's own text), and a `Cow<str>` of any string form
/// (borrowed unless escapes must be undone).
///
/// What `#[derive(PartitionKey)]` reads the fields of a borrowing struct with, in
/// [`BorrowDecodeKey`].
pub trait BorrowDecodePart<'de>: Sized {
    /// Whether the value is the key's text itself (a `&str`), so the field must be a plain
    /// ascending string (the rulebook's `borrowed-str-form`).
    const BORROWS_TEXT: bool = false;

    /// Reads the part, borrowing from the key where it can.
    ///
    /// # Errors
    ///
    /// As [`DecodePart::read_part`].
    fn read_part_borrowed(spec: &FieldSpec, field: &str, r: &mut KeyReader<'de>) -> Result<Self>;
}

impl<'de, T: DecodePart> BorrowDecodePart<'de> for T {
    #[inline]
    fn read_part_borrowed(spec: &FieldSpec, field: &str, r: &mut KeyReader<'de>) -> Result<Self> {
        T::read_part(spec, field, r)
    }
}

impl<'de> BorrowDecodePart<'de> for &'de str {
    const BORROWS_TEXT: bool = true;
    #[inline]
    fn read_part_borrowed(spec: &FieldSpec, field: &str, r: &mut KeyReader<'de>) -> Result<Self> {
        r.begin_field(field)?;
        r.str_ref(spec, field)
    }
}

impl<'de> BorrowDecodePart<'de> for Option<&'de str> {
    const BORROWS_TEXT: bool = true;
    #[inline]
    fn read_part_borrowed(spec: &FieldSpec, field: &str, r: &mut KeyReader<'de>) -> Result<Self> {
        r.begin_field(field)?;
        read_optional(spec, field, r, |r| r.str_ref(spec, field))
    }
}

impl<'de> BorrowDecodePart<'de> for Cow<'de, str> {
    #[inline]
    fn read_part_borrowed(spec: &FieldSpec, field: &str, r: &mut KeyReader<'de>) -> Result<Self> {
        r.begin_field(field)?;
        r.str_cow(spec, field)
    }
}

impl<'de> BorrowDecodePart<'de> for Option<Cow<'de, str>> {
    #[inline]
    fn read_part_borrowed(spec: &FieldSpec, field: &str, r: &mut KeyReader<'de>) -> Result<Self> {
        r.begin_field(field)?;
        read_optional(spec, field, r, |r| r.str_cow(spec, field))
    }
}

/// A [`PartitionKey`] read back borrowing its strings from the key: what `#[derive(PartitionKey)]`
/// implements for a struct with a lifetime whose fields are `&str`, `Cow<str>` or owned
/// decodable types. No allocation for plain strings, as storekey's `BorrowDecode`.
///
/// # Examples
///
/// ```
/// use pk_codec::{BorrowDecodeKey, PartitionKey};
///
/// #[derive(PartitionKey, Debug, PartialEq)]
/// struct CardRef<'a> {
///     #[pk(width = 6)]
///     device_id: u32,
///     seller_id: &'a str,
/// }
///
/// let key = String::from("000054,a100");
/// let card = CardRef::decode_borrowed(&key)?;
/// assert_eq!(card, CardRef { device_id: 54, seller_id: "a100" });
/// assert!(std::ptr::eq(card.seller_id.as_ptr(), key[7..].as_ptr())); // no copy
/// # Ok::<(), pk_codec::Error>(())
/// ```
pub trait BorrowDecodeKey<'de>: PartitionKey + Sized {
    /// Reads this type's fields, borrowing, without the prefix: how it is read as a nested key.
    ///
    /// # Errors
    ///
    /// As [`BorrowDecodeKey::decode_borrowed`].
    fn read_fields_borrowed(r: &mut KeyReader<'de>) -> Result<Self>;

    /// Decodes a key, borrowing strings from it.
    ///
    /// # Errors
    ///
    /// As [`DecodeKey::decode`].
    fn decode_borrowed(key: &'de str) -> Result<Self>;
}

/// A type whose values are whole keys: what `#[derive(PartitionKey)]` implements (see
/// [`_derive`](crate::_derive) for its attributes and the typed range constructors it adds).
///
/// # Examples
///
/// ```
/// use pk_codec::{DecodeKey, PartitionKey};
///
/// #[derive(PartitionKey, Debug, PartialEq)]
/// struct Card {
///     #[pk(width = 6)]
///     device_id: u32,
///     seller_id: String,
///     card_id: u64,
/// }
///
/// let card = Card { device_id: 54, seller_id: "a100".into(), card_id: 6777 };
/// let key = card.encode()?;
/// assert_eq!(key, "000054,a100,00000000000000006777");
/// assert_eq!(Card::decode(&key)?, card);
/// # Ok::<(), pk_codec::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a key type",
    label = "does not implement `PartitionKey`",
    note = "a field whose type is not an integer, String, &str, Vec<u8>, &[u8], bool, char or Option of one of them \
            is spliced in as a nested key: derive `PartitionKey` for its type"
)]
pub trait PartitionKey {
    /// The key's delimiter, prefix and length limit.
    const SHAPE: KeyShape;

    /// The lowest byte that a variable-length form of one of this key's fields can hold,
    /// `u8::MAX` when none constrains the delimiter. A key spliced into another key is written
    /// with the outer key's delimiter, which must sort below this byte (the derive checks it at
    /// compile time). Hand-written impls that keep the default promise nothing of the kind.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::PartitionKey;
    ///
    /// #[derive(PartitionKey)]
    /// struct Fixed(u32, bool);
    /// #[derive(PartitionKey)]
    /// struct Named(#[pk(escaped)] String, #[pk(desc)] Vec<u8>);
    ///
    /// assert_eq!(Fixed::FIELD_FLOOR, u8::MAX); // fixed-width fields never meet the delimiter
    /// assert_eq!(Named::FIELD_FLOOR, b'-'); // escaped strings hold `-`
    /// ```
    const FIELD_FLOOR: u8 = u8::MAX;

    /// The form `layout()` answers (`#[pk(form = binary)]`; [`Form::Text`] by default). Both
    /// forms are written whatever it says: [`PartitionKey::encode`] the text form,
    /// [`PartitionKey::encode_binary`] the binary form.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{Form, PartitionKey, Value};
    ///
    /// #[derive(PartitionKey)]
    /// #[pk(form = binary)]
    /// struct Card {
    ///     #[pk(width = 6)]
    ///     device_id: u32,
    ///     seller_id: String,
    /// }
    ///
    /// assert_eq!(Card::FORM, Form::Binary);
    /// let card = Card { device_id: 54, seller_id: "a100".into() };
    /// let values = [Value::from(54u32), Value::from("a100")];
    /// assert_eq!(Card::layout().encode_bytes(&values)?, card.encode_binary()?);
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    const FORM: Form = Form::Text;

    /// The same layout as a runtime [`Layout`], for tools, docs and comparisons, in the key's
    /// [`PartitionKey::FORM`].
    fn layout() -> Layout;

    /// Writes this value's fields, each after [`KeyWriter::begin_field`], without the prefix: how
    /// a key type is spliced inline as a field of another key.
    ///
    /// # Errors
    ///
    /// As [`PartitionKey::encode_into`].
    fn write_fields(&self, w: &mut KeyWriter<'_>) -> Result<()>;

    /// Appends the key to `out`, allocating only if `out` lacks room. On error `out` is unchanged.
    ///
    /// # Errors
    ///
    /// [`Error::ValueTooWide`](crate::Error::ValueTooWide),
    /// [`Error::CharBelowDelimiter`](crate::Error::CharBelowDelimiter),
    /// [`Error::KeyTooLong`](crate::Error::KeyTooLong).
    fn encode_into(&self, out: &mut String) -> Result<()>;

    /// The key as a new `String`, allocated once at the key's length.
    ///
    /// # Errors
    ///
    /// As [`PartitionKey::encode_into`].
    #[cfg_attr(debug_assertions, inline)]
    fn encode(&self) -> Result<String> {
        encode_new(|out| self.encode_into(out))
    }

    /// Writes this value's fields in the binary form, one after another, without the prefix:
    /// how a key type is spliced into a binary key as a field of another. The derive writes it;
    /// a hand-written impl that keeps this default has no binary form (every binary method
    /// answers [`Error::InvalidLayout`](crate::Error::InvalidLayout)).
    ///
    /// # Errors
    ///
    /// As [`PartitionKey::encode_binary_into`].
    #[cfg_attr(debug_assertions, inline)]
    fn write_fields_binary(&self, w: &mut BinWriter<'_>) -> Result<()> {
        let _ = w;
        Err(no_binary_form::<Self>())
    }

    /// Appends the binary key (see [`Form::Binary`]) to `out`: the prefix's bytes, then each
    /// field's binary form. On error `out` is unchanged.
    ///
    /// # Errors
    ///
    /// As [`PartitionKey::encode_into`].
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::PartitionKey;
    ///
    /// #[derive(PartitionKey)]
    /// struct Card {
    ///     #[pk(width = 6)]
    ///     device_id: u32,
    ///     seller_id: String,
    /// }
    ///
    /// let mut key = Vec::new();
    /// Card { device_id: 54, seller_id: "a100".into() }.encode_binary_into(&mut key)?;
    /// assert_eq!(key, [0, 0, 54, b'a', b'1', b'0', b'0', 0, 1]);
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    #[cfg_attr(debug_assertions, inline)]
    fn encode_binary_into(&self, out: &mut Vec<u8>) -> Result<()> {
        Self::SHAPE.encode_bytes_with(out, |w| self.write_fields_binary(w))
    }

    /// The binary key as a new `Vec<u8>`, allocated once at the key's length.
    ///
    /// # Errors
    ///
    /// As [`PartitionKey::encode_into`].
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{DecodeKey, PartitionKey};
    ///
    /// #[derive(PartitionKey, Debug, PartialEq)]
    /// struct Reading {
    ///     #[pk(desc)]
    ///     ts: u64,
    ///     sensor: Option<String>,
    /// }
    ///
    /// let r = Reading { ts: 1_700_000_000_000, sensor: None };
    /// let key = r.encode_binary()?;
    /// assert_eq!(key.len(), 8 + 1); // the u64, then the marker of `None`
    /// assert_eq!(Reading::decode_binary(&key)?, r);
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    #[cfg_attr(debug_assertions, inline)]
    fn encode_binary(&self) -> Result<Vec<u8>> {
        encode_new(|out| self.encode_binary_into(out))
    }
}

/// The error of a hand-written key type without a binary form.
#[cold]
fn no_binary_form<K: ?Sized>() -> Error {
    Error::layout(
        None,
        format!(
            "`{}` has no binary form: its key impl is hand-written without `write_fields_binary` \
             and `read_fields_binary` (derive `PartitionKey` to have both forms)",
            std::any::type_name::<K>()
        ),
    )
}

/// A [`PartitionKey`] that can be read back from its key.
pub trait DecodeKey: PartitionKey + Sized {
    /// Reads this type's fields, each after [`KeyReader::begin_field`], without the prefix.
    ///
    /// # Errors
    ///
    /// As [`DecodeKey::decode`].
    fn read_fields(r: &mut KeyReader<'_>) -> Result<Self>;

    /// Decodes a key.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) with the byte position,
    /// [`Error::PrefixMismatch`](crate::Error::PrefixMismatch).
    fn decode(key: &str) -> Result<Self>;

    /// Reads this type's fields in the binary form, without the prefix: how it is read as a
    /// nested key of a binary key. A hand-written impl that keeps this default has no binary
    /// form.
    ///
    /// # Errors
    ///
    /// As [`DecodeKey::decode_binary`].
    #[cfg_attr(debug_assertions, inline)]
    fn read_fields_binary(r: &mut BinReader<'_>) -> Result<Self> {
        let _ = r;
        Err(no_binary_form::<Self>())
    }

    /// Decodes a binary key (see [`PartitionKey::encode_binary`]). A key whose fields borrow
    /// from the text key (`&str`, `&[u8]`) encodes only, in both forms: it has no `DecodeKey`,
    /// so no `decode_binary` either.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) with the byte position for any bytes the
    /// key type would not write, [`Error::PrefixMismatch`](crate::Error::PrefixMismatch).
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{DecodeKey, PartitionKey};
    ///
    /// #[derive(PartitionKey, Debug, PartialEq)]
    /// #[pk(buckets(count = 16, modulo = device_id))]
    /// struct Card {
    ///     #[pk(width = 6)]
    ///     device_id: u32,
    ///     seller_id: String,
    /// }
    ///
    /// let card = Card { device_id: 54, seller_id: "a100".into() };
    /// let key = card.encode_binary()?;
    /// assert_eq!(key[0], 54 % 16); // the bucket, one byte
    /// assert_eq!(Card::decode_binary(&key)?, card);
    /// let err = Card::decode_binary(&key[..key.len() - 1]).unwrap_err();
    /// assert!(err.to_string().contains("seller_id"), "{err}");
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    #[cfg_attr(debug_assertions, inline)]
    fn decode_binary(key: &[u8]) -> Result<Self> {
        Self::SHAPE.decode_bytes_with(key, Self::read_fields_binary)
    }
}
