//! Reads across the periods of a [`Timeline`]: every key space a read visits ([`Visit`]) is
//! read with [`scan_ranges`] (its buckets merged in natural-key order), and the spaces' rows are
//! merged in typed order: each key decoded with its period's layout, the values compared
//! ([`Timeline::compare`]), since keys of different layouts do not compare as bytes. Paged and
//! resumable with a [`TimelineCursor`], as [`scan_ranges`] is with a [`ScanCursor`].
//!
//! [`PrefixedStore`] is a store seen through a key prefix: what a period's layout reads and writes.

use std::collections::VecDeque;
use std::ops::ControlFlow;

use super::scan::{ScanCursor, scan_ranges};
use super::{Faults, RangePage, RangeQuery, RangeStore, StoreError, StoreErrorKind, WriteOp};
use crate::key_range::{KeyBounds, bounds_under};
use crate::kinds::Value;
use crate::timeline::{Timeline, Visit};

/// A store seen through a key prefix: every key written or read is the prefix followed by the
/// key given, and the keys read come back without it, so a [`Period`](crate::timeline::Period)'s
/// layout reads and writes its own key space as if it had the table alone. The prefix is bytes
/// (a text prefix as its UTF-8 bytes).
///
/// # Examples
///
/// ```
/// use pk_codec::store::{PrefixedStore, MemoryStore, RangeQuery, RangeStore};
///
/// let store = MemoryStore::default();
/// let v2 = PrefixedStore::new(&store, "v2/");
/// v2.put(b"0001", b"x")?;
/// assert_eq!(store.get(b"v2/0001")?, Some(b"x".to_vec()));
/// store.put(b"v3/0000", b"y")?;
/// let page = v2.range(&RangeQuery::new("", None))?;
/// assert_eq!(page.rows, vec![(b"0001".to_vec(), b"x".to_vec())]);
/// # Ok::<(), pk_codec::store::StoreError>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct PrefixedStore<'s, S: ?Sized> {
    store: &'s S,
    prefix: &'s [u8],
}

impl<'s, S: RangeStore + ?Sized> PrefixedStore<'s, S> {
    /// `store`'s keys that start with `prefix` (`&str` or bytes).
    pub fn new<P: AsRef<[u8]> + ?Sized>(store: &'s S, prefix: &'s P) -> Self {
        Self {
            store,
            prefix: prefix.as_ref(),
        }
    }

    fn full(&self, key: &[u8]) -> Vec<u8> {
        [self.prefix, key].concat()
    }

    /// A key the store answered, without the prefix (a key without it is outside the space: an
    /// error, as the store should never answer one for a range inside the space).
    fn strip(&self, key: Vec<u8>) -> Result<Vec<u8>, StoreError> {
        match key.strip_prefix(self.prefix) {
            Some(rest) => Ok(rest.to_vec()),
            None => Err(StoreError::new(
                StoreErrorKind::Other,
                format!(
                    "the store answered key {} to a read inside the key prefix {}",
                    super::show_key(&key),
                    super::show_key(self.prefix)
                ),
            )),
        }
    }
}

impl<S: RangeStore + ?Sized> RangeStore for PrefixedStore<'_, S> {
    fn max_page(&self) -> usize {
        self.store.max_page()
    }

    fn max_batch(&self) -> usize {
        self.store.max_batch()
    }

    fn write_profile(&self) -> super::WriteProfile {
        self.store.write_profile()
    }

    fn reads_wait_on_io(&self) -> bool {
        self.store.reads_wait_on_io()
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.store.put(&self.full(key), value)
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.store.get(&self.full(key))
    }

    fn delete(&self, key: &[u8]) -> Result<bool, StoreError> {
        self.store.delete(&self.full(key))
    }

    fn batch_write(&self, ops: &[WriteOp]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        self.batch_write_with_faults(ops, &mut Faults::default())
    }

    fn batch_write_with_faults(
        &self,
        ops: &[WriteOp],
        faults: &mut Faults,
    ) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        let ops: Vec<WriteOp> = ops
            .iter()
            .map(|op| match op {
                WriteOp::Put { key, value } => WriteOp::Put {
                    key: self.full(key),
                    value: value.clone(),
                },
                WriteOp::Delete { key } => WriteOp::Delete {
                    key: self.full(key),
                },
            })
            .collect();
        self.store.batch_write_with_faults(&ops, faults)
    }

    fn range(&self, query: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
        let (start, end) = bounds_under(self.prefix, query.start, query.end);
        let resume = query.resume.map(|r| self.full(r));
        let page = self.store.range(
            &RangeQuery::new(start.as_slice(), end.as_deref())
                .direction(query.direction)
                .limit(query.limit)
                .resume(resume.as_deref()),
        )?;
        let rows = page
            .rows
            .into_iter()
            .map(|(k, v)| Ok((self.strip(k)?, v)))
            .collect::<Result<_, StoreError>>()?;
        let next = page.next.map(|k| self.strip(k)).transpose()?;
        Ok(RangePage { rows, next })
    }
}

/// Where a [`scan_timeline`] stopped: per [`Visit`], the [`ScanCursor`] of its ranges to resume
/// from, or `None` when that visit is exhausted. Plain data (keys), so it can be stored.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TimelineCursor {
    /// Per visit, in the order of the visits given.
    pub visits: Vec<Option<ScanCursor>>,
}

/// One row of a [`scan_timeline`].
#[derive(Debug, Clone, Copy)]
pub struct TimelineRow<'a> {
    /// The key space it was read from.
    pub visit: &'a Visit,
    /// Its key in the key space (without the key prefix).
    pub key: &'a [u8],
    /// Its values, decoded with the space's layout.
    pub values: &'a [Value],
    /// Its stored value.
    pub value: &'a [u8],
}

/// One visit's rows read ahead, and where its reads stand.
struct Stream<'v> {
    visit: &'v Visit,
    /// Rows read and not yet visited, in the space's typed order.
    rows: VecDeque<(Vec<u8>, Vec<u8>, Vec<Value>)>,
    /// Where the store reads resume after `rows` (`None`: nothing after them).
    after: Option<ScanCursor>,
}

impl Stream<'_> {
    /// Where this visit resumes after the rows visited so far: per range, its first row not
    /// visited (read ahead, or the next read's start).
    fn position(&self) -> Option<ScanCursor> {
        if self.rows.is_empty() {
            return self.after.clone();
        }
        let ranges = self.visit.space_ranges();
        let positions = ranges
            .iter()
            .enumerate()
            .map(|(i, r)| {
                self.rows
                    .iter()
                    .find(|(k, _, _)| r.contains_bytes(k))
                    .map(|(k, _, _)| k.clone())
                    .or_else(|| {
                        self.after
                            .as_ref()
                            .and_then(|c| c.positions.get(i).cloned().flatten())
                    })
            })
            .collect();
        Some(ScanCursor { positions })
    }
}

/// Reads the `visits` of a read over `timeline` ([`Timeline::ranges`]) and calls `visit` with
/// every row in typed order ([`Timeline::compare`]; rows with equal values in visit order, that
/// is time order). `stores` answers the store of a table by name; each visit is read through its
/// key prefix ([`PrefixedStore`]) with [`scan_ranges`], in pages of `page` rows, holding at most a
/// page per visit ahead of the merge.
///
/// `visit` returns [`ControlFlow::Break`] to stop: the read then returns a [`TimelineCursor`]
/// that resumes right after the last row visited; `Ok(None)` means no row is left, as for
/// [`scan_ranges`].
///
/// A key written in two periods that keep their own key spaces is two rows (one per space);
/// rows compare equal then, and come in time order.
///
/// # Errors
///
/// [`StoreErrorKind::Invalid`] for a table `stores` does not know or a cursor of another read
/// (another number of visits or ranges); [`StoreErrorKind::Other`] for a stored key its layout
/// does not decode; otherwise the first store error.
///
/// # Examples
///
/// ```
/// use std::ops::Bound::Unbounded;
/// use std::ops::ControlFlow;
/// use pk_codec::{Layout, Value, timeline::{Period, Timeline}};
/// use pk_codec::store::{MemoryStore, RangeStore, scan_timeline};
///
/// let sixteen: Layout = "ts: u64 width=6; buckets=16:mod(ts):sep".parse()?;
/// let sixty_four: Layout = "ts: u64 width=6; buckets=64:mod(ts):sep".parse()?;
/// let timeline = Timeline::new(vec![Period::new(0, "old", sixteen), Period::new(500, "new", sixty_four)])?;
/// let (old, new) = (MemoryStore::default(), MemoryStore::default());
/// for ts in (0..1000).rev() {
///     let placed = timeline.encode(ts, &[Value::Uint(ts as u128)])?;
///     let store = if placed.table == "old" { &old } else { &new };
///     store.put(&placed.key, b"")?;
/// }
/// let visits = timeline.ranges(0..1000, &[], Unbounded, Unbounded)?;
/// let stores = |table: &str| match table { "old" => Some(&old), "new" => Some(&new), _ => None };
/// let mut seen = Vec::new();
/// let mut cursor = None;
/// loop { // pages of 100 rows
///     cursor = scan_timeline(&timeline, &visits, stores, 37, cursor.as_ref(), |row| {
///         seen.push(row.values[0].as_u64().unwrap());
///         if seen.len() % 100 == 0 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
///     })?;
///     if cursor.is_none() { break; }
/// }
/// assert_eq!(seen, (0..1000).collect::<Vec<_>>());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn scan_timeline<'s, S: RangeStore + ?Sized + 's>(
    timeline: &Timeline,
    visits: &[Visit],
    stores: impl Fn(&str) -> Option<&'s S>,
    page: usize,
    cursor: Option<&TimelineCursor>,
    mut visit: impl FnMut(TimelineRow<'_>) -> ControlFlow<()>,
) -> Result<Option<TimelineCursor>, StoreError> {
    if let Some(c) = cursor
        && c.visits.len() != visits.len()
    {
        return Err(StoreError::new(
            StoreErrorKind::Invalid,
            format!(
                "the cursor has {} visits for {} visits: it comes from another read",
                c.visits.len(),
                visits.len()
            ),
        ));
    }
    let page = page.max(1);
    let mut spaces = Vec::with_capacity(visits.len());
    let mut streams = Vec::with_capacity(visits.len());
    for (i, v) in visits.iter().enumerate() {
        let Some(store) = stores(v.table()) else {
            return Err(StoreError::new(
                StoreErrorKind::Invalid,
                format!("no store for table {:?}, which the read visits", v.table()),
            ));
        };
        spaces.push(PrefixedStore::new(store, v.prefix()));
        let after = match cursor {
            Some(c) => c.visits[i].clone(),
            None => Some(ScanCursor {
                positions: v
                    .space_ranges()
                    .iter()
                    .map(|r| Some(r.start.clone()))
                    .collect(),
            }),
        };
        streams.push(Stream {
            visit: v,
            rows: VecDeque::new(),
            after,
        });
    }
    loop {
        // Fill every stream that has rows left but none read ahead, then pick the least head.
        let mut least: Option<usize> = None;
        for s in 0..streams.len() {
            if streams[s].rows.is_empty() && streams[s].after.is_some() {
                fill(timeline, &spaces[s], &mut streams[s], page)?;
            }
            let Some(head) = streams[s].rows.front() else {
                continue;
            };
            let better = least.is_none_or(|l| {
                let best = streams[l].rows.front().map_or(&[][..], |r| &r.2[..]);
                timeline.compare(&head.2, best).is_lt()
            });
            if better {
                least = Some(s);
            }
        }
        let Some(s) = least else {
            return Ok(None);
        };
        let Some((key, value, values)) = streams[s].rows.pop_front() else {
            return Ok(None);
        };
        let flow = visit(TimelineRow {
            visit: streams[s].visit,
            key: &key,
            values: &values,
            value: &value,
        });
        if flow.is_break() {
            let visits: Vec<Option<ScanCursor>> = streams.iter().map(Stream::position).collect();
            return Ok(visits
                .iter()
                .any(Option::is_some)
                .then_some(TimelineCursor { visits }));
        }
    }
}

/// Reads the next page of `stream`'s rows from `space`, decoding each key with its period's
/// layout.
fn fill<S: RangeStore + ?Sized>(
    timeline: &Timeline,
    space: &PrefixedStore<'_, S>,
    stream: &mut Stream<'_>,
    page: usize,
) -> Result<(), StoreError> {
    let period = stream.visit.periods()[0];
    let layout = timeline
        .period(period)
        .map_err(|e| StoreError::new(StoreErrorKind::Invalid, e.to_string()))?
        .layout();
    let mut rows = Vec::with_capacity(page.min(1024));
    let after = scan_ranges(
        space,
        layout,
        stream.visit.space_ranges(),
        page,
        stream.after.as_ref(),
        |k, v| {
            rows.push((k.to_owned(), v.to_vec()));
            if rows.len() >= page {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        },
    )?;
    for (key, value) in rows {
        let values = layout.decode_bytes(&key).map_err(|e| {
            StoreError::new(
                StoreErrorKind::Other,
                format!(
                    "key {} in table {:?} (key prefix {:?}) does not decode with period {period}'s layout: {e}",
                    super::show_key(&key),
                    stream.visit.table(),
                    stream.visit.prefix()
                ),
            )
        })?;
        stream.rows.push_back((key, value, values));
    }
    stream.after = after;
    Ok(())
}
