//! [`RedbStore`]: keys in a [redb](https://docs.rs/redb) database file, the embedded default;
//! [`RedbDatabase`]: one file holding several named tables, each its own [`RedbStore`].

use std::path::Path;
use std::sync::Arc;

use redb::{Database, ReadableTable, TableDefinition, TableError, TableHandle};

use super::{
    CondWrite, Direction, RangePage, RangeQuery, RangeStore, StoreError, StoreErrorKind, WriteOp,
    WriteProfile,
};

fn other(e: impl std::fmt::Display) -> StoreError {
    StoreError::new(StoreErrorKind::Other, format!("redb: {e}"))
}

/// A redb database file (or an in-memory database) holding named tables, each a [`RangeStore`]
/// of its own: independent key spaces in one file, as an app with a main table, a newest-first
/// copy and an index, or a table per period, needs. The tables share the file's one writer
/// (redb runs one write transaction at a time), so writes to two tables take turns; reads never
/// wait.
///
/// redb opens a file once per process: open it here once and hand its tables out.
///
/// # Examples
///
/// ```
/// use pk_codec::store::{RangeQuery, RangeStore, RedbDatabase};
///
/// let dir = std::env::temp_dir().join(format!("pk-codec-doc-tables-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let db = RedbDatabase::create(dir.join("iot.redb"))?;
/// let readings = db.table("readings")?;
/// let newest_first = db.table("readings_newest_first")?;
/// readings.put(b"07,000054,1700000000000", b"21.5")?;
/// newest_first.put(b"07,000054,8299999999999", b"21.5")?;
/// // Each table is its own key space.
/// assert_eq!(readings.range(&RangeQuery::new("", None))?.rows.len(), 1);
/// assert_eq!(readings.get(b"07,000054,8299999999999")?, None);
/// assert_eq!(db.table_names()?, ["readings", "readings_newest_first"]);
/// # drop((readings, newest_first, db));
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct RedbDatabase {
    db: Arc<Database>,
}

impl std::fmt::Debug for RedbDatabase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedbDatabase").finish_non_exhaustive()
    }
}

impl RedbDatabase {
    /// Opens the database file at `path`, creating it if needed. Its tables are opened with
    /// [`RedbDatabase::table`].
    ///
    /// # Errors
    ///
    /// [`StoreErrorKind::Other`] with redb's message when the file cannot be opened or created
    /// (among other reasons, when this process has it open already).
    pub fn create(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Ok(Self {
            db: Arc::new(Database::create(path).map_err(other)?),
        })
    }

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
        Ok(Self { db: Arc::new(db) })
    }

    /// The table `name`, created if the file does not hold it yet: a [`RangeStore`] over its own
    /// keys, independent of the file's other tables. Opening a name twice gives two handles on
    /// the same table.
    ///
    /// # Errors
    ///
    /// [`StoreErrorKind::Invalid`] for an empty name, and for a name the file already uses for
    /// a table that is not a key-value table of byte keys and byte values (another program's
    /// table, or a multimap table): the message names the table and what it holds.
    /// [`StoreErrorKind::Other`] with redb's message when the file cannot be written.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::store::{RedbDatabase, StoreErrorKind};
    ///
    /// let db = RedbDatabase::in_memory()?;
    /// let hot = db.table("readings_2026_11")?;
    /// let err = db.table("").unwrap_err();
    /// assert_eq!(err.kind(), StoreErrorKind::Invalid);
    /// assert_eq!(err.message(), "redb: a table needs a name (an empty name is no table)");
    /// # Ok::<(), pk_codec::store::StoreError>(())
    /// ```
    pub fn table(&self, name: &str) -> Result<RedbStore, StoreError> {
        if name.is_empty() {
            return Err(StoreError::new(
                StoreErrorKind::Invalid,
                "redb: a table needs a name (an empty name is no table)",
            ));
        }
        let tx = begin_write(&self.db)?;
        tx.open_table(definition(name))
            .map_err(|e| table_error(name, e))?;
        tx.commit().map_err(other)?;
        Ok(RedbStore {
            db: Arc::clone(&self.db),
            table: name.into(),
        })
    }

    /// The names of the file's tables, in order: those [`RedbDatabase::table`] made, and any
    /// other key-value table the file holds.
    ///
    /// # Errors
    ///
    /// [`StoreErrorKind::Other`] with redb's message.
    pub fn table_names(&self) -> Result<Vec<String>, StoreError> {
        let tx = self.db.begin_read().map_err(other)?;
        let mut names: Vec<String> = tx
            .list_tables()
            .map_err(other)?
            .map(|t| t.name().to_owned())
            .collect();
        names.sort_unstable();
        Ok(names)
    }
}

/// A write transaction that commits durably: redb's `Durability::Immediate`, its default,
/// set here so that the promise does not rest on a default: the file is synced before
/// `commit` returns, so a row a [`RangeStore`] call (and a [`BulkWriter`](super::BulkWriter)
/// report) acknowledged survives the process being killed, and the machine losing power.
/// `tests/it/rekey.rs` kills a child process (SIGKILL) in the middle of an import and of a
/// re-keying backfill and finds every reported row in the file.
fn begin_write(db: &Database) -> Result<redb::WriteTransaction, StoreError> {
    let mut tx = db.begin_write().map_err(other)?;
    tx.set_durability(redb::Durability::Immediate);
    Ok(tx)
}

/// One row of a redb range read: its key and value, or redb's error.
type Entry<'a> = Result<
    (
        redb::AccessGuard<'a, &'static [u8]>,
        redb::AccessGuard<'a, &'static [u8]>,
    ),
    redb::StorageError,
>;

/// Applies `ops` to `table`, in order, within its transaction.
fn apply(
    table: &mut redb::Table<'_, &'static [u8], &'static [u8]>,
    ops: &[WriteOp],
) -> Result<(), StoreError> {
    for op in ops {
        match op {
            WriteOp::Put { key, value } => {
                table
                    .insert(key.as_slice(), value.as_slice())
                    .map_err(other)?;
            }
            WriteOp::Delete { key } => {
                table.remove(key.as_slice()).map_err(other)?;
            }
        }
    }
    Ok(())
}

/// The definition of table `name`: byte keys (redb orders `&[u8]` bytewise), byte values.
/// redb's own constructor panics on an empty name, which [`RedbDatabase::table`] refuses before
/// it gets here.
fn definition(name: &str) -> TableDefinition<'_, &'static [u8], &'static [u8]> {
    TableDefinition::new(name)
}

/// A table that could not be opened: one of another type is [`StoreErrorKind::Invalid`] and
/// names the table; anything else is redb's.
#[cold]
fn table_error(name: &str, e: TableError) -> StoreError {
    match e {
        TableError::TableTypeMismatch { .. } | TableError::TableIsMultimap(_) => StoreError::new(
            StoreErrorKind::Invalid,
            format!(
                "redb: the file's table {name:?} is not a pk-codec table of byte keys and byte \
                 values (redb: {e}); choose another name"
            ),
        ),
        e => other(e),
    }
}

/// A [`RangeStore`] in a redb database file: one table of `key -> value`, keys in bytewise
/// order, each write its own transaction, a batch in one transaction.
///
/// [`RedbStore::create`] opens a file with one table ([`RedbStore::DEFAULT_TABLE`]); a file
/// with several tables, each a store, is a [`RedbDatabase`].
///
/// Each transaction commits durably (redb's `Durability::Immediate`, set on every write
/// transaction: the file is synced before the commit returns, so an acknowledged write survives
/// a killed process), so a batch costs about one sync whatever its size: written through a
/// [`BulkWriter`](super::BulkWriter), rows go in large batches from one worker
/// ([`RangeStore::write_profile`]).
///
/// # Examples
///
/// ```
/// use pk_codec::store::{RangeQuery, RangeStore, RedbStore};
///
/// let dir = std::env::temp_dir().join(format!("pk-codec-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let store = RedbStore::create(dir.join("keys.redb"))?;
/// store.put(b"000054,a100", b"card")?;
/// let page = store.range(&RangeQuery::new("000054", Some("000055")))?;
/// assert_eq!(page.rows, vec![(b"000054,a100".to_vec(), b"card".to_vec())]);
/// # drop(store);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RedbStore {
    db: Arc<Database>,
    table: Box<str>,
}

impl std::fmt::Debug for RedbStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedbStore")
            .field("table", &self.table)
            .finish_non_exhaustive()
    }
}

impl RedbStore {
    /// The table [`RedbStore::create`] and [`RedbStore::in_memory`] open.
    pub const DEFAULT_TABLE: &'static str = "pk_codec_rows";

    /// Opens the database at `path`, creating it if needed, and its table
    /// [`RedbStore::DEFAULT_TABLE`].
    ///
    /// # Errors
    ///
    /// [`StoreErrorKind::Other`] with redb's message when the file cannot be opened or created.
    pub fn create(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        RedbDatabase::create(path)?.table(Self::DEFAULT_TABLE)
    }

    /// A database held in memory (redb's in-memory backend): the same engine without a file,
    /// for tests.
    ///
    /// # Errors
    ///
    /// [`StoreErrorKind::Other`] with redb's message.
    pub fn in_memory() -> Result<Self, StoreError> {
        RedbDatabase::in_memory()?.table(Self::DEFAULT_TABLE)
    }

    /// The name of the table this store reads and writes.
    #[must_use]
    pub fn table_name(&self) -> &str {
        &self.table
    }

    /// The database this table is in, to open its other tables.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::store::{RangeStore, RedbStore};
    ///
    /// let store = RedbStore::in_memory()?;
    /// let index = store.database().table("index")?;
    /// index.put(b"a", b"1")?;
    /// assert_eq!(store.get(b"a")?, None);
    /// assert_eq!(store.database().table_names()?, ["index", RedbStore::DEFAULT_TABLE]);
    /// # Ok::<(), pk_codec::store::StoreError>(())
    /// ```
    #[must_use]
    pub fn database(&self) -> RedbDatabase {
        RedbDatabase {
            db: Arc::clone(&self.db),
        }
    }

    fn rows(&self) -> TableDefinition<'_, &'static [u8], &'static [u8]> {
        definition(&self.table)
    }
}

impl RangeStore for RedbStore {
    /// An embedded database whose pages are cached in this process: a read of cached pages is
    /// CPU work, done by the merging thread (measured in BENCHMARKS.md, "Bucket merge").
    fn reads_wait_on_io(&self) -> bool {
        false
    }

    /// One worker, batches of 200,000 rows or 32 MB of keys and values: redb runs one write
    /// transaction at a time (a second worker only waits for the first), and each commit syncs
    /// the file, which costs the same whatever the batch holds: tens of milliseconds on a
    /// cloud disk, as long as inserting 10,000 small rows. A batch of 200,000 rows keeps the
    /// syncs to a few percent of an import (BENCHMARKS.md, "Bulk writes into redb"). The cost
    /// is memory: a writer holds up to three batches (one being written, one queued, one being
    /// filled); importing a million rows of 55 bytes, the process peaked 115 MB higher than with
    /// 1,000-row batches. Set [`BulkOptions::max_batch_rows`](super::BulkOptions::max_batch_rows)
    /// lower to hold less.
    fn write_profile(&self) -> WriteProfile {
        WriteProfile::default()
            .workers(1)
            .max_batch_rows(200_000)
            .max_batch_bytes(32 << 20)
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        super::put_as_batch(self, key, value)
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let tx = self.db.begin_read().map_err(other)?;
        let table = tx.open_table(self.rows()).map_err(other)?;
        Ok(table.get(key).map_err(other)?.map(|v| v.value().to_vec()))
    }

    fn delete(&self, key: &[u8]) -> Result<bool, StoreError> {
        let tx = begin_write(&self.db)?;
        let existed = {
            let mut table = tx.open_table(self.rows()).map_err(other)?;
            table.remove(key).map_err(other)?.is_some()
        };
        tx.commit().map_err(other)?;
        Ok(existed)
    }

    fn batch_write(&self, ops: &[WriteOp]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        let tx = begin_write(&self.db)?;
        {
            let mut table = tx.open_table(self.rows()).map_err(other)?;
            apply(&mut table, ops)?;
        }
        tx.commit().map_err(other)?;
        Ok(ops.iter().map(|_| Ok(())).collect())
    }

    fn write_if(&self, write: &CondWrite) -> Result<bool, StoreError> {
        self.batch_write_if(std::slice::from_ref(write))?.remove(0)
    }

    /// Every write checked and applied in one transaction (one sync): each write's checks see
    /// the writes before it.
    fn batch_write_if(
        &self,
        writes: &[CondWrite],
    ) -> Result<Vec<Result<bool, StoreError>>, StoreError> {
        let tx = begin_write(&self.db)?;
        let mut applied = Vec::with_capacity(writes.len());
        {
            let mut table = tx.open_table(self.rows()).map_err(other)?;
            for write in writes {
                let mut holds = true;
                for e in &write.expect {
                    let found = table.get(e.key.as_slice()).map_err(other)?;
                    if !e.holds(found.as_ref().map(|v| v.value())) {
                        holds = false;
                        break;
                    }
                }
                if holds {
                    apply(&mut table, &write.ops)?;
                }
                applied.push(Ok(holds));
            }
        }
        tx.commit().map_err(other)?;
        Ok(applied)
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
        let table = tx.open_table(self.rows()).map_err(other)?;
        let range = match (to, to_inclusive) {
            (Some(t), true) => table.range::<&[u8]>(from..=t),
            (Some(t), false) => table.range::<&[u8]>(from..t),
            (None, _) => table.range::<&[u8]>(from..),
        }
        .map_err(other)?;
        let mut rows = Vec::new();
        let mut next = None;
        let mut take = |entry: Entry<'_>| {
            let (k, v) = entry.map_err(other)?;
            if rows.len() == query.limit {
                next = Some(k.value().to_vec());
                return Ok::<bool, StoreError>(false);
            }
            rows.push((k.value().to_vec(), v.value().to_vec()));
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
