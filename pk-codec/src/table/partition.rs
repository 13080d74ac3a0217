//! Partitions (ranges of the partition key), the choice of split points, and split-point
//! computation for a sample of keys (pre-splitting before an import).

use std::cell::Cell as StdCell;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::error::TableError;
use super::load::Extremes;
use super::row::{decode_partition_value, encode_value};
use super::rowset::{RowSet, head};
use super::schema::PkValue;

/// Writes of the current load window, kept under the partition's write lock.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct WriteLoad {
    pub(crate) writes: u64,
    pub(crate) bytes_written: u64,
}

/// What a partition's lock guards.
#[derive(Debug, Default)]
pub(crate) struct PartData {
    /// Set when the partition was split or merged away: the caller must look it up again.
    pub(crate) retired: bool,
    /// The rows, in key order (searched by encoded key).
    pub(crate) rows: RowSet,
    pub(crate) bytes: u64,
    pub(crate) window: WriteLoad,
    pub(crate) total_writes: u64,
}

impl PartData {
    /// Whether every row shares one partition-key value (such a partition cannot split).
    pub(crate) fn single_value(&self) -> bool {
        match (self.rows.first(), self.rows.last()) {
            (Some(a), Some(b)) => a.partition_bytes() == b.partition_bytes(),
            _ => true,
        }
    }

    /// Where a size split should cut the rows: the partition-key value that makes both sides'
    /// bytes closest, never inside one value. `None` when the rows hold a single value. Reads
    /// the rows only up to the first run of equal values past the middle of the bytes.
    pub(crate) fn size_split_point(&self) -> Option<PkValue> {
        debug_assert_eq!(self.bytes, self.rows.iter().map(|r| r.size()).sum::<u64>());
        let rows = self.rows.iter().map(|r| (r.partition_bytes(), r.size()));
        balanced_point(rows, self.bytes).map(decode_partition_value)
    }
}

/// One range `[lower, upper)` of the partition key, with its rows and load counters.
///
/// Aligned to two cache lines so that writers to neighbouring partitions do not share one.
#[derive(Debug)]
#[repr(align(128))]
pub(crate) struct Partition {
    pub(crate) id: u64,
    pub(crate) lower: PkValue,
    pub(crate) upper: PkValue,
    /// `(lower, upper)` again, shared with the partition's load records.
    pub(crate) bounds: Arc<(PkValue, PkValue)>,
    pub(crate) data: RwLock<PartData>,
    /// Reads of the current window (readers hold only the read lock, so these are atomic).
    pub(crate) reads: AtomicU64,
    pub(crate) rows_read: AtomicU64,
    pub(crate) bytes_read: AtomicU64,
    pub(crate) total_reads: AtomicU64,
    /// Operations of the last closed window (for merge decisions).
    pub(crate) last_window_ops: AtomicU64,
    /// A load split was tried in this window: do not try again until the next one.
    pub(crate) load_split_tried: AtomicBool,
    /// Partition-key values of sampled operations in this window.
    pub(crate) samples: Mutex<Samples>,
}

/// Most samples a partition keeps per window; past it every other one is dropped.
const MAX_SAMPLES: usize = 4096;

impl Partition {
    pub(crate) fn new(id: u64, lower: PkValue, upper: PkValue, data: PartData) -> Self {
        Self {
            id,
            bounds: Arc::new((lower.clone(), upper.clone())),
            lower,
            upper,
            data: RwLock::new(data),
            reads: AtomicU64::new(0),
            rows_read: AtomicU64::new(0),
            bytes_read: AtomicU64::new(0),
            total_reads: AtomicU64::new(0),
            last_window_ops: AtomicU64::new(0),
            load_split_tried: AtomicBool::new(false),
            samples: Mutex::new(Samples::default()),
        }
    }

    #[inline]
    pub(crate) fn contains(&self, v: &PkValue) -> bool {
        self.lower <= *v && *v < self.upper
    }

    /// Records one sampled operation on partition-key value `v`.
    #[cold]
    pub(crate) fn sample(&self, v: &PkValue) {
        let mut s = self.samples.lock().unwrap_or_else(PoisonError::into_inner);
        s.push(v);
    }

    /// [`Partition::sample`] of a value already encoded ([`encode_value`]): copied, not
    /// encoded again.
    #[inline]
    pub(crate) fn sample_encoded(&self, v: &[u8]) {
        let mut s = self.samples.lock().unwrap_or_else(PoisonError::into_inner);
        s.push_encoded(v);
    }
}

/// Partition-key values encoded ([`encode_value`]: bytes order as the values do) one after
/// another in one buffer, with where each ends: a list that costs no allocation per value. The
/// load samples of a partition and the lower bounds of a copy of the partition map.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct EncodedValues {
    bytes: Vec<u8>,
    /// Where each value ends in `bytes`.
    ends: Vec<usize>,
}

impl EncodedValues {
    pub(crate) fn push(&mut self, v: &PkValue) {
        encode_value(v, &mut self.bytes);
        self.ends.push(self.bytes.len());
    }

    /// Adds a value given encoded ([`encode_value`]'s bytes).
    pub(crate) fn push_encoded(&mut self, v: &[u8]) {
        self.bytes.extend_from_slice(v);
        self.ends.push(self.bytes.len());
    }

    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Where value `i` starts in `bytes` (`len()`: the end of the last).
    fn start(&self, i: usize) -> usize {
        i.checked_sub(1).map_or(0, |last| self.ends[last])
    }

    /// Value `i`, encoded.
    pub(crate) fn get(&self, i: usize) -> &[u8] {
        &self.bytes[self.start(i)..self.ends[i]]
    }

    /// The values, encoded, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &[u8]> {
        (0..self.len()).map(|i| self.get(i))
    }

    pub(crate) fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    /// Keeps the second, fourth, ... values.
    fn keep_every_other(&mut self) {
        let (mut to, mut kept) = (0, 0);
        for i in (1..self.len()).step_by(2) {
            let (start, end) = (self.ends[i - 1], self.ends[i]);
            self.bytes.copy_within(start..end, to);
            to += end - start;
            self.ends[kept] = to;
            kept += 1;
        }
        self.bytes.truncate(to);
        self.ends.truncate(kept);
    }

    /// Replaces values `range` with `with`'s (as [`Vec::splice`] replaces elements).
    fn splice(&mut self, range: Range<usize>, with: &Self) {
        let (start, end) = (self.start(range.start), self.start(range.end));
        self.bytes.splice(start..end, with.bytes.iter().copied());
        let after = range.start + with.len();
        self.ends.splice(range, with.ends.iter().map(|e| e + start));
        // The values after the spliced ones moved by the change in length.
        for e in &mut self.ends[after..] {
            *e = *e - end + start + with.bytes.len();
        }
        debug_assert_eq!(self.ends.last().copied().unwrap_or(0), self.bytes.len());
    }
}

/// Sampled partition-key values, encoded one after another ([`EncodedValues`]), so that a
/// sample costs no allocation of its own.
#[derive(Debug, Default, Clone)]
pub(crate) struct Samples(EncodedValues);

impl Samples {
    /// Adds a value; past [`MAX_SAMPLES`] every other one is dropped first.
    pub(crate) fn push(&mut self, v: &PkValue) {
        self.make_room();
        self.0.push(v);
    }

    /// [`Samples::push`] of a value given encoded ([`encode_value`]'s bytes).
    pub(crate) fn push_encoded(&mut self, v: &[u8]) {
        self.make_room();
        self.0.push_encoded(v);
    }

    /// Past [`MAX_SAMPLES`], drops every other sample.
    fn make_room(&mut self) {
        if self.0.len() >= MAX_SAMPLES {
            self.0.keep_every_other();
        }
    }

    /// The encoded values, in sampling order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &[u8]> {
        self.0.iter()
    }

    /// The values kept.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// The lowest and the highest value, encoded one after the other (as a load record keeps
    /// them); `None` without samples.
    pub(crate) fn extremes(&self) -> Option<Extremes> {
        // One pass for both.
        let mut values = self.iter();
        let first = values.next()?;
        let (low, high) = values.fold((first, first), |(low, high), v| (low.min(v), high.max(v)));
        Some(Extremes::new(low, high))
    }

    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }
}

/// Number of copies of the partition map; a power of two.
const SHARDS: usize = 8;

/// One copy of the partition map, on its own cache lines.
#[derive(Debug)]
#[repr(align(128))]
struct Shard(RwLock<MapCopy>);

/// The partitions in key order, and their lower bounds encoded in one buffer
/// ([`EncodedValues`]): finding the partition of an encoded key is a binary search within two
/// small blocks, not a pointer chase to a partition and its bound per probe. Reads as the slice
/// of partitions.
#[derive(Debug, Default)]
pub(crate) struct MapCopy {
    parts: Vec<Arc<Partition>>,
    lowers: EncodedValues,
    /// Each encoded lower bound's first 8 bytes as a word ([`head`]): a search compares these,
    /// and the bytes only on a tie.
    heads: Vec<u64>,
}

impl MapCopy {
    fn new(parts: Vec<Arc<Partition>>) -> Self {
        let lowers = lowers_of(&parts);
        let heads = heads_of(&lowers);
        Self {
            parts,
            lowers,
            heads,
        }
    }

    /// Index of the partition holding the partition-key value encoded as `v` (the encoded
    /// twin of [`index_of`](super::store::index_of), which it agrees with).
    #[inline]
    pub(crate) fn index_of_encoded(&self, v: &[u8]) -> usize {
        // The number of partitions whose lower bound is at most `v`, less one.
        count_at_or_below(&self.heads, head(v, 0), |i| self.lowers.get(i) <= v).saturating_sub(1)
    }
}

/// Of sorted values given by their heads (words that order two values as the values do where
/// they differ, as [`head`] and [`PkValue::head`] are), the number at or below a value of head
/// `head`: a binary search of the heads, then, among the values of the same head (mostly
/// none), of the values themselves (`at_or_below(i)`: whether value `i` is at or below).
#[inline]
pub(crate) fn count_at_or_below(
    heads: &[u64],
    head: u64,
    at_or_below: impl Fn(usize) -> bool,
) -> usize {
    let upto = heads.partition_point(|&h| h <= head);
    let mut lo = if upto > 0 && heads[upto - 1] == head {
        heads[..upto].partition_point(|&h| h < head)
    } else {
        upto
    };
    let mut hi = upto;
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if at_or_below(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The lower bounds of `parts`, encoded.
fn lowers_of(parts: &[Arc<Partition>]) -> EncodedValues {
    let mut lowers = EncodedValues::default();
    for p in parts {
        lowers.push(&p.lower);
    }
    lowers
}

/// The heads of encoded values.
fn heads_of(values: &EncodedValues) -> Vec<u64> {
    values.iter().map(|v| head(v, 0)).collect()
}

impl std::ops::Deref for MapCopy {
    type Target = [Arc<Partition>];

    fn deref(&self) -> &Self::Target {
        &self.parts
    }
}

/// The partitions in key order (the first starts at INF_MIN, the last ends at INF_MAX).
///
/// Each thread reads one copy (picked round-robin when the thread first uses a table) under
/// that copy's read lock, so that a few threads working on different partitions do not write
/// to a shared cache line (one shared read-write lock made two
/// writer threads slower than one). Splits and merges take every copy's write lock, in order,
/// and change all copies alike: holding any read lock therefore pins the whole map.
#[derive(Debug)]
pub(crate) struct PartitionMap {
    shards: Box<[Shard]>,
}

/// The write side of [`PartitionMap`]: every copy locked.
pub(crate) struct MapWrite<'a> {
    guards: Vec<RwLockWriteGuard<'a, MapCopy>>,
}

fn shard_index() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SHARD: StdCell<usize> = const { StdCell::new(usize::MAX) };
    }
    SHARD.with(|s| {
        let mut i = s.get();
        if i == usize::MAX {
            i = NEXT.fetch_add(1, Relaxed) % SHARDS;
            s.set(i);
        }
        i
    })
}

impl PartitionMap {
    pub(crate) fn new(parts: Vec<Arc<Partition>>) -> Self {
        Self {
            shards: (0..SHARDS)
                .map(|_| Shard(RwLock::new(MapCopy::new(parts.clone()))))
                .collect(),
        }
    }

    /// This thread's copy, read-locked.
    #[inline]
    pub(crate) fn read(&self) -> RwLockReadGuard<'_, MapCopy> {
        self.shards[shard_index()]
            .0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Every copy, write-locked.
    pub(crate) fn write(&self) -> MapWrite<'_> {
        MapWrite {
            guards: self
                .shards
                .iter()
                .map(|s| s.0.write().unwrap_or_else(PoisonError::into_inner))
                .collect(),
        }
    }
}

impl MapWrite<'_> {
    /// The partitions.
    pub(crate) fn parts(&self) -> &[Arc<Partition>] {
        &self.guards[0]
    }

    /// Replaces partitions `range` with `with` in every copy.
    pub(crate) fn splice(&mut self, range: Range<usize>, with: &[Arc<Partition>]) {
        // The new bounds are encoded once, for every copy.
        let lowers = lowers_of(with);
        let heads = heads_of(&lowers);
        for g in &mut self.guards {
            g.parts.splice(range.clone(), with.iter().cloned());
            g.lowers.splice(range.clone(), &lowers);
            g.heads.splice(range.clone(), heads.iter().copied());
            debug_assert_eq!(g.lowers.len(), g.parts.len());
        }
    }
}

/// Where a load split should cut, from sampled partition-key values, and the largest share one
/// value holds. The point is `None` when one value takes over half of the load (no split can
/// help) or fewer than two values were sampled.
pub(crate) fn load_split_point(samples: &Samples) -> (Option<PkValue>, Option<(PkValue, f64)>) {
    let mut samples: Vec<&[u8]> = samples.iter().collect();
    samples.sort_unstable();
    let groups = group_by_value(samples.iter().map(|v| (*v, 1)));
    let total: u64 = groups.iter().map(|g| g.1).sum();
    if let Some(top) = groups.iter().max_by_key(|g| g.1)
        && total > 0
        && top.1 * 2 > total
    {
        #[allow(clippy::cast_precision_loss)]
        let share = top.1 as f64 / total as f64;
        return (None, Some((decode_partition_value(top.0), share)));
    }
    (
        balanced_point(groups.iter().copied(), total).map(decode_partition_value),
        None,
    )
}

/// Consecutive equal values merged, with their summed weights.
fn group_by_value<'a, T: PartialEq + ?Sized>(
    items: impl Iterator<Item = (&'a T, u64)>,
) -> Vec<(&'a T, u64)> {
    let mut groups: Vec<(&T, u64)> = Vec::new();
    for (v, w) in items {
        match groups.last_mut() {
            Some(last) if last.0 == v => last.1 = last.1.saturating_add(w),
            _ => groups.push((v, w)),
        }
    }
    groups
}

/// Of weighted values in order (equal values adjacent) weighing `total` in all, the value
/// starting the run at which the weights on both sides are closest (the first such; never a
/// run with no weight before it). Stops reading at the first run past the middle: the sides
/// only grow apart from there. When only runs with no weight before them start after the
/// first (leading runs weigh nothing, then one run has all the weight), the last of them:
/// it cuts the weightless runs off, so that the weight is one value's, which no split is
/// tried for again (without a cut, every write to the partition would try again).
pub(crate) fn balanced_point<'a, T: PartialEq + ?Sized>(
    items: impl IntoIterator<Item = (&'a T, u64)>,
    total: u64,
) -> Option<&'a T> {
    let mut left = 0u128;
    // In u128: twice a sum of u64 weights does not overflow.
    let total = u128::from(total);
    let mut previous: Option<&T> = None;
    let mut best: Option<(u128, &T)> = None;
    let mut weightless_cut: Option<&T> = None;
    for (v, w) in items {
        if left == 0 {
            if previous.is_some_and(|p| p != v) {
                weightless_cut = Some(v);
            }
        } else if previous != Some(v) {
            let diff = (2 * left).abs_diff(total);
            if best.is_none_or(|b| diff < b.0) {
                best = Some((diff, v));
            }
            if 2 * left >= total {
                break;
            }
        }
        previous = Some(v);
        left += u128::from(w);
    }
    best.map(|b| b.1).or(weightless_cut)
}

/// Split points that cut a sample of partition-key values (each with its size in bytes) into
/// ranges of at most about `max_bytes` each, never inside one value.
///
/// Use it to pre-split a table before a large import, from a sample of the keys to load.
///
/// # Errors
///
/// [`TableError::InvalidSplitPoint`] when `max_bytes` is 0.
///
/// # Examples
///
/// ```
/// use pk_codec::table::{PkValue, split_points_by_size};
///
/// let sample: Vec<(PkValue, u64)> = ["a", "b", "c", "d"].iter().map(|k| ((*k).into(), 10)).collect();
/// let points = split_points_by_size(sample, 20)?;
/// assert_eq!(points, vec![PkValue::from("c")]);
/// # Ok::<(), pk_codec::table::TableError>(())
/// ```
pub fn split_points_by_size(
    sample: impl IntoIterator<Item = (PkValue, u64)>,
    max_bytes: u64,
) -> Result<Vec<PkValue>, TableError> {
    if max_bytes == 0 {
        return Err(TableError::InvalidSplitPoint {
            index: 0,
            reason: "the size per range must be above 0",
        });
    }
    let mut sample: Vec<(PkValue, u64)> = sample.into_iter().collect();
    sample.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    // Exact sums, in u128: a value's sizes may add up past u64::MAX (a sum saturated there
    // read as exactly `max_bytes = u64::MAX`, and the next value was not cut off).
    let mut points = Vec::new();
    let mut acc = 0u128;
    let mut i = 0;
    while let Some((v, _)) = sample.get(i) {
        let mut total = 0u128;
        while let Some((_, size)) = sample.get(i).filter(|(w, _)| w == v) {
            total = total.saturating_add(u128::from(*size));
            i += 1;
        }
        if acc > 0 && acc.saturating_add(total) > u128::from(max_bytes) {
            points.push(v.clone());
            acc = 0;
        }
        acc = acc.saturating_add(total);
    }
    Ok(points)
}

/// Split points that cut a sample of partition-key values into `ranges` ranges of about equal
/// counts (fewer when the sample has too few distinct values), never inside one value.
///
/// # Errors
///
/// [`TableError::InvalidSplitPoint`] when `ranges` is 0.
///
/// # Examples
///
/// ```
/// use pk_codec::table::{PkValue, split_points_even};
///
/// let sample: Vec<PkValue> = (0..100).map(PkValue::from).collect();
/// let points = split_points_even(sample, 4)?;
/// assert_eq!(points, vec![25.into(), 50.into(), 75.into()]);
/// # Ok::<(), pk_codec::table::TableError>(())
/// ```
pub fn split_points_even(
    sample: impl IntoIterator<Item = PkValue>,
    ranges: usize,
) -> Result<Vec<PkValue>, TableError> {
    if ranges == 0 {
        return Err(TableError::InvalidSplitPoint {
            index: 0,
            reason: "the number of ranges must be above 0",
        });
    }
    let mut sample: Vec<PkValue> = sample.into_iter().collect();
    sample.sort_unstable();
    let n = sample.len();
    let mut points: Vec<PkValue> = Vec::new();
    // The cut positions `i * n / ranges` for `i` in `1..ranges`; when there are at least as
    // many ranges as values they take every position, so the loop is bounded by the sample
    // (`ranges` may be up to usize::MAX), and the product is taken in u128 (it overflows usize).
    let positions: Box<dyn Iterator<Item = usize>> = if ranges >= n {
        Box::new(1..n)
    } else {
        Box::new((1..ranges).map(|i| (i as u128 * n as u128 / ranges as u128) as usize))
    };
    for at in positions {
        if at == 0 || at >= n {
            continue;
        }
        // Move to the start of the value's run, so that a value is never cut.
        let v = &sample[at];
        let first = sample.partition_point(|x| x < v);
        if first == 0 {
            continue;
        }
        if points.last() != Some(v) {
            points.push(v.clone());
        }
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::PrimaryKey;

    fn v(s: &str) -> PkValue {
        s.into()
    }

    /// A seeded mix of partition-key values of every kind, with the bytes the encoding escapes.
    fn mixed_values(seed: u64, n: usize) -> Vec<PkValue> {
        let mut next = crate::table::test_lcg(seed);
        (0..n)
            .map(|_| match next() % 3 {
                0 => PkValue::Integer(next() as i64 - (1 << 30)),
                1 => PkValue::String(
                    (0..next() % 5)
                        .map(|_| ['\0', '\u{1}', 'a', 'b', '\u{ff}'][(next() % 5) as usize])
                        .collect(),
                ),
                _ => PkValue::Binary(
                    (0..next() % 5)
                        .map(|_| [0, 1, 0xff][(next() % 3) as usize])
                        .collect(),
                ),
            })
            .collect()
    }

    fn parts_from(lowers: &[PkValue]) -> Vec<Arc<Partition>> {
        let mut bounds = vec![PkValue::InfMin];
        bounds.extend(lowers.iter().cloned());
        bounds.push(PkValue::InfMax);
        bounds
            .windows(2)
            .enumerate()
            .map(|(i, w)| {
                let data = PartData::default();
                Arc::new(Partition::new(i as u64, w[0].clone(), w[1].clone(), data))
            })
            .collect()
    }

    /// The count at or below a value is the plain count, with heads that tie often (one
    /// byte of two-byte values) or never, for values present and absent.
    #[test]
    fn count_at_or_below_is_the_plain_count() {
        let mut next = crate::table::test_lcg(3);
        for _ in 0..300 {
            let mut values: Vec<[u8; 2]> = (0..next() % 12)
                .map(|_| [(next() % 4) as u8, (next() % 4) as u8])
                .collect();
            values.sort_unstable();
            for coarse in [true, false] {
                let head_of = |v: &[u8; 2]| {
                    if coarse {
                        u64::from(v[0])
                    } else {
                        u64::from(u16::from_be_bytes(*v))
                    }
                };
                let heads: Vec<u64> = values.iter().map(head_of).collect();
                for q in 0..16u8 {
                    let q = [q / 4, q % 4];
                    let count = count_at_or_below(&heads, head_of(&q), |i| values[i] <= q);
                    assert_eq!(
                        count,
                        values.iter().filter(|v| **v <= q).count(),
                        "{q:?} {values:?}"
                    );
                }
            }
        }
    }

    /// The encoded search finds the partition the value search finds, for every kind of value,
    /// before and after splits and merges change the map.
    #[test]
    fn encoded_lookup_agrees_with_the_value_lookup() {
        for seed in 0..200 {
            let mut lowers = mixed_values(seed, 12);
            lowers.sort();
            lowers.dedup();
            let map = PartitionMap::new(parts_from(&lowers));
            let queries = mixed_values(seed ^ 0x5eed, 40);
            let check = |map: &PartitionMap| {
                let copy = map.read();
                let parts: Vec<&PkValue> = copy.iter().map(|p| &p.lower).collect();
                for q in queries.iter().chain(parts.iter().copied()) {
                    let bytes = super::super::row::value_bytes(q);
                    assert_eq!(
                        copy.index_of_encoded(&bytes),
                        crate::table::store::index_of(&copy, q),
                        "{q:?} in {parts:?}"
                    );
                }
                // The buffer holds exactly the bounds, encoded afresh.
                let fresh = MapCopy::new(copy.to_vec());
                assert_eq!(copy.lowers, fresh.lowers);
                assert_eq!(copy.heads, fresh.heads);
            };
            check(&map);
            // A split: partition 1 (if any) becomes two at a value inside it.
            let mut w = map.write();
            if w.parts().len() > 2 {
                let p = Arc::clone(&w.parts()[1]);
                let mid = PkValue::String(format!("{:?}~", p.lower));
                if p.lower < mid && mid < p.upper {
                    let half = |id, lower: &PkValue, upper: &PkValue| {
                        let data = PartData::default();
                        Arc::new(Partition::new(id, lower.clone(), upper.clone(), data))
                    };
                    w.splice(1..2, &[half(90, &p.lower, &mid), half(91, &mid, &p.upper)]);
                }
            }
            // A merge: the last two become one.
            let n = w.parts().len();
            if n >= 2 {
                let (a, b) = (Arc::clone(&w.parts()[n - 2]), Arc::clone(&w.parts()[n - 1]));
                let merged =
                    Partition::new(92, a.lower.clone(), b.upper.clone(), PartData::default());
                w.splice(n - 2..n, &[Arc::new(merged)]);
            }
            drop(w);
            check(&map);
        }
    }

    /// The size split point is the run start that balances the bytes best (the first of
    /// equals, never the first run, none without a second run), found here by trying every
    /// run start: for runs of equal partition-key values, rows of size 0, sizes of 4 GiB and
    /// up, one row, one value.
    #[test]
    fn size_split_point_balances_the_bytes_best() {
        let mut random = crate::table::test_lcg(0x5_1217);
        let mut next = move |n: u64| random() % n;
        for case in 0..400 {
            let rows = 1 + next(if case % 8 == 0 { 600 } else { 60 }) as usize;
            let values = 1 + next(if case % 4 == 0 { 3 } else { 40 });
            let mut data = PartData::default();
            let mut model: std::collections::BTreeMap<(i64, i64), u64> = Default::default();
            let mut buf = Vec::new();
            for i in 0..rows {
                let (value, i) = (next(values) as i64, i as i64);
                let key = PrimaryKey::new(vec![PkValue::Integer(value), PkValue::Integer(i)]);
                let size = match next(10) {
                    0 => 0,
                    1 => (1 << 32) + next(1 << 20),
                    _ => next(5_000),
                };
                super::super::row::encode_row(&key, &[], size, &mut buf);
                data.bytes += size;
                data.rows.insert(&buf);
                model.insert((value, i), size);
            }
            let mut runs: Vec<(i64, u128)> = Vec::new();
            for (&(value, _), &size) in &model {
                match runs.last_mut() {
                    Some(run) if run.0 == value => run.1 += u128::from(size),
                    _ => runs.push((value, u128::from(size))),
                }
            }
            let total = u128::from(data.bytes);
            let mut best: Option<(u128, i64)> = None;
            let mut weightless_cut = None;
            let mut left = 0u128;
            for (k, run) in runs.iter().enumerate() {
                if k > 0 && left > 0 {
                    let diff = (2 * left).abs_diff(total);
                    if best.is_none_or(|b| diff < b.0) {
                        best = Some((diff, run.0));
                    }
                } else if k > 0 {
                    weightless_cut = Some(run.0);
                }
                left += run.1;
            }
            let expected = best.map(|b| b.1).or(weightless_cut).map(PkValue::Integer);
            assert_eq!(data.size_split_point(), expected, "case {case}");
        }
    }

    #[test]
    fn balanced_point_never_cuts_first_group() {
        let (a, b, c) = (v("a"), v("b"), v("c"));
        assert_eq!(balanced_point([(&a, 100)], 100), None);
        assert_eq!(balanced_point([(&a, 60), (&a, 40)], 100), None);
        assert_eq!(balanced_point([(&a, 100), (&b, 1)], 101), Some(&b));
        assert_eq!(balanced_point([(&a, 1), (&b, 1), (&c, 2)], 4), Some(&c));
        // Runs: a 1, b 2, c 1: cutting at b leaves 1 | 3, at c 3 | 1: the first wins.
        let items = [(&a, 1), (&b, 1), (&b, 1), (&c, 1)];
        assert_eq!(balanced_point(items, 4), Some(&b));
        // No weight before a run: not a cut, unless no other run is one (then the last such).
        assert_eq!(balanced_point([(&a, 0), (&b, 5), (&c, 5)], 10), Some(&c));
        assert_eq!(balanced_point([(&a, 0), (&b, 0), (&c, 5)], 5), Some(&c));
        assert_eq!(
            balanced_point([(&a, 0), (&a, 0), (&b, 5), (&b, 1)], 6),
            Some(&b)
        );
        assert_eq!(balanced_point([(&a, 0), (&a, 5)], 5), None);
    }

    fn samples(values: &[&str]) -> Samples {
        let mut s = Samples::default();
        for x in values {
            s.push(&v(x));
        }
        s
    }

    #[test]
    fn load_point_reports_a_dominant_value() {
        let (p, hot) = load_split_point(&samples(&["a", "b", "b", "b"]));
        assert_eq!(p, None);
        assert_eq!(hot, Some((v("b"), 0.75)));
        let s = samples(&["d", "a", "c", "b"]);
        assert_eq!(load_split_point(&s), (Some(v("c")), None));
        let mut both = super::super::row::value_bytes(&v("a"));
        both.extend(super::super::row::value_bytes(&v("d")));
        let extremes = s.extremes().expect("four samples");
        assert_eq!(extremes.as_bytes(), both.as_slice());
        assert!(extremes.is_inline());
        assert!(Samples::default().extremes().is_none());
    }

    #[test]
    fn long_extremes_go_to_the_heap_whole() {
        // Two values of 30 characters encode to more bytes than fit inline.
        let (low, high) = ("a".repeat(30), "z".repeat(30));
        let s = samples(&[&high, "m", &low]);
        let mut both = super::super::row::value_bytes(&v(&low));
        both.extend(super::super::row::value_bytes(&v(&high)));
        let extremes = s.extremes().expect("three samples");
        assert_eq!(extremes.as_bytes(), both.as_slice());
        assert!(!extremes.is_inline());
    }

    #[test]
    fn full_samples_keep_every_other_value() {
        let mut s = Samples::default();
        for i in 0..MAX_SAMPLES {
            s.push(&PkValue::Integer(i as i64));
        }
        s.push(&v("last"));
        let mut expected: Vec<PkValue> = (0..MAX_SAMPLES as i64)
            .filter(|i| i % 2 == 1)
            .map(PkValue::Integer)
            .collect();
        expected.push(v("last"));
        let got: Vec<PkValue> = s.iter().map(decode_partition_value).collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn even_points_skip_inside_a_run() {
        let sample = vec![v("a"), v("a"), v("a"), v("b")];
        assert_eq!(split_points_even(sample, 2).unwrap(), vec![]);
        let sample = vec![v("a"), v("b"), v("b"), v("b")];
        assert_eq!(split_points_even(sample, 2).unwrap(), vec![v("b")]);
    }
}
