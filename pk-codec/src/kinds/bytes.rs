//! Byte strings (`bytes`): lower-case hex; descending, each byte as two inverted hex digits,
//! then `z` (`text.rs`'s forms).

use crate::bin_io::{BinReader, BinWriter};
use crate::error::Result;
use crate::field::{DecodeField, KeyField};
use crate::field_spec::FieldSpec;
use crate::io::{KeyReader, KeyWriter};
use crate::kinds::Order;
use crate::text;

use super::{Kind, Value};

impl KeyWriter<'_> {
    /// Writes a byte string (hex, or descending).
    #[cfg_attr(debug_assertions, inline)]
    pub fn bytes(&mut self, spec: &FieldSpec, field: &str, b: &[u8]) {
        // Every value has this form: the name is taken to mirror the reader, not for errors.
        let _ = field;
        match spec.order() {
            Order::Asc => text::write_hex(self.out, b),
            Order::Desc => text::write_desc_bytes(self.out, b),
        }
    }
}

impl<'a> KeyReader<'a> {
    /// Reads a byte string.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) for bad hex or bad descending text.
    #[cfg_attr(debug_assertions, inline)]
    pub fn bytes(&mut self, spec: &FieldSpec, field: &str) -> Result<Vec<u8>> {
        match spec.order() {
            Order::Desc => self.desc_bytes(field),
            Order::Asc => {
                let (start, text) = self.take_until_delimiter();
                text::read_hex(text).map_err(|(at, why)| Self::fault(field, start + at, why))
            }
        }
    }
}

ref_field!(
    [u8] => Kind::Bytes, bytes;
    Vec<u8> => Kind::Bytes, bytes;
);
decode_field!(Vec<u8>, bytes);

impl From<Vec<u8>> for Value {
    #[cfg_attr(debug_assertions, inline)]
    fn from(v: Vec<u8>) -> Self {
        Self::Bytes(v)
    }
}

impl From<&[u8]> for Value {
    #[cfg_attr(debug_assertions, inline)]
    fn from(v: &[u8]) -> Self {
        Self::Bytes(v.to_vec())
    }
}

#[cfg_attr(debug_assertions, inline)]
pub(super) const fn expects(_: Kind) -> &'static str {
    "bytes"
}

value_io!(Bytes, bytes, borrow);

#[cfg_attr(debug_assertions, inline)]
pub(super) fn parse_text(_: &FieldSpec, text: &str) -> Result<Value, &'static str> {
    Ok(Value::Bytes(text.as_bytes().to_vec()))
}

// ---- The binary form: as a string's (escaped and terminated), inverted when descending.

impl BinWriter<'_> {
    /// Writes a byte string in the binary form.
    #[inline]
    pub fn bytes(&mut self, spec: &FieldSpec, field: &str, b: &[u8]) {
        let _ = field;
        crate::text::write_bin_escaped(self.out, b, spec.is_descending());
    }
}

impl BinReader<'_> {
    /// Reads a byte string in the binary form.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) for a missing end mark or a bad escape.
    #[cfg_attr(debug_assertions, inline)]
    pub fn bytes(&mut self, spec: &FieldSpec, field: &str) -> Result<Vec<u8>> {
        self.bytes_form(spec, field)
    }
}
