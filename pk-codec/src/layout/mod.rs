//! [`Layout`]: a key layout known at run time, built in code, parsed from a spec or loaded with serde.

use std::ops::Bound;

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

use crate::bin_io::{BinReader, BinWriter};
use crate::error::{Error, Result};
use crate::field_spec::FieldSpec;
use crate::key_range::{ByteRange, KeyRange};
use crate::kinds::Form;
use crate::kinds::dispatch;
use crate::kinds::{Order, Value};
use crate::prefix::{BucketValue, Prefix, bucket_bound};
use crate::range::{BinRangeBuilder, RangeBuilder};
use crate::shape::KeyShape;

mod builder;
mod config;
mod plan;
mod tail;
#[cfg(test)]
mod tests;
mod text;

pub use builder::LayoutBuilder;
#[cfg(feature = "serde")]
use config::LayoutConfig;
use plan::{FieldRole, Plan, Slots, bucket_value, write_value};

/// One named field of a [`Layout`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldDef {
    name: String,
    spec: FieldSpec,
}

impl FieldDef {
    /// The field's name.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How the field is written.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
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
/// [`str::parse`], or load one with serde (JSON, TOML, ...; the `serde` feature). Keys are the same bytes as a
/// `#[derive(PartitionKey)]` struct with the same layout writes: both go through [`KeyShape`].
///
/// # The text spec
///
/// Items separated by `;`. A field is `name: type` followed by modifiers; a setting is `key=value`.
///
/// | item | meaning |
/// |---|---|
/// | `name: u32`, `i64`, ... (any of `u8`..`u128`, `i8`..`i128`) | an integer field |
/// | `name: str`, `bytes`, `bool`, `char` | a string (UTF-8), byte string, boolean or character field |
/// | `name: f32`, `f64` | a float field, in IEEE 754 total order (`-NaN` < `-inf` < ... < `-0` < `0` < ... < `inf` < `NaN`) |
/// | `name: uuid` | a UUID field, in byte order (v7 UUIDs sort by time) |
/// | `name: timestamp` | an instant, UTC, at the field's precision (`ms` unless given) |
/// | `name: decimal scale=2` | an exact decimal with `scale` digits after the point (default 0); a value with more is refused, never rounded |
/// | ` width=6` | an integer or decimal field's width in characters (default: the type's widest value) |
/// | ` precision=s`, `ms`, `us`, `ns` | a timestamp field's fraction digits; a value below it is refused |
/// | ` scale=N` | a decimal field's digits after the point |
/// | ` desc` | the field sorts descending |
/// | ` escaped` | a `str` field in the escaped form, which accepts any string |
/// | ` optional` | the field may be null (`None`), which sorts first |
/// | `delimiter=','` | the delimiter (default `,`); `'\x01'` for a control character |
/// | `max_len=1024` | the key length limit in bytes (default 1024) |
/// | `hash=md5:4`, `hash=xxh3:8:sep` | a hash prefix: algorithm, hex characters, `sep` for a delimiter after it; `hash=md5(a,b):4` over the leading fields `a`, `b` only |
/// | `buckets=16:mod(ts)`, `buckets=8:hash`, `buckets=8:hash(a,b):sep` | a bucket prefix by modulo of one integer field, or by hash of some fields (all by default) |
/// | `form=text`, `form=binary` | the keys' [`Form`] (default `text`): [`Layout::encode_bytes`] writes it |
///
/// # What a prefix digests
///
/// A hash prefix and a bucket hash digest the key in the form written: in the text form the
/// fields' text (the hashed fields joined by the delimiter, or the whole natural key), in the
/// binary form their binary bytes, one after another. The same values can so lie in different
/// buckets in the two forms; each form's ranges read its own buckets.
///
/// ```
/// use pk_codec::{Form, Layout, Value};
///
/// let text: Layout = "device_id: u32 width=6; ts: u64; buckets=16:hash(device_id):sep".parse()?;
/// let binary = text.clone().with_form(Form::Binary);
/// let row = [Value::from(54u32), Value::from(1u64)];
/// assert!(text.encode(&row)?.starts_with("11,")); // xxh3 of the text "000054"
/// assert_eq!(binary.encode_bytes(&row)?[0], 7); // xxh3 of the bytes 00 00 00 36
/// # Ok::<(), pk_codec::Error>(())
/// ```
///
/// # Refusals
///
/// A spec that breaks a rule of the key format is refused with the rule's name
/// ([`Error::BrokenRule`]): a delimiter a field's form could hold, a width too narrow or too
/// wide for its type, a modulo bucket over a field that is not an integer, more than
/// [`MAX_BUCKETS`](crate::MAX_BUCKETS) buckets. A layout with a hash prefix over the whole key
/// has no ranges ([`Error::RangeUnsupported`], saying to hash leading fields instead), and a
/// layout without a prefix has no even split points.
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
/// // With the `serde` feature, from JSON (or TOML, ...):
/// # #[cfg(feature = "serde")] {
/// let json = r#"{"fields": [{"name": "order_number", "type": "u64", "width": 6}],
///                "prefix": {"kind": "hash", "algorithm": "md5", "len": 4}}"#;
/// let hashed: Layout = serde_json::from_str(json).unwrap();
/// assert_eq!(hashed.encode(&[200_001u64.into()])?, "ee8f200001");
/// # }
/// # Ok::<(), pk_codec::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(try_from = "LayoutConfig", into = "LayoutConfig")
)]
pub struct Layout {
    fields: Vec<FieldDef>,
    shape: KeyShape,
    bucket: BucketFields,
    /// How each field is written and read, decided once when the layout is built (derived from
    /// `fields` and `bucket`, so it adds nothing to equality or hashing).
    plan: Plan,
    /// The form [`Layout::encode_bytes`] writes.
    form: Form,
}

impl Layout {
    /// A builder for a layout.
    #[cfg_attr(debug_assertions, inline)]
    pub fn builder() -> LayoutBuilder {
        LayoutBuilder::default()
    }

    /// The fields, in key order.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn fields(&self) -> &[FieldDef] {
        &self.fields
    }

    /// The delimiter, prefix and length limit.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
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
    #[cfg_attr(debug_assertions, inline)]
    pub fn encode(&self, values: &[Value]) -> Result<String> {
        crate::scratch::encode_new(|out| self.encode_into(values, out))
    }

    /// Appends one key to `out`; on error `out` is unchanged.
    ///
    /// # Errors
    ///
    /// As [`Layout::encode`].
    #[cfg_attr(debug_assertions, inline)]
    pub fn encode_into(&self, values: &[Value], out: &mut String) -> Result<()> {
        if values.len() != self.fields.len() {
            return Err(Error::FieldCount {
                expected: self.fields.len(),
                found: values.len(),
            });
        }
        if self.plan.try_write_direct(values, out) {
            return Ok(());
        }
        self.shape
            .encode_checked(out, |w| self.plan.write(w, &self.fields, values))
    }

    /// How many leading fields a range read gives before it has given every field the prefix
    /// is computed from ([`RangeBuilder::end_hashed`]): through the last hashed field of a hash
    /// prefix over leading fields or of a bucket hash (every field for a bucket hash over the
    /// whole key); `None` for the other prefixes.
    #[cfg_attr(debug_assertions, inline)]
    fn hashed_end(&self) -> Option<usize> {
        match (&self.bucket, self.shape.prefix()) {
            (BucketFields::Hash(hashed), Prefix::Bucket { .. } | Prefix::Hash { .. }) => {
                Some(hashed.last().map_or(self.fields.len(), |&last| last + 1))
            }
            _ => None,
        }
    }

    /// What field `index`, holding `value`, contributes to the bucket.
    #[cfg_attr(debug_assertions, inline)]
    fn bucket_role(&self, index: usize, value: &Value) -> BucketRole {
        match self.plan.steps()[index].role {
            FieldRole::Modulo => bucket_value(value).map_or(BucketRole::None, BucketRole::Value),
            FieldRole::Hashed => BucketRole::Span,
            FieldRole::None => BucketRole::None,
        }
    }

    /// The form of the keys [`Layout::encode_bytes`] writes.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn form(&self) -> Form {
        self.form
    }

    /// The same layout with keys of `form`.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn with_form(mut self, form: Form) -> Self {
        self.form = form;
        self
    }

    /// Encodes one key in the layout's [`Form`], as bytes: the text key's UTF-8 bytes for
    /// [`Form::Text`], the binary key for [`Form::Binary`] (each field in its kind's binary form,
    /// see [`Kind`](crate::Kind)). [`Layout::encode`] writes the text form whatever the layout's
    /// form.
    ///
    /// # Errors
    ///
    /// As [`Layout::encode`].
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{Form, Layout, Value};
    ///
    /// let text: Layout = "device_id: u32 width=6; ts: u64 width=13 desc".parse()?;
    /// let binary = text.clone().with_form(Form::Binary);
    /// let values = [Value::from(54u32), Value::from(1_700_000_000_000u64)];
    /// assert_eq!(text.encode_bytes(&values)?, b"000054,8299999999999");
    /// assert_eq!(binary.encode_bytes(&values)?.len(), 3 + 6); // the widths' digits: 3 and 6 bytes
    /// assert_eq!(binary.decode_bytes(&binary.encode_bytes(&values)?)?, values);
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    #[cfg_attr(debug_assertions, inline)]
    pub fn encode_bytes(&self, values: &[Value]) -> Result<Vec<u8>> {
        if self.form == Form::Text {
            // The text key's own buffer: no second allocation or copy.
            return self.encode(values).map(String::into_bytes);
        }
        let mut out = Vec::new();
        self.encode_bytes_into(values, &mut out)?;
        Ok(out)
    }

    /// [`Layout::encode_bytes`] appending to `out` (on an error, `out` is left as it was).
    ///
    /// # Errors
    ///
    /// As [`Layout::encode`].
    #[cfg_attr(debug_assertions, inline)]
    pub fn encode_bytes_into(&self, values: &[Value], out: &mut Vec<u8>) -> Result<()> {
        if self.form == Form::Text {
            let key = self.encode(values)?;
            out.extend_from_slice(key.as_bytes());
            return Ok(());
        }
        if values.len() != self.fields.len() {
            return Err(Error::FieldCount {
                expected: self.fields.len(),
                found: values.len(),
            });
        }
        self.shape.encode_bytes_checked(out, |w| {
            for (i, (def, value)) in self.fields.iter().zip(values).enumerate() {
                let start = w.position();
                Self::write_bin_field(w, def, value)?;
                match self.bucket_role(i, value) {
                    BucketRole::None => {}
                    BucketRole::Value(v) => w.bucket_value(v),
                    BucketRole::Span => w.bucket_span(start),
                }
            }
            Ok(())
        })
    }

    /// One field of a binary key, its optional part included.
    #[cfg_attr(debug_assertions, inline)]
    fn write_bin_field(w: &mut BinWriter<'_>, def: &FieldDef, value: &Value) -> Result<()> {
        let spec = &def.spec;
        if spec.is_optional() {
            if value.is_null() {
                w.none(spec, &def.name);
                return Ok(());
            }
            w.some(spec, &def.name);
        }
        if dispatch::write_value_bin(w, spec, &def.name, value)? {
            Ok(())
        } else {
            Err(plan::mismatch(def, value))
        }
    }

    /// Decodes a key in the layout's [`Form`] (see [`Layout::encode_bytes`]).
    ///
    /// # Errors
    ///
    /// As [`Layout::decode`]: [`Error::Malformed`] with the byte position for any bytes the
    /// layout would not write, [`Error::PrefixMismatch`] for a prefix its natural key does not
    /// give. Text keys must be UTF-8.
    #[cfg_attr(debug_assertions, inline)]
    pub fn decode_bytes(&self, key: &[u8]) -> Result<Vec<Value>> {
        let mut values = Vec::with_capacity(self.fields.len());
        self.decode_bytes_into(key, &mut values)?;
        Ok(values)
    }

    /// [`Layout::decode_bytes`] into `values` (cleared first; left empty on an error).
    ///
    /// # Errors
    ///
    /// As [`Layout::decode_bytes`].
    #[cfg_attr(debug_assertions, inline)]
    pub fn decode_bytes_into(&self, key: &[u8], values: &mut Vec<Value>) -> Result<()> {
        values.clear();
        if self.form == Form::Text {
            let text = std::str::from_utf8(key).map_err(|e| {
                Error::malformed(
                    None,
                    e.valid_up_to(),
                    "a text key is UTF-8, and this one is not",
                )
            })?;
            return self.decode_into(text, values);
        }
        let read = self.shape.decode_bytes_checked(key, |r| {
            for (i, def) in self.fields.iter().enumerate() {
                let start = r.position();
                let value = Self::read_bin_field(r, def)?;
                match self.bucket_role(i, &value) {
                    BucketRole::None => {}
                    BucketRole::Value(v) => r.bucket_value(v),
                    BucketRole::Span => r.bucket_span(start),
                }
                values.push(value);
            }
            Ok(())
        });
        if read.is_err() {
            values.clear();
        }
        read
    }

    /// One field of a binary key, its optional part included.
    #[cfg_attr(debug_assertions, inline)]
    fn read_bin_field(r: &mut BinReader<'_>, def: &FieldDef) -> Result<Value> {
        let spec = &def.spec;
        if spec.is_optional() {
            if r.none(spec, &def.name) {
                return Ok(Value::Null);
            }
            r.some(spec, &def.name)?;
        }
        dispatch::read_value_bin(r, spec, &def.name)
    }

    /// Decodes one key back to its values: integers as [`Value::Uint`] / [`Value::Int`] by the
    /// field's kind, a null optional as [`Value::Null`].
    ///
    /// Each call allocates the vector and every string's buffer. A loop over many keys that
    /// passes one vector to [`Layout::decode_into`] instead allocates only when a string
    /// outgrows the buffer it reuses (43 against 76 ns per student-card key in BENCHMARKS.md's
    /// headline run).
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] with the byte position for any text this layout would not write,
    /// [`Error::PrefixMismatch`] for a wrong prefix, [`Error::ValueOutOfRange`] for a number
    /// outside its type.
    #[cfg_attr(debug_assertions, inline)]
    pub fn decode(&self, key: &str) -> Result<Vec<Value>> {
        // A convenience over `decode_into` (the measured path), with no code of its own: a second
        // copy of the layout's inlined loop cost every build far more than it saved a caller.
        let mut values = Vec::with_capacity(self.fields.len());
        self.decode_into(key, &mut values)?;
        Ok(values)
    }

    /// Decodes one key into `values`, replacing what it held: afterwards `values` holds exactly
    /// the key's values, as [`Layout::decode`] answers them. On error `values` is empty.
    ///
    /// The allocation-saving form of [`Layout::decode`], for a loop over keys that passes one
    /// vector: it keeps the vector's allocation, overwrites its values in place, and reads a string
    /// field into the buffer of the string already at that place (as the previous key left it), so
    /// that such a loop allocates only when a string outgrows the buffer it reuses. (A layout with
    /// a prefix, or with a field other than an unsigned integer or a plain string, reuses the
    /// vector but not the strings' buffers.) Whatever `values` held before, of any kinds and
    /// length, the answer is the same.
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
    ///     layout.decode_into(key, &mut values)?;
    ///     assert_eq!(values.len(), 2);
    /// }
    /// assert_eq!(values, vec![Value::Uint(55), Value::from("a101")]);
    /// assert!(layout.decode_into("000054", &mut values).is_err());
    /// assert!(values.is_empty());
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    #[cfg_attr(debug_assertions, inline)]
    pub fn decode_into(&self, key: &str, values: &mut Vec<Value>) -> Result<()> {
        let mut direct = Slots::new(values);
        if self.plan.try_read_direct(key, &mut direct) {
            direct.finish();
            return Ok(());
        }
        self.decode_declined(key, values)
    }

    /// [`Layout::decode_into`] of a key the whole-key direct path declined (which may have put
    /// some values in `values`): read again from the first field.
    #[cfg_attr(debug_assertions, inline)]
    fn decode_declined(&self, key: &str, values: &mut Vec<Value>) -> Result<()> {
        let mut slots = Slots::new(values);
        match self
            .shape
            .decode_checked(key, |r| self.plan.read(r, &self.fields, &mut slots))
        {
            Ok(()) => {
                slots.finish();
                Ok(())
            }
            Err(e) => {
                values.clear();
                Err(e)
            }
        }
    }

    /// The key ranges that hold exactly the keys whose leading fields equal `prefix`: one range,
    /// or for a bucketed layout one per bucket that can hold such keys: just one when `prefix`
    /// fixes the bucket (it includes the modulo field, or every field of the bucket hash), every
    /// bucket otherwise.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{Layout, Value};
    ///
    /// let layout: Layout = "device_id: u32 width=6; ts: u64 width=13; buckets=16:hash(device_id):sep".parse()?;
    /// let key = layout.encode(&[54u32.into(), 1_700_000_000_000u64.into()])?;
    /// // Device 54 fixes its bucket: one range, not 16.
    /// let ranges = layout.prefix_ranges(&[Value::Uint(54)])?;
    /// assert_eq!(ranges.len(), 1);
    /// assert!(ranges[0].contains(&key));
    /// assert_eq!(layout.prefix_ranges(&[])?.len(), 16);
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::RangeUnsupported`] for a hash prefix; [`Error::FieldCount`] for more values than
    /// fields; the errors of [`Layout::encode`] for the values.
    #[cfg_attr(debug_assertions, inline)]
    pub fn prefix_ranges(&self, prefix: &[Value]) -> Result<Vec<KeyRange>> {
        self.ranges(prefix, Bound::Unbounded, Bound::Unbounded)
    }

    /// `n` split keys evenly spaced over the key space of the layout's prefix, in the layout's
    /// [`Form`] ([`KeyShape::split_points_in`]): text points for a text layout, binary points
    /// (the prefix's bytes) for a binary one, so that a table pre-split at them spreads the
    /// layout's keys.
    ///
    /// # Errors
    ///
    /// As [`KeyShape::split_points`].
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::Layout;
    ///
    /// let binary: Layout = "device: u32; buckets=4:hash(device); form=binary".parse()?;
    /// let points = binary.split_points(3)?;
    /// assert_eq!(points, [[1], [2], [3]]);
    /// let key = binary.encode_bytes(&[54u32.into()])?;
    /// // The key lies between two points (or before the first, after the last): inside the space.
    /// assert!(key.as_slice() < &[4][..]);
    /// let text: Layout = "device: u32; buckets=4:hash(device)".parse()?;
    /// assert_eq!(text.split_points(1)?, [b"2"]);
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    #[cfg_attr(debug_assertions, inline)]
    pub fn split_points(&self, n: usize) -> Result<Vec<Vec<u8>>> {
        self.shape.split_points_in(self.form, n)
    }

    /// The byte ranges a read of the rows whose leading fields equal `prefix` and whose next
    /// field lies within `lower` and `upper` visits, in the layout's [`Form`]: [`Layout::ranges`]
    /// for keys of bytes. A text layout's ranges come as their UTF-8 bytes; a binary layout's are
    /// its binary keys' (one per bucket to read, the buckets pruned as [`Layout::ranges`] prunes
    /// them).
    ///
    /// # Errors
    ///
    /// As [`Layout::ranges`].
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{Form, Layout, Value};
    /// use std::ops::Bound::{Included, Unbounded};
    ///
    /// let layout: Layout = "card: u32; ts: u64; buckets=4:hash(card); form=binary".parse()?;
    /// let ranges = layout.byte_ranges(&[Value::from(7u32)], Included(&Value::from(100u64)), Unbounded)?;
    /// assert_eq!(ranges.len(), 1); // the card fixes the bucket
    /// let key = layout.encode_bytes(&[Value::from(7u32), Value::from(150u64)])?;
    /// assert!(ranges[0].contains(&key));
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    #[cfg_attr(debug_assertions, inline)]
    pub fn byte_ranges(
        &self,
        prefix: &[Value],
        lower: Bound<&Value>,
        upper: Bound<&Value>,
    ) -> Result<Vec<ByteRange>> {
        if self.form == Form::Text {
            return Ok(self
                .ranges(prefix, lower, upper)?
                .into_iter()
                .map(ByteRange::from)
                .collect());
        }
        let bounded = !matches!((lower, upper), (Bound::Unbounded, Bound::Unbounded));
        let most = self.fields.len() - usize::from(bounded);
        if prefix.len() > most {
            return Err(Error::FieldCount {
                expected: most,
                found: prefix.len(),
            });
        }
        let mut builder = BinRangeBuilder::new(&self.shape)?;
        let hashed_end = self.hashed_end();
        for (i, (def, value)) in self.fields.iter().zip(prefix).enumerate() {
            builder.equal(|w| {
                let start = w.position();
                Self::write_bin_field(w, def, value)?;
                match self.bucket_role(i, value) {
                    BucketRole::Value(v) => w.bucket_value(v),
                    BucketRole::Span => w.bucket_span(start),
                    BucketRole::None => {}
                }
                Ok(())
            })?;
            if Some(i + 1) == hashed_end {
                builder.end_hashed();
            }
        }
        let Some(next) = self.fields.get(prefix.len()) else {
            return builder.finish(Bound::Unbounded, Bound::Unbounded, Order::Asc);
        };
        if self.plan.steps()[prefix.len()].role == FieldRole::Modulo {
            builder.bucket_bounds(
                &next.spec,
                bucket_bound(lower, bucket_value),
                bucket_bound(upper, bucket_value),
            );
        }
        let encode_bound = |b: Bound<&Value>| -> Result<Bound<Vec<u8>>> {
            let bytes = |v: &Value| builder.bound(|w| Self::write_bin_field(w, next, v));
            Ok(match b {
                Bound::Included(v) => Bound::Included(bytes(v)?),
                Bound::Excluded(v) => Bound::Excluded(bytes(v)?),
                Bound::Unbounded => Bound::Unbounded,
            })
        };
        let (lower, upper) = (encode_bound(lower)?, encode_bound(upper)?);
        builder.finish(
            lower.as_ref().map(Vec::as_slice),
            upper.as_ref().map(Vec::as_slice),
            next.spec.order(),
        )
    }

    /// The key ranges that hold exactly the keys whose leading fields equal `prefix` and whose
    /// next field lies within `lower` and `upper` (in value order, also for descending fields):
    /// one range, or for a bucketed layout one per bucket that can hold such keys, in bucket
    /// order (see [`Layout::prefix_ranges`]; bounds on a modulo bucket's field that leave fewer
    /// values than there are buckets read only those values' buckets). When no value lies
    /// within the bounds (`lower` above `upper`), each range is empty: it ends where it starts.
    ///
    /// Each range's `start` is its first key and `end` the first key after it (excluded): with
    /// the delimiter `,`, `0099-` is the first text after every key that starts `0099,`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::ops::Bound::Included;
    /// use pk_codec::{Layout, Value};
    ///
    /// let layout: Layout = "device_id: u32 width=4; card_id: u32 width=6".parse()?;
    /// let (from, to) = (Value::Uint(15), Value::Uint(99));
    /// let ranges = layout.ranges(&[], Included(&from), Included(&to))?;
    /// assert_eq!((ranges[0].start.as_str(), ranges[0].end.as_deref()), ("0015", Some("0099-")));
    /// let none = layout.ranges(&[], Included(&to), Included(&from))?;
    /// assert_eq!((none[0].start.as_str(), none[0].end.as_deref()), ("0099", Some("0099")));
    ///
    /// // ts from 100 to 103 lies in 4 of the 16 buckets.
    /// let buckets: Layout = "ts: u64 width=13; buckets=16:mod(ts):sep".parse()?;
    /// let (from, to) = (Value::Uint(100), Value::Uint(103));
    /// let ranges = buckets.ranges(&[], Included(&from), Included(&to))?;
    /// let starts: Vec<&str> = ranges.iter().map(|r| r.start.as_str()).collect();
    /// assert_eq!(starts, ["04,0000000000100", "05,0000000000100", "06,0000000000100", "07,0000000000100"]);
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Layout::prefix_ranges`]; [`Error::FieldCount`] when bounds are given but `prefix`
    /// already names every field.
    #[cfg_attr(debug_assertions, inline)]
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
        let hashed_end = self.hashed_end();
        for (i, (def, value)) in self.fields.iter().zip(prefix).enumerate() {
            builder.equal(|w| {
                w.begin_field();
                let start = w.position();
                write_value(w, def, value)?;
                match self.bucket_role(i, value) {
                    BucketRole::Value(v) => w.bucket_value(v),
                    BucketRole::Span => w.bucket_span(start),
                    BucketRole::None => {}
                }
                Ok(())
            })?;
            if Some(i + 1) == hashed_end {
                builder.end_hashed();
            }
        }
        let Some(next) = self.fields.get(prefix.len()) else {
            return builder.finish(Bound::Unbounded, Bound::Unbounded, Order::Asc);
        };
        if self.plan.steps()[prefix.len()].role == FieldRole::Modulo {
            builder.bucket_bounds(
                &next.spec,
                bucket_bound(lower, bucket_value),
                bucket_bound(upper, bucket_value),
            );
        }
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

    /// The one key range of a read whose keys lie in one range (see [`Layout::ranges`]): any
    /// read of a layout without a bucket prefix, or one that fixes the bucket.
    ///
    /// # Errors
    ///
    /// As [`Layout::ranges`], and [`Error::RangeUnsupported`] when the keys lie in several
    /// buckets: use [`Layout::ranges`] and merge with [`KeyShape::merge_buckets`].
    #[cfg_attr(debug_assertions, inline)]
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
