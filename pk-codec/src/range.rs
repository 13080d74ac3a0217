//! [`RangeBuilder`]: the key ranges of "leading fields equal to these values, next field within
//! these bounds", written through the same [`KeyWriter`] calls as the keys. The ranges it answers
//! are [`KeyRange`]s (`key_range.rs`).

use std::ops::Bound;

use crate::error::Result;
use crate::field_spec::Order;
use crate::io::KeyWriter;
use crate::key_range::{KeyRange, after_all_starting_with};
use crate::prefix::{BucketSeed, HashOver, Prefix};
use crate::shape::KeyShape;

/// Builds the key ranges for "leading fields equal to these values, next field within these
/// bounds": one range, or one per bucket for a bucketed shape.
///
/// Runtime layouts and derived keys both use it; each equality field and each bound is written by
/// a closure with the same [`KeyWriter`] calls as encoding, so ranges match keys byte for byte.
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
    seed: BucketSeed,
    hashed_end: Option<usize>,
}

impl<'s> RangeBuilder<'s> {
    /// A builder for `shape`.
    ///
    /// # Errors
    ///
    /// [`Error::RangeUnsupported`](crate::Error::RangeUnsupported) for a hash prefix over the whole key, which scatters the
    /// natural order; [`Error::BrokenRule`](crate::Error::BrokenRule) for a shape that breaks a rule (see
    /// [`KeyShape::check`]).
    pub fn new(shape: &'s KeyShape) -> Result<Self> {
        shape.validate()?;
        if let Prefix::Hash {
            over: HashOver::Key,
            ..
        } = shape.prefix()
        {
            // The error says what to do instead.
            shape
                .prefix()
                .ranges(shape.delimiter(), None, None, String::new(), None)?;
        }
        Ok(Self {
            shape,
            natural: String::new(),
            fields: 0,
            seed: BucketSeed::default(),
            hashed_end: None,
        })
    }

    /// Marks the equality fields given so far as the fields a hash prefix over leading fields
    /// covers (their text picks the prefix).
    pub fn end_hashed(&mut self) {
        self.hashed_end = Some(self.natural.len());
    }

    /// Adds an equality condition on the next field(s): `body` writes them as when encoding
    /// (each preceded by [`KeyWriter::begin_field`]).
    ///
    /// # Errors
    ///
    /// Whatever `body` returns.
    pub fn equal(&mut self, body: impl FnOnce(&mut KeyWriter<'_>) -> Result<()>) -> Result<()> {
        let len = self.natural.len();
        if self.fields > 0 {
            self.natural.push(char::from(self.shape.delimiter()));
        }
        let mut w = KeyWriter::new(&mut self.natural, self.shape.delimiter());
        let result = body(&mut w);
        if w.seed.value.is_some() {
            self.seed.value = w.seed.value;
        }
        if result.is_err() {
            self.natural.truncate(len);
        }
        result?;
        self.fields += 1;
        Ok(())
    }

    /// Encodes one bound of the field after the equality fields, as [`RangeBuilder::finish`] takes it.
    ///
    /// # Errors
    ///
    /// Whatever `body` returns.
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
    /// A modulo bucket whose field is among the equality fields gives one range; otherwise a
    /// bucketed shape gives one range per bucket, in bucket order. A hash prefix over leading
    /// fields gives one range once those fields are fixed ([`RangeBuilder::end_hashed`]).
    /// Bounds that hold no value (the lower above the upper) give empty ranges: each ends where
    /// it starts.
    ///
    /// # Errors
    ///
    /// [`Error::RangeUnsupported`](crate::Error::RangeUnsupported) for a hash prefix over leading fields that were not all given.
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
        let hashed = self.hashed_end.map(|e| &self.natural[..e]);
        self.shape
            .prefix()
            .ranges(self.shape.delimiter(), self.seed.value, hashed, start, end)
    }
}
