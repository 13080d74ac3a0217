//! UUIDs (`uuid`): 32 lower-case hex digits in byte order (v7 UUIDs sort by time); descending,
//! the digits inverted. The `uuid` crate's `Uuid` behind the feature of that name.

use crate::bin_io::{BinReader, BinWriter};
use crate::error::Result;
#[cfg(feature = "uuid")]
use crate::field::{DecodeField, KeyField};
use crate::field_spec::FieldSpec;
use crate::io::{KeyReader, KeyWriter};
use crate::text;

use super::{Kind, Value};

impl KeyWriter<'_> {
    /// Writes a UUID given as its 16 bytes in big-endian order (32 hex digits).
    #[inline]
    pub fn uuid(&mut self, spec: &FieldSpec, field: &str, v: u128) {
        // Every value has this form: the name is taken to mirror the reader, not for errors.
        let _ = field;
        let v = if spec.is_descending() { !v } else { v };
        text::write_hex(self.out, &v.to_be_bytes());
    }
}

impl<'a> KeyReader<'a> {
    /// Reads a UUID as its 16 bytes in big-endian order.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) unless the next 32 bytes are lower-case hex.
    #[cfg_attr(debug_assertions, inline)]
    pub fn uuid(&mut self, spec: &FieldSpec, field: &str) -> Result<u128> {
        let v = self.fixed_hex(field, 32)?;
        Ok(if spec.is_descending() { !v } else { v })
    }
}

#[cfg(feature = "uuid")]
impl KeyField for uuid::Uuid {
    const KIND: Kind = Kind::Uuid;
    #[cfg_attr(debug_assertions, inline)]
    fn encode_field(&self, spec: &FieldSpec, field: &str, w: &mut KeyWriter<'_>) -> Result<()> {
        w.uuid(spec, field, self.as_u128());
        Ok(())
    }
    #[cfg_attr(debug_assertions, inline)]
    fn encode_field_binary(
        &self,
        spec: &FieldSpec,
        field: &str,
        w: &mut BinWriter<'_>,
    ) -> Result<()> {
        w.uuid(spec, field, self.as_u128());
        Ok(())
    }
}

#[cfg(feature = "uuid")]
impl DecodeField for uuid::Uuid {
    #[cfg_attr(debug_assertions, inline)]
    fn decode_field(spec: &FieldSpec, field: &str, r: &mut KeyReader<'_>) -> Result<Self> {
        Ok(Self::from_u128(r.uuid(spec, field)?))
    }
    #[cfg_attr(debug_assertions, inline)]
    fn decode_field_binary(spec: &FieldSpec, field: &str, r: &mut BinReader<'_>) -> Result<Self> {
        Ok(Self::from_u128(r.uuid(spec, field)?))
    }
}

#[cfg(feature = "uuid")]
impl From<uuid::Uuid> for Value {
    #[cfg_attr(debug_assertions, inline)]
    fn from(v: uuid::Uuid) -> Self {
        Self::Uuid(v.as_u128())
    }
}

#[cfg_attr(debug_assertions, inline)]
pub(super) const fn expects(_: Kind) -> &'static str {
    "a UUID"
}

value_io!(Uuid, uuid, copy);

#[cfg_attr(debug_assertions, inline)]
pub(super) fn parse_text(_: &FieldSpec, text: &str) -> Result<Value, &'static str> {
    let hex: String = text.chars().filter(|c| *c != '-').collect();
    // Hex digits only: `from_str_radix` would also take a leading `+`.
    if hex.len() != 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err("32 hex digits, hyphens allowed");
    }
    u128::from_str_radix(&hex, 16)
        .map(Value::Uuid)
        .map_err(|_| "32 hex digits")
}

// ---- The binary form: the 16 bytes, inverted when descending.

impl BinWriter<'_> {
    /// Writes a UUID (its 16 bytes as a big-endian number) in the binary form.
    #[inline]
    pub fn uuid(&mut self, spec: &FieldSpec, field: &str, v: u128) {
        let _ = field;
        self.put(&v.to_be_bytes(), spec.is_descending());
    }
}

impl BinReader<'_> {
    /// Reads a UUID in the binary form (every 16 bytes are one).
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) for a short key.
    #[cfg_attr(debug_assertions, inline)]
    pub fn uuid(&mut self, spec: &FieldSpec, field: &str) -> Result<u128> {
        Ok(u128::from_be_bytes(
            self.take_array(field, spec.is_descending())?,
        ))
    }
}
