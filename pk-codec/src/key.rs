//! The typed side: [`KeyField`] for Rust types, [`PartitionKey`] and [`DecodeKey`] for whole keys.

use std::borrow::Cow;

use crate::error::Result;
use crate::field_spec::{FieldSpec, IntBits, Kind};
use crate::io::{KeyReader, KeyWriter};
use crate::layout::Layout;
use crate::prefix::BucketValue;
use crate::scratch::encode_new;
use crate::shape::KeyShape;

/// A Rust type that can be one field of a key.
///
/// Implemented for every integer type, `String`, `&str`, `Vec<u8>`, `&[u8]`, `bool`, `char` and
/// `Option<T>` of those. `usize` and `isize` use the 64-bit forms on every platform, so keys do not
/// depend on the machine that wrote them.
///
/// # Examples
///
/// ```
/// use pk_codec::{FieldSpec, KeyField, KeyShape};
///
/// let spec = FieldSpec::new(<u32 as KeyField>::KIND).with_width(6);
/// let mut key = String::new();
/// KeyShape::default().encode_with(&mut key, |w| {
///     w.begin_field();
///     54u32.encode_field(&spec, "device_id", w)
/// })?;
/// assert_eq!(key, "000054");
/// # Ok::<(), pk_codec::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a key field",
    label = "not an integer, String, &str, Vec<u8>, &[u8], bool, char or Option of one of them",
    note = "a struct that derives `PartitionKey` can be spliced into another key as a field of its own"
)]
pub trait KeyField {
    /// The field kind this type is written as.
    const KIND: Kind;

    /// Whether the type is an `Option`, written with the optional form of its kind. An `Option`
    /// of a type that is already optional has no key form (`None` and `Some(None)` would be one
    /// key): naming its `OPTIONAL`, as [`FieldSpec::of`] does, fails to compile.
    const OPTIONAL: bool = false;

    /// Writes the value (the caller has already called [`KeyWriter::begin_field`]).
    ///
    /// # Errors
    ///
    /// What the kind's [`KeyWriter`] method returns: a value too wide for its width, a plain
    /// string holding a byte at or below the delimiter.
    fn encode_field(&self, spec: &FieldSpec, field: &str, w: &mut KeyWriter<'_>) -> Result<()>;

    /// The value a modulo bucket prefix takes of this field: the integer, for integer types; `None`
    /// for the others, which the rulebook refuses as a modulo bucket's field.
    #[doc(hidden)]
    #[inline]
    fn bucket_value(&self) -> Option<BucketValue> {
        None
    }
}

// `FieldSpec::of` reads a type's `KeyField` impl, so it is written beside the trait: `field_spec.rs`
// sits below the typed side and names none of it.
impl FieldSpec {
    /// An ascending field of the Rust type `T`, at the kind's default width, optional when `T` is an
    /// `Option`: how derived keys build their fields' specs, through `T`'s own [`KeyField`] impl
    /// (so a type alias or a type parameter is the type it names).
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{FieldSpec, IntBits, Kind};
    ///
    /// type DeviceId = u32;
    /// assert_eq!(FieldSpec::of::<DeviceId>(), FieldSpec::new(Kind::Uint { bits: IntBits::B32 }));
    /// assert!(FieldSpec::of::<Option<String>>().is_optional());
    /// ```
    #[must_use]
    pub const fn of<T: KeyField + ?Sized>() -> Self {
        let spec = Self::new(T::KIND);
        if T::OPTIONAL { spec.optional() } else { spec }
    }
}

/// A [`KeyField`] that can also be read back (every one but the borrowed `&str` and `&[u8]`).
pub trait DecodeField: KeyField + Sized {
    /// Reads the value (the caller has already called [`KeyReader::begin_field`]).
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) with the byte position (also for a number
    /// outside the type).
    fn decode_field(spec: &FieldSpec, field: &str, r: &mut KeyReader<'_>) -> Result<Self>;
}

/// Integer fields: the kind, the writer and reader method (the same name on both sides) and its
/// width, and the bounds the reader checks (`MAX` for unsigned types, `MIN, MAX` for signed).
macro_rules! integer_field {
    ($($t:ty => $kind:ident $bits:ident, $method:ident as $wide:ty, [$($bound:ident),+]);* $(;)?) => {$(
        impl KeyField for $t {
            const KIND: Kind = Kind::$kind { bits: IntBits::$bits };
            #[inline]
            fn encode_field(&self, spec: &FieldSpec, field: &str, w: &mut KeyWriter<'_>) -> Result<()> {
                w.$method(spec, field, *self as $wide)
            }
            #[inline]
            fn bucket_value(&self) -> Option<BucketValue> {
                Some(BucketValue::from(*self))
            }
        }
        impl DecodeField for $t {
            #[inline]
            fn decode_field(spec: &FieldSpec, field: &str, r: &mut KeyReader<'_>) -> Result<Self> {
                Ok(r.$method(spec, field, $(<$t>::$bound as $wide),+)? as $t)
            }
        }
    )*};
}
integer_field!(
    u8 => Uint B8, uint64 as u64, [MAX];
    u16 => Uint B16, uint64 as u64, [MAX];
    u32 => Uint B32, uint64 as u64, [MAX];
    u64 => Uint B64, uint64 as u64, [MAX];
    usize => Uint B64, uint64 as u64, [MAX];
    u128 => Uint B128, uint128 as u128, [MAX];
    i8 => Int B8, int64 as i64, [MIN, MAX];
    i16 => Int B16, int64 as i64, [MIN, MAX];
    i32 => Int B32, int64 as i64, [MIN, MAX];
    i64 => Int B64, int64 as i64, [MIN, MAX];
    isize => Int B64, int64 as i64, [MIN, MAX];
    i128 => Int B128, int128 as i128, [MIN, MAX];
);

impl KeyField for str {
    const KIND: Kind = Kind::Str;
    #[inline]
    fn encode_field(&self, spec: &FieldSpec, field: &str, w: &mut KeyWriter<'_>) -> Result<()> {
        w.str(spec, field, self)
    }
}

impl KeyField for String {
    const KIND: Kind = Kind::Str;
    #[inline]
    fn encode_field(&self, spec: &FieldSpec, field: &str, w: &mut KeyWriter<'_>) -> Result<()> {
        w.str(spec, field, self)
    }
}

impl DecodeField for String {
    #[inline]
    fn decode_field(spec: &FieldSpec, field: &str, r: &mut KeyReader<'_>) -> Result<Self> {
        r.str(spec, field)
    }
}

impl KeyField for [u8] {
    const KIND: Kind = Kind::Bytes;
    #[inline]
    fn encode_field(&self, spec: &FieldSpec, field: &str, w: &mut KeyWriter<'_>) -> Result<()> {
        w.bytes(spec, field, self);
        Ok(())
    }
}

impl KeyField for Vec<u8> {
    const KIND: Kind = Kind::Bytes;
    #[inline]
    fn encode_field(&self, spec: &FieldSpec, field: &str, w: &mut KeyWriter<'_>) -> Result<()> {
        w.bytes(spec, field, self);
        Ok(())
    }
}

impl DecodeField for Vec<u8> {
    #[inline]
    fn decode_field(spec: &FieldSpec, field: &str, r: &mut KeyReader<'_>) -> Result<Self> {
        r.bytes(spec, field)
    }
}

impl KeyField for bool {
    const KIND: Kind = Kind::Bool;
    #[inline]
    fn encode_field(&self, spec: &FieldSpec, field: &str, w: &mut KeyWriter<'_>) -> Result<()> {
        w.bool(spec, field, *self);
        Ok(())
    }
}

impl DecodeField for bool {
    #[inline]
    fn decode_field(spec: &FieldSpec, field: &str, r: &mut KeyReader<'_>) -> Result<Self> {
        r.bool(spec, field)
    }
}

impl KeyField for char {
    const KIND: Kind = Kind::Char;
    #[inline]
    fn encode_field(&self, spec: &FieldSpec, field: &str, w: &mut KeyWriter<'_>) -> Result<()> {
        w.char(spec, field, *self);
        Ok(())
    }
}

impl DecodeField for char {
    #[inline]
    fn decode_field(spec: &FieldSpec, field: &str, r: &mut KeyReader<'_>) -> Result<Self> {
        r.char(spec, field)
    }
}

macro_rules! fixed_field {
    ($($t:ty => $kind:ident, $write:ident, $read:ident);* $(;)?) => {$(
        impl KeyField for $t {
            const KIND: Kind = Kind::$kind;
            #[inline]
            fn encode_field(&self, spec: &FieldSpec, field: &str, w: &mut KeyWriter<'_>) -> Result<()> {
                w.$write(spec, field, *self);
                Ok(())
            }
        }
        impl DecodeField for $t {
            #[inline]
            fn decode_field(spec: &FieldSpec, field: &str, r: &mut KeyReader<'_>) -> Result<Self> {
                r.$read(spec, field)
            }
        }
    )*};
}
fixed_field!(f32 => F32, f32, f32; f64 => F64, f64, f64);

impl KeyField for std::time::SystemTime {
    const KIND: Kind = Kind::Timestamp;
    fn encode_field(&self, spec: &FieldSpec, field: &str, w: &mut KeyWriter<'_>) -> Result<()> {
        w.timestamp(spec, field, crate::timestamp::system_time_nanos(*self))
    }
}

impl DecodeField for std::time::SystemTime {
    fn decode_field(spec: &FieldSpec, field: &str, r: &mut KeyReader<'_>) -> Result<Self> {
        let start = r.position();
        let nanos = r.timestamp(spec, field)?;
        crate::timestamp::system_time_from_nanos(nanos).ok_or_else(|| {
            crate::Error::malformed(
                Some(field),
                start,
                "this platform's SystemTime cannot hold the instant",
            )
        })
    }
}

impl<T: KeyField + ?Sized> KeyField for &T {
    const KIND: Kind = T::KIND;
    const OPTIONAL: bool = T::OPTIONAL;
    #[inline]
    fn encode_field(&self, spec: &FieldSpec, field: &str, w: &mut KeyWriter<'_>) -> Result<()> {
        (**self).encode_field(spec, field, w)
    }
    #[inline]
    fn bucket_value(&self) -> Option<BucketValue> {
        (**self).bucket_value()
    }
}

impl<T: KeyField> KeyField for Option<T> {
    const KIND: Kind = T::KIND;
    const OPTIONAL: bool = {
        // Reached through a type parameter too (`Option<V>` with `V = Option<u32>`), where the
        // derive cannot see the nesting.
        crate::rules::enforce(if T::OPTIONAL {
            Err(crate::rules::Rule::NestedOption)
        } else {
            Ok(true)
        })
    };
    #[inline]
    fn encode_field(&self, spec: &FieldSpec, field: &str, w: &mut KeyWriter<'_>) -> Result<()> {
        match self {
            None => {
                w.none(spec, field);
                Ok(())
            }
            Some(v) => {
                w.some(spec, field);
                v.encode_field(spec, field, w)
            }
        }
    }
}

impl<T: DecodeField> DecodeField for Option<T> {
    #[inline]
    fn decode_field(spec: &FieldSpec, field: &str, r: &mut KeyReader<'_>) -> Result<Self> {
        read_optional(spec, field, r, |r| T::decode_field(spec, field, r))
    }
}

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

    /// The value a modulo bucket prefix takes of this part ([`KeyField`] integers only).
    #[must_use]
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
    fn part_bucket_value(&self) -> Option<BucketValue> {
        self.bucket_value()
    }

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

/// An optional field's value (its field begun), `read` when it is there.
#[inline]
fn read_optional<'de, T>(
    spec: &FieldSpec,
    field: &str,
    r: &mut KeyReader<'de>,
    read: impl FnOnce(&mut KeyReader<'de>) -> Result<T>,
) -> Result<Option<T>> {
    if r.none(spec, field) {
        return Ok(None);
    }
    r.some(spec, field)?;
    read(r).map(Some)
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

impl KeyField for Cow<'_, str> {
    const KIND: Kind = Kind::Str;
    #[inline]
    fn encode_field(&self, spec: &FieldSpec, field: &str, w: &mut KeyWriter<'_>) -> Result<()> {
        w.str(spec, field, self)
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

    /// The same layout as a runtime [`Layout`], for tools, docs and comparisons.
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
    fn encode(&self) -> Result<String> {
        encode_new(|out| self.encode_into(out))
    }
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
}
