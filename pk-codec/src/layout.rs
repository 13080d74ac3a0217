//! [`Layout`]: a key layout known at run time, built in code, parsed from a spec or loaded with serde.

use std::fmt;
use std::ops::Bound;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::hash::HashAlg;
use crate::io::{KeyReader, KeyWriter};
use crate::prefix::{BucketBy, BucketValue, HashOver, Prefix, Separator};
use crate::range::{KeyRange, RangeBuilder};
use crate::rules;
use crate::shape::{DEFAULT_DELIMITER, DEFAULT_MAX_LEN, KeyShape};
use crate::spec::{FieldSpec, IntBits, Kind, Order};
use crate::timestamp::Precision;
use crate::value::Value;

/// One named field of a [`Layout`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldDef {
    name: String,
    spec: FieldSpec,
}

impl FieldDef {
    /// The field's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How the field is written.
    #[must_use]
    pub const fn spec(&self) -> &FieldSpec {
        &self.spec
    }
}

/// Which fields pick the bucket of a bucketed layout.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum BucketFields {
    None,
    /// The index of the integer field whose value modulo the count is the bucket.
    Modulo(usize),
    /// The indices of the hashed fields; empty for the whole natural key.
    Hash(Vec<usize>),
}

enum BucketRole {
    None,
    Value(BucketValue),
    Span,
}

/// A key layout known at run time: named fields, a delimiter, an optional hash or bucket prefix
/// and a length limit.
///
/// Build one in code with [`Layout::builder`], parse one from a short text spec with
/// [`str::parse`], or load one with serde (JSON, TOML, ...). Keys are the same bytes as a
/// `#[derive(PartitionKey)]` struct with the same layout writes: both go through [`KeyShape`].
///
/// # The text spec
///
/// Items separated by `;`. A field is `name: type` followed by modifiers; a setting is `key=value`.
///
/// | item | meaning |
/// |---|---|
/// | `name: u32`, `i64`, `str`, `bytes`, `bool`, `char` (any of `u8`..`u128`, `i8`..`i128`) | a field |
/// | ` width=6` | an integer field's width in characters (default: the type's widest value) |
/// | ` desc` | the field sorts descending |
/// | ` escaped` | a `str` field in the escaped form, which accepts any string |
/// | ` optional` | the field may be null (`None`), which sorts first |
/// | `delimiter=','` | the delimiter (default `,`); `'\x01'` for a control character |
/// | `max_len=1024` | the key length limit in bytes (default 1024) |
/// | `hash=md5:4`, `hash=xxh3:8:sep` | a hash prefix: algorithm, hex characters, `sep` for a delimiter after it |
/// | `buckets=16:mod(ts)`, `buckets=8:hash`, `buckets=8:hash(a,b):sep` | a bucket prefix by modulo of one integer field, or by hash of some fields (all by default) |
///
/// # Examples
///
/// ```
/// use pk_codec::{Layout, Value};
///
/// let layout: Layout = "device_id: u32 width=6; seller_id: str; card_id: u64 width=6".parse()?;
/// let key = layout.encode(&[54u32.into(), "a100".into(), 6777u64.into()])?;
/// assert_eq!(key, "000054,a100,006777");
/// assert_eq!(layout.decode(&key)?, vec![Value::Uint(54), Value::from("a100"), Value::Uint(6777)]);
///
/// let json = r#"{"fields": [{"name": "order_number", "type": "u64", "width": 6}],
///                "prefix": {"kind": "hash", "algorithm": "md5", "len": 4}}"#;
/// let hashed: Layout = serde_json::from_str(json).unwrap();
/// assert_eq!(hashed.encode(&[200_001u64.into()])?, "ee8f200001");
/// # Ok::<(), pk_codec::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "LayoutConfig", into = "LayoutConfig")]
pub struct Layout {
    fields: Vec<FieldDef>,
    shape: KeyShape,
    bucket: BucketFields,
    /// How each field is written and read, decided once when the layout is built (derived from
    /// `fields` and `bucket`, so it adds nothing to equality or hashing).
    plan: Vec<FieldPlan>,
}

/// The precomputed dispatch of one field: its common forms get a direct call, every other form
/// (and every value of an unexpected kind) the general [`write_value`] / [`read_value`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct FieldPlan {
    op: FieldOp,
    role: FieldRole,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum FieldOp {
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
enum FieldRole {
    None,
    Modulo,
    Hashed,
}

impl FieldPlan {
    fn new(index: usize, spec: &FieldSpec, bucket: &BucketFields) -> Self {
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

/// Builds a [`Layout`] in code.
///
/// # Examples
///
/// ```
/// use pk_codec::{FieldSpec, IntBits, Kind, Layout, Separator};
///
/// let layout = Layout::builder()
///     .field("ts", FieldSpec::new(Kind::Uint { bits: IntBits::B64 }).with_width(13))
///     .buckets_by_modulo(16, "ts", Separator::After)
///     .build()?;
/// assert_eq!(layout.encode(&[1_700_000_000_017u64.into()])?, "01,1700000000017");
/// # Ok::<(), pk_codec::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct LayoutBuilder {
    fields: Vec<FieldDef>,
    delimiter: Option<char>,
    max_len: Option<usize>,
    prefix: Option<PrefixConfig>,
}

impl LayoutBuilder {
    /// Adds a field.
    pub fn field(mut self, name: impl Into<String>, spec: FieldSpec) -> Self {
        self.fields.push(FieldDef {
            name: name.into(),
            spec,
        });
        self
    }

    /// Sets the delimiter (default `b','`), a byte as in [`KeyShape::new`].
    pub const fn delimiter(mut self, delimiter: u8) -> Self {
        self.delimiter = Some(delimiter as char);
        self
    }

    /// Sets the key length limit in bytes (default 1024).
    pub const fn max_len(mut self, max_len: usize) -> Self {
        self.max_len = Some(max_len);
        self
    }

    /// Adds a hash prefix: the first `len` hex characters of `alg` over the natural key.
    pub fn hash_prefix(mut self, alg: HashAlg, len: u8, separator: Separator) -> Self {
        self.prefix = Some(PrefixConfig::Hash {
            algorithm: alg,
            len,
            separator: separator.is_after(),
            fields: Vec::new(),
        });
        self
    }

    /// Adds a hash prefix over the named leading fields only: the first `len` hex characters of
    /// `alg` over their text, so that the keys of one entity (one `device_id`) stay together and
    /// range reads over the later fields work once the hashed fields are fixed.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{FieldSpec, HashAlg, IntBits, Kind, Layout, Separator, Value};
    /// use std::ops::Bound;
    ///
    /// let layout = Layout::builder()
    ///     .field("device_id", FieldSpec::new(Kind::Uint { bits: IntBits::B32 }).with_width(6))
    ///     .field("ts", FieldSpec::new(Kind::Uint { bits: IntBits::B64 }).with_width(13))
    ///     .hash_prefix_over(HashAlg::Md5, 4, Separator::After, ["device_id"])
    ///     .build()?;
    /// let key = layout.encode(&[54u32.into(), 1_700_000_000_000u64.into()])?;
    /// assert_eq!(&key[..4], HashAlg::Md5.hex_prefix(b"000054", 4));
    /// // One device's hour: one range read.
    /// let (lo, hi) = (Value::from(1_700_000_000_000u64), Value::from(1_700_003_600_000u64));
    /// let range = layout.range(&[54u32.into()], Bound::Included(&lo), Bound::Excluded(&hi))?;
    /// assert!(range.contains(&key));
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    pub fn hash_prefix_over<S: Into<String>>(
        mut self,
        alg: HashAlg,
        len: u8,
        separator: Separator,
        fields: impl IntoIterator<Item = S>,
    ) -> Self {
        self.prefix = Some(PrefixConfig::Hash {
            algorithm: alg,
            len,
            separator: separator.is_after(),
            fields: fields.into_iter().map(Into::into).collect(),
        });
        self
    }

    /// Adds a bucket prefix: `value % count` of the integer field `field`.
    pub fn buckets_by_modulo(
        mut self,
        count: u32,
        field: impl Into<String>,
        separator: Separator,
    ) -> Self {
        self.prefix = Some(PrefixConfig::Buckets {
            count,
            by: BucketBy::Modulo,
            fields: vec![field.into()],
            separator: separator.is_after(),
        });
        self
    }

    /// Adds a bucket prefix: `xxh3_64 % count` over the named fields' text (all fields if empty).
    pub fn buckets_by_hash<S: Into<String>>(
        mut self,
        count: u32,
        fields: impl IntoIterator<Item = S>,
        separator: Separator,
    ) -> Self {
        self.prefix = Some(PrefixConfig::Buckets {
            count,
            by: BucketBy::Hash,
            fields: fields.into_iter().map(Into::into).collect(),
            separator: separator.is_after(),
        });
        self
    }

    /// Checks everything and builds the layout.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidLayout`] saying what cannot work: no fields, a duplicate or empty name,
    /// a bad width, a delimiter that cannot order a field, a bad prefix.
    pub fn build(self) -> Result<Layout> {
        LayoutConfig {
            delimiter: self.delimiter,
            max_len: self.max_len,
            prefix: self.prefix,
            fields: self.fields.into_iter().map(FieldConfig::from).collect(),
        }
        .try_into()
    }
}

impl Layout {
    /// A builder for a layout.
    pub fn builder() -> LayoutBuilder {
        LayoutBuilder::default()
    }

    /// The fields, in key order.
    #[must_use]
    pub fn fields(&self) -> &[FieldDef] {
        &self.fields
    }

    /// The delimiter, prefix and length limit.
    #[must_use]
    pub const fn shape(&self) -> &KeyShape {
        &self.shape
    }

    /// Encodes one key.
    ///
    /// # Errors
    ///
    /// [`Error::FieldCount`], [`Error::TypeMismatch`], [`Error::ValueOutOfRange`] for values that
    /// do not fit the fields; [`Error::ValueTooWide`], [`Error::CharBelowDelimiter`],
    /// [`Error::KeyTooLong`] as the key forms require.
    pub fn encode(&self, values: &[Value]) -> Result<String> {
        let mut out = String::new();
        self.encode_into(values, &mut out)?;
        Ok(out)
    }

    /// Appends one key to `out`; on error `out` is unchanged.
    ///
    /// # Errors
    ///
    /// As [`Layout::encode`].
    pub fn encode_into(&self, values: &[Value], out: &mut String) -> Result<()> {
        if values.len() != self.fields.len() {
            return Err(Error::FieldCount {
                expected: self.fields.len(),
                found: values.len(),
            });
        }
        self.shape.encode_with(out, |w| {
            for ((def, plan), value) in self.fields.iter().zip(&self.plan).zip(values) {
                w.begin_field();
                let start = w.position();
                match (plan.op, value) {
                    (FieldOp::Uint64 { max }, &Value::Uint(v)) if v <= u128::from(max) => {
                        w.uint64_runtime(&def.spec, &def.name, v as u64)?;
                    }
                    (FieldOp::Int64 { min, max }, &Value::Int(v))
                        if v >= i128::from(min) && v <= i128::from(max) =>
                    {
                        w.int64(&def.spec, &def.name, v as i64)?;
                    }
                    (FieldOp::Str, Value::Str(s)) => w.str(&def.spec, &def.name, s)?,
                    _ => write_value(w, def, value)?,
                }
                match plan.role {
                    FieldRole::None => {}
                    FieldRole::Modulo => {
                        if let Some(v) = bucket_value(value) {
                            w.bucket_value(v);
                        }
                    }
                    FieldRole::Hashed => w.bucket_span(start),
                }
            }
            Ok(())
        })
    }

    /// What field `index`, holding `value`, contributes to the bucket.
    fn bucket_role(&self, index: usize, value: &Value) -> BucketRole {
        match self.plan[index].role {
            FieldRole::Modulo => bucket_value(value).map_or(BucketRole::None, BucketRole::Value),
            FieldRole::Hashed => BucketRole::Span,
            FieldRole::None => BucketRole::None,
        }
    }

    /// Decodes one key back to its values: integers as [`Value::Uint`] / [`Value::Int`] by the
    /// field's kind, a null optional as [`Value::Null`].
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] with the byte position for any text this layout would not write,
    /// [`Error::PrefixMismatch`] for a wrong prefix, [`Error::ValueOutOfRange`] for a number
    /// outside its type.
    pub fn decode(&self, key: &str) -> Result<Vec<Value>> {
        let mut values = Vec::with_capacity(self.fields.len());
        self.decode_into(key, &mut values)?;
        Ok(values)
    }

    /// Decodes one key, appending its values to `values` (the allocation-saving form of
    /// [`Layout::decode`], for a loop that reuses one vector); on error `values` is left as it was.
    ///
    /// # Errors
    ///
    /// As [`Layout::decode`].
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{Layout, Value};
    ///
    /// let layout: Layout = "device_id: u32 width=6; seller_id: str".parse()?;
    /// let mut values = Vec::new();
    /// for key in ["000054,a100", "000055,a101"] {
    ///     values.clear();
    ///     layout.decode_into(key, &mut values)?;
    ///     assert_eq!(values.len(), 2);
    /// }
    /// assert_eq!(values, vec![Value::Uint(55), Value::from("a101")]);
    /// assert!(layout.decode_into("000054", &mut values).is_err());
    /// assert_eq!(values.len(), 2);
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    pub fn decode_into(&self, key: &str, values: &mut Vec<Value>) -> Result<()> {
        let base = values.len();
        values.reserve(self.fields.len());
        let decoded = self.shape.decode_with(key, |r| {
            for (def, plan) in self.fields.iter().zip(&self.plan) {
                r.begin_field(&def.name)?;
                let start = r.position();
                let value = match plan.op {
                    FieldOp::Uint64 { max } => {
                        Value::Uint(u128::from(r.uint64_runtime(&def.spec, &def.name, max)?))
                    }
                    FieldOp::Int64 { min, max } => {
                        let (min, max) = (i128::from(min), i128::from(max));
                        Value::Int(r.int128(&def.spec, &def.name, min, max)?)
                    }
                    FieldOp::Str => Value::Str(r.str(&def.spec, &def.name)?),
                    FieldOp::General => read_value(r, def)?,
                };
                match plan.role {
                    FieldRole::None => {}
                    FieldRole::Modulo => {
                        if let Some(v) = bucket_value(&value) {
                            r.bucket_value(v);
                        }
                    }
                    FieldRole::Hashed => r.bucket_span(start),
                }
                values.push(value);
            }
            Ok(())
        });
        if decoded.is_err() {
            values.truncate(base);
        }
        decoded
    }

    /// The key ranges that hold exactly the keys whose leading fields equal `prefix`: one range,
    /// or one per bucket for a bucketed layout (just one when `prefix` includes the modulo field).
    ///
    /// # Errors
    ///
    /// [`Error::RangeUnsupported`] for a hash prefix; [`Error::FieldCount`] for more values than
    /// fields; the errors of [`Layout::encode`] for the values.
    pub fn prefix_ranges(&self, prefix: &[Value]) -> Result<Vec<KeyRange>> {
        self.ranges(prefix, Bound::Unbounded, Bound::Unbounded)
    }

    /// The key ranges that hold exactly the keys whose leading fields equal `prefix` and whose
    /// next field lies within `lower` and `upper` (in value order, also for descending fields):
    /// one range, or one per bucket for a bucketed layout.
    ///
    /// # Errors
    ///
    /// As [`Layout::prefix_ranges`]; [`Error::FieldCount`] when bounds are given but `prefix`
    /// already names every field.
    pub fn ranges(
        &self,
        prefix: &[Value],
        lower: Bound<&Value>,
        upper: Bound<&Value>,
    ) -> Result<Vec<KeyRange>> {
        let bounded = !matches!((lower, upper), (Bound::Unbounded, Bound::Unbounded));
        let most = self.fields.len() - usize::from(bounded);
        if prefix.len() > most {
            return Err(Error::FieldCount {
                expected: most,
                found: prefix.len(),
            });
        }
        let mut builder = RangeBuilder::new(&self.shape)?;
        let hashed_leading = match (&self.bucket, self.shape.prefix()) {
            (BucketFields::Hash(v), Prefix::Hash { .. }) => v.len(),
            _ => 0,
        };
        for (i, (def, value)) in self.fields.iter().zip(prefix).enumerate() {
            builder.equal(|w| {
                w.begin_field();
                write_value(w, def, value)?;
                if let BucketRole::Value(v) = self.bucket_role(i, value) {
                    w.bucket_value(v);
                }
                Ok(())
            })?;
            if i + 1 == hashed_leading {
                builder.end_hashed();
            }
        }
        let Some(next) = self.fields.get(prefix.len()) else {
            return builder.finish(Bound::Unbounded, Bound::Unbounded, Order::Asc);
        };
        let encode_bound = |b: Bound<&Value>| -> Result<Bound<String>> {
            Ok(match b {
                Bound::Included(v) => Bound::Included(builder.bound(|w| write_value(w, next, v))?),
                Bound::Excluded(v) => Bound::Excluded(builder.bound(|w| write_value(w, next, v))?),
                Bound::Unbounded => Bound::Unbounded,
            })
        };
        let (lower, upper) = (encode_bound(lower)?, encode_bound(upper)?);
        builder.finish(
            lower.as_ref().map(String::as_str),
            upper.as_ref().map(String::as_str),
            next.spec.order(),
        )
    }

    /// The one key range of a layout without a bucket prefix (see [`Layout::ranges`]).
    ///
    /// # Errors
    ///
    /// As [`Layout::ranges`], and [`Error::RangeUnsupported`] when the keys lie in several
    /// buckets: use [`Layout::ranges`] and merge with [`KeyShape::merge_buckets`].
    pub fn range(
        &self,
        prefix: &[Value],
        lower: Bound<&Value>,
        upper: Bound<&Value>,
    ) -> Result<KeyRange> {
        let mut ranges = self.ranges(prefix, lower, upper)?;
        if ranges.len() != 1 {
            return Err(Error::RangeUnsupported {
                reason: format!(
                    "the keys lie in {} buckets; use `ranges` and merge the reads with `merge_buckets`",
                    ranges.len()
                ),
            });
        }
        Ok(ranges.remove(0))
    }
}

/// The integer a modulo bucket takes of a value (a type mismatch is reported when it is written).
#[inline]
fn bucket_value(value: &Value) -> Option<BucketValue> {
    match *value {
        Value::Uint(v) => Some(BucketValue::Unsigned(v)),
        Value::Int(v) => Some(BucketValue::Signed(v)),
        _ => None,
    }
}

#[cold]
fn mismatch(def: &FieldDef, found: &Value) -> Error {
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
fn out_of_range(def: &FieldDef, value: impl ToString) -> Error {
    Error::ValueOutOfRange {
        field: def.name.clone(),
        value: value.to_string(),
        ty: def.spec.kind().name(),
    }
}

fn uint_max(bits: IntBits) -> u128 {
    let bits = bits.get();
    if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    }
}

fn int_bounds(bits: IntBits) -> (i128, i128) {
    let bits = bits.get();
    if bits >= 128 {
        (i128::MIN, i128::MAX)
    } else {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    }
}

fn write_value(w: &mut KeyWriter<'_>, def: &FieldDef, value: &Value) -> Result<()> {
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

fn read_value(r: &mut KeyReader<'_>, def: &FieldDef) -> Result<Value> {
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

// ---------------------------------------------------------------------------------------------
// The serde form, which `LayoutBuilder` and the text spec also go through, so that every way in
// is validated by one function.

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LayoutConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    delimiter: Option<char>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_len: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    prefix: Option<PrefixConfig>,
    fields: Vec<FieldConfig>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
enum PrefixConfig {
    Hash {
        algorithm: HashAlg,
        len: u8,
        #[serde(default)]
        separator: bool,
        /// The leading fields hashed; empty for the whole natural key.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        fields: Vec<String>,
    },
    Buckets {
        count: u32,
        by: BucketBy,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        fields: Vec<String>,
        #[serde(default)]
        separator: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FieldConfig {
    name: String,
    #[serde(rename = "type")]
    ty: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    width: Option<u8>,
    #[serde(default, skip_serializing_if = "is_asc")]
    order: OrderConfig,
    #[serde(default, skip_serializing_if = "is_false")]
    escaped: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    optional: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    precision: Option<Precision>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum OrderConfig {
    #[default]
    Asc,
    Desc,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_asc(o: &OrderConfig) -> bool {
    *o == OrderConfig::Asc
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_false(b: &bool) -> bool {
    !*b
}

impl From<FieldDef> for FieldConfig {
    fn from(def: FieldDef) -> Self {
        let spec = def.spec;
        Self {
            ty: spec.kind().name().to_owned(),
            width: (spec.kind().default_width() != Some(spec.width()) && spec.kind().is_integer())
                .then_some(spec.width()),
            order: match spec.order() {
                Order::Asc => OrderConfig::Asc,
                Order::Desc => OrderConfig::Desc,
            },
            escaped: spec.is_escaped(),
            optional: spec.is_optional(),
            precision: spec.has_precision().then(|| spec.precision()),
            name: def.name,
        }
    }
}

impl FieldConfig {
    fn to_def(&self) -> Result<FieldDef> {
        let kind = Kind::from_name(&self.ty).ok_or_else(|| {
            Error::layout(
                Some(&self.name),
                format!(
                    "unknown type {:?}; expected one of u8, u16, u32, u64, u128, i8, i16, i32, i64, i128, str, bytes, bool, char, f32, f64, uuid, timestamp",
                    self.ty
                ),
            )
        })?;
        let mut spec = FieldSpec::new(kind);
        if let Some(width) = self.width {
            spec = spec.with_width(width);
        }
        if self.order == OrderConfig::Desc {
            spec = spec.descending();
        }
        if self.escaped {
            spec = spec.escaped();
        }
        if self.optional {
            spec = spec.optional();
        }
        if let Some(p) = self.precision {
            spec = spec.with_precision(p);
        }
        Ok(FieldDef {
            name: self.name.clone(),
            spec,
        })
    }
}

fn check_name(name: &str) -> Result<()> {
    rules::check_field_name(name).map_err(|rule| Error::broken(Some(name), rule))
}

impl TryFrom<LayoutConfig> for Layout {
    type Error = Error;

    fn try_from(config: LayoutConfig) -> Result<Self> {
        if config.fields.is_empty() {
            return Err(Error::layout(None, "a layout needs at least one field"));
        }
        let delimiter = match config.delimiter {
            None => DEFAULT_DELIMITER,
            Some(c) => rules::check_delimiter(c).map_err(|rule| Error::broken(None, rule))?,
        };
        let mut fields: Vec<FieldDef> = Vec::with_capacity(config.fields.len());
        for field in &config.fields {
            check_name(&field.name)?;
            if fields.iter().any(|f| f.name == field.name) {
                return Err(Error::layout(
                    Some(&field.name),
                    "the name is used by an earlier field",
                ));
            }
            fields.push(field.to_def()?);
        }
        let index_of = |name: &str| -> Result<usize> {
            fields.iter().position(|f| f.name == name).ok_or_else(|| {
                Error::layout(
                    None,
                    format!("the prefix names `{name}`, which is not a field"),
                )
            })
        };
        let (prefix, bucket) = match &config.prefix {
            None => (Prefix::None, BucketFields::None),
            Some(PrefixConfig::Hash {
                algorithm,
                len,
                separator,
                fields: names,
            }) => {
                let (over, bucket) = if names.is_empty() {
                    (HashOver::Key, BucketFields::None)
                } else {
                    let mut hashed = vec![false; fields.len()];
                    let mut indices = Vec::with_capacity(names.len());
                    for name in names {
                        let i = index_of(name)?;
                        if hashed[i] {
                            return Err(Error::layout(
                                Some(name),
                                "the hash prefix names this field twice",
                            ));
                        }
                        hashed[i] = true;
                        indices.push(i);
                    }
                    rules::check_hash_leading(&hashed).map_err(|rule| Error::broken(None, rule))?;
                    indices.sort_unstable();
                    (HashOver::LeadingFields, BucketFields::Hash(indices))
                };
                (
                    Prefix::Hash {
                        alg: *algorithm,
                        len: *len,
                        separator: Separator::from(*separator),
                        over,
                    },
                    bucket,
                )
            }
            Some(PrefixConfig::Buckets {
                count,
                by,
                fields: names,
                separator,
            }) => {
                let bucket = match by {
                    BucketBy::Modulo => {
                        let [name] = names.as_slice() else {
                            return Err(Error::layout(
                                None,
                                format!(
                                    "a modulo bucket prefix names exactly one integer field, not {}",
                                    names.len()
                                ),
                            ));
                        };
                        let i = index_of(name)?;
                        rules::check_modulo_field(&fields[i].spec)
                            .map_err(|rule| Error::broken(Some(name), rule))?;
                        BucketFields::Modulo(i)
                    }
                    BucketBy::Hash => {
                        let mut indices = Vec::with_capacity(names.len());
                        for name in names {
                            let i = index_of(name)?;
                            if indices.contains(&i) {
                                return Err(Error::layout(
                                    Some(name),
                                    "the bucket hash names this field twice",
                                ));
                            }
                            indices.push(i);
                        }
                        indices.sort_unstable();
                        let hashed: Vec<bool> =
                            (0..fields.len()).map(|i| indices.contains(&i)).collect();
                        rules::check_hash_runs(&hashed)
                            .map_err(|rule| Error::broken(None, rule))?;
                        BucketFields::Hash(indices)
                    }
                };
                (
                    Prefix::Bucket {
                        count: *count,
                        by: *by,
                        separator: Separator::from(*separator),
                    },
                    bucket,
                )
            }
        };
        let shape = KeyShape::new(delimiter)
            .with_prefix(prefix)
            .with_max_len(config.max_len.unwrap_or(DEFAULT_MAX_LEN));
        shape.validate()?;
        for def in &fields {
            shape.check_field(&def.name, &def.spec)?;
        }
        let plan = fields
            .iter()
            .enumerate()
            .map(|(i, def)| FieldPlan::new(i, &def.spec, &bucket))
            .collect();
        Ok(Self {
            fields,
            shape,
            bucket,
            plan,
        })
    }
}

impl From<Layout> for LayoutConfig {
    fn from(layout: Layout) -> Self {
        let shape = layout.shape;
        let names = |indices: &[usize]| -> Vec<String> {
            indices
                .iter()
                .map(|&i| layout.fields[i].name.clone())
                .collect()
        };
        let prefix = match shape.prefix() {
            Prefix::None => None,
            Prefix::Hash {
                alg,
                len,
                separator,
                ..
            } => Some(PrefixConfig::Hash {
                algorithm: alg,
                len,
                separator: separator.is_after(),
                fields: match &layout.bucket {
                    BucketFields::Hash(v) => names(v),
                    _ => Vec::new(),
                },
            }),
            Prefix::Bucket {
                count,
                by,
                separator,
            } => Some(PrefixConfig::Buckets {
                count,
                by,
                fields: match &layout.bucket {
                    BucketFields::Modulo(i) => names(&[*i]),
                    BucketFields::Hash(v) => names(v),
                    BucketFields::None => Vec::new(),
                },
                separator: separator.is_after(),
            }),
        };
        Self {
            delimiter: (shape.delimiter() != DEFAULT_DELIMITER)
                .then(|| char::from(shape.delimiter())),
            max_len: (shape.max_len() != DEFAULT_MAX_LEN).then_some(shape.max_len()),
            prefix,
            fields: layout.fields.into_iter().map(FieldConfig::from).collect(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The text spec.

struct SpecParser<'s> {
    text: &'s str,
}

impl SpecParser<'_> {
    fn err(&self, at: &str, reason: impl Into<String>) -> Error {
        // `at` is a slice of `text`: its offset is the position.
        let position = at.as_ptr() as usize - self.text.as_ptr() as usize;
        Error::InvalidSpec {
            position,
            reason: reason.into(),
        }
    }

    /// Splits on `;` outside single quotes.
    fn items(&self) -> Vec<&str> {
        let mut items = Vec::new();
        let mut start = 0;
        let mut quoted = false;
        let mut escaped = false;
        for (i, c) in self.text.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' if quoted => escaped = true,
                '\'' => quoted = !quoted,
                ';' if !quoted => {
                    items.push(&self.text[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        items.push(&self.text[start..]);
        items
    }

    fn parse(&self) -> Result<LayoutConfig> {
        let mut config = LayoutConfig {
            delimiter: None,
            max_len: None,
            prefix: None,
            fields: Vec::new(),
        };
        for item in self.items() {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let field_colon = item.find(':');
            let setting_eq = item.find('=');
            match (field_colon, setting_eq) {
                (Some(c), Some(e)) if e < c => self.setting(item, e, &mut config)?,
                (None, Some(e)) => self.setting(item, e, &mut config)?,
                (Some(c), _) => config.fields.push(self.field(item, c)?),
                (None, None) => {
                    return Err(self.err(
                        item,
                        format!("expected `name: type` or `setting=value`, found {item:?}"),
                    ));
                }
            }
        }
        Ok(config)
    }

    fn number<T: FromStr>(&self, text: &str, what: &str) -> Result<T> {
        text.trim()
            .parse()
            .map_err(|_| self.err(text, format!("expected {what}, found {:?}", text.trim())))
    }

    fn field(&self, item: &str, colon: usize) -> Result<FieldConfig> {
        let name = item[..colon].trim();
        let mut words = item[colon + 1..].split_whitespace();
        let Some(ty) = words.next() else {
            return Err(self.err(
                &item[colon + 1..],
                format!("field `{name}` needs a type after `:`"),
            ));
        };
        if Kind::from_name(ty).is_none() {
            return Err(self.err(
                ty,
                format!(
                    "unknown type {ty:?}; expected u8..u128, i8..i128, str, bytes, bool, char, f32, f64, uuid or timestamp"
                ),
            ));
        }
        let mut field = FieldConfig {
            name: name.to_owned(),
            ty: ty.to_owned(),
            width: None,
            order: OrderConfig::Asc,
            escaped: false,
            optional: false,
            precision: None,
        };
        let (mut order_given, mut escaped_given, mut optional_given) = (false, false, false);
        for word in words {
            match word {
                "desc" | "asc" => {
                    self.once(word, order_given, "an order (asc or desc)")?;
                    order_given = true;
                    field.order = if word == "desc" {
                        OrderConfig::Desc
                    } else {
                        OrderConfig::Asc
                    };
                }
                "escaped" => {
                    self.once(word, escaped_given, "escaped")?;
                    escaped_given = true;
                    field.escaped = true;
                }
                "optional" => {
                    self.once(word, optional_given, "optional")?;
                    optional_given = true;
                    field.optional = true;
                }
                _ if word.starts_with("precision=") => {
                    self.once(word, field.precision.is_some(), "precision")?;
                    let name = &word["precision=".len()..];
                    field.precision = Some(Precision::from_name(name).ok_or_else(|| {
                        self.err(
                            name,
                            format!("unknown precision {name:?}; expected s, ms, us or ns"),
                        )
                    })?);
                }
                _ if word.starts_with("width=") => {
                    self.once(word, field.width.is_some(), "width")?;
                    field.width = Some(self.number(&word[6..], "a width from 1 to 40")?);
                }
                _ => {
                    return Err(self.err(
                        word,
                        format!(
                            "unknown modifier {word:?}; expected width=N, desc, escaped, optional or precision=P"
                        ),
                    ));
                }
            }
        }
        Ok(field)
    }

    fn setting(&self, item: &str, eq: usize, config: &mut LayoutConfig) -> Result<()> {
        let key = item[..eq].trim();
        let value = item[eq + 1..].trim();
        match key {
            "delimiter" => {
                self.once(key, config.delimiter.is_some(), "delimiter")?;
                config.delimiter = Some(self.char_literal(value)?);
            }
            "max_len" => {
                self.once(key, config.max_len.is_some(), "max_len")?;
                config.max_len = Some(self.number(value, "a length in bytes")?);
            }
            "hash" => {
                let mut parts = value.split(':');
                let alg_part = parts.next().unwrap_or_default();
                let (alg, hashed) = match alg_part.split_once('(') {
                    Some((alg, rest)) => {
                        let inner = rest.strip_suffix(')').ok_or_else(|| {
                            self.err(rest, "expected `)` after the hashed fields, e.g. `hash=md5(device_id):4`")
                        })?;
                        (alg, inner.split(',').map(|f| f.trim().to_owned()).collect())
                    }
                    None => (alg_part, Vec::new()),
                };
                let algorithm = HashAlg::from_name(alg).ok_or_else(|| {
                    self.err(
                        alg,
                        format!("unknown hash {alg:?}; expected md5, xxh32, xxh64 or xxh3"),
                    )
                })?;
                let len_text = parts.next().ok_or_else(|| {
                    self.err(
                        value,
                        "expected `hash=ALG:LEN` or `hash=ALG(fields):LEN`, e.g. `hash=md5:4`",
                    )
                })?;
                let len = self.number(len_text, "a prefix length in hex characters")?;
                let separator = self.separator(parts.next())?;
                if let Some(extra) = parts.next() {
                    return Err(self.err(
                        extra,
                        format!("unexpected {extra:?} after `hash=ALG:LEN[:sep]`"),
                    ));
                }
                self.once(key, config.prefix.is_some(), "a prefix (hash or buckets)")?;
                config.prefix = Some(PrefixConfig::Hash {
                    algorithm,
                    len,
                    separator,
                    fields: hashed,
                });
            }
            "buckets" => {
                let (count_text, rest) = value.split_once(':').ok_or_else(|| {
                    self.err(
                        value,
                        "expected `buckets=N:mod(field)` or `buckets=N:hash(fields)`",
                    )
                })?;
                let count = self.number(count_text, "a bucket count")?;
                let (how, sep) = match rest.rsplit_once(':') {
                    Some((how, sep)) if !sep.contains(')') => (how, Some(sep)),
                    _ => (rest, None),
                };
                let (by, fields) = if let Some(inner) =
                    how.strip_prefix("mod(").and_then(|s| s.strip_suffix(')'))
                {
                    (BucketBy::Modulo, vec![inner.trim().to_owned()])
                } else if how == "hash" {
                    (BucketBy::Hash, Vec::new())
                } else if let Some(inner) =
                    how.strip_prefix("hash(").and_then(|s| s.strip_suffix(')'))
                {
                    (
                        BucketBy::Hash,
                        inner.split(',').map(|s| s.trim().to_owned()).collect(),
                    )
                } else {
                    return Err(self.err(
                        how,
                        format!("expected `mod(field)` or `hash(fields)`, found {how:?}"),
                    ));
                };
                self.once(key, config.prefix.is_some(), "a prefix (hash or buckets)")?;
                config.prefix = Some(PrefixConfig::Buckets {
                    count,
                    by,
                    fields,
                    separator: self.separator(sep)?,
                });
            }
            _ => {
                return Err(self.err(
                    key,
                    format!(
                        "unknown setting {key:?}; expected delimiter, max_len, hash or buckets"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Refuses a second `what` at `at`.
    fn once(&self, at: &str, given: bool, what: &str) -> Result<()> {
        if given {
            Err(self.err(at, format!("{what} is given twice; give it once")))
        } else {
            Ok(())
        }
    }

    fn separator(&self, word: Option<&str>) -> Result<bool> {
        match word {
            None => Ok(false),
            Some("sep") => Ok(true),
            Some(other) => Err(self.err(other, format!("expected `sep`, found {other:?}"))),
        }
    }

    fn char_literal(&self, value: &str) -> Result<char> {
        let inner = value
            .strip_prefix('\'')
            .and_then(|v| v.strip_suffix('\''))
            .ok_or_else(|| self.err(value, "expected a quoted character, e.g. ','"))?;
        let c = if let Some(hex) = inner.strip_prefix("\\x") {
            u8::from_str_radix(hex, 16).ok().map(char::from)
        } else {
            match inner {
                "\\t" => Some('\t'),
                "\\\\" => Some('\\'),
                "\\'" => Some('\''),
                _ => {
                    let mut chars = inner.chars();
                    chars.next().filter(|_| chars.next().is_none())
                }
            }
        };
        c.ok_or_else(|| {
            self.err(
                value,
                format!("expected one character or '\\xNN', found {value}"),
            )
        })
    }
}

impl FromStr for Layout {
    type Err = Error;

    fn from_str(spec: &str) -> Result<Self> {
        SpecParser { text: spec }.parse()?.try_into()
    }
}

impl fmt::Display for Layout {
    /// The text spec of this layout; it parses back to an equal layout.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let config = LayoutConfig::from(self.clone());
        let mut items: Vec<String> = Vec::new();
        for field in &config.fields {
            let mut s = format!("{}: {}", field.name, field.ty);
            if let Some(w) = field.width {
                s.push_str(&format!(" width={w}"));
            }
            if field.order == OrderConfig::Desc {
                s.push_str(" desc");
            }
            if field.escaped {
                s.push_str(" escaped");
            }
            if field.optional {
                s.push_str(" optional");
            }
            if let Some(p) = field.precision {
                s.push_str(" precision=");
                s.push_str(p.name());
            }
            items.push(s);
        }
        if let Some(d) = config.delimiter {
            let lit = match d {
                '\'' | '\\' => format!("'\\{d}'"),
                d if d.is_ascii_graphic() || d == ' ' => format!("'{d}'"),
                d => format!("'\\x{:02x}'", u32::from(d)),
            };
            items.push(format!("delimiter={lit}"));
        }
        if let Some(m) = config.max_len {
            items.push(format!("max_len={m}"));
        }
        let sep = |s: bool| if s { ":sep" } else { "" };
        match &config.prefix {
            None => {}
            Some(PrefixConfig::Hash {
                algorithm,
                len,
                separator,
                fields,
            }) => {
                let over = if fields.is_empty() {
                    String::new()
                } else {
                    format!("({})", fields.join(","))
                };
                items.push(format!(
                    "hash={}{over}:{len}{}",
                    algorithm.name(),
                    sep(*separator)
                ));
            }
            Some(PrefixConfig::Buckets {
                count,
                by,
                fields,
                separator,
            }) => {
                let how = match (by, fields.is_empty()) {
                    (BucketBy::Modulo, _) => format!("mod({})", fields.join(",")),
                    (BucketBy::Hash, true) => "hash".to_owned(),
                    (BucketBy::Hash, false) => format!("hash({})", fields.join(",")),
                };
                items.push(format!("buckets={count}:{how}{}", sep(*separator)));
            }
        }
        f.write_str(&items.join("; "))
    }
}
