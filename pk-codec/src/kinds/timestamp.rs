//! Timestamps (`timestamp`): UTC text at the field's precision, `2026-11-22T10:26:00.123Z`,
//! whose byte order is time order; descending, each digit `d` as `9 - d`. The calendar
//! arithmetic and the [`Precision`](crate::Precision) are `timestamp.rs`'s (below the field
//! spec, which holds a precision). `SystemTime`, and behind their features `time`'s
//! `OffsetDateTime` and `chrono`'s `DateTime<Utc>`.

use crate::error::{Error, Result};
use crate::field::{DecodeField, KeyField};
use crate::field_spec::FieldSpec;
use crate::io::{KeyReader, KeyWriter};

use super::{Kind, Value};

impl KeyWriter<'_> {
    /// Writes a timestamp given in nanoseconds since the Unix epoch, at the spec's precision.
    ///
    /// # Errors
    ///
    /// [`Error::ValueOutOfRange`](crate::Error::ValueOutOfRange) before year 0, after year 9999, or with digits below the
    /// field's precision (refused, not truncated, so that distinct instants keep distinct keys).
    pub fn timestamp(&mut self, spec: &FieldSpec, field: &str, nanos: i128) -> Result<()> {
        let precision = spec.precision();
        crate::timestamp::write(self.out, nanos, precision, spec.is_descending()).map_err(|why| {
            Error::ValueOutOfRange {
                field: field.to_owned(),
                value: format!("{nanos} ns since the epoch"),
                ty: match (why, precision) {
                    (crate::timestamp::Unwritable::OutOfRange, _) => {
                        "a timestamp (years 0000 to 9999)"
                    }
                    (_, crate::timestamp::Precision::Seconds) => "a timestamp of whole seconds",
                    (_, crate::timestamp::Precision::Millis) => "a timestamp of whole milliseconds",
                    (_, crate::timestamp::Precision::Micros) => "a timestamp of whole microseconds",
                    (_, crate::timestamp::Precision::Nanos) => "a timestamp",
                },
            }
        })
    }
}

impl<'a> KeyReader<'a> {
    /// Reads a timestamp, in nanoseconds since the Unix epoch.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`](crate::Error::Malformed) at the first byte that is not the text of a real instant at the
    /// field's precision.
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

impl From<std::time::SystemTime> for Value {
    fn from(v: std::time::SystemTime) -> Self {
        Self::Timestamp(crate::timestamp::system_time_nanos(v))
    }
}

#[cfg(feature = "time")]
impl KeyField for time::OffsetDateTime {
    const KIND: Kind = Kind::Timestamp;
    fn encode_field(&self, spec: &FieldSpec, field: &str, w: &mut KeyWriter<'_>) -> Result<()> {
        w.timestamp(spec, field, self.unix_timestamp_nanos())
    }
}

#[cfg(feature = "time")]
impl DecodeField for time::OffsetDateTime {
    fn decode_field(spec: &FieldSpec, field: &str, r: &mut KeyReader<'_>) -> Result<Self> {
        let start = r.position();
        let nanos = r.timestamp(spec, field)?;
        Self::from_unix_timestamp_nanos(nanos).map_err(|e| {
            Error::malformed(
                Some(field),
                start,
                format!("time cannot hold the instant: {e}"),
            )
        })
    }
}

#[cfg(feature = "time")]
impl From<time::OffsetDateTime> for Value {
    fn from(v: time::OffsetDateTime) -> Self {
        Self::Timestamp(v.unix_timestamp_nanos())
    }
}

/// Nanoseconds since the epoch, as chrono counts them: a leap second (`23:59:60.x`, subsecond
/// nanoseconds of 1e9 or more) lands on the next second's instant.
#[cfg(feature = "chrono")]
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
    fn encode_field(&self, spec: &FieldSpec, field: &str, w: &mut KeyWriter<'_>) -> Result<()> {
        if self.timestamp_subsec_nanos() >= 1_000_000_000 {
            return Err(leap_second(field, self));
        }
        w.timestamp(spec, field, chrono_nanos(self))
    }
}

#[cfg(feature = "chrono")]
#[cold]
fn leap_second(field: &str, t: &chrono::DateTime<chrono::Utc>) -> Error {
    Error::ValueOutOfRange {
        field: field.to_owned(),
        value: t.to_rfc3339(),
        ty: "a timestamp without leap seconds (23:59:60 has no instant of its own)",
    }
}

#[cfg(feature = "chrono")]
impl DecodeField for chrono::DateTime<chrono::Utc> {
    fn decode_field(spec: &FieldSpec, field: &str, r: &mut KeyReader<'_>) -> Result<Self> {
        let start = r.position();
        let nanos = r.timestamp(spec, field)?;
        let (secs, sub) = (
            nanos.div_euclid(1_000_000_000),
            nanos.rem_euclid(1_000_000_000),
        );
        i64::try_from(secs)
            .ok()
            .and_then(|s| Self::from_timestamp(s, sub as u32))
            .ok_or_else(|| Error::malformed(Some(field), start, "chrono cannot hold the instant"))
    }
}

/// The instant as [`Value::Timestamp`]. A leap second becomes the next second's instant, as
/// chrono's own `timestamp_nanos_opt` counts it; encode a `DateTime` through its [`KeyField`]
/// to have a leap second refused instead.
#[cfg(feature = "chrono")]
impl From<chrono::DateTime<chrono::Utc>> for Value {
    fn from(v: chrono::DateTime<chrono::Utc>) -> Self {
        Self::Timestamp(chrono_nanos(&v))
    }
}

pub(super) const fn expects(_: Kind) -> &'static str {
    "a timestamp"
}

value_io!(Timestamp, timestamp, copy);

pub(super) fn parse_text(_: &FieldSpec, text: &str) -> Result<Value, &'static str> {
    timestamp_nanos(text).map(Value::Timestamp)
}

/// Nanoseconds since the epoch of `text`, milliseconds since 1970-01-01 UTC with at most six
/// decimals (what `pk`'s JSON prints of a timestamp below the millisecond).
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
