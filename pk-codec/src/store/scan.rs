//! Scatter-gather range reads: the key ranges of a bucketed layout (one per bucket) read in
//! parallel when the store's reads wait on I/O, each paged with the store's limit, merged into
//! one stream in natural-key order, and resumable from where a read stopped.

use std::cmp::Ordering;
use std::ops::ControlFlow;
use std::sync::mpsc::{Receiver, sync_channel};

use super::{Faults, RangePage, RangeQuery, RangeStore, StoreError, WriteOp};
use crate::key_range::KeyBounds;
use crate::kinds::Form;
use crate::prefix::Prefix;

/// How many leading bytes of every key a [`scan_ranges`] merge skips: the key's hash or bucket
/// prefix, which differs between the ranges it merges. Its length depends on the key's form, so
/// it is best taken from the [`Layout`](crate::Layout) whose keys are read (`From<&Layout>`,
/// either form); a bare [`Prefix`] is taken as a text key's prefix (`From<Prefix>`, what a
/// derived key's `SHAPE.prefix()` is).
///
/// # Examples
///
/// ```
/// use pk_codec::{Form, Layout};
/// use pk_codec::store::PrefixLen;
///
/// let text: Layout = "ts: u64 width=4; buckets=16:mod(ts):sep".parse()?;
/// assert_eq!(PrefixLen::from(&text), PrefixLen(3)); // "07,"
/// assert_eq!(PrefixLen::from(text.shape().prefix()), PrefixLen(3));
/// let binary = text.with_form(Form::Binary);
/// assert_eq!(PrefixLen::from(&binary), PrefixLen(1)); // one byte: 0x07
/// # Ok::<(), pk_codec::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PrefixLen(pub usize);

impl PrefixLen {
    /// The length of `prefix` in keys of `form` ([`Prefix::len_in`]).
    #[must_use]
    pub const fn of(prefix: Prefix, form: Form) -> Self {
        Self(prefix.len_in(form))
    }
}

impl From<Prefix> for PrefixLen {
    /// A text key's prefix: its length with the separator.
    fn from(prefix: Prefix) -> Self {
        Self::of(prefix, Form::Text)
    }
}

impl From<&crate::Layout> for PrefixLen {
    /// The prefix of the layout's keys, in the layout's [`Form`].
    fn from(layout: &crate::Layout) -> Self {
        Self::of(layout.shape().prefix(), layout.form())
    }
}

impl From<usize> for PrefixLen {
    fn from(bytes: usize) -> Self {
        Self(bytes)
    }
}

/// Where a [`scan_ranges`] stopped: for each range, the key to resume from, or `None` when that
/// range is exhausted. Pass it back to resume; it is plain data (keys), so it can be stored.
///
/// A scan returns a cursor only while some range has rows left: a scan that is done returns
/// `None` instead (see [`scan_ranges`], "When the scan is done"), so a cursor a scan returned has
/// at least one position that is `Some`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScanCursor {
    /// Per range, in the order the ranges were given: the next key to read.
    pub positions: Vec<Option<Vec<u8>>>,
}

/// The most reader threads one [`scan_ranges`] starts: a layout may have thousands of buckets,
/// and a thread per bucket would spend memory (a stack and a few pages each) and the system's
/// thread limit on ranges that mostly wait their turn in the merge. The ranges past the first
/// this many (of those with rows left to read) are read by the merging thread itself.
const MAX_READER_THREADS: usize = 64;

/// A store whose ranges [`scan_ranges`] reads on reader threads, one per range (up to 64; the
/// merging thread reads the ranges past them), whatever the store itself declares
/// ([`RangeStore::reads_wait_on_io`]): for an embedded store whose reads do wait (a database
/// larger than memory on a slow disk), or to compare both ways of reading. Every other method is
/// the store's own.
///
/// # Examples
///
/// ```
/// use pk_codec::store::{MemoryStore, RangeStore, ReaderThreads};
///
/// let store = MemoryStore::default();
/// store.put(b"0,a", b"1")?;
/// let threaded = ReaderThreads(&store);
/// assert!(threaded.reads_wait_on_io());
/// assert_eq!(threaded.get(b"0,a")?, Some(b"1".to_vec()));
/// # Ok::<(), pk_codec::store::StoreError>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ReaderThreads<'s, S: ?Sized>(pub &'s S);

impl<S: RangeStore + ?Sized> RangeStore for ReaderThreads<'_, S> {
    fn max_page(&self) -> usize {
        self.0.max_page()
    }

    fn max_batch(&self) -> usize {
        self.0.max_batch()
    }

    fn write_profile(&self) -> super::WriteProfile {
        self.0.write_profile()
    }

    fn reads_wait_on_io(&self) -> bool {
        true
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.0.put(key, value)
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.0.get(key)
    }

    fn delete(&self, key: &[u8]) -> Result<bool, StoreError> {
        self.0.delete(key)
    }

    fn batch_write(&self, ops: &[WriteOp]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        self.0.batch_write(ops)
    }

    fn batch_write_with_faults(
        &self,
        ops: &[WriteOp],
        faults: &mut Faults,
    ) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        self.0.batch_write_with_faults(ops, faults)
    }

    fn range(&self, query: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
        self.0.range(query)
    }
}

/// Where a range's pages come from.
enum Source<'r> {
    /// Its reader thread, a few pages ahead.
    Thread(Receiver<Result<RangePage, StoreError>>),
    /// The merging thread itself, one page when the last is used up.
    Inline(Bounds<'r>),
}

/// A range's bounds, borrowed from the caller's range (of whatever [`KeyBounds`] type).
#[derive(Clone, Copy)]
struct Bounds<'r> {
    start: &'r [u8],
    end: Option<&'r [u8]>,
}

/// The page of at most `limit` rows of `range` after `resume` (from its start without one):
/// how a reader thread and the merging thread both read a range.
fn read_page<S: RangeStore + ?Sized>(
    store: &S,
    range: Bounds<'_>,
    limit: usize,
    resume: Option<&[u8]>,
) -> Result<RangePage, StoreError> {
    store.range(
        &RangeQuery::new(range.start, range.end)
            .limit(limit)
            .resume(resume),
    )
}

/// One range of the merge: its current page and how to get the next.
///
/// The rows stay in their page until the whole page is used up and dropped at once, as a plain
/// read drops its pages: moving each row out and freeing it alone, between the large
/// allocations of the next pages, measured about a tenth of the merge in the allocator
/// consolidating its free lists (`perf record`, BENCHMARKS.md "Bucket merge").
struct Bucket<'r> {
    page: Vec<(Vec<u8>, Vec<u8>)>,
    /// The page's row that is this range's head (not yet visited).
    at: usize,
    source: Source<'r>,
    /// The store's resume key after the pages received so far (`None`: nothing more to read).
    next: Option<Vec<u8>>,
    /// Whether the range has no page left to give.
    done: bool,
}

impl Bucket<'_> {
    /// The head row, if the range has one (after [`Bucket::fill`]).
    #[inline]
    fn head(&self) -> Option<&(Vec<u8>, Vec<u8>)> {
        self.page.get(self.at)
    }

    /// Makes sure the range has a head if it has rows left, reading (or waiting for) pages as
    /// needed; answers whether it has one.
    fn fill<S: RangeStore + ?Sized>(
        &mut self,
        store: &S,
        limit: usize,
    ) -> Result<bool, StoreError> {
        while self.at >= self.page.len() {
            if self.done {
                return Ok(false);
            }
            let fetched = match &self.source {
                Source::Thread(pages) => pages.recv().ok(),
                Source::Inline(range) => {
                    Some(read_page(store, *range, limit, self.next.as_deref()))
                }
            };
            match fetched {
                Some(result) => {
                    let page = result?;
                    self.next = page.next;
                    self.done = self.next.is_none();
                    self.page = page.rows;
                    self.at = 0;
                }
                None => self.done = true,
            }
        }
        Ok(true)
    }

    /// Where this range resumes after the rows visited so far.
    fn position(&self) -> Option<Vec<u8>> {
        match self.head() {
            Some((k, _)) => Some(k.clone()),
            None => self.next.clone(),
        }
    }
}

/// The order of the merge: a binary min-heap of range numbers, ordered by their heads' natural
/// keys (past the `skip` bytes of the prefix), ties in range order (so the merge is stable). Each
/// entry carries the first 8 bytes of its head's natural key as a big-endian number, so most
/// comparisons are one integer comparison; only equal first bytes compare the keys. A visited
/// head is replaced in one sift, not a pop and a push: about 2 log k comparisons a row.
struct Heads {
    heap: Vec<(u64, usize)>,
    skip: usize,
}

impl Heads {
    /// The natural key's bytes of range `b`'s head (bytes compare as the strings do).
    #[inline]
    fn natural<'b>(&self, buckets: &'b [Bucket<'_>], b: usize) -> &'b [u8] {
        let key = buckets[b].head().map_or(&[][..], |(k, _)| k.as_slice());
        key.get(self.skip..).unwrap_or(key)
    }

    /// The entry of range `b`: its head's first 8 natural bytes, zero-padded, big-endian. Zero
    /// padding keeps the order: where two padded prefixes first differ, either both bytes are
    /// the keys' own, or the shorter key ended there and sorts first, as it does in full.
    #[inline]
    fn entry(&self, buckets: &[Bucket<'_>], b: usize) -> (u64, usize) {
        let natural = self.natural(buckets, b);
        let mut first = [0u8; 8];
        let n = natural.len().min(8);
        first[..n].copy_from_slice(&natural[..n]);
        (u64::from_be_bytes(first), b)
    }

    /// Whether entry `a` goes before entry `b`.
    #[inline]
    fn before(&self, buckets: &[Bucket<'_>], a: (u64, usize), b: (u64, usize)) -> bool {
        if a.0 != b.0 {
            return a.0 < b.0;
        }
        match self.natural(buckets, a.1).cmp(self.natural(buckets, b.1)) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => a.1 < b.1,
        }
    }

    /// Adds range `b`, which has a head.
    fn push(&mut self, buckets: &[Bucket<'_>], b: usize) {
        let mut at = self.heap.len();
        self.heap.push(self.entry(buckets, b));
        while at > 0 {
            let parent = (at - 1) / 2;
            if !self.before(buckets, self.heap[at], self.heap[parent]) {
                break;
            }
            self.heap.swap(at, parent);
            at = parent;
        }
    }

    /// The range whose head goes first.
    #[inline]
    fn top(&self) -> Option<usize> {
        self.heap.first().map(|&(_, b)| b)
    }

    /// After the first range's head changed: `has_head` false takes the range out (it is
    /// exhausted); then the heap's order is restored.
    fn replace_top(&mut self, buckets: &[Bucket<'_>], has_head: bool) {
        let Some(&(_, top)) = self.heap.first() else {
            return;
        };
        if has_head {
            self.heap[0] = self.entry(buckets, top);
        } else {
            let Some(last) = self.heap.pop() else { return };
            if self.heap.is_empty() {
                return;
            }
            self.heap[0] = last;
        }
        let len = self.heap.len();
        let mut at = 0;
        loop {
            let left = 2 * at + 1;
            if left >= len {
                break;
            }
            let right = left + 1;
            let child = if right < len && self.before(buckets, self.heap[right], self.heap[left]) {
                right
            } else {
                left
            };
            if !self.before(buckets, self.heap[child], self.heap[at]) {
                break;
            }
            self.heap.swap(at, child);
            at = child;
        }
    }
}

/// Reads `ranges` from `store` in pages of `page` rows (at most the store's
/// [`max_page`](RangeStore::max_page)) and calls `visit` with every row in natural-key order:
/// keys compared without their first `prefix` bytes ([`PrefixLen`]: pass the [`Layout`](crate::Layout)
/// whose keys are read, text or binary, or a text key's [`Prefix`]), as
/// [`KeyShape::merge_buckets`](crate::KeyShape::merge_buckets) does, equal ones in the order of
/// `ranges`. Only a few pages per range are held in memory, whatever the ranges hold.
///
/// When the store's reads wait on I/O ([`RangeStore::reads_wait_on_io`], a network store), each
/// range has a reader thread fetching two pages ahead, so the round trips overlap; an in-process
/// store's ranges are read by the calling thread, a page when the last is used up. At most 64
/// reader threads are started, whatever the number of ranges: the ranges past the first 64
/// (of those with rows left to read) are read by the calling thread, as an in-process store's.
///
/// `visit` returns [`ControlFlow::Break`] to stop: the read then returns a [`ScanCursor`] that
/// resumes right after the last row visited.
///
/// # When the scan is done
///
/// `Ok(None)` means the scan is done: no range has a row left after the last row visited. That
/// holds whether every range was read to its end or `visit` stopped on the very last row, so a
/// pager loops `while let Some(cursor)` and never makes a call that can only read nothing. A
/// `Some` cursor has at least one range to resume. The end is known without reading further: a
/// range is over when its store said so ([`RangePage::next`] is `None`). Every store in this
/// crate gives a resume key only when a row follows; a store that gives one past its last row
/// makes a scan stopped there answer one more cursor, whose read visits nothing and returns
/// `None`.
///
/// # Errors
///
/// [`StoreErrorKind::Invalid`](super::StoreErrorKind::Invalid) when `cursor` does not come from
/// a read of `ranges` (it has another number of positions), or when the store's
/// [`max_page`](RangeStore::max_page) is 0 (no page could hold a row); otherwise the first
/// store error of any range's reader.
///
/// # Examples
///
/// ```
/// use std::ops::ControlFlow;
/// use pk_codec::Layout;
/// use pk_codec::store::{MemoryStore, RangeStore, scan_ranges};
///
/// let layout: Layout = "ts: u64 width=4; buckets=4:mod(ts):sep".parse()?;
/// let store = MemoryStore::default();
/// for ts in 0..100u64 {
///     store.put(&layout.encode_bytes(&[ts.into()])?, &ts.to_be_bytes())?;
/// }
/// let ranges = layout.prefix_ranges(&[])?; // one per bucket
/// let mut seen = Vec::new();
/// let cursor = scan_ranges(&store, &layout, &ranges, 7, None, |key, _| {
///     seen.push(layout.decode_bytes(key).unwrap()[0].as_u64().unwrap());
///     if seen.len() == 30 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
/// })?;
/// // Resume where the first read stopped.
/// scan_ranges(&store, &layout, &ranges, 7, cursor.as_ref(), |key, _| {
///     seen.push(layout.decode_bytes(key).unwrap()[0].as_u64().unwrap());
///     ControlFlow::Continue(())
/// })?;
/// assert_eq!(seen, (0..100).collect::<Vec<_>>());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn scan_ranges<S: RangeStore + ?Sized, R: KeyBounds>(
    store: &S,
    prefix: impl Into<PrefixLen>,
    ranges: &[R],
    page: usize,
    cursor: Option<&ScanCursor>,
    mut visit: impl FnMut(&[u8], &[u8]) -> ControlFlow<()>,
) -> Result<Option<ScanCursor>, StoreError> {
    if let Some(c) = cursor
        && c.positions.len() != ranges.len()
    {
        return Err(StoreError::new(
            super::StoreErrorKind::Invalid,
            format!(
                "the cursor has {} positions for {} ranges: it comes from another read",
                c.positions.len(),
                ranges.len()
            ),
        ));
    }
    let max_page = store.max_page();
    if max_page == 0 {
        return Err(StoreError::new(
            super::StoreErrorKind::Invalid,
            "scan_ranges: the store's max_page() is 0, so no range read could return a row \
             (a store must allow pages of at least 1 row)",
        ));
    }
    let page = page.clamp(1, max_page);
    let skip = prefix.into().0;
    let mut threads_left = if store.reads_wait_on_io() {
        MAX_READER_THREADS
    } else {
        0
    };
    std::thread::scope(|scope| {
        let mut buckets: Vec<Bucket<'_>> = Vec::with_capacity(ranges.len());
        for (i, range) in ranges.iter().enumerate() {
            let range = Bounds {
                start: range.start_bytes(),
                end: range.end_bytes(),
            };
            let start = match cursor.map(|c| &c.positions[i]) {
                // Exhausted before: nothing to read.
                Some(None) => {
                    buckets.push(Bucket {
                        page: Vec::new(),
                        at: 0,
                        source: Source::Inline(range),
                        next: None,
                        done: true,
                    });
                    continue;
                }
                Some(Some(k)) => Some(k.as_slice()),
                None => None,
            };
            let source = if threads_left > 0 {
                threads_left -= 1;
                let (tx, rx) = sync_channel(2);
                scope.spawn(move || {
                    let mut resume = start.map(<[u8]>::to_vec);
                    loop {
                        let result = read_page(store, range, page, resume.as_deref());
                        let next = result.as_ref().ok().and_then(|p| p.next.clone());
                        let failed = result.is_err();
                        // The consumer stopped reading: stop fetching.
                        if tx.send(result).is_err() || failed || next.is_none() {
                            return;
                        }
                        resume = next;
                    }
                });
                Source::Thread(rx)
            } else {
                Source::Inline(range)
            };
            buckets.push(Bucket {
                page: Vec::new(),
                at: 0,
                source,
                next: start.map(<[u8]>::to_vec),
                done: false,
            });
        }
        // A k-way merge of the ranges' heads in a binary heap (log k comparisons a row).
        let mut heads = Heads {
            heap: Vec::with_capacity(buckets.len()),
            skip,
        };
        for b in 0..buckets.len() {
            if buckets[b].fill(store, page)? {
                heads.push(&buckets, b);
            }
        }
        while let Some(b) = heads.top() {
            // Every range in the heap has a head; one without would only leave it.
            let Some((key, value)) = buckets[b].head() else {
                heads.replace_top(&buckets, false);
                continue;
            };
            let flow = visit(key, value);
            buckets[b].at += 1;
            if flow.is_break() {
                // Every range resumes at its head (the row not yet visited), or where its store
                // read stopped. Nothing more is read: a read the caller did not ask for could
                // only fail, and lose the cursor of the rows visited. A stop on the last row
                // leaves nothing to resume: the scan is done, and says so as a full read does.
                let positions: Vec<Option<Vec<u8>>> =
                    buckets.iter().map(Bucket::position).collect();
                if positions.iter().all(Option::is_none) {
                    return Ok(None);
                }
                return Ok(Some(ScanCursor { positions }));
            }
            let has_head = buckets[b].fill(store, page)?;
            heads.replace_top(&buckets, has_head);
        }
        Ok(None)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Layout;
    use crate::store::MemoryStore;

    /// More ranges than reader threads: the ranges past the cap are read inline, and the merge
    /// (and a resumed merge) still gives every row once, in order.
    #[test]
    fn more_ranges_than_reader_threads_merge_in_order() {
        let layout: Layout = "ts: u64 width=4; buckets=150:mod(ts):sep".parse().unwrap();
        let store = MemoryStore::default();
        for ts in 0..600u64 {
            store
                .put(
                    &layout.encode_bytes(&[ts.into()]).unwrap(),
                    &ts.to_be_bytes(),
                )
                .unwrap();
        }
        let ranges = layout.prefix_ranges(&[]).unwrap();
        assert!(ranges.len() > MAX_READER_THREADS);
        let prefix = &layout;
        let threaded = ReaderThreads(&store);
        let mut seen = Vec::new();
        let read = |key: &[u8], seen: &mut Vec<u64>| {
            seen.push(layout.decode_bytes(key).unwrap()[0].as_u64().unwrap());
        };
        let cursor = scan_ranges(&threaded, prefix, &ranges, 3, None, |k, _| {
            read(k, &mut seen);
            if seen.len() == 250 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .unwrap();
        let end = scan_ranges(&threaded, prefix, &ranges, 3, cursor.as_ref(), |k, _| {
            read(k, &mut seen);
            ControlFlow::Continue(())
        })
        .unwrap();
        assert_eq!(end, None);
        assert_eq!(seen, (0..600).collect::<Vec<_>>());
    }
}
