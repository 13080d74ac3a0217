//! Prefixes, one concept in one place: what picks a bucket or a hash prefix (the seed gathered
//! while the fields are written or read), the computation, splitting a key, the per-bucket
//! ranges, and the k-way merge that reads the buckets back in order.

use std::cmp::Ordering;
use std::ops::{Bound, Range};

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::field_spec::FieldSpec;
use crate::hash::HashAlg;
use crate::key_range::{
    ByteRange, KeyRange, after_all_bytes_starting_with, after_all_starting_with,
};
use crate::kinds::Kind;
use crate::num;
use crate::rules::{MAX_BUCKETS, Rule};

/// The most split points [`KeyShape::split_points`](crate::KeyShape::split_points) makes.
pub const MAX_SPLIT_POINTS: usize = 1 << 20;

/// The most runs of fields a bucket hash may cover.
pub(crate) const MAX_SPANS: usize = crate::rules::MAX_HASH_RUNS;

/// An integer that picks a bucket by `value % count` (`rem_euclid` for negative values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BucketValue {
    /// An unsigned value.
    Unsigned(u128),
    /// A signed value.
    Signed(i128),
}

macro_rules! bucket_value_from {
    ($variant:ident as $wide:ty: $($t:ty),*) => {$(
        impl From<$t> for BucketValue {
            #[inline]
            fn from(v: $t) -> Self {
                Self::$variant(v as $wide)
            }
        }
    )*};
}
bucket_value_from!(Unsigned as u128: u8, u16, u32, u64, u128, usize);
bucket_value_from!(Signed as i128: i8, i16, i32, i64, i128, isize);

/// What a key's bucket is computed from, gathered while its fields are written or read.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct BucketSeed {
    pub(crate) value: Option<BucketValue>,
    pub(crate) spans: [(u32, u32); MAX_SPANS],
    pub(crate) span_count: usize,
    /// A span was declared outside the fields written or read (refused when the prefix is
    /// computed).
    pub(crate) bad_span: bool,
}

impl BucketSeed {
    /// The span from `start` to `end`, positions in the key, of a natural key starting at
    /// `natural`: refused (and remembered) unless `natural <= start <= end`.
    #[inline]
    pub(crate) fn add_key_span(&mut self, natural: usize, start: usize, end: usize) {
        self.add_key_span_gap(natural, start, end, 1);
    }

    /// [`BucketSeed::add_key_span`] for a form whose adjacent fields are `gap` bytes apart (1:
    /// the text form's delimiter; 0: the binary form, which has none).
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn add_key_span_gap(
        &mut self,
        natural: usize,
        start: usize,
        end: usize,
        gap: usize,
    ) {
        if natural <= start && start <= end {
            self.add_span_gap(start - natural, end - natural, gap);
        } else {
            self.bad_span = true;
        }
    }

    /// Adds the span of a hashed field. A span that starts `gap` bytes (the text form's
    /// delimiter; none in the binary form) after the last one ends extends it: adjacent hashed
    /// fields are one run, hashed as the bytes they cover, which are the fields joined as the
    /// form joins them.
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn add_span_gap(&mut self, start: usize, end: usize, gap: usize) {
        if let Some(last) = self.span_count.checked_sub(1).filter(|&l| l < MAX_SPANS)
            && self.spans[last].1 as usize + gap == start
        {
            self.spans[last].1 = end as u32;
            return;
        }
        if self.span_count < MAX_SPANS {
            self.spans[self.span_count] = (start as u32, end as u32);
        }
        // Counted past the end so that the shape can refuse too many spans.
        self.span_count += 1;
    }
}

/// What a range read fixes of the fields a key's prefix is computed from, gathered by
/// [`RangeBuilder`](crate::RangeBuilder) while it writes the read's equality fields: their
/// bucket seed (a modulo bucket's value, the spans of hashed fields, as a key's seed holds them),
/// where in their text the fields a hash covers end once every one of them is given, and the
/// values the read's bounds leave a modulo bucket's field.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ReadSeed {
    pub(crate) seed: BucketSeed,
    /// The end, in the equality fields' text, of the fields a hash covers: set once all are given.
    pub(crate) hashed_end: Option<usize>,
    /// The values the bounds leave the bounded field, when it is a modulo bucket's field.
    pub(crate) bounded: Option<ValueSpan>,
}

impl ReadSeed {
    /// Takes in the seed of one equality condition whose text starts at `offset` in the read's
    /// text: its modulo value, and its hashed spans moved by `offset` (adjacent runs join, as a
    /// key's do).
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn absorb(&mut self, offset: usize, seed: &BucketSeed) {
        self.absorb_gap(offset, seed, 1);
    }

    /// [`ReadSeed::absorb`] for a form whose adjacent fields are `gap` bytes apart (see
    /// [`BucketSeed::add_span_gap`]).
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn absorb_gap(&mut self, offset: usize, seed: &BucketSeed, gap: usize) {
        if seed.value.is_some() {
            self.seed.value = seed.value;
        }
        let stored = seed.span_count.min(MAX_SPANS);
        for &(start, end) in &seed.spans[..stored] {
            self.seed
                .add_span_gap(start as usize + offset, end as usize + offset, gap);
        }
        // Spans past the most a seed stores still count, so that the hash refuses them.
        self.seed.span_count += seed.span_count - stored;
        self.seed.bad_span |= seed.bad_span;
    }
}

/// An integer of any type, ordered as numbers are: every negative value below every other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Wide {
    Negative(i128),
    NonNegative(u128),
}

impl From<BucketValue> for Wide {
    #[cfg_attr(debug_assertions, inline)]
    fn from(v: BucketValue) -> Self {
        match v {
            BucketValue::Signed(v) if v < 0 => Self::Negative(v),
            BucketValue::Signed(v) => Self::NonNegative(v as u128),
            BucketValue::Unsigned(v) => Self::NonNegative(v),
        }
    }
}

impl From<Wide> for BucketValue {
    #[cfg_attr(debug_assertions, inline)]
    fn from(v: Wide) -> Self {
        match v {
            Wide::Negative(v) => Self::Signed(v),
            Wide::NonNegative(v) => Self::Unsigned(v),
        }
    }
}

impl Wide {
    /// The next integer, if there is one of either type.
    #[cfg_attr(debug_assertions, inline)]
    fn next(self) -> Option<Self> {
        match self {
            Self::Negative(-1) => Some(Self::NonNegative(0)),
            Self::Negative(v) => Some(Self::Negative(v + 1)),
            Self::NonNegative(v) => v.checked_add(1).map(Self::NonNegative),
        }
    }

    /// The integer before, if there is one of either type.
    #[cfg_attr(debug_assertions, inline)]
    fn prev(self) -> Option<Self> {
        match self {
            Self::NonNegative(0) => Some(Self::Negative(-1)),
            Self::NonNegative(v) => Some(Self::NonNegative(v - 1)),
            Self::Negative(v) => v.checked_sub(1).map(Self::Negative),
        }
    }

    /// `self - lo` for `lo <= self`, at most `u128::MAX`.
    #[cfg_attr(debug_assertions, inline)]
    fn distance_from(self, lo: Self) -> u128 {
        match (lo, self) {
            (Self::NonNegative(a), Self::NonNegative(b)) => b - a,
            (Self::Negative(a), Self::Negative(b)) => b.abs_diff(a),
            (Self::Negative(a), Self::NonNegative(b)) => b.saturating_add(a.unsigned_abs()),
            (Self::NonNegative(_), Self::Negative(_)) => 0,
        }
    }
}

/// The values a read's bounds leave an integer field: `lo..=hi`, or none at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ValueSpan(Option<(Wide, Wide)>);

impl ValueSpan {
    /// The values of `spec`'s field within `lower` and `upper` (in value order, also for a
    /// descending field), narrowed to the values the field can hold (its type's, within its
    /// width: no key holds another); `None` for a field that is not an integer.
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn of(
        spec: &FieldSpec,
        lower: Bound<BucketValue>,
        upper: Bound<BucketValue>,
    ) -> Option<Self> {
        let (signed, bits) = match spec.kind() {
            Kind::Uint { bits } => (false, bits),
            Kind::Int { bits } => (true, bits),
            _ => return None,
        };
        let (min, max) = num::int_limits(signed, bits.get(), spec.width());
        let lowest = Wide::from(BucketValue::Signed(min));
        let highest = Wide::NonNegative(max);
        let lo = match lower {
            Bound::Included(v) => Some(Wide::from(v)),
            Bound::Excluded(v) => Wide::from(v).next(),
            Bound::Unbounded => Some(lowest),
        };
        let hi = match upper {
            Bound::Included(v) => Some(Wide::from(v)),
            Bound::Excluded(v) => Wide::from(v).prev(),
            Bound::Unbounded => Some(highest),
        };
        Some(Self(match (lo, hi) {
            (Some(lo), Some(hi)) => {
                let (lo, hi) = (lo.max(lowest), hi.min(highest));
                (lo <= hi).then_some((lo, hi))
            }
            _ => None,
        }))
    }
}

/// A bound's value as a modulo bucket reads it, `value` reading it (no bound when it reads none).
pub(crate) fn bucket_bound<T>(
    bound: Bound<T>,
    value: impl FnOnce(T) -> Option<BucketValue>,
) -> Bound<BucketValue> {
    match bound {
        Bound::Included(v) => value(v).map_or(Bound::Unbounded, Bound::Included),
        Bound::Excluded(v) => value(v).map_or(Bound::Unbounded, Bound::Excluded),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// The buckets a read visits, in bucket order: a run of consecutive buckets, in two parts when
/// it wraps past the last bucket to bucket 0 (`low` from bucket 0, `high` up to the last).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BucketSet {
    low: Range<u32>,
    high: Range<u32>,
}

impl BucketSet {
    /// Buckets `0..count`.
    #[cfg_attr(debug_assertions, inline)]
    fn all(count: u32) -> Self {
        Self::run(0, count, count)
    }

    /// Bucket `b` alone.
    #[cfg_attr(debug_assertions, inline)]
    fn one(b: u32) -> Self {
        Self {
            low: b..b + 1,
            high: b + 1..b + 1,
        }
    }

    /// `len` buckets from `first` on, wrapping past the last of `count` buckets to bucket 0.
    #[cfg_attr(debug_assertions, inline)]
    fn run(first: u32, len: u32, count: u32) -> Self {
        debug_assert!(first < count.max(1) && len <= count);
        match (first + len).checked_sub(count) {
            Some(wrapped) if wrapped > 0 => Self {
                low: 0..wrapped,
                high: first..count,
            },
            _ => Self {
                low: first..first + len,
                high: count..count,
            },
        }
    }

    /// The buckets, in bucket order.
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn iter(&self) -> impl Iterator<Item = u32> {
        self.low.clone().chain(self.high.clone())
    }
}

/// The buckets of `count` buckets picked `by` a field's value or a hash that can hold the keys
/// of a read: the rule of bucket pruning, written once. Every range read of a bucketed key comes
/// here through [`Prefix::ranges`] ([`RangeBuilder`](crate::RangeBuilder), so runtime layouts,
/// derived range constructors and, through the ranges they take, typed reads, `scan_ranges` and
/// `pk ranges`).
///
/// - A modulo bucket whose field an equality fixes: that value's bucket. Whose field the bounds
///   confine to fewer values than there are buckets: the buckets of those values, `lo % count`
///   on, wrapping past the last bucket to bucket 0. Bounds that leave no value: bucket 0 alone
///   (its range holds no key, as every bucket's would).
/// - A bucket hash whose fields the equalities all give ([`ReadSeed::hashed_end`]): the bucket
///   of their text, hashed as a key's is.
/// - Every bucket otherwise.
///
/// `natural` is the text of the read's equality fields.
#[cfg_attr(debug_assertions, inline)]
fn read_buckets(
    count: u32,
    by: BucketBy,
    sep: &[u8],
    natural: &[u8],
    read: &ReadSeed,
) -> Result<BucketSet> {
    match by {
        BucketBy::Modulo => Ok(match (read.seed.value, read.bounded) {
            (Some(v), _) => BucketSet::one(bucket_of_value(v, count)),
            (None, Some(ValueSpan(Some((lo, hi))))) => {
                let more = hi.distance_from(lo);
                if more < u128::from(count) {
                    BucketSet::run(bucket_of_value(lo.into(), count), more as u32 + 1, count)
                } else {
                    BucketSet::all(count)
                }
            }
            (None, Some(ValueSpan(None))) => BucketSet::one(0),
            (None, None) => BucketSet::all(count),
        }),
        BucketBy::Hash => {
            let Some(end) = read.hashed_end else {
                return Ok(BucketSet::all(count));
            };
            let seed = &read.seed;
            if seed.bad_span {
                return Err(bad_span());
            }
            let stored = &seed.spans[..seed.span_count.min(MAX_SPANS)];
            let text = match natural.get(..end) {
                Some(text) if stored.iter().all(|&(_, e)| e as usize <= end) => text,
                _ => return Err(span_after_hashed_end()),
            };
            let bucket = bucket_of_hash(hash_spans_joined(text, seed, sep)?, count);
            Ok(BucketSet::one(bucket))
        }
    }
}

/// What a bucket number is computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum BucketBy {
    /// `value % count` of one integer field (the time-bucket pattern: `timestamp % 16`).
    Modulo,
    /// `xxh3_64(encoded fields) % count` of some fields (all of them by default).
    Hash,
}

/// Whether the delimiter follows a prefix.
///
/// # Examples
///
/// ```
/// use pk_codec::{HashAlg, Layout, Separator};
///
/// let joined = Layout::builder().field("n", pk_codec::FieldSpec::new(pk_codec::Kind::Str));
/// let with = joined.clone().hash_prefix(HashAlg::Md5, 4, Separator::After).build()?;
/// let without = joined.hash_prefix(HashAlg::Md5, 4, Separator::None).build()?;
/// assert_eq!(with.encode(&["200001".into()])?, "ee8f,200001");
/// assert_eq!(without.encode(&["200001".into()])?, "ee8f200001");
/// # Ok::<(), pk_codec::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Separator {
    /// The prefix runs straight into the key: `ee8f200001`.
    #[default]
    None,
    /// The delimiter follows the prefix: `ee8f,200001`.
    After,
}

impl Separator {
    /// The bytes the separator takes: 1 after the prefix, else 0.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn bytes(self) -> usize {
        match self {
            Self::None => 0,
            Self::After => 1,
        }
    }

    /// Whether the delimiter follows the prefix.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn is_after(self) -> bool {
        matches!(self, Self::After)
    }
}

impl From<bool> for Separator {
    /// `true` is [`Separator::After`], as the layout config's `separator` field says.
    #[cfg_attr(debug_assertions, inline)]
    fn from(after: bool) -> Self {
        if after { Self::After } else { Self::None }
    }
}

/// What a hash prefix is computed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum HashOver {
    /// The whole natural key (the key without its prefix).
    #[default]
    Key,
    /// The leading fields the layout names (the text of those fields, joined by the delimiter):
    /// `md5(device_id)` then `device_id,ts`, so that a device's keys stay contiguous.
    LeadingFields,
}

/// A prefix spliced in front of the natural key to spread load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Prefix {
    /// No prefix: keys sort in natural order.
    None,
    /// The first `len` hex characters of a hash of the natural key. Point lookups recompute it;
    /// range reads over the natural order are no longer possible.
    Hash {
        /// The hash function.
        alg: HashAlg,
        /// How many hex characters, 1 to [`HashAlg::max_len`].
        len: u8,
        /// Whether the delimiter follows the prefix (`ee8f,200001` rather than `ee8f200001`).
        separator: Separator,
        /// What the hash covers: the whole natural key, or only its leading fields (so that one
        /// entity's keys stay together and range-readable once those fields are fixed).
        over: HashOver,
    },
    /// A bucket number `0..count`, zero-padded to the width of `count - 1`. Range reads become one
    /// range read per bucket, merged back with [`KeyShape::merge_buckets`](crate::KeyShape::merge_buckets).
    Bucket {
        /// How many buckets, at least 1.
        count: u32,
        /// What picks the bucket.
        by: BucketBy,
        /// Whether the delimiter follows the bucket number.
        separator: Separator,
    },
}

impl Prefix {
    /// The prefix's length in bytes, separator included.
    #[must_use]
    #[inline]
    pub const fn len(&self) -> usize {
        match *self {
            Self::None => 0,
            Self::Hash { len, separator, .. } => len as usize + separator.bytes(),
            Self::Bucket {
                count, separator, ..
            } => bucket_width(count) as usize + separator.bytes(),
        }
    }

    /// Checks the prefix's parameters: a hash prefix's length against its digest, a bucket count
    /// against [`MAX_BUCKETS`](crate::rules::MAX_BUCKETS).
    ///
    /// # Errors
    ///
    /// [`Rule::HashLen`] or [`Rule::BucketCount`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn check(&self) -> Result<(), Rule> {
        match *self {
            Self::None => Ok(()),
            Self::Hash { alg, len, .. } => {
                if len == 0 || len > alg.max_len() {
                    Err(Rule::HashLen {
                        len,
                        max: alg.max_len(),
                    })
                } else {
                    Ok(())
                }
            }
            Self::Bucket { count, .. } => {
                if count == 0 || count > MAX_BUCKETS {
                    Err(Rule::BucketCount { count })
                } else {
                    Ok(())
                }
            }
        }
    }

    /// Whether there is no prefix.
    #[must_use]
    #[inline]
    pub const fn is_empty(&self) -> bool {
        matches!(self, Self::None)
    }
}

impl Prefix {
    /// The prefix text for the key whose natural part is `natural`, into `buf`.
    ///
    /// Inlined into the encode and decode of a derived key, whose shape is a constant: the match
    /// on the prefix, the hash algorithm, the count and the widths then fold away, leaving one
    /// hash (or one remainder) and a few digit stores. The rare cases (several hashed runs, a
    /// missing modulo value) stay out of line.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn compute<'b>(
        &self,
        delimiter: u8,
        natural: &str,
        seed: &BucketSeed,
        buf: &'b mut [u8; 32],
    ) -> Result<&'b [u8]> {
        if seed.bad_span {
            return Err(bad_span());
        }
        match *self {
            Self::None => Ok(&buf[..0]),
            Self::Hash { alg, len, over, .. } => {
                let text = hashed_text(over, natural.as_bytes(), seed)?;
                Ok(alg.write_hex_prefix(text, len, buf))
            }
            Self::Bucket { count, by, .. } => {
                let bucket = match by {
                    BucketBy::Modulo => match seed.value {
                        Some(v) => return Ok(modulo_bucket_text(v, count, buf)),
                        None => return Err(no_modulo_value()),
                    },
                    BucketBy::Hash => bucket_of_hash(hash_spans(delimiter, natural, seed)?, count),
                };
                Ok(write_bucket(bucket, bucket_width(count), buf))
            }
        }
    }

    #[inline]
    pub(crate) const fn has_separator(&self) -> bool {
        matches!(
            self,
            Self::Hash {
                separator: Separator::After,
                ..
            } | Self::Bucket {
                separator: Separator::After,
                ..
            }
        )
    }

    /// The bytes of this prefix in keys of `form`, separator included: [`Prefix::len`] for text,
    /// [`Prefix::bin_len`] for binary.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn len_in(&self, form: crate::kinds::Form) -> usize {
        match form {
            crate::kinds::Form::Text => self.len(),
            crate::kinds::Form::Binary => self.bin_len(),
        }
    }

    /// The bytes of this prefix in the binary form: the first `⌈len / 2⌉` bytes of the digest for
    /// a hash prefix (the bytes of its `len` hex digits, the last rounded up to a whole byte), the
    /// bucket number big-endian in the fewest bytes that hold `count - 1` for a bucket prefix; no
    /// separator (binary fields are self-delimiting).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn bin_len(&self) -> usize {
        match *self {
            Self::None => 0,
            Self::Hash { len, .. } => (len as usize).div_ceil(2),
            Self::Bucket { count, .. } => {
                if count <= 256 {
                    1
                } else {
                    2
                }
            }
        }
    }

    /// [`Prefix::compute`] in the binary form: the prefix's bytes for the natural key `natural`.
    ///
    /// Inlined as [`Prefix::compute`] is: with a constant shape, one hash and a store of its
    /// first bytes.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn compute_bin<'b>(
        &self,
        natural: &[u8],
        seed: &BucketSeed,
        buf: &'b mut [u8; 32],
    ) -> Result<&'b [u8]> {
        if seed.bad_span {
            return Err(bad_span());
        }
        let n = self.bin_len();
        match *self {
            Self::None => Ok(&buf[..0]),
            Self::Hash { alg, len, over, .. } => {
                let _ = len; // `n` bytes: the `len` hex digits' bytes, the last rounded up.
                let data = hashed_text(over, natural, seed)?;
                Ok(alg.write_digest_prefix(data, n, buf))
            }
            Self::Bucket { count, by, .. } => {
                let bucket = match by {
                    BucketBy::Modulo => match seed.value {
                        Some(v) => bucket_of_value(v, count),
                        None => return Err(no_modulo_value()),
                    },
                    BucketBy::Hash => bucket_of_hash(hash_spans_joined(natural, seed, &[])?, count),
                };
                buf[..2].copy_from_slice(&(bucket as u16).to_be_bytes());
                Ok(if n == 1 { &buf[1..2] } else { &buf[..2] })
            }
        }
    }

    /// [`Prefix::split`] in the binary form: the prefix's bytes (checked for form: a bucket
    /// number below the count) and the natural key.
    ///
    /// Inlined: with a constant prefix (a derived key's) it is a length check and a split.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn split_bin<'k>(&self, key: &'k [u8]) -> Result<(&'k [u8], &'k [u8])> {
        let n = self.bin_len();
        if key.len() < n {
            return Err(short_bin_prefix(key.len(), n));
        }
        let (prefix, natural) = key.split_at(n);
        if let Self::Bucket { count, .. } = *self {
            let bucket = prefix.iter().fold(0u32, |v, &b| v << 8 | u32::from(b));
            if bucket >= count {
                return Err(bucket_not_below(bucket, count));
            }
        }
        Ok((prefix, natural))
    }

    /// Splits `key` into this prefix's text and the natural key (the prefix checked for form,
    /// not for value; the separator, if any, belongs to neither).
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn split<'k>(&self, delimiter: u8, key: &'k str) -> Result<(&'k str, &'k str)> {
        let bytes = key.as_bytes();
        let (digits, allowed): (usize, fn(u8) -> bool) = match *self {
            Self::None => return Ok(("", key)),
            Self::Hash { len, .. } => {
                (usize::from(len), |b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
            }
            Self::Bucket { count, .. } => {
                (usize::from(bucket_width(count)), |b| b.is_ascii_digit())
            }
        };
        let what = if matches!(self, Self::Hash { .. }) {
            "a lower-case hex digit of the hash prefix"
        } else {
            "a digit of the bucket number"
        };
        for i in 0..digits {
            match bytes.get(i) {
                Some(&b) if allowed(b) => {}
                Some(_) => {
                    let found = key[i..].chars().next().unwrap_or('?');
                    return Err(Error::malformed(
                        None,
                        i,
                        format!("expected {what}, found {found:?}"),
                    ));
                }
                None => {
                    return Err(Error::malformed(
                        None,
                        i,
                        format!("key ends inside its {digits}-character prefix"),
                    ));
                }
            }
        }
        let mut natural = digits;
        if self.has_separator() {
            if bytes.get(digits) != Some(&delimiter) {
                return Err(Error::malformed(
                    None,
                    digits,
                    format!(
                        "expected the delimiter {:?} after the prefix",
                        char::from(delimiter)
                    ),
                ));
            }
            natural += 1;
        }
        Ok((&key[..digits], &key[natural..]))
    }

    /// `n` split keys, evenly spaced over the prefix's values: bucket boundaries for a bucket
    /// prefix, hex boundaries for a hash prefix (at most 16 hex digits of it).
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn split_points(&self, n: usize) -> Result<Vec<String>> {
        let (values, width) = self.split_values(crate::kinds::Form::Text, n)?;
        let hex = matches!(self, Self::Hash { .. });
        Ok(values
            .into_iter()
            .map(|v| {
                if hex {
                    format!("{v:0width$x}")
                } else {
                    format!("{v:0width$}")
                }
            })
            .collect())
    }

    /// `n` split keys of keys in `form`, as bytes: [`Prefix::split_points`]' text for
    /// [`Form::Text`](crate::Form::Text); for [`Form::Binary`](crate::Form::Binary), the
    /// boundaries between the prefix's binary values (its bytes big-endian, at most 8 of a hash
    /// prefix's), which sort among the binary keys as the text points sort among text keys.
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn split_points_in(
        &self,
        form: crate::kinds::Form,
        n: usize,
    ) -> Result<Vec<Vec<u8>>> {
        if form == crate::kinds::Form::Text {
            return Ok(self
                .split_points(n)?
                .into_iter()
                .map(String::into_bytes)
                .collect());
        }
        let (values, width) = self.split_values(form, n)?;
        Ok(values
            .into_iter()
            .map(|v| v.to_be_bytes()[16 - width..].to_vec())
            .collect())
    }

    /// The `n` values evenly spaced over the prefix's values in `form`, and the width they are
    /// written in: digits (text bucket), hex digits (text hash), bytes (binary). The one place
    /// the spacing and its limits are computed.
    #[cfg_attr(debug_assertions, inline)]
    fn split_values(&self, form: crate::kinds::Form, n: usize) -> Result<(Vec<u128>, usize)> {
        let binary = form == crate::kinds::Form::Binary;
        let (space, width): (u128, usize) = match *self {
            Self::None => {
                return Err(Error::RangeUnsupported {
                    reason: "a layout without a hash or bucket prefix has no even spacing to offer: \
                             its keys cluster where the data does; split from a sample of real keys \
                             (`table::split_points_by_size`)"
                        .to_owned(),
                });
            }
            // The binary prefix's bytes, at most 8 (2^64 values).
            Self::Hash { .. } if binary => {
                let bytes = self.bin_len().min(8);
                (1u128 << (8 * bytes), bytes)
            }
            Self::Hash { len, .. } => {
                let digits = usize::from(len.min(16));
                (1u128 << (4 * digits), digits)
            }
            Self::Bucket { count, .. } if binary => (u128::from(count), self.bin_len()),
            Self::Bucket { count, .. } => (u128::from(count), usize::from(bucket_width(count))),
        };
        if n as u128 >= space || n > MAX_SPLIT_POINTS {
            return Err(Error::RangeUnsupported {
                reason: format!(
                    "{n} split points cannot be evenly spaced over {space} prefix values (at most {})",
                    (space - 1).min(MAX_SPLIT_POINTS as u128)
                ),
            });
        }
        let parts = n as u128 + 1;
        // i * space / parts without overflow: space <= 2^64 and i < 2^20.
        Ok(((1..parts).map(|i| i * space / parts).collect(), width))
    }

    /// The bucket number of a bucketed key (checked for form, not recomputed).
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn bucket_of_key(&self, delimiter: u8, key: &str) -> Result<u32> {
        let Self::Bucket { count, .. } = *self else {
            return Err(Error::RangeUnsupported {
                reason: "this layout has no bucket prefix".to_owned(),
            });
        };
        let (digits, _) = self.split(delimiter, key)?;
        let bucket: u32 = digits.parse().unwrap_or(u32::MAX);
        if bucket >= count {
            return Err(Error::malformed(
                None,
                0,
                format!("bucket {digits} is not below the bucket count {count}"),
            ));
        }
        Ok(bucket)
    }

    /// The key text of bucket `bucket`'s prefix, separator included (empty without a bucket
    /// prefix).
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn bucket_text(&self, delimiter: u8, bucket: u32) -> String {
        match *self {
            Self::Bucket {
                count, separator, ..
            } => {
                let mut buf = [0u8; 32];
                let digits = write_bucket(bucket, bucket_width(count), &mut buf);
                let mut s: String = digits.iter().map(|&b| char::from(b)).collect();
                if separator.is_after() {
                    s.push(char::from(delimiter));
                }
                s
            }
            _ => String::new(),
        }
    }

    /// The key ranges of the natural-key range `[start, end)` under this prefix: itself without
    /// a prefix; one range per bucket that can hold its keys, in bucket order, for a bucket
    /// prefix ([`read_buckets`]); one range behind the hash of the hashed leading fields, for a
    /// hash prefix over them. `natural` is the text of the read's equality fields, `read` what
    /// they and the bounds fix of the prefix.
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn ranges(
        &self,
        delimiter: u8,
        natural: &str,
        read: &ReadSeed,
        start: String,
        end: Option<String>,
    ) -> Result<Vec<KeyRange>> {
        let prefixed = |pfx: &str| KeyRange {
            start: format!("{pfx}{start}"),
            end: match &end {
                Some(e) => Some(format!("{pfx}{e}")),
                None => after_all_starting_with(pfx),
            },
        };
        match *self {
            Self::None => Ok(vec![KeyRange { start, end }]),
            Self::Hash {
                alg,
                len,
                separator,
                over: HashOver::LeadingFields,
            } => {
                let Some(hashed) = read.hashed_end.and_then(|e| natural.get(..e)) else {
                    return Err(Error::RangeUnsupported {
                        reason: "the hash prefix covers the leading fields, so a range read fixes all of them \
                                 first: give their values"
                            .to_owned(),
                    });
                };
                let mut pfx = alg.hex_prefix(hashed.as_bytes(), len);
                if separator.is_after() {
                    pfx.push(char::from(delimiter));
                }
                Ok(vec![prefixed(&pfx)])
            }
            Self::Hash { alg, .. } => Err(Error::RangeUnsupported {
                reason: format!(
                    "a {} hash prefix over the whole key scatters keys that are next to each other, so no \
                     range of keys holds a range of values; read single keys, hash only the leading \
                     fields (`hash=md5(device_id):4`), or use a bucket prefix, which keeps ranges",
                    alg.name()
                ),
            }),
            Self::Bucket { count, by, .. } => {
                Ok(
                    read_buckets(count, by, &[delimiter], natural.as_bytes(), read)?
                        .iter()
                        .map(|b| prefixed(&self.bucket_text(delimiter, b)))
                        .collect(),
                )
            }
        }
    }

    /// [`Prefix::ranges`] in the binary form: the byte ranges a read of the natural keys
    /// `[start, end)` visits, each behind the prefix's bytes.
    #[cfg_attr(debug_assertions, inline)]
    pub(crate) fn ranges_bin(
        &self,
        natural: &[u8],
        read: &ReadSeed,
        start: Vec<u8>,
        end: Option<Vec<u8>>,
    ) -> Result<Vec<ByteRange>> {
        let prefixed = |pfx: &[u8]| ByteRange {
            start: [pfx, &start].concat(),
            end: match &end {
                Some(e) => Some([pfx, e].concat()),
                None => after_all_bytes_starting_with(pfx),
            },
        };
        match *self {
            Self::None => Ok(vec![ByteRange { start, end }]),
            Self::Hash {
                over: HashOver::LeadingFields,
                ..
            } => {
                let Some(end) = read.hashed_end.filter(|&e| e <= natural.len()) else {
                    return Err(Error::RangeUnsupported {
                        reason: "the hash prefix covers the leading fields, so a range read fixes all of them \
                                 first: give their values"
                            .to_owned(),
                    });
                };
                let mut buf = [0u8; 32];
                let mut seed = read.seed;
                seed.spans[0] = (0, end as u32);
                seed.span_count = 1;
                let pfx = self.compute_bin(&natural[..end], &seed, &mut buf)?.to_vec();
                Ok(vec![prefixed(&pfx)])
            }
            Self::Hash { .. } => self
                .ranges(0, "", read, String::new(), None)
                .map(|_| Vec::new()),
            Self::Bucket { count, by, .. } => {
                let n = self.bin_len();
                Ok(read_buckets(count, by, &[], natural, read)?
                    .iter()
                    .map(|b| prefixed(&b.to_be_bytes()[4 - n..]))
                    .collect())
            }
        }
    }
}

/// What a hash prefix digests of the natural key: all of it, or the span of its leading fields.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
fn hashed_text<'k>(over: HashOver, natural: &'k [u8], seed: &BucketSeed) -> Result<&'k [u8]> {
    match over {
        HashOver::Key => Ok(natural),
        HashOver::LeadingFields => match seed.spans[..seed.span_count.min(MAX_SPANS)] {
            [(0, end)] => Ok(&natural[..end as usize]),
            _ => Err(Error::layout(
                None,
                "a hash prefix over leading fields needs the span of those fields, and none was given",
            )),
        },
    }
}

/// The error of a binary key shorter than its `n`-byte prefix.
#[cold]
#[cfg_attr(not(debug_assertions), inline(never))]
#[cfg_attr(debug_assertions, inline)]
fn short_bin_prefix(len: usize, n: usize) -> Error {
    Error::malformed(None, len, format!("key ends inside its {n}-byte prefix"))
}

/// The error of a binary key's bucket number at or over the count.
#[cold]
#[cfg_attr(not(debug_assertions), inline(never))]
#[cfg_attr(debug_assertions, inline)]
fn bucket_not_below(bucket: u32, count: u32) -> Error {
    Error::malformed(
        None,
        0,
        format!("bucket number {bucket} is not below the bucket count {count}"),
    )
}

#[cold]
#[cfg_attr(not(debug_assertions), inline(never))]
#[cfg_attr(debug_assertions, inline)]
fn bad_span() -> Error {
    Error::layout(
        None,
        "a hashed span (bucket_span) must start within the fields written or read so far, \
         at or after the natural key's start and at or before the current position",
    )
}

#[cold]
#[cfg_attr(not(debug_assertions), inline(never))]
#[cfg_attr(debug_assertions, inline)]
fn span_after_hashed_end() -> Error {
    Error::layout(
        None,
        "a range read declared a hashed span (bucket_span) after the point `end_hashed` marked as \
         the end of the hashed fields",
    )
}

#[cold]
#[cfg_attr(not(debug_assertions), inline(never))]
#[cfg_attr(debug_assertions, inline)]
fn no_modulo_value() -> Error {
    Error::layout(
        None,
        "a modulo bucket prefix needs the value of its integer field, and none was given",
    )
}

/// The hash a bucket takes of the natural key `bytes`: the whole key, or the spans of its hashed
/// fields joined by `sep` (the delimiter in the text form; nothing in the binary form, whose
/// fields are self-delimiting).
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
fn hash_spans_joined(bytes: &[u8], seed: &BucketSeed, sep: &[u8]) -> Result<u64> {
    match seed.span_count {
        0 => Ok(crate::hash::xxh3_64(bytes)),
        1 => {
            let (s, e) = seed.spans[0];
            Ok(crate::hash::xxh3_64(&bytes[s as usize..e as usize]))
        }
        _ => hash_runs(bytes, seed, sep),
    }
}

/// [`hash_spans_joined`] of several runs: a streaming hasher (whose state is large, so it stays
/// out of the inlined path; and out of line in a debug build too, as `hash.rs`'s digests are).
#[inline(never)]
fn hash_runs(bytes: &[u8], seed: &BucketSeed, sep: &[u8]) -> Result<u64> {
    let n = seed.span_count;
    if n > MAX_SPANS {
        return Err(Error::layout(
            None,
            format!("a bucket hash covers at most {MAX_SPANS} fields, not {n}"),
        ));
    }
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    for (i, &(s, e)) in seed.spans[..n].iter().enumerate() {
        if i > 0 {
            hasher.update(sep);
        }
        hasher.update(&bytes[s as usize..e as usize]);
    }
    Ok(hasher.digest())
}

/// XXH3-64 of the hashed runs of the natural key, joined by the delimiter.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
fn hash_spans(delimiter: u8, natural: &str, seed: &BucketSeed) -> Result<u64> {
    hash_spans_joined(natural.as_bytes(), seed, &[delimiter])
}

/// `bucket` in `width` decimal digits at the start of `buf`.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
fn write_bucket(bucket: u32, width: u8, buf: &mut [u8; 32]) -> &[u8] {
    let width = usize::from(width).min(buf.len());
    let mut v = bucket;
    for slot in buf[..width].iter_mut().rev() {
        *slot = b'0' + (v % 10) as u8;
        v /= 10;
    }
    &buf[..width]
}

/// The digits a modulo bucket prefix writes for `value` among `count` buckets: `value % count`
/// (see [`bucket_of_value`]) at the width of the last bucket.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn modulo_bucket_text(value: BucketValue, count: u32, buf: &mut [u8; 32]) -> &[u8] {
    write_bucket(bucket_of_value(value, count), bucket_width(count), buf)
}

/// The number of digits the bucket numbers of `count` buckets take: the width of `count - 1`.
#[inline]
#[must_use]
pub(crate) const fn bucket_width(count: u32) -> u8 {
    // Comparisons rather than a division loop: this runs for every key of a bucketed layout.
    match count.saturating_sub(1) {
        0..=9 => 1,
        10..=99 => 2,
        100..=999 => 3,
        1_000..=9_999 => 4,
        10_000..=99_999 => 5,
        100_000..=999_999 => 6,
        1_000_000..=9_999_999 => 7,
        10_000_000..=99_999_999 => 8,
        100_000_000..=999_999_999 => 9,
        _ => 10,
    }
}

/// The bucket of an integer: `value % count`, non-negative for negative values.
#[cfg_attr(not(debug_assertions), inline(always))]
#[must_use]
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn bucket_of_value(value: BucketValue, count: u32) -> u32 {
    match value {
        BucketValue::Unsigned(v) => match u64::try_from(v) {
            Ok(v) => (v % u64::from(count)) as u32,
            Err(_) => (v % u128::from(count)) as u32,
        },
        BucketValue::Signed(v) => v.rem_euclid(i128::from(count)) as u32,
    }
}

/// The bucket of some encoded text: XXH3-64 of it, modulo `count`. XXH3 mixes every input bit into
/// the low bits, so power-of-two counts stay even (a weak hash would leave them skewed).
#[cfg_attr(not(debug_assertions), inline(always))]
#[must_use]
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn bucket_of_hash(hash: u64, count: u32) -> u32 {
    (hash % u64::from(count)) as u32
}

/// Merges streams that are each sorted by `cmp` into one sorted stream: the read side of a bucketed
/// layout, whose N per-bucket range reads come back each in natural order.
///
/// A binary heap of the streams' heads: `O(n log k)` comparisons for `n` items from `k` streams.
/// Equal items come out in stream order, so the merge is stable.
///
/// # Examples
///
/// ```
/// let a = vec![1, 4, 7];
/// let b = vec![2, 5, 8];
/// let c = vec![0, 3, 6, 9];
/// let merged: Vec<i32> = pk_codec::merge_sorted_by(vec![a, b, c], |x, y| x.cmp(y)).collect();
/// assert_eq!(merged, (0..10).collect::<Vec<_>>());
/// ```
pub fn merge_sorted_by<S, T, F>(
    streams: impl IntoIterator<Item = S>,
    cmp: F,
) -> MergeSorted<S::IntoIter, F>
where
    S: IntoIterator<Item = T>,
    F: FnMut(&T, &T) -> Ordering,
{
    let mut streams: Vec<S::IntoIter> = streams.into_iter().map(IntoIterator::into_iter).collect();
    let mut heap = Vec::with_capacity(streams.len());
    for (index, stream) in streams.iter_mut().enumerate() {
        if let Some(item) = stream.next() {
            heap.push(Head {
                item,
                stream: index,
            });
        }
    }
    let mut merge = MergeSorted { streams, heap, cmp };
    for i in (0..merge.heap.len() / 2).rev() {
        merge.sift_down(i);
    }
    merge
}

struct Head<T> {
    item: T,
    stream: usize,
}

/// The iterator of [`merge_sorted_by`].
pub struct MergeSorted<I: Iterator, F> {
    streams: Vec<I>,
    heap: Vec<Head<I::Item>>,
    cmp: F,
}

impl<I: Iterator, F> std::fmt::Debug for MergeSorted<I, F> {
    #[cfg_attr(debug_assertions, inline)]
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MergeSorted")
            .field("streams", &self.streams.len())
            .field("pending", &self.heap.len())
            .finish()
    }
}

impl<I, F> MergeSorted<I, F>
where
    I: Iterator,
    F: FnMut(&I::Item, &I::Item) -> Ordering,
{
    /// Whether head `a` comes out before head `b`.
    #[inline]
    fn before(&mut self, a: usize, b: usize) -> bool {
        let (x, y) = (&self.heap[a], &self.heap[b]);
        match (self.cmp)(&x.item, &y.item) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => x.stream < y.stream,
        }
    }

    #[cfg_attr(debug_assertions, inline)]
    fn sift_down(&mut self, mut i: usize) {
        loop {
            let left = 2 * i + 1;
            if left >= self.heap.len() {
                return;
            }
            let right = left + 1;
            let child = if right < self.heap.len() && self.before(right, left) {
                right
            } else {
                left
            };
            if !self.before(child, i) {
                return;
            }
            self.heap.swap(i, child);
            i = child;
        }
    }
}

impl<I, F> Iterator for MergeSorted<I, F>
where
    I: Iterator,
    F: FnMut(&I::Item, &I::Item) -> Ordering,
{
    type Item = I::Item;

    #[cfg_attr(debug_assertions, inline)]
    fn next(&mut self) -> Option<I::Item> {
        let top = self.heap.first_mut()?;
        let stream = top.stream;
        let item = match self.streams[stream].next() {
            Some(next) => std::mem::replace(&mut top.item, next),
            None => self.heap.swap_remove(0).item,
        };
        self.sift_down(0);
        Some(item)
    }

    #[cfg_attr(debug_assertions, inline)]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let (mut low, mut high) = (self.heap.len(), Some(self.heap.len()));
        for stream in &self.streams {
            let (l, h) = stream.size_hint();
            low = low.saturating_add(l);
            high = high.zip(h).and_then(|(a, b)| a.checked_add(b));
        }
        (low, high)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_width_is_the_width_of_the_last_bucket() {
        assert_eq!(bucket_width(1), 1);
        assert_eq!(bucket_width(10), 1);
        assert_eq!(bucket_width(11), 2);
        assert_eq!(bucket_width(16), 2);
        assert_eq!(bucket_width(101), 3);
    }

    #[test]
    fn negative_values_land_in_non_negative_buckets() {
        assert_eq!(bucket_of_value(BucketValue::Signed(-1), 16), 15);
        assert_eq!(bucket_of_value(BucketValue::Unsigned(u128::MAX), 16), 15);
        assert_eq!(bucket_of_value(BucketValue::Unsigned(33), 16), 1);
    }

    #[test]
    fn merge_is_stable_and_handles_empty_streams() {
        let streams = vec![vec![(1, 'a'), (2, 'a')], vec![], vec![(1, 'c'), (3, 'c')]];
        let merged: Vec<_> = merge_sorted_by(streams, |x, y| x.0.cmp(&y.0)).collect();
        assert_eq!(merged, vec![(1, 'a'), (1, 'c'), (2, 'a'), (3, 'c')]);
    }
}
