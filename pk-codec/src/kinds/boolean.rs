//! Booleans (`bool`): `0` / `1`; descending, `1` / `0`.

use crate::bin_io::{BinReader, BinWriter};
use crate::error::Result;
use crate::field::{DecodeField, KeyField};
use crate::field_spec::FieldSpec;
use crate::io::{KeyReader, KeyWriter};

use super::{Kind, Value};

impl KeyWriter<'_> {
    /// Writes a boolean.
    #[inline]
    pub fn bool(&mut self, spec: &FieldSpec, field: &str, b: bool) {
        // Every value has this form: the name is taken to mirror the reader, not for errors.
        let _ = field;
        let one = b != spec.is_descending();
        self.out.push(if one { '1' } else { '0' });
    }
}

impl<'a> KeyReader<'a> {
    /// Reads a boolean.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) unless the next byte is `0` or `1`.
    #[cfg_attr(debug_assertions, inline)]
    pub fn bool(&mut self, spec: &FieldSpec, field: &str) -> Result<bool> {
        let start = self.pos;
        let one = match self.take_fixed(field, 1)? {
            b"0" => false,
            b"1" => true,
            _ => {
                let found = self.key[start..].chars().next().unwrap_or('?');
                self.pos = start;
                return Err(Self::fault(
                    field,
                    start,
                    format!("expected `0` or `1`, found {found:?}"),
                ));
            }
        };
        Ok(one != spec.is_descending())
    }
}

copy_field!(bool => Kind::Bool, bool);

impl From<bool> for Value {
    #[cfg_attr(debug_assertions, inline)]
    fn from(v: bool) -> Self {
        Self::Bool(v)
    }
}

#[cfg_attr(debug_assertions, inline)]
pub(super) const fn expects(_: Kind) -> &'static str {
    "a boolean"
}

value_io!(Bool, bool, copy);

#[cfg_attr(debug_assertions, inline)]
pub(super) fn parse_text(_: &FieldSpec, text: &str) -> Result<Value, &'static str> {
    text.parse().map(Value::Bool).map_err(|_| "true or false")
}

// ---- The binary form: one byte, `0x00` / `0x01`, inverted when descending.

impl BinWriter<'_> {
    /// Writes a boolean in the binary form.
    #[inline]
    pub fn bool(&mut self, spec: &FieldSpec, field: &str, b: bool) {
        let _ = field;
        self.put(&[u8::from(b)], spec.is_descending());
    }
}

impl BinReader<'_> {
    /// Reads a boolean in the binary form.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) unless the byte is `0x00` or `0x01`
    /// (inverted when descending).
    #[cfg_attr(debug_assertions, inline)]
    pub fn bool(&mut self, spec: &FieldSpec, field: &str) -> Result<bool> {
        let start = self.pos;
        match self.take_array::<1>(field, spec.is_descending())? {
            [0] => Ok(false),
            [1] => Ok(true),
            [b] => {
                self.pos = start;
                Err(Self::fault(
                    field,
                    start,
                    format!("expected a boolean byte, 0 or 1, found {b:#04x}"),
                ))
            }
        }
    }
}
