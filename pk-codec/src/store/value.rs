//! The value format: the bytes typed access stores a row's value as, and reads it back from.
//!
//! Every typed write ([`Typed::put`](super::Typed::put), [`Typed::put_values`](super::Typed::put_values),
//! [`BulkWriter::add_typed`](super::BulkWriter::add_typed),
//! [`BulkWriter::add_values`](super::BulkWriter::add_values)) makes a value's bytes with
//! [`to_bytes`], and every typed read takes them apart with [`from_bytes`]: one format, one
//! place, so a program that writes rows one way and reads them another (or copies them by hand)
//! calls these two functions rather than copying the format.
//!
//! # The format
//!
//! A value is stored in [postcard](https://docs.rs/postcard)'s wire format (version 1, a
//! stable, documented specification): integers as LEB128 varints (signed ones zigzagged,
//! `i128`/`u128` whole), `f32`/`f64` as their IEEE 754 bits little-endian, strings and byte
//! sequences length-prefixed, `Option` with a tag byte per level, enums by variant index. It was
//! chosen because it keeps every value exactly (floats by their bits: NaN payloads,
//! infinities, `-0.0` and subnormals; `Some(None)` apart from `None`), is compact (a `u64`
//! reading takes 1 to 10 bytes), and is a small, well-kept crate made for serde. JSON, the
//! format before it, changed about a quarter of all `f64` values by one bit, stored NaN and the
//! infinities as `null` and read `Some(None)` back as `None`. Self-describing binary formats
//! (CBOR, MessagePack) share that last fault: they cannot tell `Some(None)` from `None`.
//!
//! # Checked on write
//!
//! postcard is not self-describing: a type whose `Deserialize` asks the data what it holds
//! (serde's untagged and internally tagged enums, `#[serde(flatten)]`, `serde_json::Value`) or
//! whose `Serialize` and `Deserialize` disagree (`#[serde(skip_serializing_if)]`) would be
//! written and then fail to read back, or read back as something else. So [`to_bytes`] reads
//! each value back as its owned type and serializes it again, and refuses it
//! ([`ValueError::NotReadBack`], [`ValueError::Changed`]) unless the bytes are the same: a
//! value either reads back exactly or is refused before anything is stored. The check costs one
//! deserialization and one serialization per write.
//!
//! # Examples
//!
//! ```
//! use pk_codec::store::value;
//!
//! let bytes = value::to_bytes(&(27.49f64, Some(None::<u8>)))?;
//! let (reading, nested): (f64, Option<Option<u8>>) = value::from_bytes(&bytes)?;
//! assert_eq!(reading.to_bits(), 27.49f64.to_bits());
//! assert_eq!(nested, Some(None));
//! assert_eq!(value::from_bytes::<String>(&value::to_bytes("text")?)?, "text");
//! # Ok::<(), value::ValueError>(())
//! ```

use std::fmt;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// A value typed access can store: any type that serializes and deserializes, and the unsized
/// `str` and `[T]`, which read back as their owned forms ([`String`], [`Vec<T>`]).
pub trait Storable: Serialize {
    /// The type the stored bytes read back as (and are checked against on write).
    type Owned: Serialize + DeserializeOwned;
}

impl<T: Serialize + DeserializeOwned> Storable for T {
    type Owned = T;
}

impl Storable for str {
    type Owned = String;
}

impl<T: Serialize + DeserializeOwned> Storable for [T] {
    type Owned = Vec<T>;
}

/// Why a value could not be stored or read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ValueError {
    /// The value did not serialize (its `Serialize` failed, or it is a sequence or map whose
    /// length is not known up front).
    Serialize(postcard::Error),
    /// The value serialized, but its bytes do not read back as its type: the type's
    /// `Deserialize` needs a self-describing format.
    NotReadBack(postcard::Error),
    /// The value's bytes read back as a value that serializes to other bytes: its type's
    /// `Serialize` and `Deserialize` disagree.
    Changed,
    /// Stored bytes that do not read as the type asked for.
    Read(postcard::Error),
    /// Stored bytes with `extra` bytes left after the value: another type's value.
    TrailingBytes {
        /// The bytes left over.
        extra: usize,
    },
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Serialize(e) => write!(f, "the value does not serialize: {e}"),
            Self::NotReadBack(e) => write!(
                f,
                "the value's type does not read back from the value format ({e}): a type whose \
                 Deserialize needs a self-describing format (untagged or internally tagged \
                 enums, #[serde(flatten)], serde_json::Value) cannot be stored; nothing was \
                 stored"
            ),
            Self::Changed => write!(
                f,
                "the value does not read back as written: its type's Serialize and Deserialize \
                 disagree (e.g. #[serde(skip_serializing_if)]); nothing was stored"
            ),
            Self::Read(e) => write!(f, "the stored bytes are not a value of this type: {e}"),
            Self::TrailingBytes { extra } => write!(
                f,
                "the stored bytes hold {extra} more byte(s) after a value of this type: they \
                 are another type's value"
            ),
        }
    }
}

impl std::error::Error for ValueError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Serialize(e) | Self::NotReadBack(e) | Self::Read(e) => Some(e),
            Self::Changed | Self::TrailingBytes { .. } => None,
        }
    }
}

/// The bytes `value` is stored as, checked to read back exactly (see the module docs).
///
/// # Errors
///
/// [`ValueError::Serialize`] when the value does not serialize; [`ValueError::NotReadBack`] or
/// [`ValueError::Changed`] when its bytes would not read back as the same value.
pub fn to_bytes<V: Storable + ?Sized>(value: &V) -> Result<Vec<u8>, ValueError> {
    let bytes = postcard::to_allocvec(value).map_err(ValueError::Serialize)?;
    let back: V::Owned = match postcard::take_from_bytes(&bytes) {
        Ok((back, [])) => back,
        // It read back from fewer bytes than it wrote: Serialize and Deserialize disagree.
        Ok(_) => return Err(ValueError::Changed),
        Err(e) => return Err(ValueError::NotReadBack(e)),
    };
    if postcard::to_allocvec(&back).map_err(ValueError::NotReadBack)? != bytes {
        return Err(ValueError::Changed);
    }
    Ok(bytes)
}

/// The value stored as `bytes` (by [`to_bytes`]), read as a `V`.
///
/// # Errors
///
/// [`ValueError::Read`] when the bytes do not read as a `V`; [`ValueError::TrailingBytes`]
/// when bytes are left after it.
pub fn from_bytes<V: DeserializeOwned>(bytes: &[u8]) -> Result<V, ValueError> {
    match postcard::take_from_bytes(bytes) {
        Ok((value, [])) => Ok(value),
        Ok((_, rest)) => Err(ValueError::TrailingBytes { extra: rest.len() }),
        Err(e) => Err(ValueError::Read(e)),
    }
}
