//! How a [`Layout`](super::Layout) writes and reads each field: a direct path per field, chosen
//! once when the layout is built and dispatched by one `match` in the layout's loop, and the
//! general dispatch from [`Value`]s to the [`KeyWriter`] and [`KeyReader`] methods for every
//! other form, every field with a part in the bucket, and every value the direct path declines.
//!
//! The per-width paths are inlined into the layout's loop (`#[inline(always)]`) only where
//! debug assertions are off (a release build): in a debug build, where nothing folds, those
//! inlined copies were most of the crate's code to compile (about 70% of its LLVM IR), for
//! speed a debug build does not keep anyway.

use std::hash::{Hash, Hasher};

use crate::error::{Error, Result};
use crate::field_spec::FieldSpec;
use crate::io::{self, KeyReader, KeyWriter};
use crate::kinds::{self, IntBits, Kind, Value, dispatch};
use crate::num;
use crate::prefix::BucketValue;
use crate::shape::KeyShape;
use crate::text;

use super::tail;
use super::{BucketFields, FieldDef};

/// The steps of a layout, one per field, made when it is built.
///
/// It is a function of the layout's fields and bucket, so it takes no part in comparing or
/// hashing layouts.
#[derive(Debug, Clone)]
pub(super) struct Plan {
    steps: Vec<Step>,
    /// Whether a whole key can take the direct paths without a [`KeyWriter`] or [`KeyReader`]
    /// ([`Plan::try_write_direct`], [`Plan::try_read_direct`]): no prefix, an ASCII delimiter,
    /// and a direct path of its own (unsigned integer or plain string) for every field.
    direct: bool,
    delimiter: u8,
    max_len: usize,
}

impl Plan {
    #[cfg_attr(debug_assertions, inline)]
    pub(super) fn new(fields: &[FieldDef], bucket: &BucketFields, shape: &KeyShape) -> Self {
        // Each field's part in the bucket, marked once: a lookup per field in the bucket's list
        // made a layout whose prefix names many fields quadratic to build.
        let mut roles = vec![FieldRole::None; fields.len()];
        match bucket {
            BucketFields::None => {}
            BucketFields::Modulo(i) => roles[*i] = FieldRole::Modulo,
            BucketFields::Hash(hashed) => {
                for &i in hashed {
                    roles[i] = FieldRole::Hashed;
                }
            }
        }
        let steps: Vec<Step> = fields
            .iter()
            .zip(roles)
            .map(|(def, role)| Step::new(role, &def.spec))
            .collect();
        let direct = shape.prefix().is_empty()
            && shape.delimiter().is_ascii()
            && steps
                .iter()
                .all(|step| step.op.get() < UINT_OPS || step.op == PLAIN_STR);
        Self {
            steps,
            direct,
            delimiter: shape.delimiter(),
            max_len: shape.max_len(),
        }
    }

    /// Every field by the general path: what the direct paths are tested against.
    #[cfg(test)]
    #[cfg_attr(debug_assertions, inline)]
    pub(super) fn general(fields: &[FieldDef], bucket: &BucketFields, shape: &KeyShape) -> Self {
        let mut plan = Self::new(fields, bucket, shape);
        plan.direct = false;
        for step in &mut plan.steps {
            step.op = GENERAL;
        }
        plan
    }

    /// This plan without the whole-key direct paths (each field still takes its own), for
    /// tests of the field-by-field loop.
    #[cfg(test)]
    #[cfg_attr(debug_assertions, inline)]
    pub(super) fn by_field(mut self) -> Self {
        self.direct = false;
        self
    }

    /// Whether whole keys take the direct paths.
    #[cfg(test)]
    #[cfg_attr(debug_assertions, inline)]
    pub(super) fn is_direct(&self) -> bool {
        self.direct
    }

    #[cfg_attr(debug_assertions, inline)]
    pub(super) fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// Writes a whole key by the direct paths, straight into `out`, answering whether it did.
    /// When it did not (a layout without them, a value one of them declines, a key over the
    /// limit), `out` is as it was, and the caller writes the key by [`Plan::write`], which
    /// writes it or says what is wrong. `values` are as many as the steps (the caller checked).
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(super) fn try_write_direct(&self, values: &[Value], out: &mut String) -> bool {
        if !self.direct {
            return false;
        }
        // The default delimiter as a constant: its lead bytes and string-scan words fold.
        if self.delimiter == b',' {
            self.write_direct_key(values, out, b',')
        } else {
            self.write_direct_key(values, out, self.delimiter)
        }
    }

    /// [`Plan::try_write_direct`] of a direct plan, with `delimiter` (the plan's).
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn write_direct_key(&self, values: &[Value], out: &mut String, delimiter: u8) -> bool {
        let base = out.len();
        let mut fields = self.steps.iter().zip(values);
        let written = 'key: {
            if let Some((step, value)) = fields.next()
                && !step.write_direct::<false>(out, delimiter, value)
            {
                break 'key false;
            }
            for (step, value) in fields {
                if !step.write_direct::<true>(out, delimiter, value) {
                    break 'key false;
                }
            }
            out.len() - base <= self.max_len
        };
        if !written {
            out.truncate(base);
        }
        written
    }

    /// Reads a whole key by the direct paths into `out`, answering whether it did. When it did
    /// not (a layout without them, text one of them declines, text left over, a key over the
    /// limit), `out` may hold some of the key's values, and the caller reads the key again from
    /// its first field by [`Plan::read`], which reads it or says what is wrong.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(super) fn try_read_direct(&self, key: &str, out: &mut impl Sink) -> bool {
        if !self.direct || key.len() > self.max_len {
            return false;
        }
        let mut pos = 0;
        let mut steps = self.steps.iter();
        if let Some(step) = steps.next()
            && !step.read_direct::<false>(key, &mut pos, self.delimiter, out)
        {
            return false;
        }
        for step in steps {
            if !step.read_direct::<true>(key, &mut pos, self.delimiter, out) {
                return false;
            }
        }
        pos == key.len()
    }

    /// Writes the fields of a key, delimiters included: each by its direct path or, declined,
    /// the general one. `fields` and `values` are as many as the steps (the caller checked).
    ///
    /// The first field and the others are two copies of one loop body, so that every field
    /// after the first writes its delimiter in the same append as its digits.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(super) fn write(
        &self,
        w: &mut KeyWriter<'_>,
        fields: &[FieldDef],
        values: &[Value],
    ) -> Result<()> {
        let mut fields = self.steps.iter().zip(fields).zip(values);
        if let Some(((step, def), value)) = fields.next() {
            step.write::<false>(w, def, value)?;
        }
        for ((step, def), value) in fields {
            step.write::<true>(w, def, value)?;
        }
        Ok(())
    }

    /// Reads the fields of a key, delimiters included, into `out`: each by its direct path or,
    /// declined, the general one.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(super) fn read(
        &self,
        r: &mut KeyReader<'_>,
        fields: &[FieldDef],
        values: &mut Slots<'_>,
    ) -> Result<()> {
        let mut fields = self.steps.iter().zip(fields);
        if let Some((step, def)) = fields.next() {
            step.read::<false>(r, def, values)?;
        }
        for (step, def) in fields {
            step.read::<true>(r, def, values)?;
        }
        Ok(())
    }
}

impl PartialEq for Plan {
    #[cfg_attr(debug_assertions, inline)]
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Plan {}

impl Hash for Plan {
    fn hash<H: Hasher>(&self, _: &mut H) {}
}

/// The direct path of a field, by [`Step::op`]: an unsigned integer of up to 64 bits at width
/// `w` (1 to 20) and order `desc` is `2 * (w - 1) + desc`; then the other forms. (The plain
/// string is the last: the ops of the whole-key paths are the first and the last, so that
/// their jump table spans every op.)
const UINT_OPS: u8 = 40;
/// A signed integer of up to 64 bits.
const INT: Op = Op::O40;
/// No direct path: every other form, and every field with a part in the bucket.
const GENERAL: Op = Op::O41;
/// A plain ascending string.
const PLAIN_STR: Op = Op::O42;

/// A [`Step::op`]: a number below [`OPS`], as an enum so that a `match` over all of them needs
/// no default (the jump table of the layout's loop, no range check).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
#[rustfmt::skip]
enum Op {
    O0, O1, O2, O3, O4, O5, O6, O7, O8, O9, O10, O11, O12, O13, O14, O15, O16, O17, O18, O19,
    O20, O21, O22, O23, O24, O25, O26, O27, O28, O29, O30, O31, O32, O33, O34, O35, O36, O37,
    O38, O39, O40, O41, O42,
}

/// How many ops there are.
const OPS: u8 = PLAIN_STR.get() + 1;

impl Op {
    #[rustfmt::skip]
    const ALL: [Self; OPS as usize] = {
        use Op::*;
        [
            O0, O1, O2, O3, O4, O5, O6, O7, O8, O9, O10, O11, O12, O13, O14, O15, O16, O17, O18,
            O19, O20, O21, O22, O23, O24, O25, O26, O27, O28, O29, O30, O31, O32, O33, O34, O35,
            O36, O37, O38, O39, O40, O41, O42,
        ]
    };

    /// The op numbered `n` (below [`OPS`]).
    #[cfg_attr(debug_assertions, inline)]
    const fn new(n: u8) -> Self {
        Self::ALL[n as usize]
    }

    /// Its number.
    #[cfg_attr(debug_assertions, inline)]
    const fn get(self) -> u8 {
        self as u8
    }
}

/// How one field is written and read.
#[derive(Debug, Clone, Copy)]
pub(super) struct Step {
    /// The direct path (see [`UINT_OPS`]).
    op: Op,
    /// The field's part in the bucket (only fields on the general path have one).
    pub(super) role: FieldRole,
    /// The largest value written: the kind's maximum and the width's (unsigned integers only).
    write_limit: u64,
    /// The largest value read: the kind's maximum (unsigned integers only).
    read_max: u64,
}

/// What a field contributes to the bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FieldRole {
    None,
    Modulo,
    Hashed,
}

/// `match`es `$op` over the unsigned integer ops, calling `$f::<LEAD, width, desc>$args` for
/// each (one arm per width and order: the straight-line code of a derived key's field, inlined
/// into the layout's loop), then the arms given.
macro_rules! by_uint_op {
    ($op:expr, $f:ident::<$lead:ident> $args:tt, { $($rest:tt)* }) => {
        by_uint_op!(@arms $op, $f, $lead, $args, { $($rest)* },
            O0 O1 1, O2 O3 2, O4 O5 3, O6 O7 4, O8 O9 5, O10 O11 6, O12 O13 7, O14 O15 8,
            O16 O17 9, O18 O19 10, O20 O21 11, O22 O23 12, O24 O25 13, O26 O27 14, O28 O29 15,
            O30 O31 16, O32 O33 17, O34 O35 18, O36 O37 19, O38 O39 20)
    };
    (@arms $op:expr, $f:ident, $lead:ident, $args:tt, { $($rest:tt)* },
        $($asc:ident $desc:ident $width:literal),*) => {
        match $op {
            $(
                Op::$asc => $f::<$lead, $width, false> $args,
                Op::$desc => $f::<$lead, $width, true> $args,
            )*
            $($rest)*
        }
    };
}

impl Step {
    #[cfg_attr(debug_assertions, inline)]
    fn new(role: FieldRole, spec: &FieldSpec) -> Self {
        let general = Self {
            op: GENERAL,
            role,
            write_limit: 0,
            read_max: 0,
        };
        if role != FieldRole::None || spec.is_optional() {
            return general;
        }
        match spec.kind() {
            Kind::Uint { bits } if bits <= IntBits::B64 && (1..=20).contains(&spec.width()) => {
                let read_max = kinds::uint::max(bits) as u64;
                Self {
                    op: Op::new(2 * (spec.width() - 1) + u8::from(spec.is_descending())),
                    write_limit: read_max.min(num::u64_limit(spec.width())),
                    read_max,
                    ..general
                }
            }
            Kind::Int { bits } if bits <= IntBits::B64 => Self { op: INT, ..general },
            Kind::Str if !spec.is_escaped() && !spec.is_descending() => Self {
                op: PLAIN_STR,
                ..general
            },
            _ => general,
        }
    }

    /// Writes the field (after `delimiter` when `LEAD`) by its direct path, answering whether it
    /// did; when it did not, it wrote nothing.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn write_direct<const LEAD: bool>(
        &self,
        out: &mut String,
        delimiter: u8,
        value: &Value,
    ) -> bool {
        by_uint_op!(self.op, push_uint::<LEAD>(out, delimiter, value, self.write_limit), {
            PLAIN_STR => match value {
                Value::Str(s) => {
                    text::plain_len(s.as_bytes(), delimiter) == s.len()
                        && tail::push_lead_str::<LEAD>(out, delimiter, s)
                }
                _ => false,
            },
            INT | GENERAL => false,
        })
    }

    /// Reads the field at `*pos` of `key` (after `delimiter` when `LEAD`) by its direct path,
    /// putting its value in `values` and moving `*pos` past it, answering whether it did; when
    /// it did not, it moved and put nothing.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn read_direct<const LEAD: bool>(
        &self,
        key: &str,
        pos: &mut usize,
        delimiter: u8,
        values: &mut impl Sink,
    ) -> bool {
        by_uint_op!(self.op, read_uint_at::<LEAD>(key, pos, delimiter, self.read_max, values), {
            PLAIN_STR => match io::lead_plain_str_at::<LEAD>(key, *pos, delimiter) {
                Some((s, end)) => {
                    values.put_str(s);
                    *pos = end;
                    true
                }
                None => false,
            },
            INT | GENERAL => false,
        })
    }

    /// Writes the field (after its delimiter when `LEAD`) by its direct path or, declined, the
    /// general one.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn write<const LEAD: bool>(
        &self,
        w: &mut KeyWriter<'_>,
        def: &FieldDef,
        value: &Value,
    ) -> Result<()> {
        let written = by_uint_op!(self.op, uint_writer::<LEAD>(w, value, self.write_limit), {
            PLAIN_STR => match value {
                Value::Str(s) => w.try_lead_plain_str::<LEAD>(s),
                _ => false,
            },
            INT => {
                if LEAD {
                    w.delimiter();
                }
                return if int_writer(w, def, value) {
                    Ok(())
                } else {
                    write_field(w, def, self.role, value)
                };
            }
            GENERAL => false,
        });
        if written {
            return Ok(());
        }
        if LEAD {
            w.delimiter();
        }
        write_field(w, def, self.role, value)
    }

    /// Reads the field (after its delimiter when `LEAD`) by its direct path or, declined, the
    /// general one, putting its value in `values`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn read<const LEAD: bool>(
        &self,
        r: &mut KeyReader<'_>,
        def: &FieldDef,
        values: &mut Slots<'_>,
    ) -> Result<()> {
        let read = by_uint_op!(self.op, uint_reader::<LEAD>(r, self.read_max, values), {
            PLAIN_STR => match r.lead_try_plain_str::<LEAD>() {
                Some(s) => {
                    values.put_str(s);
                    true
                }
                None => false,
            },
            INT => {
                r.begin_field(&def.name)?;
                if !int_reader(r, def, values) {
                    values.put(read_field(r, def, self.role)?);
                }
                return Ok(());
            }
            GENERAL => false,
        });
        if read {
            return Ok(());
        }
        r.begin_field(&def.name)?;
        values.put(read_field(r, def, self.role)?);
        Ok(())
    }
}

#[cfg_attr(not(debug_assertions), inline(always))]
fn push_uint<const LEAD: bool, const WIDTH: u8, const DESC: bool>(
    out: &mut String,
    delimiter: u8,
    value: &Value,
    limit: u64,
) -> bool {
    match *value {
        Value::Uint(v) if v <= u128::from(limit) => {
            io::push_lead_uint::<LEAD>(out, delimiter, v as u64, WIDTH, DESC);
            true
        }
        _ => false,
    }
}

#[cfg_attr(not(debug_assertions), inline(always))]
fn read_uint_at<const LEAD: bool, const WIDTH: u8, const DESC: bool>(
    key: &str,
    pos: &mut usize,
    delimiter: u8,
    max: u64,
    values: &mut impl Sink,
) -> bool {
    match io::lead_uint_at::<LEAD>(key, *pos, delimiter, max, WIDTH, DESC) {
        Some((v, end)) => {
            values.put_uint(v);
            *pos = end;
            true
        }
        None => false,
    }
}

#[cfg_attr(not(debug_assertions), inline(always))]
fn uint_writer<const LEAD: bool, const WIDTH: u8, const DESC: bool>(
    w: &mut KeyWriter<'_>,
    value: &Value,
    limit: u64,
) -> bool {
    match *value {
        Value::Uint(v) if v <= u128::from(limit) => {
            w.uint_digits_fixed::<LEAD, WIDTH, DESC>(v as u64);
            true
        }
        _ => false,
    }
}

#[cfg_attr(not(debug_assertions), inline(always))]
fn uint_reader<const LEAD: bool, const WIDTH: u8, const DESC: bool>(
    r: &mut KeyReader<'_>,
    max: u64,
    values: &mut Slots<'_>,
) -> bool {
    match r.lead_uint64_fast::<LEAD>(max, WIDTH, DESC) {
        Some(v) => {
            values.put_uint(v);
            true
        }
        None => false,
    }
}

#[cfg_attr(not(debug_assertions), inline(never))]
#[cfg_attr(debug_assertions, inline)]
fn int_writer(w: &mut KeyWriter<'_>, def: &FieldDef, value: &Value) -> bool {
    let (&Value::Int(v), Kind::Int { bits }) = (value, def.spec.kind()) else {
        return false;
    };
    let (min, max) = kinds::int::bounds(bits);
    // Too wide for the field's width: `int64` fails before it writes anything.
    v >= min && v <= max && w.int64(&def.spec, &def.name, v as i64).is_ok()
}

#[cfg_attr(not(debug_assertions), inline(never))]
#[cfg_attr(debug_assertions, inline)]
fn int_reader(r: &mut KeyReader<'_>, def: &FieldDef, values: &mut Slots<'_>) -> bool {
    let Kind::Int { bits } = def.spec.kind() else {
        return false;
    };
    let (min, max) = kinds::int::bounds(bits);
    let at = r.position();
    match r.int128(&def.spec, &def.name, min, max) {
        Ok(v) => {
            values.put(Value::Int(v));
            true
        }
        Err(_) => {
            r.rewind(at);
            false
        }
    }
}

/// Where the whole-key direct path puts a key's values ([`Slots`]).
pub(super) trait Sink {
    /// Puts an unsigned integer.
    fn put_uint(&mut self, v: u64);

    /// Puts a string.
    fn put_str(&mut self, s: &str);
}

impl Sink for Slots<'_> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn put_uint(&mut self, v: u64) {
        Slots::put_uint(self, v);
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn put_str(&mut self, s: &str) {
        Slots::put_str(self, s);
    }
}

/// Where a key's values go as it is read: the caller's vector, overwritten from its start (see
/// [`Layout::decode_into`](super::Layout::decode_into)). The `n`th value read replaces the
/// vector's `n`th value, a string reusing the buffer of a string already there, or is pushed
/// when the vector is shorter; [`Slots::finish`] drops the values past the last one read.
pub(super) struct Slots<'v> {
    values: &'v mut Vec<Value>,
    next: usize,
}

impl<'v> Slots<'v> {
    /// Slots over `values`, from its first value.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(super) fn new(values: &'v mut Vec<Value>) -> Self {
        Self { values, next: 0 }
    }

    /// Drops the values past the last one put: the vector holds exactly the values read.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(super) fn finish(self) {
        self.values.truncate(self.next);
    }

    /// Puts an unsigned integer.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn put_uint(&mut self, v: u64) {
        match self.values.get_mut(self.next) {
            Some(Value::Uint(slot)) => *slot = u128::from(v),
            Some(slot) => *slot = Value::Uint(u128::from(v)),
            None => self.values.push(Value::Uint(u128::from(v))),
        }
        self.next += 1;
    }

    /// Puts a string, into the buffer of the string in its place if there is one.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn put_str(&mut self, s: &str) {
        if let Some(Value::Str(slot)) = self.values.get_mut(self.next) {
            slot.clear();
            slot.push_str(s);
            self.next += 1;
        } else {
            self.put(Value::Str(s.to_owned()));
        }
    }

    /// Puts any value.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn put(&mut self, value: Value) {
        match self.values.get_mut(self.next) {
            Some(slot) => *slot = value,
            None => self.values.push(value),
        }
        self.next += 1;
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
#[cfg_attr(debug_assertions, inline)]
pub(super) fn mismatch(def: &FieldDef, found: &Value) -> Error {
    Error::TypeMismatch {
        field: def.name.clone(),
        expected: dispatch::expects(def.spec.kind()),
        found: found.kind_name(),
    }
}

#[cfg_attr(debug_assertions, inline)]
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
    if dispatch::write_value(w, spec, name, value)? {
        Ok(())
    } else {
        Err(mismatch(def, value))
    }
}

/// Writes a field by the general path, with its part in the bucket.
#[cfg_attr(not(debug_assertions), inline(never))]
#[cfg_attr(debug_assertions, inline)]
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
#[cfg_attr(not(debug_assertions), inline(never))]
#[cfg_attr(debug_assertions, inline)]
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

#[cfg_attr(debug_assertions, inline)]
pub(super) fn read_value(r: &mut KeyReader<'_>, def: &FieldDef) -> Result<Value> {
    let spec = &def.spec;
    let name = def.name.as_str();
    if spec.is_optional() {
        if r.none(spec, name) {
            return Ok(Value::Null);
        }
        r.some(spec, name)?;
    }
    dispatch::read_value(r, spec, name)
}
