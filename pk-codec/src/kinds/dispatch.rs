//! What reaches every kind, generated from the one list ([`for_each_kind!`](super::for_each_kind)):
//! writing and reading a [`Value`], naming what a field expects, and parsing a value from text.
//! Each arm calls the kind's own file.

use crate::bin_io::{BinReader, BinWriter};
use crate::error::{Error, Result};
use crate::field_spec::FieldSpec;
use crate::io::{KeyReader, KeyWriter};

use super::{Kind, Value};

/// What a writer method answers: nothing, for a form every value has, or whether it could write
/// the value. The kinds' generated glue takes both alike.
pub(crate) trait Written {
    /// The answer as a result.
    fn written(self) -> Result<()>;
}

impl Written for () {
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn written(self) -> Result<()> {
        Ok(())
    }
}

impl Written for Result<()> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn written(self) -> Result<()> {
        self
    }
}

macro_rules! dispatch {
    ($($variant:ident $module:ident,)*) => {
        /// Writes `value` in the form of `spec`'s kind (not its optional part, which the caller
        /// writes): `Ok(false)`, writing nothing, when the value is not one the kind takes.
        #[inline]
        pub(crate) fn write_value(
            w: &mut KeyWriter<'_>,
            spec: &FieldSpec,
            field: &str,
            value: &Value,
        ) -> Result<bool> {
            match spec.kind() {
                $(Kind::$variant { .. } => super::$module::write_value(w, spec, field, value),)*
            }
        }

        /// Reads a value in the form of `spec`'s kind (not its optional part).
        #[inline]
        pub(crate) fn read_value(r: &mut KeyReader<'_>, spec: &FieldSpec, field: &str) -> Result<Value> {
            match spec.kind() {
                $(Kind::$variant { .. } => super::$module::read_value(r, spec, field),)*
            }
        }

        /// [`write_value`] in the binary form.
        #[inline]
        pub(crate) fn write_value_bin(
            w: &mut BinWriter<'_>,
            spec: &FieldSpec,
            field: &str,
            value: &Value,
        ) -> Result<bool> {
            match spec.kind() {
                $(Kind::$variant { .. } => super::$module::write_value_bin(w, spec, field, value),)*
            }
        }

        /// [`read_value`] in the binary form.
        #[inline]
        pub(crate) fn read_value_bin(r: &mut BinReader<'_>, spec: &FieldSpec, field: &str) -> Result<Value> {
            match spec.kind() {
                $(Kind::$variant { .. } => super::$module::read_value_bin(r, spec, field),)*
            }
        }

        /// What a field of `kind` takes, for messages: "an integer", "a string", ...
        #[cfg_attr(debug_assertions, inline)]
        pub(crate) const fn expects(kind: Kind) -> &'static str {
            match kind {
                $(Kind::$variant { .. } => super::$module::expects(kind),)*
            }
        }

        /// A value of `spec`'s kind from the command line's text, or why the text is not one.
        #[cfg_attr(debug_assertions, inline)]
        fn parse_kind(spec: &FieldSpec, text: &str) -> Result<Value, &'static str> {
            match spec.kind() {
                $(Kind::$variant { .. } => super::$module::parse_text(spec, text),)*
            }
        }
    };
}
super::for_each_kind!(dispatch);

impl FieldSpec {
    /// A value of this field from text, as `pk` reads values: integers in decimal, `true` or
    /// `false`, strings and bytes as they are, one character, floats as Rust writes them (`inf`,
    /// `NaN`, or a NaN's bits as `NaN:0x7fc00001`), UUIDs as 32 hex digits (hyphens allowed),
    /// timestamps as milliseconds since 1970-01-01 UTC with at most six decimals. An empty text
    /// is [`Value::Null`] for an optional field.
    ///
    /// # Errors
    ///
    /// [`Error::BadValueText`](crate::Error::BadValueText) naming the field, its type and what the text should be.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{FieldSpec, IntBits, Kind, Value};
    ///
    /// let device = FieldSpec::new(Kind::Uint { bits: IntBits::B32 });
    /// assert_eq!(device.parse_value("device_id", "54")?, Value::Uint(54));
    /// assert!(device.parse_value("device_id", "-1").is_err());
    /// assert_eq!(device.optional().parse_value("device_id", "")?, Value::Null);
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    #[cfg_attr(debug_assertions, inline)]
    pub fn parse_value(&self, field: &str, text: &str) -> Result<Value> {
        if text.is_empty() && self.is_optional() {
            return Ok(Value::Null);
        }
        parse_kind(self, text).map_err(|why| Error::BadValueText {
            field: field.to_owned(),
            text: text.to_owned(),
            ty: self.kind().name(),
            why,
        })
    }
}
