//! [`RocksStore`]: keys in a [RocksDB](https://rocksdb.org) database, through the `rocksdb`
//! crate over the system's librocksdb (feature `rocksdb`). The worked example of
//! [`conformance`](super::conformance)'s walk-through: each method's comment says which promise
//! it keeps and how.

use std::path::Path;

use rocksdb::{
    ErrorKind, OptimisticTransactionDB, Options, SingleThreaded, WriteBatchWithTransaction,
    WriteOptions,
};

use super::{
    CondWrite, Direction, RangePage, RangeQuery, RangeStore, StoreError, StoreErrorKind, WriteOp,
    WriteProfile,
};

/// How many times a conditional write (or a delete, which reads its key) is tried again when a
/// concurrent write touched one of its keys between its reads and its commit, before the store
/// answers [`StoreErrorKind::Busy`].
const CONFLICT_RETRIES: usize = 1000;

/// RocksDB's error as a store error: a conflict or a full write queue is `Busy` (retry), an
/// I/O error `Unavailable`, a bad argument `Invalid`, the rest `Other`.
fn error(e: &rocksdb::Error) -> StoreError {
    let kind = match e.kind() {
        ErrorKind::Busy | ErrorKind::TryAgain | ErrorKind::TimedOut => StoreErrorKind::Busy,
        ErrorKind::IOError | ErrorKind::ShutdownInProgress => StoreErrorKind::Unavailable,
        ErrorKind::InvalidArgument => StoreErrorKind::Invalid,
        _ => StoreErrorKind::Other,
    };
    StoreError::new(kind, format!("rocksdb: {e}"))
}

/// Whether a commit failed because another write touched a key the transaction read.
fn conflict(e: &rocksdb::Error) -> bool {
    matches!(e.kind(), ErrorKind::Busy | ErrorKind::TryAgain)
}

/// A RocksDB database as a [`RangeStore`]: keys in RocksDB's default bytewise order, batches as
/// one `WriteBatch` (all rows or none), conditional writes as optimistic transactions.
///
/// Writes are synced by default (`WriteOptions::set_sync`): a row a call (or a
/// [`BulkWriter`](super::BulkWriter) report) acknowledged survives the machine losing power, as
/// with redb. [`RocksStore::sync_writes`] turns that off (the write-ahead log is still written,
/// so a row survives the process being killed).
///
/// # Examples
///
/// ```
/// use pk_codec::store::{RangeQuery, RangeStore, RocksStore};
///
/// let dir = std::env::temp_dir().join(format!("pk-codec-doc-rocks-{}", std::process::id()));
/// let store = RocksStore::open(&dir)?;
/// store.put(b"000054,a100", b"card")?;
/// store.put(&[0xff, 0x00], b"binary")?;
/// let page = store.range(&RangeQuery::new("000054", Some("000055")))?;
/// assert_eq!(page.rows, vec![(b"000054,a100".to_vec(), b"card".to_vec())]);
/// # drop(store);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// The adapter's conformance, as its tests run it (the walk-through in
/// [`conformance`](super::conformance)): a fresh directory per check.
///
/// ```
/// use pk_codec::store::RocksStore;
/// use pk_codec::store::conformance::Suite;
///
/// let dir = std::env::temp_dir().join(format!("pk-codec-doc-rocks-suite-{}", std::process::id()));
/// let mut n = 0;
/// Suite::new(|| {
///     n += 1;
///     RocksStore::open(dir.join(n.to_string()))
/// })
/// .cases(4)
/// .require_conditional_writes(true)
/// .assert_conforms();
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RocksStore {
    db: OptimisticTransactionDB<SingleThreaded>,
    sync: bool,
}

impl std::fmt::Debug for RocksStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RocksStore")
            .field("path", &self.db.path())
            .field("sync", &self.sync)
            .finish_non_exhaustive()
    }
}

impl RocksStore {
    /// Opens the database at `path` (a directory), creating it if needed.
    ///
    /// # Errors
    ///
    /// The store's refusal with RocksDB's message (a directory another process holds open is
    /// [`StoreErrorKind::Unavailable`]).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let mut options = Options::default();
        options.create_if_missing(true);
        Self::open_with(&options, path)
    }

    /// Opens the database at `path` with RocksDB's own `options` (its caches, compression,
    /// write buffers). The store keeps RocksDB's default comparator, which orders keys bytewise
    /// as [`RangeStore`] promises; `options` must not set another.
    ///
    /// # Errors
    ///
    /// As [`RocksStore::open`].
    pub fn open_with(options: &Options, path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let db = OptimisticTransactionDB::open(options, path).map_err(|e| error(&e))?;
        Ok(Self { db, sync: true })
    }

    /// The same store syncing each write to disk before acknowledging it (the default), or not.
    #[must_use]
    pub const fn sync_writes(mut self, sync: bool) -> Self {
        self.sync = sync;
        self
    }

    /// The database, for what the store does not offer (column families, snapshots,
    /// compaction).
    #[must_use]
    pub const fn db(&self) -> &OptimisticTransactionDB<SingleThreaded> {
        &self.db
    }

    fn write_options(&self) -> WriteOptions {
        let mut w = WriteOptions::default();
        w.set_sync(self.sync);
        w
    }

    /// Runs `attempt` in an optimistic transaction, again while its commit finds a conflict.
    fn transaction<T>(
        &self,
        mut attempt: impl FnMut(
            &rocksdb::Transaction<'_, OptimisticTransactionDB<SingleThreaded>>,
        ) -> Result<T, rocksdb::Error>,
    ) -> Result<T, StoreError> {
        let write = self.write_options();
        let options = rocksdb::OptimisticTransactionOptions::default();
        let mut last = None;
        for _ in 0..CONFLICT_RETRIES {
            let tx = self.db.transaction_opt(&write, &options);
            let done = attempt(&tx).and_then(|t| tx.commit().map(|()| t));
            match done {
                Ok(t) => return Ok(t),
                Err(e) if conflict(&e) => last = Some(e),
                Err(e) => return Err(error(&e)),
            }
        }
        Err(last.map_or_else(
            || StoreError::new(StoreErrorKind::Busy, "rocksdb: no attempt made"),
            |e| error(&e),
        ))
    }
}

impl RangeStore for RocksStore {
    /// An embedded database whose blocks are cached in this process: a read is mostly CPU
    /// work, done by the merging thread, as with redb.
    fn reads_wait_on_io(&self) -> bool {
        false
    }

    /// One worker, batches of 10,000 rows or 16 MB: each batch is one synced `WriteBatch`, and
    /// RocksDB applies one write group at a time, so a second worker mostly waits for the
    /// first; one worker writing while the caller fills the next batch was the fastest way in,
    /// ahead of every plain loop of batches (BENCHMARKS.md, "Bulk writes into RocksDB").
    fn write_profile(&self) -> WriteProfile {
        WriteProfile::default()
            .workers(1)
            .max_batch_rows(10_000)
            .max_batch_bytes(16 << 20)
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.db
            .put_opt(key, value, &self.write_options())
            .map_err(|e| error(&e))
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.db.get(key).map_err(|e| error(&e))
    }

    /// RocksDB's delete does not say whether the key was there: the key is read and deleted in
    /// one transaction, so the answer is the state the delete removed.
    fn delete(&self, key: &[u8]) -> Result<bool, StoreError> {
        self.transaction(|tx| {
            let existed = tx.get_for_update(key, true)?.is_some();
            if existed {
                tx.delete(key)?;
            }
            Ok(existed)
        })
    }

    /// One `WriteBatch`: every row written or none, so one result for all.
    fn batch_write(&self, ops: &[WriteOp]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        let mut batch = WriteBatchWithTransaction::<true>::default();
        for op in ops {
            match op {
                WriteOp::Put { key, value } => batch.put(key, value),
                WriteOp::Delete { key } => batch.delete(key),
            }
        }
        self.db
            .write_opt(batch, &self.write_options())
            .map_err(|e| error(&e))?;
        Ok(ops.iter().map(|_| Ok(())).collect())
    }

    /// An optimistic transaction: each expected key read for update (with [`Expect::holds`]),
    /// the ops written, and the commit refused if another write touched a key read since;
    /// then it is tried again from the reads, so the answer is always about the state the ops
    /// landed on.
    ///
    /// [`Expect::holds`]: super::Expect::holds
    fn write_if(&self, write: &CondWrite) -> Result<bool, StoreError> {
        self.transaction(|tx| {
            for e in &write.expect {
                if !e.holds(tx.get_for_update(&e.key, true)?.as_deref()) {
                    return Ok(false);
                }
            }
            for op in &write.ops {
                match op {
                    WriteOp::Put { key, value } => tx.put(key, value)?,
                    WriteOp::Delete { key } => tx.delete(key)?,
                }
            }
            Ok(true)
        })
    }

    /// Seeks to the start of what [`RangeQuery::remaining`] leaves (its bottom forward, its top
    /// backward), takes up to `limit` rows and looks at one more for the resume key.
    fn range(&self, query: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
        if query.limit == 0 {
            return Err(StoreError::new(
                StoreErrorKind::Invalid,
                "a range read needs a limit of at least 1",
            ));
        }
        let (from, to, to_inclusive) = query.remaining();
        let inside = |k: &[u8]| k >= from && to.is_none_or(|t| k < t || (to_inclusive && k == t));
        let mut it = self.db.raw_iterator();
        match (query.direction, to) {
            (Direction::Forward, _) => it.seek(from),
            (Direction::Backward, None) => it.seek_to_last(),
            (Direction::Backward, Some(t)) => {
                // The last key at or below `t`; an exclusive top steps below it.
                it.seek_for_prev(t);
                if !to_inclusive && it.key() == Some(t) {
                    it.prev();
                }
            }
        }
        let mut rows = Vec::new();
        let mut next = None;
        while let (Some(k), Some(v)) = (it.key(), it.value()) {
            if !inside(k) {
                break;
            }
            if rows.len() == query.limit {
                next = Some(k.to_vec());
                break;
            }
            rows.push((k.to_vec(), v.to_vec()));
            match query.direction {
                Direction::Forward => it.next(),
                Direction::Backward => it.prev(),
            }
        }
        it.status().map_err(|e| error(&e))?;
        Ok(RangePage { rows, next })
    }
}
