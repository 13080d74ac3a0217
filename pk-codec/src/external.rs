//! Key fields of other crates' types, each behind the cargo feature of the crate's name: `uuid`
//! ([`uuid::Uuid`], the `uuid` kind), `time` ([`time::OffsetDateTime`]) and `chrono`
//! ([`chrono::DateTime<Utc>`](chrono::DateTime)), both the `timestamp` kind.

#[cfg(any(feature = "time", feature = "chrono"))]
use crate::error::Error;
#[cfg(any(feature = "uuid", feature = "time", feature = "chrono"))]
use crate::{
    error::Result,
    field_spec::{FieldSpec, Kind},
    io::{KeyReader, KeyWriter},
    key::{DecodeField, KeyField},
    value::Value,
};

#[cfg(feature = "uuid")]
impl KeyField for uuid::Uuid {
    const KIND: Kind = Kind::Uuid;
    fn encode_field(&self, spec: &FieldSpec, field: &str, w: &mut KeyWriter<'_>) -> Result<()> {
        w.uuid(spec, field, self.as_u128());
        Ok(())
    }
}

#[cfg(feature = "uuid")]
impl DecodeField for uuid::Uuid {
    fn decode_field(spec: &FieldSpec, field: &str, r: &mut KeyReader<'_>) -> Result<Self> {
        Ok(Self::from_u128(r.uuid(spec, field)?))
    }
}

#[cfg(feature = "uuid")]
impl From<uuid::Uuid> for Value {
    fn from(v: uuid::Uuid) -> Self {
        Self::Uuid(v.as_u128())
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
/// ([`Error::ValueOutOfRange`]): a timestamp key counts seconds since the epoch, where
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
