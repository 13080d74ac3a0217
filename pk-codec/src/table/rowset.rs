//! The rows of one partition, in key order: encoded rows ([`RowRef`]'s layout) packed one after
//! another into leaves of a few KB, the leaves in a `BTreeMap` under their lower fences.
//!
//! Against a `BTreeSet` of one heap block per row this keeps the rows of a key range in one
//! buffer: a range read walks contiguous memory, a put costs no allocation (the row is copied
//! into its leaf), and dropping a partition frees three buffers per leaf (a few dozen rows)
//! instead of one per row.
//!
//! Invariants: no leaf is empty; the first leaf's fence is the empty key (which sorts below
//! every key); every row of a leaf sorts below the next leaf's fence, and at or above its own
//! leaf's fence. A row lives in the last leaf whose fence is at or below its key.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::ops::Bound::{self, Excluded, Included, Unbounded};

use super::row::RowRef;

/// Bytes a leaf holds before it splits (a leaf of one large row holds that row).
const LEAF_BYTES: usize = 4096;

/// A leaf left below this by a removal joins a neighbour when the two fit in one leaf.
const MIN_LEAF_BYTES: usize = LEAF_BYTES / 4;

/// Rows stored back to back, in key order.
#[derive(Debug, Default, Clone)]
struct Leaf {
    bytes: Vec<u8>,
    /// Where each row ends in `bytes`.
    ends: Vec<usize>,
}

impl Leaf {
    /// A leaf of one row. Its buffer grows as rows come (a leaf of one row in a gap between
    /// full leaves may stay one row, and should not cost a full leaf's room).
    fn with_row(row: &[u8]) -> Self {
        let bytes = row.to_vec();
        Self {
            bytes,
            ends: vec![row.len()],
        }
    }

    #[inline]
    fn len(&self) -> usize {
        self.ends.len()
    }

    /// Where row `i` starts (`len()`: the end of the last row).
    #[inline]
    fn start(&self, i: usize) -> usize {
        i.checked_sub(1).map_or(0, |last| self.ends[last])
    }

    #[inline]
    fn row(&self, i: usize) -> RowRef<'_> {
        RowRef::new(&self.bytes[self.start(i)..self.ends[i]])
    }

    /// `Ok(i)` when row `i` has `key`, else `Err(i)` with `i` where it would go.
    #[inline]
    fn search(&self, key: &[u8]) -> Result<usize, usize> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.row(mid).key().cmp(key) {
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
                Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    /// The index of the first row at or above `key`.
    #[inline]
    fn lower_bound(&self, key: &[u8]) -> usize {
        self.search(key).unwrap_or_else(|i| i)
    }

    /// Replaces bytes `at..end` (whole rows, or none) with `with`, shifting the rows after them;
    /// returns the change in length.
    fn splice_bytes(&mut self, at: usize, end: usize, with: &[u8]) -> isize {
        let (old, new) = (end - at, with.len());
        let len = self.bytes.len();
        if new > old {
            self.bytes.resize(len + (new - old), 0);
            self.bytes.copy_within(end..len, at + new);
        } else if new < old {
            self.bytes.copy_within(end..len, at + new);
            self.bytes.truncate(len - (old - new));
        }
        self.bytes[at..at + new].copy_from_slice(with);
        // Lengths are those of buffers in memory: the difference fits an isize.
        new as isize - old as isize
    }

    /// Adds `delta` to the ends of rows `from..`.
    fn shift_ends(&mut self, from: usize, delta: isize) {
        for e in &mut self.ends[from..] {
            *e = e.wrapping_add_signed(delta);
        }
    }

    fn insert_at(&mut self, i: usize, row: &[u8]) {
        let at = self.start(i);
        self.splice_bytes(at, at, row);
        self.ends.insert(i, at);
        self.shift_ends(i, row.len().cast_signed());
    }

    /// Replaces row `i` by `row`; returns the old row's size.
    fn replace_at(&mut self, i: usize, row: &[u8]) -> u64 {
        let old = self.row(i).size();
        let (at, end) = (self.start(i), self.ends[i]);
        let delta = self.splice_bytes(at, end, row);
        self.shift_ends(i, delta);
        self.fit_capacity();
        old
    }

    /// Removes row `i`; returns its size.
    fn remove_at(&mut self, i: usize) -> u64 {
        let old = self.row(i).size();
        let (at, end) = (self.start(i), self.ends[i]);
        let delta = self.splice_bytes(at, end, &[]);
        self.ends.remove(i);
        self.shift_ends(i, delta);
        self.fit_capacity();
        old
    }

    /// Rows `i..` as a leaf of their own.
    fn split_off(&mut self, i: usize) -> Self {
        let at = self.start(i);
        let mut bytes = Vec::with_capacity(LEAF_BYTES.max(self.bytes.len() - at));
        bytes.extend_from_slice(&self.bytes[at..]);
        self.bytes.truncate(at);
        let mut ends = self.ends.split_off(i);
        for e in &mut ends {
            *e -= at;
        }
        self.fit_capacity();
        Self { bytes, ends }
    }

    /// Appends `other`'s rows (all above this leaf's).
    fn append(&mut self, other: &Self) {
        let at = self.bytes.len();
        self.bytes.extend_from_slice(&other.bytes);
        self.ends.extend(other.ends.iter().map(|e| e + at));
    }

    /// Gives back the room a large row left behind (a leaf keeps at most twice what it holds
    /// or a leaf's worth, whichever is more).
    fn fit_capacity(&mut self) {
        let keep = LEAF_BYTES.max(2 * self.bytes.len());
        if self.bytes.capacity() > 2 * keep {
            self.bytes.shrink_to(keep);
        }
    }
}

/// The rows of a partition, in key order, searched by encoded key.
#[derive(Debug, Default, Clone)]
pub(crate) struct RowSet {
    /// Leaves under their fences (see the module docs).
    leaves: BTreeMap<Box<[u8]>, Leaf>,
    len: usize,
}

impl RowSet {
    /// Rows held.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The fence and leaf that hold `key` if it is stored (`None` when the set is empty).
    #[inline]
    fn leaf_of(&self, key: &[u8]) -> Option<(&[u8], &Leaf)> {
        self.leaves
            .range::<[u8], _>((Unbounded, Included(key)))
            .next_back()
            .map(|(f, l)| (&**f, l))
    }

    /// The row with `key`.
    #[inline]
    pub(crate) fn get(&self, key: &[u8]) -> Option<RowRef<'_>> {
        let (_, leaf) = self.leaf_of(key)?;
        leaf.search(key).ok().map(|i| leaf.row(i))
    }

    /// Stores `row` (an encoded row), replacing the row with its key; returns the replaced
    /// row's size.
    pub(crate) fn insert(&mut self, row: &[u8]) -> Option<u64> {
        let key = RowRef::new(row).key();
        let Some((_, leaf)) = self
            .leaves
            .range_mut::<[u8], _>((Unbounded, Included(key)))
            .next_back()
        else {
            self.leaves.insert(Box::default(), Leaf::with_row(row));
            self.len = 1;
            return None;
        };
        match leaf.search(key) {
            Ok(i) => {
                let old = leaf.replace_at(i, row);
                if leaf.bytes.len() > LEAF_BYTES && leaf.len() > 1 {
                    let at = leaf.len() / 2;
                    let right = leaf.split_off(at);
                    self.leaves.insert(right.row(0).key().into(), right);
                }
                Some(old)
            }
            Err(i) => {
                self.len += 1;
                if leaf.bytes.len() + row.len() <= LEAF_BYTES {
                    leaf.insert_at(i, row);
                    return None;
                }
                // Full: the leaf splits first. A row past either end starts a leaf of its own
                // there (so that rows arriving in order fill whole leaves); otherwise the leaf
                // splits in the middle and the row goes to its half.
                let right = if i == leaf.len() {
                    Leaf::with_row(row)
                } else if i == 0 {
                    std::mem::replace(leaf, Leaf::with_row(row))
                } else {
                    let at = leaf.len() / 2;
                    let mut right = leaf.split_off(at);
                    if i <= at {
                        leaf.insert_at(i, row);
                    } else {
                        right.insert_at(i - at, row);
                    }
                    right
                };
                self.leaves.insert(right.row(0).key().into(), right);
                None
            }
        }
    }

    /// Removes the row with `key`; returns its size.
    pub(crate) fn remove(&mut self, key: &[u8]) -> Option<u64> {
        let (fence, leaf) = self
            .leaves
            .range_mut::<[u8], _>((Unbounded, Included(key)))
            .next_back()?;
        let i = leaf.search(key).ok()?;
        let size = leaf.remove_at(i);
        self.len -= 1;
        if leaf.bytes.len() < MIN_LEAF_BYTES {
            let fence: Box<[u8]> = fence.clone();
            self.rejoin(fence);
        }
        Some(size)
    }

    /// After a removal from the leaf under `fence`: drops it when empty, else joins it to its
    /// next or previous neighbour when the two fit in one leaf.
    #[cold]
    fn rejoin(&mut self, fence: Box<[u8]>) {
        let Some(leaf) = self.leaves.get(&fence) else {
            return;
        };
        let size = leaf.bytes.len();
        if leaf.len() == 0 {
            self.leaves.remove(&fence);
            self.fix_first_fence();
            return;
        }
        let next = self
            .leaves
            .range::<[u8], _>((Excluded(&*fence), Unbounded))
            .next()
            .filter(|(_, n)| n.bytes.len() + size <= LEAF_BYTES)
            .map(|(f, _)| f.clone());
        if let Some(next) = next
            && let Some(n) = self.leaves.remove(&next)
            && let Some(leaf) = self.leaves.get_mut(&fence)
        {
            leaf.append(&n);
            return;
        }
        let previous = self
            .leaves
            .range::<[u8], _>((Unbounded, Excluded(&*fence)))
            .next_back()
            .filter(|(_, p)| p.bytes.len() + size <= LEAF_BYTES)
            .map(|(f, _)| f.clone());
        if let Some(previous) = previous
            && let Some(leaf) = self.leaves.remove(&fence)
            && let Some(p) = self.leaves.get_mut(&previous)
        {
            p.append(&leaf);
        }
    }

    /// Gives the first leaf the empty fence (after the first leaf was removed).
    fn fix_first_fence(&mut self) {
        if self
            .leaves
            .first_key_value()
            .is_some_and(|(f, _)| !f.is_empty())
            && let Some((_, leaf)) = self.leaves.pop_first()
        {
            self.leaves.insert(Box::default(), leaf);
        }
    }

    /// The first row.
    pub(crate) fn first(&self) -> Option<RowRef<'_>> {
        let (_, leaf) = self.leaves.first_key_value()?;
        Some(leaf.row(0))
    }

    /// The last row.
    pub(crate) fn last(&self) -> Option<RowRef<'_>> {
        let (_, leaf) = self.leaves.last_key_value()?;
        Some(leaf.row(leaf.len().checked_sub(1)?))
    }

    /// Every row, in order.
    pub(crate) fn iter(&self) -> impl DoubleEndedIterator<Item = RowRef<'_>> + '_ {
        self.range(Unbounded, Unbounded)
    }

    /// The rows with keys within the bounds, in order (none when `lower` lies above `upper`).
    pub(crate) fn range<'a>(
        &'a self,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
    ) -> impl DoubleEndedIterator<Item = RowRef<'a>> + 'a {
        // The first row: its leaf (by fence) and index.
        let from = match lower {
            Unbounded => self.leaves.first_key_value().map(|(f, l)| (&**f, l, 0)),
            Included(k) => self.leaf_of(k).map(|(f, l)| (f, l, l.lower_bound(k))),
            Excluded(k) => self.leaf_of(k).map(|(f, l)| {
                let i = l.search(k).map_or_else(|i| i, |i| i + 1);
                (f, l, i)
            }),
        };
        // The end: a leaf and the index past the last row.
        let to = match upper {
            Unbounded => self
                .leaves
                .last_key_value()
                .map(|(f, l)| (&**f, l, l.len())),
            Included(k) => self.leaf_of(k).map(|(f, l)| {
                let i = l.search(k).map_or_else(|i| i, |i| i + 1);
                (f, l, i)
            }),
            Excluded(k) => self.leaf_of(k).map(|(f, l)| (f, l, l.lower_bound(k))),
        };
        let leaves = match (from, to) {
            (Some((f, first, start)), Some((t, last, end))) if f <= t => Some(
                self.leaves
                    .range::<[u8], _>((Included(f), Included(t)))
                    .flat_map(move |(_, leaf)| {
                        let from = if std::ptr::eq(leaf, first) { start } else { 0 };
                        let to = if std::ptr::eq(leaf, last) {
                            end
                        } else {
                            leaf.len()
                        };
                        (from..to).map(move |i| leaf.row(i))
                    }),
            ),
            _ => None,
        };
        leaves.into_iter().flatten()
    }

    /// Moves the rows at and above `key` into a set of their own.
    pub(crate) fn split_off(&mut self, key: &[u8]) -> Self {
        let mut right = Self {
            leaves: self.leaves.split_off(key),
            len: 0,
        };
        // The last leaf left (its fence below `key`) may hold rows at or above it.
        if let Some(mut last) = self.leaves.last_entry() {
            let leaf = last.get_mut();
            let i = leaf.lower_bound(key);
            if i < leaf.len() {
                let tail = leaf.split_off(i);
                if leaf.len() == 0 {
                    last.remove();
                }
                // Below every fence `right` has: its first leaf, under the empty fence.
                right.leaves.insert(Box::default(), tail);
            }
        }
        right.fix_first_fence();
        right.len = right.leaves.values().map(Leaf::len).sum();
        self.len -= right.len;
        right
    }

    /// Moves every row of `other`, all above this set's rows, to the end of this set.
    pub(crate) fn append(&mut self, other: &mut Self) {
        if other.is_empty() {
            return;
        }
        if self.is_empty() {
            std::mem::swap(self, other);
            return;
        }
        if let Some((_, first)) = other.leaves.pop_first() {
            let fence: Box<[u8]> = first.row(0).key().into();
            self.leaves.insert(fence, first);
        }
        self.leaves.append(&mut other.leaves);
        self.len += std::mem::take(&mut other.len);
    }

    /// Checks the invariants (tests).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        let mut previous: Option<&[u8]> = None;
        let mut n = 0;
        for (i, (fence, leaf)) in self.leaves.iter().enumerate() {
            assert!(leaf.len() > 0, "empty leaf");
            assert_eq!(i == 0, fence.is_empty(), "fence {fence:?} at {i}");
            assert_eq!(leaf.ends.last().copied(), Some(leaf.bytes.len()));
            for r in 0..leaf.len() {
                let key = leaf.row(r).key();
                assert!(key >= &**fence);
                assert!(previous.is_none_or(|p| p < key), "order");
                previous = Some(key);
                n += 1;
            }
        }
        assert_eq!(n, self.len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::row::encode_row;
    use crate::table::{Cell, PrimaryKey};
    use std::collections::BTreeMap as Model;

    /// A seeded generator of 31-bit numbers (a 64-bit LCG's high bits).
    fn lcg(seed: u64) -> impl FnMut(u64) -> u64 {
        let mut x = seed;
        move |n| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) % n
        }
    }

    /// An encoded row of key `k` with a cell of `len` bytes, accounted as `size`.
    fn row(k: u64, len: usize, size: u64) -> Vec<u8> {
        let key = PrimaryKey::new(vec![format!("{:03}", k % 50).into(), (k as i64).into()]);
        let cells = [Cell {
            name: "v".into(),
            version: 1,
            value: "x".repeat(len).into(),
        }];
        let mut out = Vec::new();
        encode_row(&key, &cells, size, &mut out);
        out
    }

    fn key_of(r: &[u8]) -> Vec<u8> {
        RowRef::new(r).key().to_vec()
    }

    fn rows_of(set: &RowSet) -> Vec<Vec<u8>> {
        set.iter().map(|r| r.bytes().to_vec()).collect()
    }

    /// Bounds over a model's keys, as the set takes them.
    fn bound(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
        match b {
            Included(k) => Included(k.as_slice()),
            Excluded(k) => Excluded(k.as_slice()),
            Unbounded => Unbounded,
        }
    }

    /// Inserts, replacements (growing and shrinking rows, some larger than a leaf), removals,
    /// range reads both ways, splits and appends: the set holds and returns what a `BTreeMap`
    /// of the same rows does, and keeps its invariants.
    #[test]
    fn row_set_matches_a_btreemap() {
        for seed in 0..60 {
            let mut next = lcg(seed);
            let mut set = RowSet::default();
            let mut model: Model<Vec<u8>, Vec<u8>> = Model::new();
            let keys = [20, 300, 3_000][seed as usize % 3];
            for step in 0..2_500 {
                let k = next(keys);
                match next(10) {
                    0..=5 => {
                        let len = if next(50) == 0 {
                            5_000 + next(5_000) as usize
                        } else {
                            next(120) as usize
                        };
                        let r = row(k, len, next(1 << 20));
                        let old = model.insert(key_of(&r), r.clone());
                        let old = old.map(|o| RowRef::new(&o).size());
                        assert_eq!(set.insert(&r), old, "seed {seed} step {step}");
                    }
                    6..=7 => {
                        let key = key_of(&row(k, 0, 0));
                        let old = model.remove(&key).map(|o| RowRef::new(&o).size());
                        assert_eq!(set.remove(&key), old);
                    }
                    8 => {
                        let key = key_of(&row(k, 0, 0));
                        assert_eq!(
                            set.get(&key).map(|r| r.bytes().to_vec()),
                            model.get(&key).cloned()
                        );
                    }
                    _ => {
                        let pick = |next: &mut dyn FnMut(u64) -> u64| {
                            let key = key_of(&row(next(keys + 2), 0, 0));
                            match next(3) {
                                0 => Included(key),
                                1 => Excluded(key),
                                _ => Unbounded,
                            }
                        };
                        let (lo, hi) = (pick(&mut next), pick(&mut next));
                        let valid = match (&lo, &hi) {
                            (Included(a) | Excluded(a), Included(b) | Excluded(b)) => {
                                a < b
                                    || (a == b && matches!((&lo, &hi), (Included(_), Included(_))))
                            }
                            _ => true,
                        };
                        let expected: Vec<Vec<u8>> = if valid {
                            model
                                .range::<Vec<u8>, _>((lo.clone(), hi.clone()))
                                .map(|(_, v)| v.clone())
                                .collect()
                        } else {
                            Vec::new()
                        };
                        let got: Vec<Vec<u8>> = set
                            .range(bound(&lo), bound(&hi))
                            .map(|r| r.bytes().to_vec())
                            .collect();
                        assert_eq!(got, expected, "seed {seed} step {step}");
                        let back: Vec<Vec<u8>> = set
                            .range(bound(&lo), bound(&hi))
                            .rev()
                            .map(|r| r.bytes().to_vec())
                            .collect();
                        assert!(back.iter().rev().eq(expected.iter()));
                    }
                }
                if step % 500 == 499 {
                    // A split and the append that undoes it.
                    let at = key_of(&row(next(keys), 0, 0));
                    let mut right = set.split_off(&at);
                    set.check();
                    right.check();
                    let model_right = model.split_off(&at);
                    assert_eq!(
                        rows_of(&right),
                        model_right.values().cloned().collect::<Vec<_>>()
                    );
                    assert_eq!(rows_of(&set), model.values().cloned().collect::<Vec<_>>());
                    set.append(&mut right);
                    assert!(right.is_empty());
                    model.extend(model_right);
                }
                set.check();
            }
            assert_eq!(set.len(), model.len());
            assert_eq!(rows_of(&set), model.values().cloned().collect::<Vec<_>>());
            assert_eq!(
                set.first().map(|r| r.bytes().to_vec()),
                model.values().next().cloned()
            );
            assert_eq!(
                set.last().map(|r| r.bytes().to_vec()),
                model.values().next_back().cloned()
            );
            // Emptied row by row, the set keeps no leaf.
            for key in model.keys() {
                assert!(set.remove(key).is_some());
                set.check();
            }
            assert!(set.is_empty() && set.leaves.is_empty());
        }
    }

    /// Rows added in ascending or descending order fill their leaves: few leaves for the rows.
    #[test]
    fn ordered_loads_fill_leaves() {
        for ascending in [true, false] {
            let mut set = RowSet::default();
            let mut bytes = 0;
            for k in 0..10_000u64 {
                let k = if ascending { k } else { 10_000 - k };
                let r = row(k * 50, 20, 0);
                bytes += r.len();
                set.insert(&r);
            }
            set.check();
            let full = bytes.div_ceil(LEAF_BYTES);
            assert!(
                set.leaves.len() <= full + full / 20 + 1,
                "{} leaves",
                set.leaves.len()
            );
        }
    }
}
