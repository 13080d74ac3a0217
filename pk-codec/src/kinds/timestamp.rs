//! Timestamps (`timestamp`): UTC text at the field's precision, `2026-11-22T10:26:00.123Z`,
//! whose byte order is time order; descending, each digit `d` as `9 - d`. The calendar
//! arithmetic and the [`Precision`](crate::Precision) are `timestamp.rs`'s (below the field
//! spec, which holds a precision). `SystemTime`, and behind their features `time`'s
//! `OffsetDateTime` and `chrono`'s `DateTime<Utc>`.

use crate::bin_io::{BinReader, BinWriter};
use crate::error::{Error, Result};
use crate::field::{DecodeField, KeyField};
use crate::field_spec::FieldSpec;
use crate::io::{KeyReader, KeyWriter};
use crate::timestamp::{MAX_SECS, MIN_SECS, Precision, Unwritable};

use super::{Kind, Value};

impl KeyWriter<'_> {
    /// Writes a timestamp given in nanoseconds since the Unix epoch, at the spec's precision.
    ///
    /// # Errors
    ///
    /// [`Error::ValueOutOfRange`](crate::Error::ValueOutOfRange) before year 0, after year 9999, or with digits below the
    /// field's precision (refused, not truncated, so that distinct instants keep distinct keys).
    #[cfg_attr(debug_assertions, inline)]
    pub fn timestamp(&mut self, spec: &FieldSpec, field: &str, nanos: i128) -> Result<()> {
        let precision = spec.precision();
        crate::timestamp::write(self.out, nanos, precision, spec.is_descending())
            .map_err(|why| unwritable(field, nanos, precision, why))
    }
}

impl<'a> KeyReader<'a> {
    /// Reads a timestamp, in nanoseconds since the Unix epoch.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) at the first byte that is not the text of a real instant at the
    /// field's precision.
    #[cfg_attr(debug_assertions, inline)]
    pub fn timestamp(&mut self, spec: &FieldSpec, field: &str) -> Result<i128> {
        let start = self.pos;
        let rest = &self.key.as_bytes()[start..];
        match crate::timestamp::read(rest, spec.precision(), spec.is_descending()) {
            Ok(nanos) => {
                self.pos += spec.precision().text_len();
                Ok(nanos)
            }
            Err((at, why)) => Err(Self::fault(field, start + at, why)),
        }
    }
}

impl KeyField for std::time::SystemTime {
    const KIND: Kind = Kind::Timestamp;
    #[cfg_attr(debug_assertions, inline)]
    fn encode_field(&self, spec: &FieldSpec, field: &str, w: &mut KeyWriter<'_>) -> Result<()> {
        w.timestamp(spec, field, crate::timestamp::system_time_nanos(*self))
    }
    #[cfg_attr(debug_assertions, inline)]
    fn encode_field_binary(
        &self,
        spec: &FieldSpec,
        field: &str,
        w: &mut BinWriter<'_>,
    ) -> Result<()> {
        w.timestamp(spec, field, crate::timestamp::system_time_nanos(*self))
    }
}

impl DecodeField for std::time::SystemTime {
    #[cfg_attr(debug_assertions, inline)]
    fn decode_field(spec: &FieldSpec, field: &str, r: &mut KeyReader<'_>) -> Result<Self> {
        let start = r.position();
        system_time_at(field, start, r.timestamp(spec, field)?)
    }
    #[cfg_attr(debug_assertions, inline)]
    fn decode_field_binary(spec: &FieldSpec, field: &str, r: &mut BinReader<'_>) -> Result<Self> {
        let start = r.position();
        system_time_at(field, start, r.timestamp(spec, field)?)
    }
}

/// The `SystemTime` of `nanos`, read from the field at byte `start`, or the error of a platform
/// whose `SystemTime` cannot hold it.
#[cfg_attr(debug_assertions, inline)]
fn system_time_at(field: &str, start: usize, nanos: i128) -> Result<std::time::SystemTime> {
    crate::timestamp::system_time_from_nanos(nanos).ok_or_else(|| {
        crate::Error::malformed(
            Some(field),
            start,
            "this platform's SystemTime cannot hold the instant",
        )
    })
}

impl From<std::time::SystemTime> for Value {
    #[cfg_attr(debug_assertions, inline)]
    fn from(v: std::time::SystemTime) -> Self {
        Self::Timestamp(crate::timestamp::system_time_nanos(v))
    }
}

#[cfg(feature = "time")]
impl KeyField for time::OffsetDateTime {
    const KIND: Kind = Kind::Timestamp;
    #[cfg_attr(debug_assertions, inline)]
    fn encode_field(&self, spec: &FieldSpec, field: &str, w: &mut KeyWriter<'_>) -> Result<()> {
        w.timestamp(spec, field, self.unix_timestamp_nanos())
    }
    #[cfg_attr(debug_assertions, inline)]
    fn encode_field_binary(
        &self,
        spec: &FieldSpec,
        field: &str,
        w: &mut BinWriter<'_>,
    ) -> Result<()> {
        w.timestamp(spec, field, self.unix_timestamp_nanos())
    }
}

#[cfg(feature = "time")]
impl DecodeField for time::OffsetDateTime {
    #[cfg_attr(debug_assertions, inline)]
    fn decode_field(spec: &FieldSpec, field: &str, r: &mut KeyReader<'_>) -> Result<Self> {
        let start = r.position();
        offset_date_time_at(field, start, r.timestamp(spec, field)?)
    }
    #[cfg_attr(debug_assertions, inline)]
    fn decode_field_binary(spec: &FieldSpec, field: &str, r: &mut BinReader<'_>) -> Result<Self> {
        let start = r.position();
        offset_date_time_at(field, start, r.timestamp(spec, field)?)
    }
}

/// The `OffsetDateTime` of `nanos`, read from the field at byte `start`.
#[cfg(feature = "time")]
#[cfg_attr(debug_assertions, inline)]
fn offset_date_time_at(field: &str, start: usize, nanos: i128) -> Result<time::OffsetDateTime> {
    time::OffsetDateTime::from_unix_timestamp_nanos(nanos).map_err(|e| {
        Error::malformed(
            Some(field),
            start,
            format!("time cannot hold the instant: {e}"),
        )
    })
}

#[cfg(feature = "time")]
impl From<time::OffsetDateTime> for Value {
    #[cfg_attr(debug_assertions, inline)]
    fn from(v: time::OffsetDateTime) -> Self {
        Self::Timestamp(v.unix_timestamp_nanos())
    }
}

/// Nanoseconds since the epoch, as chrono counts them: a leap second (`23:59:60.x`, subsecond
/// nanoseconds of 1e9 or more) lands on the next second's instant.
#[cfg(feature = "chrono")]
#[cfg_attr(debug_assertions, inline)]
fn chrono_nanos(t: &chrono::DateTime<chrono::Utc>) -> i128 {
    i128::from(t.timestamp()) * 1_000_000_000 + i128::from(t.timestamp_subsec_nanos())
}

/// A key field of chrono's `DateTime<Utc>`. A leap second is refused
/// ([`Error::ValueOutOfRange`](crate::Error::ValueOutOfRange)): a timestamp key counts seconds since the epoch, where
/// `23:59:60.5` is the instant of the next day's `00:00:00.5`, so the two would share a key
/// (and `23:59:60.5`, which chrono orders before `00:00:00`, would sort after it).
#[cfg(feature = "chrono")]
impl KeyField for chrono::DateTime<chrono::Utc> {
    const KIND: Kind = Kind::Timestamp;
    #[cfg_attr(debug_assertions, inline)]
    fn encode_field(&self, spec: &FieldSpec, field: &str, w: &mut KeyWriter<'_>) -> Result<()> {
        w.timestamp(spec, field, chrono_key_nanos(field, self)?)
    }
    #[cfg_attr(debug_assertions, inline)]
    fn encode_field_binary(
        &self,
        spec: &FieldSpec,
        field: &str,
        w: &mut BinWriter<'_>,
    ) -> Result<()> {
        w.timestamp(spec, field, chrono_key_nanos(field, self)?)
    }
}

/// The nanoseconds a key of `t` holds, a leap second refused.
#[cfg(feature = "chrono")]
#[cfg_attr(debug_assertions, inline)]
fn chrono_key_nanos(field: &str, t: &chrono::DateTime<chrono::Utc>) -> Result<i128> {
    if t.timestamp_subsec_nanos() >= 1_000_000_000 {
        return Err(leap_second(field, t));
    }
    Ok(chrono_nanos(t))
}

#[cfg(feature = "chrono")]
#[cold]
#[cfg_attr(debug_assertions, inline)]
fn leap_second(field: &str, t: &chrono::DateTime<chrono::Utc>) -> Error {
    Error::ValueOutOfRange {
        field: field.to_owned(),
        value: t.to_rfc3339(),
        ty: "a timestamp without leap seconds (23:59:60 has no instant of its own)",
    }
}

#[cfg(feature = "chrono")]
impl DecodeField for chrono::DateTime<chrono::Utc> {
    #[cfg_attr(debug_assertions, inline)]
    fn decode_field(spec: &FieldSpec, field: &str, r: &mut KeyReader<'_>) -> Result<Self> {
        let start = r.position();
        chrono_at(field, start, r.timestamp(spec, field)?)
    }
    #[cfg_attr(debug_assertions, inline)]
    fn decode_field_binary(spec: &FieldSpec, field: &str, r: &mut BinReader<'_>) -> Result<Self> {
        let start = r.position();
        chrono_at(field, start, r.timestamp(spec, field)?)
    }
}

/// The `DateTime<Utc>` of `nanos`, read from the field at byte `start`.
#[cfg(feature = "chrono")]
#[cfg_attr(debug_assertions, inline)]
fn chrono_at(field: &str, start: usize, nanos: i128) -> Result<chrono::DateTime<chrono::Utc>> {
    let (secs, sub) = (
        nanos.div_euclid(1_000_000_000),
        nanos.rem_euclid(1_000_000_000),
    );
    i64::try_from(secs)
        .ok()
        .and_then(|s| chrono::DateTime::from_timestamp(s, sub as u32))
        .ok_or_else(|| Error::malformed(Some(field), start, "chrono cannot hold the instant"))
}

/// The instant as [`Value::Timestamp`]. A leap second becomes the next second's instant, as
/// chrono's own `timestamp_nanos_opt` counts it; encode a `DateTime` through its [`KeyField`]
/// to have a leap second refused instead.
#[cfg(feature = "chrono")]
impl From<chrono::DateTime<chrono::Utc>> for Value {
    #[cfg_attr(debug_assertions, inline)]
    fn from(v: chrono::DateTime<chrono::Utc>) -> Self {
        Self::Timestamp(chrono_nanos(&v))
    }
}

#[cfg_attr(debug_assertions, inline)]
pub(super) const fn expects(_: Kind) -> &'static str {
    "a timestamp"
}

value_io!(Timestamp, timestamp, copy);

#[cfg_attr(debug_assertions, inline)]
pub(super) fn parse_text(_: &FieldSpec, text: &str) -> Result<Value, &'static str> {
    timestamp_nanos(text).map(Value::Timestamp)
}

/// Nanoseconds since the epoch of `text`, milliseconds since 1970-01-01 UTC with at most six
/// decimals (what `pk`'s JSON prints of a timestamp below the millisecond).
#[cfg_attr(debug_assertions, inline)]
fn timestamp_nanos(text: &str) -> Result<i128, &'static str> {
    const WHAT: &str = "milliseconds since 1970-01-01 UTC, with at most 6 decimals";
    let (whole, decimals) = text.split_once('.').unwrap_or((text, ""));
    let ms: i128 = whole.parse().map_err(|_| WHAT)?;
    let digits = decimals.len();
    if text.contains('.')
        && (digits == 0 || digits > 6 || !decimals.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(WHAT);
    }
    // At most 6 digits: below 10^6.
    let fraction: i128 = if digits == 0 {
        0
    } else {
        decimals.parse::<i128>().map_err(|_| WHAT)? * 10i128.pow(6 - digits as u32)
    };
    let negative = whole.trim_start().starts_with('-');
    // Checked: the text may hold any i128, and the value is in nanoseconds.
    ms.checked_mul(1_000_000)
        .and_then(|ns| {
            if negative {
                ns.checked_sub(fraction)
            } else {
                ns.checked_add(fraction)
            }
        })
        .ok_or("milliseconds since 1970-01-01 UTC: too far from 1970 to count in nanoseconds")
}

/// The error of an instant a field cannot write, in either form.
#[cold]
#[cfg_attr(debug_assertions, inline)]
fn unwritable(field: &str, nanos: i128, precision: Precision, why: Unwritable) -> Error {
    Error::ValueOutOfRange {
        field: field.to_owned(),
        value: format!("{nanos} ns since the epoch"),
        ty: match (why, precision) {
            (Unwritable::OutOfRange, _) => "a timestamp (years 0000 to 9999)",
            (_, Precision::Seconds) => "a timestamp of whole seconds",
            (_, Precision::Millis) => "a timestamp of whole milliseconds",
            (_, Precision::Micros) => "a timestamp of whole microseconds",
            (_, Precision::Nanos) => "a timestamp",
        },
    }
}

// ---- The binary form: the instant in units of the field's precision since the epoch, two's
// complement with the sign bit flipped, big-endian: 8 bytes at s, ms and us, 16 at ns (an i64
// does not count the nanoseconds of years 0 to 9999); inverted when descending. The same instants
// as the text form: years 0000 to 9999, no digits below the precision.

/// The bytes of a binary timestamp at `precision`.
#[cfg_attr(debug_assertions, inline)]
const fn bin_size(precision: Precision) -> usize {
    if matches!(precision, Precision::Nanos) {
        16
    } else {
        8
    }
}

/// The nanoseconds in one unit of `precision`.
#[cfg_attr(debug_assertions, inline)]
const fn unit(precision: Precision) -> i128 {
    10i128.pow(9 - precision.digits())
}

/// The first and last instants a timestamp field writes, in nanoseconds.
const FIRST_NANOS: i128 = MIN_SECS as i128 * 1_000_000_000;
const LAST_NANOS: i128 = (MAX_SECS as i128 + 1) * 1_000_000_000 - 1;

impl BinWriter<'_> {
    /// Writes a timestamp (nanoseconds since the Unix epoch) in the binary form.
    ///
    /// # Errors
    ///
    /// [`Error::ValueOutOfRange`] as the text form: before year 0, after year 9999, or with
    /// digits below the field's precision.
    #[cfg_attr(debug_assertions, inline)]
    pub fn timestamp(&mut self, spec: &FieldSpec, field: &str, nanos: i128) -> Result<()> {
        let precision = spec.precision();
        if !(FIRST_NANOS..=LAST_NANOS).contains(&nanos) {
            return Err(unwritable(field, nanos, precision, Unwritable::OutOfRange));
        }
        if nanos % unit(precision) != 0 {
            return Err(unwritable(
                field,
                nanos,
                precision,
                Unwritable::BelowPrecision,
            ));
        }
        let n = bin_size(precision);
        self.put_signed(nanos / unit(precision), n, spec.is_descending());
        Ok(())
    }
}

impl BinReader<'_> {
    /// Reads a timestamp in the binary form, in nanoseconds since the Unix epoch.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] for a short key or an instant outside years 0000 to 9999.
    #[cfg_attr(debug_assertions, inline)]
    pub fn timestamp(&mut self, spec: &FieldSpec, field: &str) -> Result<i128> {
        let start = self.pos;
        let precision = spec.precision();
        let n = bin_size(precision);
        let units = self.take_signed(field, n, spec.is_descending())?;
        match units.checked_mul(unit(precision)) {
            Some(nanos) if (FIRST_NANOS..=LAST_NANOS).contains(&nanos) => Ok(nanos),
            _ => {
                self.pos = start;
                Err(Self::fault(
                    field,
                    start,
                    format!("{units} units of the field's precision is outside years 0000 to 9999"),
                ))
            }
        }
    }
}
