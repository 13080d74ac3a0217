//! How a [`Layout`](super::Layout) writes and reads each field: a direct writer and reader per
//! field, chosen once when the layout is built, and the general dispatch from [`Value`]s to the
//! [`KeyWriter`] and [`KeyReader`] methods for every other form, every field with a part in the
//! bucket, and every value the direct path declines.

use std::hash::{Hash, Hasher};

use crate::error::{Error, Result};
use crate::field_spec::{FieldSpec, IntBits, Kind};
use crate::io::{KeyReader, KeyWriter};
use crate::num;
use crate::prefix::BucketValue;
use crate::value::Value;

use super::{BucketFields, FieldDef};

/// The steps of a layout, one per field, made when it is built.
///
/// It is a function of the layout's fields and bucket, so it takes no part in comparing or
/// hashing layouts (and holds function pointers, which do not compare reliably).
#[derive(Debug, Clone)]
pub(super) struct Plan(Vec<Step>);

impl Plan {
    pub(super) fn new(fields: &[FieldDef], bucket: &BucketFields) -> Self {
        Self(
            fields
                .iter()
                .enumerate()
                .map(|(i, def)| Step::new(i, &def.spec, bucket))
                .collect(),
        )
    }

    pub(super) fn steps(&self) -> &[Step] {
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

/// Writes a field whose value takes the direct path (after its delimiter, which the caller
/// writes), answering whether it did; when it did not, it wrote nothing, and the general path
/// ([`write_field`]) writes the field or says what is wrong. Called through a pointer chosen for
/// the field's form, so a layout's loop pays one indirect call per field and nothing else.
type FieldWriter = fn(&mut KeyWriter<'_>, &FieldDef, &Value, u64) -> bool;

/// Reads a field whose text takes the direct path and appends its value, answering whether it
/// did; when it did not, it consumed nothing, and the general path ([`read_field`]) reads the
/// field or says what is wrong.
type FieldReader = fn(&mut KeyReader<'_>, &FieldDef, u64, &mut Vec<Value>) -> bool;

/// How one field is written and read.
#[derive(Debug, Clone, Copy)]
pub(super) struct Step {
    write: FieldWriter,
    read: FieldReader,
    /// The largest value written: the kind's maximum and the width's (unsigned integers only).
    write_limit: u64,
    /// The largest value read: the kind's maximum (unsigned integers only).
    read_max: u64,
    /// The field's part in the bucket (only fields on the general path have one).
    pub(super) role: FieldRole,
}

/// What a field contributes to the bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FieldRole {
    None,
    Modulo,
    Hashed,
}

impl Step {
    fn new(index: usize, spec: &FieldSpec, bucket: &BucketFields) -> Self {
        let role = match bucket {
            BucketFields::Modulo(i) if *i == index => FieldRole::Modulo,
            BucketFields::Hash(fields) if fields.contains(&index) => FieldRole::Hashed,
            _ => FieldRole::None,
        };
        let general = Self {
            write: general_writer,
            read: general_reader,
            write_limit: 0,
            read_max: 0,
            role,
        };
        if role != FieldRole::None || spec.is_optional() {
            return general;
        }
        match spec.kind() {
            Kind::Uint { bits } if bits <= IntBits::B64 => {
                let read_max = uint_max(bits) as u64;
                let at = usize::from(spec.width()).wrapping_sub(1);
                let order = usize::from(spec.is_descending());
                match (UINT_WRITERS.get(at), UINT_READERS.get(at)) {
                    (Some(writers), Some(readers)) => Self {
                        write: writers[order],
                        read: readers[order],
                        write_limit: read_max.min(num::u64_limit(spec.width())),
                        read_max,
                        role,
                    },
                    // Above width 20.
                    _ => general,
                }
            }
            Kind::Int { bits } if bits <= IntBits::B64 => Self {
                write: int_writer,
                read: int_reader,
                ..general
            },
            Kind::Str if !spec.is_escaped() && !spec.is_descending() => Self {
                write: str_writer,
                read: str_reader,
                ..general
            },
            _ => general,
        }
    }

    /// Writes the field by its direct path or, declined, the general one.
    #[inline(always)]
    pub(super) fn write(&self, w: &mut KeyWriter<'_>, def: &FieldDef, value: &Value) -> Result<()> {
        if (self.write)(w, def, value, self.write_limit) {
            Ok(())
        } else {
            write_field(w, def, self.role, value)
        }
    }

    /// Reads the field by its direct path or, declined, the general one, appending its value.
    #[inline(always)]
    pub(super) fn read(
        &self,
        r: &mut KeyReader<'_>,
        def: &FieldDef,
        values: &mut Vec<Value>,
    ) -> Result<()> {
        if !(self.read)(r, def, self.read_max, values) {
            values.push(read_field(r, def, self.role)?);
        }
        Ok(())
    }
}

fn uint_writer<const WIDTH: u8, const DESC: bool>(
    w: &mut KeyWriter<'_>,
    _: &FieldDef,
    value: &Value,
    limit: u64,
) -> bool {
    match *value {
        Value::Uint(v) if v <= u128::from(limit) => {
            w.uint_digits_fixed::<WIDTH, DESC>(v as u64);
            true
        }
        _ => false,
    }
}

fn uint_reader<const WIDTH: u8, const DESC: bool>(
    r: &mut KeyReader<'_>,
    _: &FieldDef,
    max: u64,
    values: &mut Vec<Value>,
) -> bool {
    match r.uint64_fast(max, WIDTH, DESC) {
        Some(v) => {
            values.push(Value::Uint(u128::from(v)));
            true
        }
        None => false,
    }
}

/// The direct writers and readers of unsigned integers, compiled for each width (1 to 20, index
/// `width - 1`) and order (ascending, then descending): the digits are the straight-line code of
/// a derived key.
macro_rules! uint_tables {
    ($($width:literal)*) => {
        static UINT_WRITERS: [[FieldWriter; 2]; 20] = [$([
            uint_writer::<$width, false> as FieldWriter,
            uint_writer::<$width, true> as FieldWriter,
        ]),*];
        static UINT_READERS: [[FieldReader; 2]; 20] = [$([
            uint_reader::<$width, false> as FieldReader,
            uint_reader::<$width, true> as FieldReader,
        ]),*];
    };
}

uint_tables!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20);

fn int_writer(w: &mut KeyWriter<'_>, def: &FieldDef, value: &Value, _: u64) -> bool {
    let (&Value::Int(v), Kind::Int { bits }) = (value, def.spec.kind()) else {
        return false;
    };
    let (min, max) = int_bounds(bits);
    // Too wide for the field's width: `int64` fails before it writes anything.
    v >= min && v <= max && w.int64(&def.spec, &def.name, v as i64).is_ok()
}

fn int_reader(r: &mut KeyReader<'_>, def: &FieldDef, _: u64, values: &mut Vec<Value>) -> bool {
    let Kind::Int { bits } = def.spec.kind() else {
        return false;
    };
    let (min, max) = int_bounds(bits);
    let at = r.position();
    match r.int128(&def.spec, &def.name, min, max) {
        Ok(v) => {
            values.push(Value::Int(v));
            true
        }
        Err(_) => {
            r.rewind(at);
            false
        }
    }
}

fn str_writer(w: &mut KeyWriter<'_>, _: &FieldDef, value: &Value, _: u64) -> bool {
    match value {
        Value::Str(s) => w.try_plain_str(s),
        _ => false,
    }
}

fn str_reader(r: &mut KeyReader<'_>, _: &FieldDef, _: u64, values: &mut Vec<Value>) -> bool {
    match r.try_plain_str() {
        Some(s) => {
            values.push(Value::Str(s.to_owned()));
            true
        }
        None => false,
    }
}

fn general_writer(_: &mut KeyWriter<'_>, _: &FieldDef, _: &Value, _: u64) -> bool {
    false
}

fn general_reader(_: &mut KeyReader<'_>, _: &FieldDef, _: u64, _: &mut Vec<Value>) -> bool {
    false
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
