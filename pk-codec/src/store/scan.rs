//! Scatter-gather range reads: the key ranges of a bucketed layout (one per bucket) read in
//! parallel, each paged with the store's limit, merged into one stream in natural-key order,
//! and resumable from where a read stopped.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::ops::ControlFlow;
use std::sync::mpsc::{Receiver, sync_channel};

use super::{RangePage, RangeQuery, RangeStore, StoreError};
use crate::KeyRange;
use crate::prefix::Prefix;

/// Where a [`scan_ranges`] stopped: for each range, the key to resume from, or `None` when that
/// range is exhausted. Pass it back to resume; it is plain data (keys), so it can be stored.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScanCursor {
    /// Per range, in the order the ranges were given: the next key to read.
    pub positions: Vec<Option<String>>,
}

/// Pages of one range, fetched ahead by that range's reader thread.
/// A bucket's next row in the merge, ordered so that [`BinaryHeap`] (a max-heap) pops the
/// smallest natural key (the key past the `skip` bytes of the prefix) first, ties in bucket order
/// (as the merge is stable).
struct Head {
    key: String,
    value: Vec<u8>,
    bucket: usize,
    skip: usize,
}

impl Head {
    /// The natural key's bytes (bytes compare as the strings do, without a character-boundary
    /// check per comparison).
    #[inline]
    fn natural(&self) -> &[u8] {
        let key = self.key.as_bytes();
        key.get(self.skip..).unwrap_or(key)
    }
}

impl Ord for Head {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .natural()
            .cmp(self.natural())
            .then(other.bucket.cmp(&self.bucket))
    }
}

impl PartialOrd for Head {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Head {}

struct Bucket {
    rows: VecDeque<(String, Vec<u8>)>,
    pages: Receiver<Result<RangePage, StoreError>>,
    /// The store's resume key after the rows received so far (`None`: nothing more to read).
    next: Option<String>,
    /// Whether the reader has nothing more to send.
    done: bool,
}

impl Bucket {
    /// The next row, waiting for the next page when the buffered ones are used up.
    fn pop(&mut self) -> Result<Option<(String, Vec<u8>)>, StoreError> {
        while self.rows.is_empty() && !self.done {
            match self.pages.recv() {
                Ok(page) => {
                    let page = page?;
                    self.next = page.next;
                    self.done = self.next.is_none();
                    self.rows.extend(page.rows);
                }
                Err(_) => self.done = true,
            }
        }
        Ok(self.rows.pop_front())
    }

    /// Where this range resumes after the rows taken so far.
    fn position(&self) -> Option<String> {
        match self.rows.front() {
            Some((k, _)) => Some(k.clone()),
            None => self.next.clone(),
        }
    }
}

/// Reads `ranges` from `store`, one reader thread per range fetching pages of `page` rows (at
/// most the store's [`max_page`](RangeStore::max_page), two pages ahead), and calls `visit` with
/// every row in natural-key order: keys compared without the first `prefix.len()` bytes, as
/// [`KeyShape::merge_buckets`](crate::KeyShape::merge_buckets) does. Only a few pages per range
/// are held in memory, whatever the ranges hold.
///
/// `visit` returns [`ControlFlow::Break`] to stop: the read then returns a [`ScanCursor`] that
/// resumes right after the last row visited. `None` means every range was read to its end.
///
/// # Errors
///
/// The first store error of any range's reader.
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
///     store.put(&layout.encode(&[ts.into()])?, &ts.to_be_bytes())?;
/// }
/// let ranges = layout.prefix_ranges(&[])?; // one per bucket
/// let mut seen = Vec::new();
/// let cursor = scan_ranges(&store, layout.shape().prefix(), &ranges, 7, None, |key, _| {
///     seen.push(layout.decode(key).unwrap()[0].as_u64().unwrap());
///     if seen.len() == 30 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
/// })?;
/// // Resume where the first read stopped.
/// scan_ranges(&store, layout.shape().prefix(), &ranges, 7, cursor.as_ref(), |key, _| {
///     seen.push(layout.decode(key).unwrap()[0].as_u64().unwrap());
///     ControlFlow::Continue(())
/// })?;
/// assert_eq!(seen, (0..100).collect::<Vec<_>>());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn scan_ranges<S: RangeStore + ?Sized>(
    store: &S,
    prefix: Prefix,
    ranges: &[KeyRange],
    page: usize,
    cursor: Option<&ScanCursor>,
    mut visit: impl FnMut(&str, &[u8]) -> ControlFlow<()>,
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
    let page = page.clamp(1, store.max_page());
    let skip = prefix.len();
    std::thread::scope(|scope| {
        let mut buckets: Vec<Bucket> = Vec::with_capacity(ranges.len());
        for (i, range) in ranges.iter().enumerate() {
            let start = match cursor.map(|c| &c.positions[i]) {
                // Exhausted before: nothing to read.
                Some(None) => {
                    buckets.push(Bucket {
                        rows: VecDeque::new(),
                        pages: sync_channel(0).1,
                        next: None,
                        done: true,
                    });
                    continue;
                }
                Some(Some(k)) => Some(k.as_str()),
                None => None,
            };
            let (tx, rx) = sync_channel(2);
            scope.spawn(move || {
                let mut resume = start.map(str::to_owned);
                loop {
                    let query = RangeQuery::new(&range.start, range.end.as_deref())
                        .limit(page)
                        .resume(resume.as_deref());
                    let result = store.range(&query);
                    let next = result.as_ref().ok().and_then(|p| p.next.clone());
                    let failed = result.is_err();
                    // The consumer stopped reading: stop fetching.
                    if tx.send(result).is_err() || failed || next.is_none() {
                        return;
                    }
                    resume = next;
                }
            });
            buckets.push(Bucket {
                rows: VecDeque::new(),
                pages: rx,
                next: start.map(str::to_owned),
                done: false,
            });
        }
        // A k-way merge of the buckets' heads in a binary heap (log k comparisons a row), each
        // head taken from its bucket's stream.
        let mut heads = BinaryHeap::with_capacity(buckets.len());
        for (i, b) in buckets.iter_mut().enumerate() {
            if let Some((key, value)) = b.pop()? {
                heads.push(Head {
                    key,
                    value,
                    bucket: i,
                    skip,
                });
            }
        }
        loop {
            let Some(Head {
                key, value, bucket, ..
            }) = heads.pop()
            else {
                return Ok(None);
            };
            let flow = visit(&key, &value);
            if let Some((key, value)) = buckets[bucket].pop()? {
                heads.push(Head {
                    key,
                    value,
                    bucket,
                    skip,
                });
            }
            if flow.is_break() {
                // Every range resumes at its head (the row not yet visited), or where its store
                // read stopped.
                let mut positions: Vec<Option<String>> =
                    buckets.iter().map(Bucket::position).collect();
                for h in &heads {
                    positions[h.bucket] = Some(h.key.clone());
                }
                return Ok(Some(ScanCursor { positions }));
            }
        }
    })
}
