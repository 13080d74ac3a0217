//! How a [`Layout`](super::Layout) writes and reads each field: the dispatch from [`Value`]s to
//! the [`KeyWriter`] and [`KeyReader`] methods, planned once per field when the layout is built.

use std::hash::{Hash, Hasher};

use crate::error::{Error, Result};
use crate::field_spec::{FieldSpec, IntBits, Kind};
use crate::io::{KeyReader, KeyWriter, UintDigitsAt, UintReadAt, uint_digits_writer, uint_reader};
use crate::num;
use crate::prefix::BucketValue;
use crate::value::Value;

use super::{BucketFields, FieldDef};

/// The precomputed dispatch of every field of a layout, made when it is built.
///
/// It is a function of the layout's fields and bucket, so it takes no part in comparing or
/// hashing layouts (and holds function pointers, which do not compare reliably).
#[derive(Debug, Clone)]
pub(super) struct Plan(Vec<FieldOp>);

impl Plan {
    pub(super) fn new(fields: &[FieldDef], bucket: &BucketFields) -> Self {
        Self(
            fields
                .iter()
                .enumerate()
                .map(|(i, def)| FieldOp::new(i, &def.spec, bucket))
                .collect(),
        )
    }

    pub(super) fn ops(&self) -> &[FieldOp] {
        &self.0
    }
}

impl PartialEq for Plan {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Plan {}

impl Hash for Plan {
    fn hash<H: Hasher>(&self, _: &mut H) {}
}

/// How one field is written and read: its common forms get a direct path, every other form, every
/// field with a part in the bucket, and every value of an unexpected kind the general one
/// ([`write_field`] / [`read_field`]).
#[derive(Debug, Clone, Copy)]
pub(super) enum FieldOp {
    /// A required unsigned integer of up to 64 bits at a width of at most 20: written by `write`
    /// when at most `write_limit` (the kind's maximum and the width's), read by `read` up to
    /// `read_max` (the kind's maximum).
    Uint64 {
        write_limit: u64,
        read_max: u64,
        write: UintDigitsAt,
        read: UintReadAt,
    },
    /// A required signed integer of up to 64 bits, within `[min, max]`.
    Int64 { min: i64, max: i64 },
    /// A required plain ascending string.
    Str,
    /// Anything else.
    General(FieldRole),
}

/// What a field contributes to the bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FieldRole {
    None,
    Modulo,
    Hashed,
}

impl FieldOp {
    fn new(index: usize, spec: &FieldSpec, bucket: &BucketFields) -> Self {
        let role = match bucket {
            BucketFields::Modulo(i) if *i == index => FieldRole::Modulo,
            BucketFields::Hash(fields) if fields.contains(&index) => FieldRole::Hashed,
            _ => FieldRole::None,
        };
        if role != FieldRole::None || spec.is_optional() {
            return Self::General(role);
        }
        match spec.kind() {
            Kind::Uint { bits } if bits <= IntBits::B64 => {
                let read_max = uint_max(bits) as u64;
                let writers = (
                    uint_digits_writer(spec.width(), spec.order()),
                    uint_reader(spec.width(), spec.order()),
                );
                match writers {
                    (Some(write), Some(read)) => Self::Uint64 {
                        write_limit: read_max.min(num::u64_limit(spec.width())),
                        read_max,
                        write,
                        read,
                    },
                    _ => Self::General(role),
                }
            }
            Kind::Int { bits } if bits <= IntBits::B64 => {
                let (min, max) = int_bounds(bits);
                Self::Int64 {
                    min: min as i64,
                    max: max as i64,
                }
            }
            Kind::Str if !spec.is_escaped() && !spec.is_descending() => Self::Str,
            _ => Self::General(role),
        }
    }
}

/// The integer a modulo bucket takes of a value (a type mismatch is reported when it is written).
#[inline]
pub(super) fn bucket_value(value: &Value) -> Option<BucketValue> {
    match *value {
        Value::Uint(v) => Some(BucketValue::Unsigned(v)),
        Value::Int(v) => Some(BucketValue::Signed(v)),
        _ => None,
    }
}

#[cold]
pub(super) fn mismatch(def: &FieldDef, found: &Value) -> Error {
    Error::TypeMismatch {
        field: def.name.clone(),
        expected: match def.spec.kind() {
            Kind::Uint { .. } | Kind::Int { .. } => "an integer",
            Kind::Str => "a string",
            Kind::Bytes => "bytes",
            Kind::Bool => "a boolean",
            Kind::Char => "a character",
            Kind::F32 => "an f32",
            Kind::F64 => "an f64",
            Kind::Uuid => "a UUID",
            Kind::Timestamp => "a timestamp",
        },
        found: found.kind_name(),
    }
}

#[cold]
pub(super) fn out_of_range(def: &FieldDef, value: impl ToString) -> Error {
    Error::ValueOutOfRange {
        field: def.name.clone(),
        value: value.to_string(),
        ty: def.spec.kind().name(),
    }
}

pub(super) fn uint_max(bits: IntBits) -> u128 {
    let bits = bits.get();
    if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    }
}

pub(super) fn int_bounds(bits: IntBits) -> (i128, i128) {
    let bits = bits.get();
    if bits >= 128 {
        (i128::MIN, i128::MAX)
    } else {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    }
}

pub(super) fn write_value(w: &mut KeyWriter<'_>, def: &FieldDef, value: &Value) -> Result<()> {
    let spec = &def.spec;
    let name = def.name.as_str();
    if spec.is_optional() {
        if value.is_null() {
            w.none(spec, name);
            return Ok(());
        }
        w.some(spec, name);
    }
    match (spec.kind(), value) {
        (Kind::Uint { bits }, Value::Uint(_) | Value::Int(_)) => {
            let v = match *value {
                Value::Uint(v) => v,
                Value::Int(v) => u128::try_from(v).map_err(|_| out_of_range(def, v))?,
                _ => unreachable!("matched above"),
            };
            if v > uint_max(bits) {
                return Err(out_of_range(def, v));
            }
            match u64::try_from(v) {
                Ok(small) if bits <= IntBits::B64 => w.uint64(spec, name, small),
                _ => w.uint128(spec, name, v),
            }
        }
        (Kind::Int { bits }, Value::Uint(_) | Value::Int(_)) => {
            let v = match *value {
                Value::Int(v) => v,
                Value::Uint(v) => i128::try_from(v).map_err(|_| out_of_range(def, v))?,
                _ => unreachable!("matched above"),
            };
            let (min, max) = int_bounds(bits);
            if v < min || v > max {
                return Err(out_of_range(def, v));
            }
            match i64::try_from(v) {
                Ok(small) if bits <= IntBits::B64 => w.int64(spec, name, small),
                _ => w.int128(spec, name, v),
            }
        }
        (Kind::Str, Value::Str(s)) => w.str(spec, name, s),
        (Kind::Bytes, Value::Bytes(b)) => {
            w.bytes(spec, name, b);
            Ok(())
        }
        (Kind::Bool, Value::Bool(b)) => {
            w.bool(spec, name, *b);
            Ok(())
        }
        (Kind::Char, Value::Char(c)) => {
            w.char(spec, name, *c);
            Ok(())
        }
        (Kind::F32, Value::F32(v)) => {
            w.f32(spec, name, *v);
            Ok(())
        }
        (Kind::F64, Value::F64(v)) => {
            w.f64(spec, name, *v);
            Ok(())
        }
        (Kind::Uuid, Value::Uuid(v)) => {
            w.uuid(spec, name, *v);
            Ok(())
        }
        (Kind::Timestamp, Value::Timestamp(v)) => w.timestamp(spec, name, *v),
        _ => Err(mismatch(def, value)),
    }
}

/// Writes a field by the general path, with its part in the bucket.
#[inline(never)]
pub(super) fn write_field(
    w: &mut KeyWriter<'_>,
    def: &FieldDef,
    role: FieldRole,
    value: &Value,
) -> Result<()> {
    let start = w.position();
    write_value(w, def, value)?;
    match role {
        FieldRole::None => {}
        FieldRole::Modulo => {
            if let Some(v) = bucket_value(value) {
                w.bucket_value(v);
            }
        }
        FieldRole::Hashed => w.bucket_span(start),
    }
    Ok(())
}

/// Reads a field by the general path, with its part in the bucket.
#[inline(never)]
pub(super) fn read_field(r: &mut KeyReader<'_>, def: &FieldDef, role: FieldRole) -> Result<Value> {
    let start = r.position();
    let value = read_value(r, def)?;
    match role {
        FieldRole::None => {}
        FieldRole::Modulo => {
            if let Some(v) = bucket_value(&value) {
                r.bucket_value(v);
            }
        }
        FieldRole::Hashed => r.bucket_span(start),
    }
    Ok(value)
}

pub(super) fn read_value(r: &mut KeyReader<'_>, def: &FieldDef) -> Result<Value> {
    let spec = &def.spec;
    let name = def.name.as_str();
    if spec.is_optional() {
        if r.none(spec, name) {
            return Ok(Value::Null);
        }
        r.some(spec, name)?;
    }
    Ok(match spec.kind() {
        Kind::Uint { bits } => Value::Uint(r.uint128(spec, name, uint_max(bits))?),
        Kind::Int { bits } => {
            let (min, max) = int_bounds(bits);
            Value::Int(r.int128(spec, name, min, max)?)
        }
        Kind::Str => Value::Str(r.str(spec, name)?),
        Kind::Bytes => Value::Bytes(r.bytes(spec, name)?),
        Kind::Bool => Value::Bool(r.bool(spec, name)?),
        Kind::Char => Value::Char(r.char(spec, name)?),
        Kind::F32 => Value::F32(r.f32(spec, name)?),
        Kind::F64 => Value::F64(r.f64(spec, name)?),
        Kind::Uuid => Value::Uuid(r.uuid(spec, name)?),
        Kind::Timestamp => Value::Timestamp(r.timestamp(spec, name)?),
    })
}
