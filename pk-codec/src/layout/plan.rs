//! How a [`Layout`](super::Layout) writes and reads each field: the dispatch from [`Value`]s to
//! the [`KeyWriter`] and [`KeyReader`] methods, planned once per field when the layout is built.

use crate::error::{Error, Result};
use crate::field_spec::{FieldSpec, IntBits, Kind};
use crate::io::{KeyReader, KeyWriter};
use crate::prefix::BucketValue;
use crate::value::Value;

use super::{BucketFields, FieldDef};

/// The precomputed dispatch of one field: its common forms get a direct call, every other form
/// (and every value of an unexpected kind) the general [`write_value`] / [`read_value`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct FieldPlan {
    pub(super) op: FieldOp,
    pub(super) role: FieldRole,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum FieldOp {
    /// A required unsigned integer of up to 64 bits, at most `max`.
    Uint64 { max: u64 },
    /// A required signed integer of up to 64 bits, within `[min, max]`.
    Int64 { min: i64, max: i64 },
    /// A required string (any form: [`KeyWriter::str`] picks it).
    Str,
    /// Anything else.
    General,
}

/// What a field contributes to the bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum FieldRole {
    None,
    Modulo,
    Hashed,
}

impl FieldPlan {
    pub(super) fn new(index: usize, spec: &FieldSpec, bucket: &BucketFields) -> Self {
        let op = match spec.kind() {
            _ if spec.is_optional() => FieldOp::General,
            Kind::Uint { bits } if bits <= IntBits::B64 => FieldOp::Uint64 {
                max: uint_max(bits) as u64,
            },
            Kind::Int { bits } if bits <= IntBits::B64 => {
                let (min, max) = int_bounds(bits);
                FieldOp::Int64 {
                    min: min as i64,
                    max: max as i64,
                }
            }
            Kind::Str => FieldOp::Str,
            _ => FieldOp::General,
        };
        let role = match bucket {
            BucketFields::Modulo(i) if *i == index => FieldRole::Modulo,
            BucketFields::Hash(fields) if fields.contains(&index) => FieldRole::Hashed,
            _ => FieldRole::None,
        };
        Self { op, role }
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
