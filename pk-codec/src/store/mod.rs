//! Keys into real stores: one small range-store interface, implemented by the in-memory
//! [`table::Table`](crate::table::Table) model and by store adapters behind cargo features.
//!
//! A [`RangeStore`] is a sorted map from codec keys (bytes, compared bytewise) to values
//! (bytes): point writes and reads, batches with a result per row, and paged range reads, forward
//! or backward, start inclusive, end exclusive, that stop after a row limit and say where to
//! resume. It is what [`KeyRange`](crate::KeyRange)s and [`ByteRange`](crate::ByteRange)s are
//! read from, and what typed access and bulk imports write through.
//!
//! # Keys are bytes
//!
//! A binary [`Layout`](crate::Layout)'s keys
//! ([`Layout::encode_bytes`](crate::Layout::encode_bytes)) go in as they are; a text key goes
//! in as its UTF-8 bytes, which sort as the text does, so text and binary keys are read back in
//! the order they were made. The trait's methods take `&[u8]` (it stays usable as
//! `dyn RangeStore`); where a text caller would write `.as_bytes()` over and over, the types
//! around it take either: [`RangeQuery::new`] takes `&str`, `String`, `&[u8]` or `Vec<u8>`
//! bounds, [`WriteOp::put`], [`WriteOp::delete`], [`Expect`] and
//! [`BulkWriter::add`] take anything `Into<Vec<u8>>` (`String` and `&str` included), and rows
//! compare with byte literals (`page.rows[0].0 == b"000054,a100"`).
//!
//! # Examples
//!
//! ```
//! use pk_codec::store::{Direction, MemoryStore, RangeQuery, RangeStore};
//!
//! let store = MemoryStore::default();
//! for key in ["000054,a100", "000054,a1001", "000167,a101"] {
//!     store.put(key.as_bytes(), key.as_bytes())?;
//! }
//! let page = store.range(&RangeQuery::new("000054", Some("000055")).limit(1))?;
//! assert_eq!(page.rows[0].0, b"000054,a100");
//! let rest = store.range(&RangeQuery::new("000054", Some("000055")).resume(page.next.as_deref()))?;
//! assert_eq!(rest.rows[0].0, b"000054,a1001");
//! assert!(rest.next.is_none());
//! let back = store.range(&RangeQuery::new("", None).direction(Direction::Backward))?;
//! assert_eq!(back.rows[0].0, b"000167,a101");
//! // Binary keys go straight in, and sort bytewise.
//! store.put(&[0xff, 0x00], b"binary")?;
//! let last = store.range(&RangeQuery::new(&[0xff][..], None))?;
//! assert_eq!(last.rows, vec![(vec![0xff, 0x00], b"binary".to_vec())]);
//! # Ok::<(), pk_codec::store::StoreError>(())
//! ```

mod bulk;
pub mod conformance;
#[cfg(feature = "etcd")]
mod etcd;
mod memory;
#[cfg(feature = "redb")]
mod redb;
mod rekey;
#[cfg(feature = "rocksdb")]
mod rocksdb;
mod scan;
#[cfg(feature = "table")]
mod table;
mod timeline;
#[cfg(feature = "typed")]
mod typed;
#[cfg(feature = "typed")]
mod typed_timeline;
#[cfg(feature = "typed")]
pub mod value;

use std::fmt;

#[cfg(feature = "redb")]
pub use self::redb::{RedbDatabase, RedbStore};
#[cfg(feature = "rocksdb")]
pub use self::rocksdb::RocksStore;
pub use bulk::{
    Backoff, BulkOptions, BulkStats, BulkWriter, Dispatch, MAX_QUEUE_ROWS, MAX_WORKERS, RowOutcome,
    Simulation, simulate_import,
};
#[cfg(feature = "etcd")]
pub use etcd::{EndpointPolicy, EtcdBuilder, EtcdStats, EtcdStore};
pub use memory::MemoryStore;
pub use rekey::{
    KeySpace, Phase, Rekey, RekeyCounts, RekeyError, RekeyJob, RekeyOptions, RekeyState, Step,
    Throttle,
};
pub use scan::{PrefixLen, ReaderThreads, ScanCursor, scan_ranges};
#[cfg(feature = "table")]
pub use table::VALUE_COLUMN;
pub use timeline::{PrefixedStore, TimelineCursor, TimelineRow, scan_timeline};
#[cfg(feature = "typed")]
pub use typed::{Typed, TypedError};
#[cfg(feature = "typed")]
pub use typed_timeline::TypedTimeline;

/// `store.put(key, value)` as a batch of one write: for the stores whose batch is their write
/// (one transaction, one conditional copy).
fn put_as_batch<S: RangeStore + ?Sized>(
    store: &S,
    key: &[u8],
    value: &[u8],
) -> Result<(), StoreError> {
    store.batch_write(&[WriteOp::put(key, value)])?.remove(0)
}

/// A key as people read it in messages: its text when it is UTF-8 (quoted, as `{:?}` shows a
/// string), else `0x` and its bytes in hex.
pub(crate) fn show_key(key: &[u8]) -> String {
    match std::str::from_utf8(key) {
        Ok(text) => format!("{text:?}"),
        Err(_) => crate::kinds::Form::Binary.show_key(key),
    }
}

/// A byte range for a message: `[start, end)` with each key as [`show_key`] shows it, `...`
/// for no end.
pub(crate) fn show_range(range: &crate::ByteRange) -> String {
    format!(
        "[{}, {})",
        show_key(&range.start),
        range
            .end
            .as_deref()
            .map_or_else(|| "...".to_owned(), show_key)
    )
}

/// Which way a range read walks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Direction {
    /// Smallest key first.
    #[default]
    Forward,
    /// Largest key first.
    Backward,
}

/// A range read: keys in `[start, end)` (`end == None` for no upper bound), in `direction`, at
/// most `limit` rows (the store may return fewer, up to its own page limit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeQuery<'a> {
    /// The first key of the range (inclusive).
    pub start: &'a [u8],
    /// The first key after the range (exclusive), or `None` for no upper bound.
    pub end: Option<&'a [u8]>,
    /// Which way to walk.
    pub direction: Direction,
    /// The most rows to return (at least 1).
    pub limit: usize,
    /// Where to resume a read that stopped early: a [`RangePage::next`] of the same query.
    pub resume: Option<&'a [u8]>,
}

impl<'a> RangeQuery<'a> {
    /// A forward read of `[start, end)`, up to 1,000 rows a page. The bounds are keys of either
    /// form: text (`&str`, `String`) as its UTF-8 bytes, or bytes (`[u8]`, `Vec<u8>`).
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::store::RangeQuery;
    ///
    /// let text = RangeQuery::new("000054", Some("000055"));
    /// let bytes = RangeQuery::new(&b"000054"[..], Some(&b"000055"[..]));
    /// assert_eq!(text, bytes);
    /// let everything = RangeQuery::new("", None);
    /// assert_eq!((everything.start, everything.end), (&b""[..], None));
    /// ```
    #[must_use]
    pub fn new<K: AsRef<[u8]> + ?Sized>(start: &'a K, end: Option<&'a K>) -> Self {
        Self {
            start: start.as_ref(),
            end: end.map(AsRef::as_ref),
            direction: Direction::Forward,
            limit: 1000,
            resume: None,
        }
    }

    /// The same query walking the other way, or the same way.
    #[must_use]
    pub const fn direction(mut self, direction: Direction) -> Self {
        self.direction = direction;
        self
    }

    /// The same query with another row limit.
    #[must_use]
    pub const fn limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }

    /// The same query, resumed where a page stopped.
    #[must_use]
    pub const fn resume(mut self, resume: Option<&'a [u8]>) -> Self {
        self.resume = resume;
        self
    }

    /// The part of `[start, end)` still to read, in key order: `(from, to, to_inclusive)` with
    /// `from` inclusive and `to` exclusive unless `to_inclusive`, after applying `resume`. For a
    /// backward read the resume key is the next key to return (inclusive) from the top; either
    /// way the resumed read stays within `[start, end)` (a resume key at or above the end
    /// resumes at the end, as one below the start resumes a forward read at the start).
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::store::{Direction, RangeQuery};
    ///
    /// let q = RangeQuery::new("a", Some("c")).direction(Direction::Backward);
    /// assert_eq!(q.clone().resume(Some(&b"b"[..])).remaining(), (&b"a"[..], Some(&b"b"[..]), true));
    /// assert_eq!(q.resume(Some(&b"z"[..])).remaining(), (&b"a"[..], Some(&b"c"[..]), false));
    /// ```
    #[must_use]
    pub fn remaining(&self) -> (&'a [u8], Option<&'a [u8]>, bool) {
        match (self.direction, self.resume) {
            (_, None) => (self.start, self.end, false),
            (Direction::Forward, Some(r)) => (r.max(self.start), self.end, false),
            // Backward: the resume key is included, so the top is inclusive, unless the end
            // (exclusive) comes first.
            (Direction::Backward, Some(r)) => match self.end {
                Some(end) if r >= end => (self.start, Some(end), false),
                _ => (self.start, Some(r), true),
            },
        }
    }
}

/// One page of a range read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RangePage {
    /// The rows (key, value), in the query's direction.
    pub rows: Vec<(Vec<u8>, Vec<u8>)>,
    /// Where the next page starts (pass it to [`RangeQuery::resume`]), or `None` when the range
    /// is exhausted.
    pub next: Option<Vec<u8>>,
}

/// One write of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOp {
    /// Write `value` at `key`, replacing what was there.
    Put {
        /// The key.
        key: Vec<u8>,
        /// The value.
        value: Vec<u8>,
    },
    /// Delete `key` (nothing if it is absent).
    Delete {
        /// The key.
        key: Vec<u8>,
    },
}

impl WriteOp {
    /// Write `value` at `key` (a text key as its UTF-8 bytes, or bytes).
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::store::WriteOp;
    ///
    /// let op = WriteOp::put("000054,a100", b"card");
    /// assert_eq!(op, WriteOp::Put { key: b"000054,a100".to_vec(), value: b"card".to_vec() });
    /// assert_eq!(WriteOp::delete(vec![0xff]).key(), [0xff]);
    /// ```
    #[must_use]
    pub fn put(key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) -> Self {
        Self::Put {
            key: key.into(),
            value: value.into(),
        }
    }

    /// Delete `key` (a text key as its UTF-8 bytes, or bytes).
    #[must_use]
    pub fn delete(key: impl Into<Vec<u8>>) -> Self {
        Self::Delete { key: key.into() }
    }

    /// The key the write touches.
    #[must_use]
    pub fn key(&self) -> &[u8] {
        match self {
            Self::Put { key, .. } | Self::Delete { key } => key,
        }
    }
}

/// What a [`CondWrite`] expects of one key when it is applied: its value, or that it is absent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expect {
    /// The key.
    pub key: Vec<u8>,
    /// The value the key must hold, or `None` for a key that must be absent.
    pub value: Option<Vec<u8>>,
}

impl Expect {
    /// `key` (a text key as its UTF-8 bytes, or bytes) must hold `value`.
    #[must_use]
    pub fn value(key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) -> Self {
        Self {
            key: key.into(),
            value: Some(value.into()),
        }
    }

    /// `key` must be absent.
    #[must_use]
    pub fn absent(key: impl Into<Vec<u8>>) -> Self {
        Self {
            key: key.into(),
            value: None,
        }
    }

    /// Whether a key that holds `found` (`None`: absent) meets the expectation: the one test
    /// every store's conditional write makes.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::store::Expect;
    ///
    /// assert!(Expect::absent("a").holds(None));
    /// assert!(!Expect::absent("a").holds(Some(b"")));
    /// assert!(Expect::value("a", b"1".to_vec()).holds(Some(b"1")));
    /// assert!(!Expect::value("a", b"1".to_vec()).holds(None));
    /// ```
    #[must_use]
    pub fn holds(&self, found: Option<&[u8]>) -> bool {
        self.value.as_deref() == found
    }
}

/// A conditional write ([`RangeStore::write_if`]): `ops` applied, in order and all together,
/// only if every key of `expect` holds what it expects at that moment; else nothing is written.
/// With no expectation it is an atomic batch; with no op, an atomic check of several keys.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CondWrite {
    /// What the keys must hold.
    pub expect: Vec<Expect>,
    /// The writes, applied only if every expectation holds.
    pub ops: Vec<WriteOp>,
}

/// What kind of failure a [`StoreError`] is, which decides whether a retry can help.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StoreErrorKind {
    /// The store is busy (throttled, a partition over its throughput): retry later, with backoff.
    Busy,
    /// The store could not be reached or timed out: retry later, with backoff.
    Unavailable,
    /// The request is invalid (a key or value over the store's limits, a malformed query):
    /// retrying cannot help.
    Invalid,
    /// Anything else the store reports; not retried.
    Other,
}

/// A store's refusal, with its kind and the store's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError {
    kind: StoreErrorKind,
    message: String,
}

impl StoreError {
    /// An error of `kind` with the store's `message`.
    #[must_use]
    pub fn new(kind: StoreErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// What kind of failure this is.
    #[must_use]
    pub const fn kind(&self) -> StoreErrorKind {
        self.kind
    }

    /// The store's message.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether retrying the same request later can succeed ([`StoreErrorKind::Busy`] and
    /// [`StoreErrorKind::Unavailable`]).
    #[must_use]
    pub const fn is_retryable(&self) -> bool {
        matches!(
            self.kind,
            StoreErrorKind::Busy | StoreErrorKind::Unavailable
        )
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            StoreErrorKind::Busy => "store busy",
            StoreErrorKind::Unavailable => "store unavailable",
            StoreErrorKind::Invalid => "invalid request",
            StoreErrorKind::Other => "store error",
        };
        write!(f, "{kind}: {}", self.message)
    }
}

impl std::error::Error for StoreError {}

/// What one request met on its way to an answer beyond the request itself: the times it moved
/// from one endpoint (node, replica) of the store to another, and the times an endpoint timed
/// out. Reported by [`RangeStore::batch_write_with_faults`] (a store with one endpoint reports
/// none) and shown by a [`BulkWriter`] per row ([`RowOutcome::faults`]) and in its
/// [`BulkStats`].
///
/// # Examples
///
/// ```
/// use pk_codec::store::Faults;
///
/// let mut row = Faults::default();
/// let mut request = Faults::default();
/// request.failovers = 1;
/// request.timeouts = 1;
/// row.add(request);
/// row.add(request);
/// assert_eq!((row.failovers, row.timeouts), (2, 2));
/// assert!(!Faults::default().any());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Faults {
    /// Moves of the request from one endpoint to another.
    pub failovers: u32,
    /// Tries of an endpoint that timed out (the client's timeouts, or the store's own).
    pub timeouts: u32,
}

impl Faults {
    /// Adds `other`'s counts to these (saturating).
    pub const fn add(&mut self, other: Self) {
        self.failovers = self.failovers.saturating_add(other.failovers);
        self.timeouts = self.timeouts.saturating_add(other.timeouts);
    }

    /// Whether any failover or timeout was met.
    #[must_use]
    pub const fn any(&self) -> bool {
        self.failovers > 0 || self.timeouts > 0
    }
}

/// How a store likes to be written ([`RangeStore::write_profile`]): what a [`BulkWriter`] uses
/// for each of its [`BulkOptions`] left unset. [`BulkOptions::profile_for`] tells what a writer
/// will use.
///
/// The default is tuned for a store served by many partitions over a network, where requests
/// wait on round trips and writers in parallel overlap them (Tablestore, whose batches hold at
/// most 200 rows and 4 MB; etcd; the table model): 4 workers, 200-row batches of at most 4 MB.
/// An embedded store that takes one write transaction at a time, syncing each, is written
/// fastest by one worker in large batches (redb: BENCHMARKS.md, "Bulk writes into redb").
///
/// # Examples
///
/// ```
/// use pk_codec::store::WriteProfile;
///
/// // A store that takes one writer at a time and likes batches of 10,000 rows.
/// let profile = WriteProfile::default().workers(1).max_batch_rows(10_000);
/// assert_eq!((profile.workers, profile.max_batch_rows), (1, 10_000));
/// assert_eq!(profile.max_batch_bytes, 4 << 20);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteProfile {
    /// Writers at once that help: more overlap more requests (a network store's round trips);
    /// 1 for a store that runs one write at a time, where a second writer only waits.
    pub workers: usize,
    /// Rows a batch holds (at most the store's [`max_batch`](RangeStore::max_batch)).
    pub max_batch_rows: usize,
    /// Bytes (keys and values) a batch holds.
    pub max_batch_bytes: usize,
}

impl Default for WriteProfile {
    /// A network store's: 4 workers, 200-row batches of at most 4 MB (Tablestore's limits).
    fn default() -> Self {
        Self {
            workers: 4,
            max_batch_rows: 200,
            max_batch_bytes: 4 << 20,
        }
    }
}

impl WriteProfile {
    /// The same profile with `workers` writers.
    #[must_use]
    pub const fn workers(mut self, workers: usize) -> Self {
        self.workers = workers;
        self
    }

    /// The same profile with batches of `rows` rows.
    #[must_use]
    pub const fn max_batch_rows(mut self, rows: usize) -> Self {
        self.max_batch_rows = rows;
        self
    }

    /// The same profile with batches of at most `bytes` bytes.
    #[must_use]
    pub const fn max_batch_bytes(mut self, bytes: usize) -> Self {
        self.max_batch_bytes = bytes;
        self
    }
}

/// A sorted key-value store that reads key ranges: what codec keys are written into.
///
/// Keys are bytes, compared bytewise: a binary layout's keys as they are, a text key as its
/// UTF-8 bytes (which sort as the text does). Every method takes `&self` and the store is `Send + Sync`, so
/// readers and writers share it across threads (the scatter-gather reads of bucketed keys read
/// every bucket in parallel).
pub trait RangeStore: Send + Sync {
    /// The most rows one range read returns, whatever its limit (Tablestore's 5,000; etcd has no
    /// limit of its own). At least 1: [`scan_ranges`] refuses a store that answers 0 with a
    /// [`StoreErrorKind::Invalid`] error.
    fn max_page(&self) -> usize {
        usize::MAX
    }

    /// The most rows one batch may hold (Tablestore's 200): a hard limit, past which the store
    /// refuses a batch. How many rows it *likes* in a batch is its
    /// [`write_profile`](RangeStore::write_profile).
    fn max_batch(&self) -> usize {
        usize::MAX
    }

    /// How the store likes to be written: the workers, batch rows and batch bytes a
    /// [`BulkWriter`] uses when its [`BulkOptions`] leave them unset. The default,
    /// [`WriteProfile::default`], suits a store served by many partitions over a network
    /// (Tablestore, etcd, the table model): 4 workers, 200-row batches. A store that takes one
    /// write transaction at a time and syncs each (redb) answers one worker and large batches.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::store::{MemoryStore, RangeStore, WriteProfile};
    ///
    /// assert_eq!(MemoryStore::default().write_profile(), WriteProfile::default());
    /// assert_eq!(WriteProfile::default().workers, 4);
    /// ```
    fn write_profile(&self) -> WriteProfile {
        WriteProfile::default()
    }

    /// Whether a read waits on I/O (a network round trip, a disk), so that reading several
    /// ranges at once overlaps the waits: [`scan_ranges`] then gives each range a reader thread
    /// (at most 64 threads; the merging thread reads the ranges past them).
    /// In-process stores whose reads are CPU work answer `false`, and their ranges are read by
    /// the merging thread itself: there, reader threads add hand-offs and compete for the cores
    /// with the merge. The default is `true`; [`ReaderThreads`] makes any store answer `true`.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::store::{MemoryStore, RangeStore};
    ///
    /// assert!(!MemoryStore::default().reads_wait_on_io());
    /// ```
    fn reads_wait_on_io(&self) -> bool {
        true
    }

    /// Writes `value` at `key`.
    ///
    /// # Errors
    ///
    /// The store's refusal.
    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError>;

    /// The value at `key`, if any.
    ///
    /// # Errors
    ///
    /// The store's refusal.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError>;

    /// Deletes `key`; whether it was there.
    ///
    /// # Errors
    ///
    /// The store's refusal.
    fn delete(&self, key: &[u8]) -> Result<bool, StoreError>;

    /// Applies the writes, each on its own: one result per write, in order. The outer error is
    /// for a batch refused as a whole (over the store's limits, the store unreachable).
    ///
    /// The default applies them one by one.
    ///
    /// # Errors
    ///
    /// A refusal of the whole batch.
    fn batch_write(&self, ops: &[WriteOp]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        Ok(ops
            .iter()
            .map(|op| match op {
                WriteOp::Put { key, value } => self.put(key, value),
                WriteOp::Delete { key } => self.delete(key).map(drop),
            })
            .collect())
    }

    /// [`RangeStore::batch_write`], adding to `faults` what the request met on its way: the
    /// endpoints it moved past and the timeouts it waited out, whether it succeeded or not.
    /// What a [`BulkWriter`] writes with, so that its rows and stats show the faults. A store
    /// that moves between endpoints (`EtcdStore`) implements it, and its `batch_write` calls it;
    /// a wrapper around a store forwards it. The default calls `batch_write` and adds nothing.
    ///
    /// # Errors
    ///
    /// As [`RangeStore::batch_write`].
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::store::{Faults, MemoryStore, RangeStore, WriteOp};
    ///
    /// let store = MemoryStore::default();
    /// let mut faults = Faults::default();
    /// let results = store.batch_write_with_faults(&[WriteOp::put("a", b"1")], &mut faults)?;
    /// assert_eq!(results, vec![Ok(())]);
    /// assert!(!faults.any());
    /// # Ok::<(), pk_codec::store::StoreError>(())
    /// ```
    fn batch_write_with_faults(
        &self,
        ops: &[WriteOp],
        faults: &mut Faults,
    ) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        let _ = faults;
        self.batch_write(ops)
    }

    /// One page of a range read.
    ///
    /// # Errors
    ///
    /// The store's refusal; [`StoreErrorKind::Invalid`] for a limit of 0.
    fn range(&self, query: &RangeQuery<'_>) -> Result<RangePage, StoreError>;

    /// Applies `write` atomically if its expectations hold: `Ok(true)` when every key held what
    /// it expected and every op was applied, `Ok(false)` when one did not and nothing was
    /// written. Atomic against the store's other writes: no write lands between the check and
    /// the ops, and no reader sees some ops without the others. What [`RekeyJob`] builds on
    /// (a copy that never overwrites a newer value, writes of two layouts that land together).
    ///
    /// [`MemoryStore`], redb (`RedbStore`, one transaction), etcd (`EtcdStore`, one
    /// transaction with compares) and the table model implement it (the table model atomically
    /// only against its other conditional writes: its plain writes take partition locks one
    /// by one). The default refuses, as a store without transactions must.
    ///
    /// # Errors
    ///
    /// The store's refusal; by default [`StoreErrorKind::Invalid`]: the store offers no
    /// conditional writes.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::store::{CondWrite, Expect, MemoryStore, RangeStore, WriteOp};
    ///
    /// let store = MemoryStore::default();
    /// store.put(b"old", b"1")?;
    /// // Copy "old" to "new" only if "old" still holds 1 and "new" is absent.
    /// let copy = CondWrite {
    ///     expect: vec![Expect::value("old", b"1"), Expect::absent("new")],
    ///     ops: vec![WriteOp::put("new", b"1")],
    /// };
    /// assert!(store.write_if(&copy)?);
    /// // "new" is there now: the same copy writes nothing.
    /// assert!(!store.write_if(&copy)?);
    /// # Ok::<(), pk_codec::store::StoreError>(())
    /// ```
    fn write_if(&self, write: &CondWrite) -> Result<bool, StoreError> {
        let _ = write;
        Err(StoreError::new(
            StoreErrorKind::Invalid,
            "this store offers no conditional writes (RangeStore::write_if)",
        ))
    }

    /// Applies each conditional write on its own, as [`RangeStore::write_if`] does: one result
    /// per write, in order. A store may apply them in one request or transaction; the default
    /// calls `write_if` for each.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::store::{CondWrite, Expect, MemoryStore, RangeStore, WriteOp};
    ///
    /// let store = MemoryStore::default();
    /// let create = |key: &str| CondWrite {
    ///     expect: vec![Expect::absent(key)],
    ///     ops: vec![WriteOp::put(key, b"1")],
    /// };
    /// store.put(b"b", b"0")?;
    /// let results = store.batch_write_if(&[create("a"), create("b")])?;
    /// assert_eq!(results, vec![Ok(true), Ok(false)]);
    /// assert_eq!(store.get(b"b")?, Some(b"0".to_vec()));
    /// # Ok::<(), pk_codec::store::StoreError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// A refusal of the whole batch.
    fn batch_write_if(
        &self,
        writes: &[CondWrite],
    ) -> Result<Vec<Result<bool, StoreError>>, StoreError> {
        Ok(writes.iter().map(|w| self.write_if(w)).collect())
    }
}
