//! [`RedbStore`]: keys in a [redb](https://docs.rs/redb) database file, the embedded default.

use std::path::Path;

use redb::{Database, TableDefinition};

use super::{
    Direction, RangePage, RangeQuery, RangeStore, StoreError, StoreErrorKind, WriteOp, WriteProfile,
};

const ROWS: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("pk_codec_rows");

fn other(e: impl std::fmt::Display) -> StoreError {
    StoreError::new(StoreErrorKind::Other, format!("redb: {e}"))
}

/// A [`RangeStore`] in a redb database file: one table of `key -> value`, keys in bytewise
/// order, each write its own transaction, a batch in one transaction.
///
/// # Examples
///
/// ```
/// use pk_codec::store::{RangeQuery, RangeStore, RedbStore};
///
/// let dir = std::env::temp_dir().join(format!("pk-codec-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let store = RedbStore::create(dir.join("keys.redb"))?;
/// store.put("000054,a100", b"card")?;
/// let page = store.range(&RangeQuery::new("000054", Some("000055")))?;
/// assert_eq!(page.rows, vec![("000054,a100".to_owned(), b"card".to_vec())]);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RedbStore {
    db: Database,
}

impl std::fmt::Debug for RedbStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedbStore").finish_non_exhaustive()
    }
}

impl RedbStore {
    /// Opens the database at `path`, creating it if needed.
    ///
    /// # Errors
    ///
    /// [`StoreErrorKind::Other`] with redb's message when the file cannot be opened or created.
    pub fn create(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let db = Database::create(path).map_err(other)?;
        let tx = db.begin_write().map_err(other)?;
        tx.open_table(ROWS).map_err(other)?;
        tx.commit().map_err(other)?;
        Ok(Self { db })
    }
}

impl RedbStore {
    /// A database held in memory (redb's in-memory backend): the same engine without a file,
    /// for tests.
    ///
    /// # Errors
    ///
    /// [`StoreErrorKind::Other`] with redb's message.
    pub fn in_memory() -> Result<Self, StoreError> {
        let db = Database::builder()
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .map_err(other)?;
        let tx = db.begin_write().map_err(other)?;
        tx.open_table(ROWS).map_err(other)?;
        tx.commit().map_err(other)?;
        Ok(Self { db })
    }
}

impl RangeStore for RedbStore {
    /// An embedded database whose pages are cached in this process: a read of cached pages is
    /// CPU work, done by the merging thread (measured in BENCHMARKS.md, "Bucket merge").
    fn reads_wait_on_io(&self) -> bool {
        false
    }

    /// One worker, batches of 50,000 rows or 16 MB: redb runs one write transaction at a time
    /// (a second worker only waits for the first), and each commit syncs the file, which costs
    /// about the same whatever the batch holds, so fewer, larger batches write faster
    /// (BENCHMARKS.md, "Bulk writes into redb"). The bytes bound what waits in memory: about
    /// three batches (one being written, one queued, one being filled).
    fn write_profile(&self) -> WriteProfile {
        WriteProfile::default()
            .workers(1)
            .max_batch_rows(50_000)
            .max_batch_bytes(16 << 20)
    }

    fn put(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.batch_write(&[WriteOp::Put {
            key: key.to_owned(),
            value: value.to_vec(),
        }])?
        .remove(0)
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let tx = self.db.begin_read().map_err(other)?;
        let table = tx.open_table(ROWS).map_err(other)?;
        Ok(table.get(key).map_err(other)?.map(|v| v.value().to_vec()))
    }

    fn delete(&self, key: &str) -> Result<bool, StoreError> {
        let tx = self.db.begin_write().map_err(other)?;
        let existed = {
            let mut table = tx.open_table(ROWS).map_err(other)?;
            table.remove(key).map_err(other)?.is_some()
        };
        tx.commit().map_err(other)?;
        Ok(existed)
    }

    fn batch_write(&self, ops: &[WriteOp]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        let tx = self.db.begin_write().map_err(other)?;
        {
            let mut table = tx.open_table(ROWS).map_err(other)?;
            for op in ops {
                match op {
                    WriteOp::Put { key, value } => {
                        table
                            .insert(key.as_str(), value.as_slice())
                            .map_err(other)?;
                    }
                    WriteOp::Delete { key } => {
                        table.remove(key.as_str()).map_err(other)?;
                    }
                }
            }
        }
        tx.commit().map_err(other)?;
        Ok(ops.iter().map(|_| Ok(())).collect())
    }

    fn range(&self, query: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
        if query.limit == 0 {
            return Err(StoreError::new(
                StoreErrorKind::Invalid,
                "a range read needs a limit of at least 1",
            ));
        }
        let (from, to, to_inclusive) = query.remaining();
        let empty = match to {
            Some(t) if to_inclusive => t < from,
            Some(t) => t <= from,
            None => false,
        };
        if empty {
            return Ok(RangePage::default());
        }
        let tx = self.db.begin_read().map_err(other)?;
        let table = tx.open_table(ROWS).map_err(other)?;
        let range = match (to, to_inclusive) {
            (Some(t), true) => table.range::<&str>(from..=t),
            (Some(t), false) => table.range::<&str>(from..t),
            (None, _) => table.range::<&str>(from..),
        }
        .map_err(other)?;
        let mut rows = Vec::new();
        let mut next = None;
        let mut take = |entry: Result<
            (redb::AccessGuard<'_, &str>, redb::AccessGuard<'_, &[u8]>),
            redb::StorageError,
        >| {
            let (k, v) = entry.map_err(other)?;
            if rows.len() == query.limit {
                next = Some(k.value().to_owned());
                return Ok::<bool, StoreError>(false);
            }
            rows.push((k.value().to_owned(), v.value().to_vec()));
            Ok(true)
        };
        match query.direction {
            Direction::Forward => {
                for entry in range {
                    if !take(entry)? {
                        break;
                    }
                }
            }
            Direction::Backward => {
                for entry in range.rev() {
                    if !take(entry)? {
                        break;
                    }
                }
            }
        }
        Ok(RangePage { rows, next })
    }
}
