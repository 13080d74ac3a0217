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

use std::cell::{Cell, RefCell};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::ops::Bound::{self, Excluded, Included, Unbounded};

use super::row::RowRef;

/// Bytes a leaf holds before it splits (a leaf of one large row holds that row).
const LEAF_BYTES: usize = 4096;

/// A leaf left below this by a removal joins a neighbour when the two fit in one leaf.
const MIN_LEAF_BYTES: usize = LEAF_BYTES / 4;

/// Rows in key order: their bytes one after another in one buffer, in the order they came (a
/// split or a compaction puts them in key order again), and a slot per row, in key order.
///
/// An insert appends the row's bytes and shifts the slots after it, never the bytes. A row
/// replaced by one of another length, or removed, leaves its bytes behind as garbage until the
/// leaf is compacted.
///
/// A slot holds the key's *head*: its 8 bytes after the prefix every key of the leaf shares
/// (`skip` bytes long), as a big-endian word, zero-padded. Two heads that differ order their
/// keys as the bytes do (a zero of padding is below the byte a longer key has there, or equal
/// to a `00`); only equal heads need the keys themselves. So a search reads the heads and
/// rarely the rows.
#[derive(Debug, Default, Clone)]
struct Leaf {
    bytes: Vec<u8>,
    /// Each row's key's head (apart from the rest of the slot, so that a search reads words
    /// one after another).
    heads: Vec<u64>,
    /// Where each row lies in `bytes`.
    slots: Vec<Slot>,
    /// The length of a prefix every key of the leaf shares (at most [`PREFIX`]), and the
    /// prefix, kept here so that a search need not read a row to compare it.
    skip: usize,
    prefix: [u8; PREFIX],
    /// Bytes of `bytes` that no slot refers to.
    garbage: usize,
    /// Whether the leaf was started by a row past the end of a full leaf, and has taken only
    /// rows at its front since: such a leaf takes the next row past that full leaf's end at its
    /// front (see [`RowSet::insert_past_full_leaf`]).
    grows_down: bool,
}

/// Most bytes of a leaf's shared prefix that its heads skip.
const PREFIX: usize = 32;

/// Where a row lies in its leaf's bytes.
#[derive(Debug, Clone, Copy)]
struct Slot {
    start: usize,
    end: usize,
}

/// The head of `key` past its first `skip` bytes.
#[inline]
pub(crate) fn head(key: &[u8], skip: usize) -> u64 {
    let rest = key.get(skip..).unwrap_or_default();
    let mut w = [0u8; 8];
    let n = rest.len().min(8);
    w[..n].copy_from_slice(&rest[..n]);
    u64::from_be_bytes(w)
}

/// Heads a block of [`count_below`] holds: one cache line of words.
const BLOCK: usize = 8;

/// How many of `heads` (ascending) are below `h`.
///
/// A count rather than a binary search: the loads do not wait on each other, so a leaf out of
/// cache costs about one miss, not one per halving (and the insert that often follows finds the
/// heads in cache). It counts in two steps: the blocks of [`BLOCK`] heads whose last head is
/// below `h` (every head of such a block is), then the heads below `h` in the one block (or the
/// short tail) that holds the boundary. That compares about `len / 8 + 8` words, not `len`.
#[inline]
fn count_below(heads: &[u64], h: u64) -> usize {
    let below = heads
        .chunks_exact(BLOCK)
        .map(|block| usize::from(block[BLOCK - 1] < h))
        .sum::<usize>();
    let start = below * BLOCK;
    let end = heads.len().min(start + BLOCK);
    start
        + heads[start..end]
            .iter()
            .map(|&x| usize::from(x < h))
            .sum::<usize>()
}

/// The length of the common prefix of `a` and `b`.
#[inline]
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

impl Leaf {
    /// A leaf of one row. Its buffer grows as rows come (a leaf of one row in a gap between
    /// full leaves may stay one row, and should not cost a full leaf's room).
    fn with_row(row: &[u8]) -> Self {
        let mut leaf = Self {
            bytes: row.to_vec(),
            heads: vec![0],
            slots: vec![Slot {
                start: 0,
                end: row.len(),
            }],
            ..Self::default()
        };
        leaf.reset_heads();
        leaf
    }

    #[inline]
    fn len(&self) -> usize {
        self.slots.len()
    }

    /// Bytes of the rows held.
    #[inline]
    fn live(&self) -> usize {
        self.bytes.len() - self.garbage
    }

    #[inline]
    fn row(&self, i: usize) -> RowRef<'_> {
        let s = self.slots[i];
        RowRef::new(&self.bytes[s.start..s.end])
    }

    /// The prefix every key of the leaf shares.
    #[inline]
    fn prefix(&self) -> &[u8] {
        &self.prefix[..self.skip]
    }

    /// `Ok(i)` when row `i` has `key`, else `Err(i)` with `i` where it would go.
    #[inline]
    fn search(&self, key: &[u8]) -> Result<usize, usize> {
        if self.len() == 0 {
            return Err(0);
        }
        // A key without the shared prefix goes before or after every row.
        match key[..self.skip.min(key.len())].cmp(self.prefix()) {
            Ordering::Less => return Err(0),
            Ordering::Greater => return Err(self.len()),
            Ordering::Equal => {}
        }
        let h = head(key, self.skip);
        let lo = count_below(&self.heads, h);
        let ties = self.heads[lo..].iter().take_while(|&&x| x == h).count();
        // Rows whose heads equal the key's: ordered by the rest of their keys.
        let (mut lo, mut hi) = (lo, lo + ties);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.row(mid).key()[self.skip..].cmp(&key[self.skip..]) {
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

    /// Sets `skip` to the longest prefix the first and last keys share (every key between
    /// shares it), and every head for it.
    fn reset_heads(&mut self) {
        let Some(last) = self.len().checked_sub(1) else {
            self.skip = 0;
            return;
        };
        let first = self.row(0).key();
        let skip = common_prefix(first, self.row(last).key()).min(PREFIX);
        let mut prefix = [0; PREFIX];
        prefix[..skip].copy_from_slice(&first[..skip]);
        (self.skip, self.prefix) = (skip, prefix);
        for i in 0..self.len() {
            let h = head(self.row(i).key(), self.skip);
            self.heads[i] = h;
        }
    }

    /// Whether `n` more bytes fit without a split (compacting the leaf when its garbage is in
    /// the way).
    #[inline]
    fn has_room(&mut self, n: usize) -> bool {
        if self.live() + n > LEAF_BYTES {
            return false;
        }
        if self.bytes.len() + n > LEAF_BYTES && self.garbage > 0 {
            self.compact();
        }
        true
    }

    /// Drops the garbage. A leaf's buffer of a usual size (one to two leaves' worth) trades
    /// places with this thread's spare buffer, its rows copied into it in key order; any other
    /// (a one-row leaf's small buffer, a large row's) is compacted in place.
    fn compact(&mut self) {
        let usual = LEAF_BYTES..=2 * LEAF_BYTES;
        if usual.contains(&self.bytes.capacity())
            && SPARE
                .try_with(|spare| match spare.try_borrow_mut() {
                    Ok(mut spare) => {
                        self.compact_into(&mut spare);
                        true
                    }
                    Err(_) => false,
                })
                .unwrap_or(false)
        {
            return;
        }
        self.compact_in_place();
    }

    /// Copies the rows into `spare` in key order and takes it as the leaf's buffer, leaving the
    /// old buffer in `spare` (dropped if it is not of a usual size).
    fn compact_into(&mut self, spare: &mut Vec<u8>) {
        spare.clear();
        if !(LEAF_BYTES..=2 * LEAF_BYTES).contains(&spare.capacity()) {
            *spare = Vec::with_capacity(LEAF_BYTES.max(self.live()));
        }
        spare.reserve(self.live());
        for s in &mut self.slots {
            let start = spare.len();
            spare.extend_from_slice(&self.bytes[s.start..s.end]);
            (s.start, s.end) = (start, spare.len());
        }
        std::mem::swap(&mut self.bytes, spare);
        self.garbage = 0;
    }

    /// Drops the garbage: moves the rows down over it, in the order they lie (so each moves
    /// to or below where it was), in place.
    fn compact_in_place(&mut self) {
        let mut order: Vec<usize> = (0..self.slots.len()).collect();
        if !self.slots.windows(2).all(|w| w[0].start < w[1].start) {
            order.sort_unstable_by_key(|&i| self.slots[i].start);
        }
        let mut to = 0;
        for i in order {
            let s = &mut self.slots[i];
            let len = s.end - s.start;
            self.bytes.copy_within(s.start..s.end, to);
            (s.start, s.end) = (to, to + len);
            to += len;
        }
        self.bytes.truncate(to);
        self.garbage = 0;
    }

    fn insert_at(&mut self, i: usize, row: &[u8]) {
        let key = RowRef::new(row).key();
        // A key between two rows shares their prefix; one past either end may not.
        let skip = if i == 0 || i == self.len() {
            common_prefix(key, self.prefix())
        } else {
            self.skip
        };
        self.grows_down &= i == 0;
        let start = self.bytes.len();
        if self.bytes.capacity() - start < row.len() {
            // A leaf that takes a second row is likely to fill: room for a full leaf at once,
            // rather than doubling up to it.
            self.bytes
                .reserve_exact(LEAF_BYTES.saturating_sub(start).max(row.len()));
        }
        self.bytes.extend_from_slice(row);
        let end = self.bytes.len();
        self.heads.insert(i, head(key, self.skip));
        self.slots.insert(i, Slot { start, end });
        if skip < self.skip {
            self.reset_heads();
        }
    }

    /// Replaces row `i` by `row` (of the same key); returns the old row's size.
    fn replace_at(&mut self, i: usize, row: &[u8]) -> u64 {
        let old = self.row(i).size();
        let s = &mut self.slots[i];
        if s.end - s.start == row.len() {
            self.bytes[s.start..s.end].copy_from_slice(row);
        } else {
            self.garbage += s.end - s.start;
            s.start = self.bytes.len();
            self.bytes.extend_from_slice(row);
            s.end = self.bytes.len();
            self.tidy();
        }
        old
    }

    /// Removes row `i`; returns its size.
    fn remove_at(&mut self, i: usize) -> u64 {
        let old = self.row(i).size();
        let s = self.slots.remove(i);
        self.heads.remove(i);
        self.garbage += s.end - s.start;
        self.tidy();
        old
    }

    /// Compacts a leaf that is more garbage than rows, and gives back the room a large row left
    /// behind (a leaf keeps at most twice what it holds or a leaf's worth, whichever is more).
    fn tidy(&mut self) {
        if self.garbage > self.live() {
            self.compact();
        }
        let keep = LEAF_BYTES.max(2 * self.bytes.len());
        if self.bytes.capacity() > 2 * keep {
            self.bytes.shrink_to(keep);
        }
    }

    /// Where a full leaf splits: within its middle half, between the neighbouring rows whose
    /// heads part at the earliest byte (the nearest to the middle among those). Keys that
    /// share a longer prefix then stay together, so each half's shared prefix is longer and
    /// its heads tell more of its rows apart (a leaf that spans two partition-key values splits
    /// between them, and its halves' heads reach past the value).
    fn split_point(&self) -> usize {
        let n = self.len();
        let mid = (n / 2).max(1);
        let parts_at = |i: usize| (self.heads[i - 1] ^ self.heads[i]).leading_zeros() / 8;
        let (from, to) = ((n / 4).max(1), (n - n / 4).min(n - 1));
        let mut best = (parts_at(mid), 0, mid);
        for i in from..=to {
            let candidate = (parts_at(i), i.abs_diff(mid), i);
            if candidate < best {
                best = candidate;
            }
        }
        best.2
    }

    /// Rows `i..` as a leaf of their own (in key order); both leaves come out compacted.
    fn split_off(&mut self, i: usize) -> Self {
        let rows = self.len() - i;
        let mut right = Self {
            bytes: Vec::with_capacity(LEAF_BYTES),
            heads: Vec::with_capacity(self.heads.capacity().max(2 * rows)),
            slots: Vec::with_capacity(self.slots.capacity().max(2 * rows)),
            ..Self::default()
        };
        right.heads.extend_from_slice(&self.heads[i..]);
        self.heads.truncate(i);
        for s in self.slots.drain(i..) {
            let start = right.bytes.len();
            right.bytes.extend_from_slice(&self.bytes[s.start..s.end]);
            let end = right.bytes.len();
            right.slots.push(Slot { start, end });
        }
        self.compact();
        // Each half's keys may share a longer prefix.
        (right.skip, right.prefix) = (self.skip, self.prefix);
        self.narrow_heads();
        right.narrow_heads();
        right
    }

    /// [`Leaf::reset_heads`] for a leaf whose heads are right for its `skip` and `prefix`, as
    /// either half of a split has them: when its keys share no longer prefix, nothing changes.
    fn narrow_heads(&mut self) {
        if let Some(last) = self.len().checked_sub(1)
            && common_prefix(self.row(0).key(), self.row(last).key()).min(PREFIX) == self.skip
        {
            return;
        }
        self.reset_heads();
    }

    /// Appends `other`'s rows (all above this leaf's).
    fn append(&mut self, other: &Self) {
        for s in &other.slots {
            let start = self.bytes.len();
            self.bytes.extend_from_slice(&other.bytes[s.start..s.end]);
            let end = self.bytes.len();
            self.slots.push(Slot { start, end });
            self.heads.push(0);
        }
        self.reset_heads();
    }
}

thread_local! {
    /// A leaf's buffer that a compaction took a leaf's rows out of, for the next compaction
    /// to copy rows into (so that a compaction neither sorts the rows by where they lie nor
    /// allocates).
    static SPARE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Bytes of a [`Fence`] kept inline.
const FENCE_HEAD: usize = 40;

/// A leaf's lower fence (a key), or a key searched for among the fences: its first
/// [`FENCE_HEAD`] bytes inline as big-endian words (zero-padded), the rest (empty for most
/// keys) behind a pointer, and the length. Ordered as the bytes are: the words decide unless
/// equal, then the rest, then the length (equal words and rests leave one key a prefix of the
/// other, padded with zeros). So a search among the fences compares words in the map's nodes
/// instead of following a pointer per comparison.
///
/// The rest is `rest`'s first `len - FENCE_HEAD` bytes: a fence searched for reuses a buffer
/// that may be longer (see [`with_fence`]), so comparisons never look past them.
#[derive(Debug, Default, Clone)]
struct Fence {
    head: [u64; FENCE_HEAD / 8],
    rest: Box<[u8]>,
    len: usize,
}

impl Fence {
    #[inline]
    fn new(key: &[u8]) -> Self {
        let mut fence = Self::default();
        fence.set(key);
        fence
    }

    /// The first [`FENCE_HEAD`] bytes of `key` as big-endian words, zero-padded.
    #[inline]
    fn head_of(key: &[u8]) -> [u64; FENCE_HEAD / 8] {
        let mut bytes = [0u8; FENCE_HEAD];
        let n = key.len().min(FENCE_HEAD);
        bytes[..n].copy_from_slice(&key[..n]);
        let mut head = [0u64; FENCE_HEAD / 8];
        for (w, chunk) in head.iter_mut().zip(bytes.chunks_exact(8)) {
            let mut b = [0u8; 8];
            b.copy_from_slice(chunk);
            *w = u64::from_be_bytes(b);
        }
        head
    }

    /// Makes this the fence of `key`, keeping the rest's buffer when it is long enough.
    #[inline]
    fn set(&mut self, key: &[u8]) {
        self.head = Self::head_of(key);
        self.len = key.len();
        let rest = key.get(FENCE_HEAD..).unwrap_or_default();
        match self.rest.get_mut(..rest.len()) {
            Some(buffer) => buffer.copy_from_slice(rest),
            None => self.rest = rest.into(),
        }
    }

    /// The bytes past the head.
    #[inline]
    fn rest(&self) -> &[u8] {
        let n = self.len.saturating_sub(FENCE_HEAD);
        self.rest.get(..n).unwrap_or(&self.rest)
    }

    /// Whether this is the empty key (the first leaf's fence).
    #[inline]
    fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl PartialEq for Fence {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Fence {}

impl PartialOrd for Fence {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Fence {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        match self.head.cmp(&other.head) {
            Ordering::Equal => match self.rest().cmp(other.rest()) {
                Ordering::Equal => self.len.cmp(&other.len),
                unequal => unequal,
            },
            unequal => unequal,
        }
    }
}

thread_local! {
    /// The fence a search for a key longer than [`FENCE_HEAD`] bytes is made in, so that its
    /// rest's buffer is allocated once per thread rather than once per search.
    static SEARCHED: Cell<Fence> = Cell::default();
}

/// Calls `f` with the fence of `key`: for a key longer than [`FENCE_HEAD`] bytes, this thread's
/// reused fence (a fence of its own, allocated, when the thread's is in use or gone).
#[inline]
fn with_fence<R>(key: &[u8], f: impl FnOnce(&Fence) -> R) -> R {
    if key.len() <= FENCE_HEAD {
        return f(&Fence::new(key));
    }
    let mut fence = SEARCHED.try_with(Cell::take).unwrap_or_default();
    fence.set(key);
    let answer = f(&fence);
    let _ = SEARCHED.try_with(|searched| searched.set(fence));
    answer
}

/// The rows of a partition, in key order, searched by encoded key.
#[derive(Debug, Default, Clone)]
pub(crate) struct RowSet {
    /// Leaves under their fences (see the module docs).
    leaves: BTreeMap<Fence, Leaf>,
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
    fn leaf_of(&self, key: &[u8]) -> Option<(&Fence, &Leaf)> {
        with_fence(key, |fence| {
            self.leaves.range((Unbounded, Included(fence))).next_back()
        })
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
        let leaves = &mut self.leaves;
        let found = with_fence(key, |fence| {
            leaves.range_mut((Unbounded, Included(fence))).next_back()
        });
        let Some((_, leaf)) = found else {
            self.leaves.insert(Fence::default(), Leaf::with_row(row));
            self.len = 1;
            return None;
        };
        match leaf.search(key) {
            Ok(i) => {
                let old = leaf.replace_at(i, row);
                if leaf.live() > LEAF_BYTES && leaf.len() > 1 {
                    let at = leaf.split_point();
                    let right = leaf.split_off(at);
                    self.leaves.insert(Fence::new(right.row(0).key()), right);
                }
                Some(old)
            }
            Err(i) => {
                self.len += 1;
                if leaf.has_room(row.len()) {
                    leaf.insert_at(i, row);
                    return None;
                }
                // Full: the leaf splits first. A row past its end goes to the next leaf or a
                // leaf of its own there, and a row before its start to a leaf of its own (so that
                // rows arriving in order fill whole leaves); otherwise the leaf splits in the
                // middle and the row goes to its half.
                if i == leaf.len() {
                    self.insert_past_full_leaf(key, row);
                    return None;
                }
                let right = if i == 0 {
                    std::mem::replace(leaf, Leaf::with_row(row))
                } else {
                    let at = leaf.split_point();
                    let mut right = leaf.split_off(at);
                    if i <= at {
                        leaf.insert_at(i, row);
                    } else {
                        right.insert_at(i - at, row);
                    }
                    right
                };
                self.leaves.insert(Fence::new(right.row(0).key()), right);
                None
            }
        }
    }

    /// Stores `row`, of `key`, which lies past the end of a full leaf: in a leaf of its own, or
    /// at the front of the next leaf when an earlier such row started that one and it has room
    /// (its fence then moves down to `key`).
    ///
    /// Rows that keep arriving in the gap after a full leaf thus fill leaves in either order:
    /// ascending, each after the one before, in the leaf the first started; descending, each
    /// before the one before, at that leaf's front, where a leaf of its own for each would leave
    /// a leaf per row. A leaf that did not start so (the rows above the gap) takes none at its
    /// front: rows that go on to ascend would land in its middle and split it.
    #[cold]
    fn insert_past_full_leaf(&mut self, key: &[u8], row: &[u8]) {
        let fence = Fence::new(key);
        // The next leaf: the first whose fence lies above `key`.
        let next = self
            .leaves
            .range_mut((Excluded(&fence), Unbounded))
            .next()
            .and_then(|(f, next)| (next.grows_down && next.has_room(row.len())).then(|| f.clone()));
        let leaf = match next.and_then(|f| self.leaves.remove(&f)) {
            Some(mut next) => {
                next.insert_at(0, row);
                next
            }
            None => Leaf {
                grows_down: true,
                ..Leaf::with_row(row)
            },
        };
        self.leaves.insert(fence, leaf);
    }

    /// Removes the row with `key`; returns its size.
    pub(crate) fn remove(&mut self, key: &[u8]) -> Option<u64> {
        let leaves = &mut self.leaves;
        let (fence, leaf) = with_fence(key, |fence| {
            leaves.range_mut((Unbounded, Included(fence))).next_back()
        })?;
        let i = leaf.search(key).ok()?;
        let size = leaf.remove_at(i);
        self.len -= 1;
        if leaf.live() < MIN_LEAF_BYTES {
            let fence = fence.clone();
            self.rejoin(fence);
        }
        Some(size)
    }

    /// After a removal from the leaf under `fence`: drops it when empty, else joins it to its
    /// next or previous neighbour when the two fit in one leaf.
    #[cold]
    fn rejoin(&mut self, fence: Fence) {
        let Some(leaf) = self.leaves.get(&fence) else {
            return;
        };
        let size = leaf.live();
        if leaf.len() == 0 {
            self.leaves.remove(&fence);
            self.fix_first_fence();
            return;
        }
        // A neighbour the leaf fits in one leaf with: the next one, else the previous one.
        let fits = |(f, n): (&Fence, &Leaf)| (n.live() + size <= LEAF_BYTES).then(|| f.clone());
        if let Some(next) = self
            .leaves
            .range((Excluded(&fence), Unbounded))
            .next()
            .and_then(fits)
        {
            self.join(&fence, &next);
        } else if let Some(previous) = self
            .leaves
            .range((Unbounded, Excluded(&fence)))
            .next_back()
            .and_then(fits)
        {
            self.join(&previous, &fence);
        }
    }

    /// Moves the rows of the leaf under `upper` to the end of the leaf under `lower`, the one
    /// before it, and drops the emptied leaf.
    fn join(&mut self, lower: &Fence, upper: &Fence) {
        if let Some(rows) = self.leaves.remove(upper)
            && let Some(leaf) = self.leaves.get_mut(lower)
        {
            leaf.append(&rows);
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
            self.leaves.insert(Fence::default(), leaf);
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
            Unbounded => self.leaves.first_key_value().map(|(f, l)| (f, l, 0)),
            Included(k) => self.leaf_of(k).map(|(f, l)| (f, l, l.lower_bound(k))),
            Excluded(k) => self.leaf_of(k).map(|(f, l)| {
                let i = l.search(k).map_or_else(|i| i, |i| i + 1);
                (f, l, i)
            }),
        };
        // The end: a leaf and the index past the last row.
        let to = match upper {
            Unbounded => self.leaves.last_key_value().map(|(f, l)| (f, l, l.len())),
            Included(k) => self.leaf_of(k).map(|(f, l)| {
                let i = l.search(k).map_or_else(|i| i, |i| i + 1);
                (f, l, i)
            }),
            Excluded(k) => self.leaf_of(k).map(|(f, l)| (f, l, l.lower_bound(k))),
        };
        let leaves = match (from, to) {
            (Some((f, first, start)), Some((t, last, end))) if f <= t => Some(
                self.leaves
                    .range((Included(f), Included(t)))
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
            leaves: self.leaves.split_off(&Fence::new(key)),
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
                right.leaves.insert(Fence::default(), tail);
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
            self.leaves.insert(Fence::new(first.row(0).key()), first);
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
            assert_eq!(leaf.heads.len(), leaf.len());
            let held: usize = leaf.slots.iter().map(|s| s.end - s.start).sum();
            assert_eq!(held + leaf.garbage, leaf.bytes.len());
            let prefix = leaf.prefix();
            for r in 0..leaf.len() {
                let key = leaf.row(r).key();
                assert_eq!(&key[..leaf.skip], prefix);
                assert_eq!(leaf.heads[r], head(key, leaf.skip));
            }
            for r in 0..leaf.len() {
                let key = leaf.row(r).key();
                assert!(Fence::new(key) >= *fence);
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

    /// A seeded draw below `n` ([`test_lcg`](crate::table::test_lcg)'s numbers modulo `n`).
    fn lcg(seed: u64) -> impl FnMut(u64) -> u64 {
        let mut next = crate::table::test_lcg(seed);
        move |n| next() % n
    }

    /// An encoded row of key `k` with a cell of `len` bytes, accounted as `size`.
    fn row(k: u64, len: usize, size: u64) -> Vec<u8> {
        row_under("", k, len, size)
    }

    /// [`row`] with `prefix` before the first key column's digits.
    fn row_under(prefix: &str, k: u64, len: usize, size: u64) -> Vec<u8> {
        let first = format!("{prefix}{:03}", k % 50);
        let key = PrimaryKey::new(vec![first.into(), (k as i64).into()]);
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
    /// of the same rows does, and keeps its invariants. Every other seed's keys are longer than
    /// a fence's inline head and share it, of lengths that vary from key to key, so that
    /// searches compare the rest of reused fences.
    #[test]
    fn row_set_matches_a_btreemap() {
        for seed in 0..60 {
            let long = seed % 2 == 1;
            let row = |k: u64, len: usize, size: u64| {
                let prefix = if long {
                    "k".repeat(FENCE_HEAD + (k % 7) as usize)
                } else {
                    String::new()
                };
                row_under(&prefix, k, len, size)
            };
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

    /// The two-step count of heads below a word equals a plain count: every length from 0 to
    /// five blocks and a tail, heads that tie in runs or never, probes below, between, on and
    /// above them (and the word limits).
    #[test]
    fn count_below_equals_a_plain_count() {
        let mut next = lcg(11);
        for len in 0..=5 * BLOCK + BLOCK - 1 {
            for spread in [1, 3, 1 << 40] {
                let mut heads: Vec<u64> = (0..len).map(|_| next(spread * 4)).collect();
                heads.sort_unstable();
                let mut probes = vec![0, 1, u64::MAX, spread * 4];
                probes.extend(heads.iter().flat_map(|&x| [x.wrapping_sub(1), x, x + 1]));
                for h in probes {
                    let plain = heads.iter().filter(|&&x| x < h).count();
                    assert_eq!(count_below(&heads, h), plain, "{heads:?} below {h}");
                }
            }
        }
    }

    /// Fences order as their bytes do: keys with zeros (of which padding looks the same),
    /// prefixes of each other, and lengths on both sides of the inline head; and so does a
    /// fence reused for another key, whose buffer may be longer than its rest.
    #[test]
    fn fences_order_as_bytes() {
        let mut next = lcg(7);
        let keys: Vec<Vec<u8>> = (0..600)
            .map(|_| {
                let len = [0, 1, 7, 8, 9, 39, 40, 41, 60][next(9) as usize];
                (0..len).map(|_| [0u8, 1, 0xff][next(3) as usize]).collect()
            })
            .collect();
        // A searched-for fence reuses a buffer that a longer key left longer than its rest.
        let mut reused = Fence::new(&[0xff; 100]);
        for a in &keys {
            for b in &keys {
                assert_eq!(Fence::new(a).cmp(&Fence::new(b)), a.cmp(b), "{a:?} {b:?}");
                reused.set(b);
                assert_eq!(Fence::new(a).cmp(&reused), a.cmp(b), "{a:?} {b:?} reused");
                assert_eq!(reused.cmp(&Fence::new(a)), b.cmp(a), "{b:?} reused {a:?}");
                assert_eq!(Fence::new(a) == reused, a == b);
            }
        }
    }

    /// A full leaf of two partition-key values splits between them when that is within its
    /// middle half (each half's heads then reach past its value), else in the middle.
    #[test]
    fn a_leaf_splits_between_partition_key_values() {
        for (first, n, expected) in [(6, 20, 6), (14, 20, 14), (2, 20, 10), (10, 21, 10)] {
            // Keys `001` (k = 1, 51, ...) then `002` (k = 2, 52, ...): `first` of the former.
            let keys = (0..first)
                .map(|j| 50 * j + 1)
                .chain((0..n - first).map(|j| 50 * j + 2));
            let mut leaf = Leaf::default();
            for (i, k) in keys.enumerate() {
                leaf.insert_at(i, &row(k, 10, 0));
            }
            assert_eq!(leaf.split_point(), expected, "{first} of {n}");
        }
        // Two rows: the only split point.
        let mut leaf = Leaf::with_row(&row(1, 10, 0));
        leaf.insert_at(1, &row(2, 10, 0));
        assert_eq!(leaf.split_point(), 1);
    }

    /// Descending runs that each start just above a full leaf (as a reverse-timestamp design
    /// writes: each user's rows arrive in descending key order, the users interleaved), and a
    /// descending run above rows loaded first in ascending order: leaves stay at least about
    /// half full, never one row each.
    #[test]
    fn descending_runs_after_full_leaves_fill_leaves() {
        // (partition-key values, rows per value, rows loaded ascending first)
        for (users, per_user, ascending_first) in [(40, 250, 0), (1, 4_000, 2_000), (7, 900, 500)] {
            let mut set = RowSet::default();
            let mut bytes = 0;
            let mut put = |set: &mut RowSet, user: u64, t: u64| {
                // `row` puts `k % 50` first: user `user`, then `k` itself.
                let r = row(user + 50 * t, 20, 0);
                bytes += r.len();
                set.insert(&r);
            };
            for t in 0..ascending_first {
                put(&mut set, 0, t);
            }
            for t in (ascending_first..ascending_first + per_user).rev() {
                for user in 0..users {
                    put(&mut set, user, t);
                }
            }
            set.check();
            let full = bytes.div_ceil(LEAF_BYTES);
            assert!(
                set.leaves.len() <= 2 * full + 1,
                "{} leaves for {full} leaves' worth of rows ({users} users)",
                set.leaves.len()
            );
        }
    }

    /// A set of 2,000 rows loaded in ascending order, keys 1000 apart (so every leaf is full but
    /// the last), each row's cell `len(t)` bytes long.
    fn ascending_load(mut len: impl FnMut(u64) -> usize) -> RowSet {
        let mut set = RowSet::default();
        for t in 0..2_000u64 {
            set.insert(&row(50 * 1_000 * t, len(t), 0));
        }
        set
    }

    /// Writes `run` rows of `len`-byte cells, in descending key order, into the gap below leaf
    /// `g`'s first key (above the full leaf before it) of an [`ascending_load`]; answers how many
    /// leaves that added and how many leaves' worth of bytes the rows are.
    fn descending_run_into_gap(set: &mut RowSet, g: usize, run: u64, len: usize) -> (usize, usize) {
        let first = set.leaves.values().nth(g).unwrap().row(0).key().to_vec();
        let at = (0..2_000u64)
            .find(|&t| key_of(&row(50 * 1_000 * t, 0, 0)) == first)
            .unwrap();
        let before = set.leaves.len();
        let mut bytes = 0;
        for t in (1_000 * at - run..1_000 * at).rev() {
            let r = row(50 * t, len, 0);
            bytes += r.len();
            set.insert(&r);
        }
        set.check();
        (set.leaves.len() - before, bytes.div_ceil(LEAF_BYTES))
    }

    /// A descending run into the gap at a full leaf's end: the run's rows fill leaves, not one
    /// leaf each.
    #[test]
    fn a_descending_run_into_a_gap_after_a_full_leaf_fills_leaves() {
        let mut set = ascending_load(|_| 20);
        // The gap below the third leaf's first key, above the second leaf's last one.
        let (added, full) = descending_run_into_gap(&mut set, 2, 999, 20);
        assert!(
            added <= 2 * full + 1,
            "{added} leaves added for {full} leaves' worth of rows"
        );
    }

    /// Descending runs into the gaps at full leaves' ends, of any length and row size, into gaps
    /// anywhere: each run's rows fill leaves, not one leaf each. (A leaf before the gap with room
    /// for a row or two takes the run's first rows; the rows after them land in its middle and
    /// split it, so those leaves may be half full or less: at least a quarter, as any split's
    /// halves are.)
    #[test]
    fn descending_runs_into_gaps_after_full_leaves_fill_leaves() {
        for seed in 0..48 {
            let mut next = lcg(seed);
            let mut set = ascending_load(|_| next(300) as usize);
            let g = 1 + next(set.leaves.len() as u64 - 1) as usize;
            let (run, len) = (1 + next(999), next(300) as usize);
            let (added, full) = descending_run_into_gap(&mut set, g, run, len);
            assert!(
                added <= 4 * full + 2,
                "seed {seed}: {added} leaves added for {full} leaves' worth of {run} rows"
            );
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
