//! [`RangeBuilder`]: the key ranges of "leading fields equal to these values, next field within
//! these bounds", written through the same [`KeyWriter`] calls as the keys. The ranges it answers
//! are [`KeyRange`]s (`key_range.rs`). [`BinRangeBuilder`] is its twin for the binary form: the
//! same read written through [`BinWriter`] calls, answered as [`ByteRange`]s.

use std::ops::Bound;

use crate::bin_io::BinWriter;
use crate::error::Result;
use crate::field_spec::FieldSpec;
use crate::io::KeyWriter;
use crate::key_range::{
    ByteRange, KeyRange, after_all_bytes_starting_with, after_all_starting_with,
};
use crate::kinds::Order;
use crate::prefix::{BucketValue, HashOver, Prefix, ReadSeed, ValueSpan};
use crate::shape::KeyShape;

/// Builds the key ranges for "leading fields equal to these values, next field within these
/// bounds": one range, or one per bucket that can hold such keys for a bucketed shape.
///
/// Runtime layouts and derived keys both use it; each equality field and each bound is written by
/// a closure with the same [`KeyWriter`] calls as encoding, so ranges match keys byte for byte.
/// What picks a key's bucket is declared the same way too ([`KeyWriter::bucket_value`],
/// [`KeyWriter::bucket_span`], [`RangeBuilder::end_hashed`], [`RangeBuilder::bucket_bounds`]),
/// so that a read visits only the buckets that can hold its keys.
///
/// # Examples
///
/// ```
/// use pk_codec::{FieldSpec, IntBits, KeyShape, Kind, Order, RangeBuilder};
/// use std::ops::Bound;
///
/// let shape = KeyShape::new(b',');
/// let device = FieldSpec::new(Kind::Uint { bits: IntBits::B32 }).with_width(6);
/// let mut b = RangeBuilder::new(&shape)?;
/// b.equal(|w| { w.begin_field(); w.uint64(&device, "device_id", 54) })?;
/// let ranges = b.finish(Bound::Unbounded, Bound::Unbounded, Order::Asc)?;
/// assert_eq!(ranges[0].start, "000054");
/// assert_eq!(ranges[0].end.as_deref(), Some("000054-"));
/// # Ok::<(), pk_codec::Error>(())
/// ```
#[derive(Debug)]
pub struct RangeBuilder<'s> {
    shape: &'s KeyShape,
    natural: String,
    fields: usize,
    read: ReadSeed,
}

impl<'s> RangeBuilder<'s> {
    /// A builder for `shape`.
    ///
    /// # Errors
    ///
    /// [`Error::RangeUnsupported`](crate::Error::RangeUnsupported) for a hash prefix over the whole key, which scatters the
    /// natural order; [`Error::BrokenRule`](crate::Error::BrokenRule) for a shape that breaks a rule (see
    /// [`KeyShape::check`]).
    #[cfg_attr(debug_assertions, inline)]
    pub fn new(shape: &'s KeyShape) -> Result<Self> {
        check_rangeable(shape)?;
        Ok(Self {
            shape,
            natural: String::new(),
            fields: 0,
            read: ReadSeed::default(),
        })
    }

    /// Marks that the equality fields given so far include every field the prefix is computed
    /// from: the leading fields a hash prefix over leading fields covers (their text picks the
    /// prefix), or every field a bucket hash covers (each declared with
    /// [`KeyWriter::bucket_span`], as when encoding; none declared means the whole natural key).
    /// A bucket hash whose fields are all given picks one bucket, so the read visits only it.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{BucketBy, FieldSpec, IntBits, KeyShape, Kind, Order, Prefix, RangeBuilder, Separator};
    /// use std::ops::Bound::Unbounded;
    ///
    /// let shape = KeyShape::new(b',').with_prefix(Prefix::Bucket { count: 16, by: BucketBy::Hash, separator: Separator::After });
    /// let device = FieldSpec::new(Kind::Uint { bits: IntBits::B32 }).with_width(6);
    /// let mut b = RangeBuilder::new(&shape)?;
    /// b.equal(|w| {
    ///     w.begin_field();
    ///     let start = w.position();
    ///     w.uint64(&device, "device_id", 54)?;
    ///     w.bucket_span(start); // device_id is the field the bucket hash covers
    ///     Ok(())
    /// })?;
    /// b.end_hashed();
    /// let ranges = b.finish(Unbounded, Unbounded, Order::Asc)?;
    /// assert_eq!(ranges.len(), 1); // device 54's bucket alone, not all 16
    ///
    /// let mut key = String::new();
    /// shape.encode_with(&mut key, |w| {
    ///     w.begin_field();
    ///     let start = w.position();
    ///     w.uint64(&device, "device_id", 54)?;
    ///     w.bucket_span(start);
    ///     Ok(())
    /// })?;
    /// assert!(ranges[0].contains(&key));
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    #[cfg_attr(debug_assertions, inline)]
    pub fn end_hashed(&mut self) {
        self.read.hashed_end = Some(self.natural.len());
    }

    /// Declares that the field after the equality fields, which [`RangeBuilder::finish`]'s
    /// bounds bound, is the integer field a modulo bucket reads, with those bounds as values (in
    /// value order, also for a descending field). Bounds that leave fewer values than there
    /// are buckets then read only those values' buckets (`ts` from 100 to 103 of 16 buckets:
    /// buckets 4 to 7). `spec` is the field's: its type and width limit an open side.
    ///
    /// Declare it only for the modulo bucket's own field, as [`KeyWriter::bucket_value`] for an
    /// equality: ranges pruned by another field's values would miss keys. Without it, such a
    /// read visits every bucket.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{BucketBy, FieldSpec, IntBits, KeyShape, Kind, Order, Prefix, RangeBuilder, Separator};
    /// use std::ops::Bound::{Excluded, Included};
    ///
    /// let shape = KeyShape::new(b',').with_prefix(Prefix::Bucket { count: 16, by: BucketBy::Modulo, separator: Separator::After });
    /// let ts = FieldSpec::new(Kind::Uint { bits: IntBits::B64 }).with_width(13);
    /// let mut b = RangeBuilder::new(&shape)?;
    /// b.bucket_bounds(&ts, Included(100u64.into()), Excluded(104u64.into()));
    /// let lo = b.bound(|w| w.uint64(&ts, "ts", 100))?;
    /// let hi = b.bound(|w| w.uint64(&ts, "ts", 104))?;
    /// let ranges = b.finish(Included(&lo), Excluded(&hi), Order::Asc)?;
    /// let starts: Vec<&str> = ranges.iter().map(|r| &r.start[..2]).collect();
    /// assert_eq!(starts, ["04", "05", "06", "07"]);
    /// # Ok::<(), pk_codec::Error>(())
    /// ```
    #[cfg_attr(debug_assertions, inline)]
    pub fn bucket_bounds(
        &mut self,
        spec: &FieldSpec,
        lower: Bound<BucketValue>,
        upper: Bound<BucketValue>,
    ) {
        self.read.bounded = ValueSpan::of(spec, lower, upper);
    }

    /// Adds an equality condition on the next field(s): `body` writes them as when encoding
    /// (each preceded by [`KeyWriter::begin_field`]).
    ///
    /// # Errors
    ///
    /// Whatever `body` returns.
    #[cfg_attr(debug_assertions, inline)]
    pub fn equal(&mut self, body: impl FnOnce(&mut KeyWriter<'_>) -> Result<()>) -> Result<()> {
        let len = self.natural.len();
        if self.fields > 0 {
            self.natural.push(char::from(self.shape.delimiter()));
        }
        let offset = self.natural.len();
        let mut w = KeyWriter::new(&mut self.natural, self.shape.delimiter());
        let result = body(&mut w);
        let seed = w.seed;
        if result.is_err() {
            self.natural.truncate(len);
        }
        result?;
        self.read.absorb(offset, &seed);
        self.fields += 1;
        Ok(())
    }

    /// Encodes one bound of the field after the equality fields, as [`RangeBuilder::finish`] takes it.
    ///
    /// # Errors
    ///
    /// Whatever `body` returns.
    #[cfg_attr(debug_assertions, inline)]
    pub fn bound(&self, body: impl FnOnce(&mut KeyWriter<'_>) -> Result<()>) -> Result<String> {
        let mut s = String::new();
        let mut w = KeyWriter::new(&mut s, self.shape.delimiter());
        body(&mut w)?;
        Ok(s)
    }

    /// The ranges: `lower` and `upper` bound the *values* of the field after the equality fields
    /// (as written by [`RangeBuilder::bound`]); `order` is that field's order: for a descending
    /// field the bounds swap ends in key order.
    ///
    /// A bucketed shape gives one range per bucket that can hold the keys, in bucket order: one
    /// when the equality fields fix the bucket (a modulo bucket's field, declared with
    /// [`KeyWriter::bucket_value`]; every field of a bucket hash, with
    /// [`RangeBuilder::end_hashed`]), the buckets of the values the bounds leave a modulo
    /// bucket's field ([`RangeBuilder::bucket_bounds`]), every bucket otherwise. A hash prefix
    /// over leading fields gives one range once those fields are fixed
    /// ([`RangeBuilder::end_hashed`]).
    /// Bounds that hold no value (the lower above the upper) give empty ranges: each ends where
    /// it starts.
    ///
    /// # Errors
    ///
    /// [`Error::RangeUnsupported`](crate::Error::RangeUnsupported) for a hash prefix over leading fields that were not all given.
    #[cfg_attr(debug_assertions, inline)]
    pub fn finish(
        self,
        lower: Bound<&str>,
        upper: Bound<&str>,
        order: Order,
    ) -> Result<Vec<KeyRange>> {
        let (lower, upper) = if order == Order::Desc {
            (upper, lower)
        } else {
            (lower, upper)
        };
        let d = char::from(self.shape.delimiter());
        let after = char::from(self.shape.delimiter() + 1);
        let (start, end) = if matches!((lower, upper), (Bound::Unbounded, Bound::Unbounded)) {
            let end = (self.fields > 0).then(|| format!("{}{after}", self.natural));
            (self.natural.clone(), end)
        } else {
            let p = if self.fields > 0 {
                format!("{}{d}", self.natural)
            } else {
                String::new()
            };
            let start = match lower {
                Bound::Included(e) => format!("{p}{e}"),
                Bound::Excluded(e) => format!("{p}{e}{after}"),
                Bound::Unbounded => p.clone(),
            };
            let end = match upper {
                Bound::Excluded(e) => Some(format!("{p}{e}")),
                Bound::Included(e) => Some(format!("{p}{e}{after}")),
                Bound::Unbounded => after_all_starting_with(&p),
            };
            (start, end)
        };
        // Bounds that hold no value (the lower above the upper, or equal and not both
        // included): an empty range, its end at its start, rather than one whose start lies
        // past its end (which a store may refuse instead of reading it as empty).
        let end = match end {
            Some(end) if start > end => Some(start.clone()),
            end => end,
        };
        self.shape.prefix().ranges(
            self.shape.delimiter(),
            &self.natural,
            &self.read,
            start,
            end,
        )
    }
}

/// Whether `shape` answers range reads at all: refuses a shape that breaks a rule, and a hash
/// prefix over the whole key (which scatters the natural order), with the error saying what to
/// do instead. The one check both builders make.
#[cfg_attr(debug_assertions, inline)]
fn check_rangeable(shape: &KeyShape) -> Result<()> {
    shape.validate()?;
    if let Prefix::Hash {
        over: HashOver::Key,
        ..
    } = shape.prefix()
    {
        // The error says what to do instead.
        shape.prefix().ranges(
            shape.delimiter(),
            "",
            &ReadSeed::default(),
            String::new(),
            None,
        )?;
    }
    Ok(())
}

/// [`RangeBuilder`] for binary keys ([`Form::Binary`](crate::Form::Binary)): the byte ranges of
/// "leading fields equal to these values, next field within these bounds", one range or one per
/// bucket that can hold such keys, each field and bound written by a closure with the same
/// [`BinWriter`] calls as encoding, so ranges match binary keys byte for byte.
///
/// Binary field forms are self-delimiting, so there is no delimiter between fields: a key whose
/// leading fields are the equality fields starts with their bytes, and every key after an
/// excluded bound starts past every key that starts with the bound's bytes.
///
/// What a binary [`Layout`](crate::Layout)'s [`byte_ranges`](crate::Layout::byte_ranges) and a
/// `#[pk(form = binary)]` key's derived range constructors both build on.
///
/// # Examples
///
/// ```
/// use pk_codec::{BinRangeBuilder, BucketBy, FieldSpec, IntBits, KeyShape, Kind, Order, Prefix, Separator};
/// use std::ops::Bound::{Excluded, Included};
///
/// let shape = KeyShape::new(b',').with_prefix(Prefix::Bucket { count: 16, by: BucketBy::Hash, separator: Separator::After });
/// let device = FieldSpec::new(Kind::Uint { bits: IntBits::B32 });
/// let ts = FieldSpec::new(Kind::Uint { bits: IntBits::B64 });
/// let mut b = BinRangeBuilder::new(&shape)?;
/// b.equal(|w| {
///     let start = w.position();
///     w.uint64(&device, "device_id", 54)?;
///     w.bucket_span(start); // device_id is the field the bucket hash covers
///     Ok(())
/// })?;
/// b.end_hashed();
/// let lo = b.bound(|w| w.uint64(&ts, "ts", 100))?;
/// let hi = b.bound(|w| w.uint64(&ts, "ts", 200))?;
/// let ranges = b.finish(Included(&lo), Excluded(&hi), Order::Asc)?;
/// assert_eq!(ranges.len(), 1); // device 54's bucket alone
///
/// let mut key = Vec::new();
/// shape.encode_bytes_with(&mut key, |w| {
///     let start = w.position();
///     w.uint64(&device, "device_id", 54)?;
///     w.bucket_span(start);
///     w.uint64(&ts, "ts", 150)
/// })?;
/// assert!(ranges[0].contains(&key));
/// # Ok::<(), pk_codec::Error>(())
/// ```
#[derive(Debug)]
pub struct BinRangeBuilder<'s> {
    shape: &'s KeyShape,
    natural: Vec<u8>,
    fields: usize,
    read: ReadSeed,
}

impl<'s> BinRangeBuilder<'s> {
    /// A builder for `shape`'s binary keys.
    ///
    /// # Errors
    ///
    /// As [`RangeBuilder::new`].
    #[cfg_attr(debug_assertions, inline)]
    pub fn new(shape: &'s KeyShape) -> Result<Self> {
        check_rangeable(shape)?;
        Ok(Self {
            shape,
            natural: Vec::new(),
            fields: 0,
            read: ReadSeed::default(),
        })
    }

    /// As [`RangeBuilder::end_hashed`]: the equality fields given so far include every field
    /// the prefix is computed from.
    #[cfg_attr(debug_assertions, inline)]
    pub fn end_hashed(&mut self) {
        self.read.hashed_end = Some(self.natural.len());
    }

    /// As [`RangeBuilder::bucket_bounds`]: the bounded field is the modulo bucket's, with these
    /// bounds as values.
    #[cfg_attr(debug_assertions, inline)]
    pub fn bucket_bounds(
        &mut self,
        spec: &FieldSpec,
        lower: Bound<BucketValue>,
        upper: Bound<BucketValue>,
    ) {
        self.read.bounded = ValueSpan::of(spec, lower, upper);
    }

    /// Adds an equality condition on the next field(s): `body` writes them as when encoding
    /// (with the bucket bookkeeping: [`BinWriter::bucket_value`], [`BinWriter::bucket_span`]).
    ///
    /// # Errors
    ///
    /// Whatever `body` returns.
    #[cfg_attr(debug_assertions, inline)]
    pub fn equal(&mut self, body: impl FnOnce(&mut BinWriter<'_>) -> Result<()>) -> Result<()> {
        let offset = self.natural.len();
        let mut w = BinWriter::new(&mut self.natural, offset);
        let result = body(&mut w);
        let seed = w.seed;
        if result.is_err() {
            self.natural.truncate(offset);
        }
        result?;
        // Binary fields are adjacent: no delimiter between two hashed spans.
        self.read.absorb_gap(offset, &seed, 0);
        self.fields += 1;
        Ok(())
    }

    /// Encodes one bound of the field after the equality fields, as [`BinRangeBuilder::finish`]
    /// takes it: the field's binary form alone.
    ///
    /// # Errors
    ///
    /// Whatever `body` returns.
    #[cfg_attr(debug_assertions, inline)]
    pub fn bound(&self, body: impl FnOnce(&mut BinWriter<'_>) -> Result<()>) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        body(&mut BinWriter::new(&mut out, 0))?;
        Ok(out)
    }

    /// The byte ranges: `lower` and `upper` bound the values of the field after the equality
    /// fields (as written by [`BinRangeBuilder::bound`]); `order` is that field's order (a
    /// descending form is inverted bytes, so the bounds swap ends). Buckets as
    /// [`RangeBuilder::finish`] picks them; bounds that hold no value give empty ranges, each
    /// ending where it starts.
    ///
    /// # Errors
    ///
    /// As [`RangeBuilder::finish`].
    #[cfg_attr(debug_assertions, inline)]
    pub fn finish(
        self,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        order: Order,
    ) -> Result<Vec<ByteRange>> {
        let (lower, upper) = if order == Order::Desc {
            (upper, lower)
        } else {
            (lower, upper)
        };
        let after_natural = |value: &[u8]| [self.natural.as_slice(), value].concat();
        // After every key that holds an excluded lower value (the forms are self-delimiting);
        // when no key comes after them, the range is empty.
        let (start, none_after) = match lower {
            Bound::Included(v) => (after_natural(v), false),
            Bound::Excluded(v) => {
                let k = after_natural(v);
                match after_all_bytes_starting_with(&k) {
                    Some(after) => (after, false),
                    None => (k, true),
                }
            }
            Bound::Unbounded => (self.natural.clone(), false),
        };
        let end = match upper {
            Bound::Excluded(v) => Some(after_natural(v)),
            Bound::Included(v) => after_all_bytes_starting_with(&after_natural(v)),
            Bound::Unbounded if self.fields > 0 => after_all_bytes_starting_with(&self.natural),
            Bound::Unbounded => None,
        };
        // Bounds that hold no value: an empty range, its end at its start.
        let end = match end {
            _ if none_after => Some(start.clone()),
            Some(end) if start > end => Some(start.clone()),
            end => end,
        };
        self.shape
            .prefix()
            .ranges_bin(&self.natural, &self.read, start, end)
    }
}
