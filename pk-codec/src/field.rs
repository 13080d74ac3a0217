//! [`KeyField`] and [`DecodeField`]: a Rust type as one field of a key, in both forms (text and
//! binary). Each kind's file under `kinds/` implements them for its Rust types; this file holds
//! the traits and the impls every kind shares (`&T`, `Option<T>`).

use crate::bin_io::{BinReader, BinWriter};
use crate::error::Result;
use crate::field_spec::FieldSpec;
use crate::io::{KeyReader, KeyWriter};
use crate::kinds::Kind;
use crate::prefix::BucketValue;

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

    /// Writes the value in the binary form (see [`Form::Binary`](crate::Form::Binary)): the
    /// twin of [`KeyField::encode_field`], which every key field has, so that one declaration
    /// writes both forms.
    ///
    /// # Errors
    ///
    /// What the kind's [`BinWriter`] method returns: a value too wide for its width or outside
    /// the kind's range, as in the text form.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{FieldSpec, KeyField, KeyShape};
    ///
    /// let spec = FieldSpec::new(<u32 as KeyField>::KIND).with_width(6);
    /// let mut key = Vec::new();
    /// KeyShape::default().encode_bytes_with(&mut key, |w| {
    ///     54u32.encode_field_binary(&spec, "device_id", w)
    /// })?;
    /// assert_eq!(key, [0, 0, 54]); // a width of 6 digits takes 3 bytes
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    fn encode_field_binary(
        &self,
        spec: &FieldSpec,
        field: &str,
        w: &mut BinWriter<'_>,
    ) -> Result<()>;

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

    /// Reads the value in the binary form, the mirror of [`KeyField::encode_field_binary`].
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) with the byte position (also for a number
    /// outside the type or the field's width).
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{DecodeField, FieldSpec, KeyShape};
    ///
    /// let spec = FieldSpec::of::<Option<String>>();
    /// let name = KeyShape::default().decode_bytes_with(&[1, b'a', 0, 1], |r| {
    ///     <Option<String>>::decode_field_binary(&spec, "name", r)
    /// })?;
    /// assert_eq!(name.as_deref(), Some("a"));
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    fn decode_field_binary(spec: &FieldSpec, field: &str, r: &mut BinReader<'_>) -> Result<Self>;
}

impl<T: KeyField + ?Sized> KeyField for &T {
    const KIND: Kind = T::KIND;
    const OPTIONAL: bool = T::OPTIONAL;
    #[inline]
    fn encode_field(&self, spec: &FieldSpec, field: &str, w: &mut KeyWriter<'_>) -> Result<()> {
        (**self).encode_field(spec, field, w)
    }
    #[inline]
    fn encode_field_binary(
        &self,
        spec: &FieldSpec,
        field: &str,
        w: &mut BinWriter<'_>,
    ) -> Result<()> {
        (**self).encode_field_binary(spec, field, w)
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
    #[inline]
    fn encode_field_binary(
        &self,
        spec: &FieldSpec,
        field: &str,
        w: &mut BinWriter<'_>,
    ) -> Result<()> {
        match self {
            None => {
                w.none(spec, field);
                Ok(())
            }
            Some(v) => {
                w.some(spec, field);
                v.encode_field_binary(spec, field, w)
            }
        }
    }
}

impl<T: DecodeField> DecodeField for Option<T> {
    #[inline]
    fn decode_field(spec: &FieldSpec, field: &str, r: &mut KeyReader<'_>) -> Result<Self> {
        read_optional(spec, field, r, |r| T::decode_field(spec, field, r))
    }
    #[inline]
    fn decode_field_binary(spec: &FieldSpec, field: &str, r: &mut BinReader<'_>) -> Result<Self> {
        if r.none(spec, field) {
            return Ok(None);
        }
        r.some(spec, field)?;
        T::decode_field_binary(spec, field, r).map(Some)
    }
}

/// An optional field's value (its field begun), `read` when it is there.
#[inline]
pub(crate) fn read_optional<'de, T>(
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
