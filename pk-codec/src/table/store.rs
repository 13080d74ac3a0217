//! The table: a range-partitioned map of rows shared across threads, and its operations (put,
//! get, update, delete, batches, range reads). Splits and merges are in `rebalance.rs`, load
//! windows and reports in `window.rs`.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::ops::Bound::{self, Excluded, Included};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::error::TableError;
use super::load::WindowRecord;
use super::load::{Log, next_window_start};
use super::options::TableOptions;
use super::partition::{MapCopy, PartData, Partition, PartitionMap};
use super::request::{
    Direction, MAX_BATCH_BYTES, MAX_BATCH_ROWS, MAX_RANGE_BYTES, MAX_RANGE_ROWS, RangeRequest,
    RangeResult, ReplayStats, RowWrite, UpdateOp,
};
use super::row::{
    RowRef, decode_key_into, encode_key, encode_row, encode_row_with, encoded_key_size, key_bytes,
};
use super::schema::{Attribute, Cell, PkValue, PrimaryKey, Row, Schema, check_column_name};
use super::splits::{SplitKind, sampled, size_split_needed};
use super::version::{
    Clock, ManualClock, ReadOptions, StoredCells, SystemClock, VersionPolicy, normalize,
    select_cells, select_cells_with,
};

pub(super) fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(PoisonError::into_inner)
}
pub(super) fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(PoisonError::into_inner)
}
pub(super) fn lock<T>(l: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    l.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Index of the partition holding partition-key value `v` (partitions sorted, first at INF_MIN).
#[inline]
pub(super) fn index_of(map: &[Arc<Partition>], v: &PkValue) -> usize {
    map.partition_point(|p| p.lower <= *v).saturating_sub(1)
}

/// An in-memory, range-partitioned table: the reference model of a store such as Tablestore.
///
/// Every operation takes `&self`; share the table across threads with `Arc` or scoped threads.
/// Writers to different partitions do not wait for each other: the partition map sits under
/// a read-write lock taken briefly for reading by every operation, and each partition has its
/// own lock. Splits and merges take the map's write lock.
///
/// See the [module docs](super) for a tour.
pub struct Table {
    pub(super) schema: Schema,
    pub(super) options: TableOptions,
    pub(super) policy: VersionPolicy,
    pub(super) clock: Arc<dyn Clock>,
    /// Partitions in key order; the first starts at INF_MIN, the last ends at INF_MAX.
    pub(super) map: PartitionMap,
    /// Pre-split points: never merged away.
    pub(super) pinned: Vec<PkValue>,
    pub(super) next_id: AtomicU64,
    pub(super) window_ms: i64,
    pub(super) current_window: AtomicI64,
    /// First ms of the next window: a cheaper test than dividing the time on every operation.
    pub(super) next_window_ms: AtomicI64,
    /// Held while a window closes; holds the closing window's records until they join the log.
    pub(super) rotate_lock: Mutex<Vec<WindowRecord>>,
    pub(super) log: Mutex<Log>,
    pub(super) splits: AtomicU64,
    /// Operations refused by throttling ([`TableOptions::throttle_ops_per_window`]).
    pub(super) busy_rejections: AtomicU64,
    pub(super) merges: AtomicU64,
    pub(super) sample_every: u64,
}

impl fmt::Debug for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Table")
            .field("schema", &self.schema)
            .field("options", &self.options)
            .field("partitions", &self.partition_count())
            .finish_non_exhaustive()
    }
}

impl Table {
    /// A table on the system clock.
    ///
    /// # Errors
    ///
    /// [`TableError::InvalidOption`] for options out of range, [`TableError::InvalidSplitPoint`]
    /// for pre-split points of the wrong type or out of order.
    pub fn new(schema: Schema, options: TableOptions) -> Result<Self, TableError> {
        Self::with_clock(schema, options, SystemClock)
    }

    /// A table with one String primary-key column named `column`, on the system clock.
    ///
    /// # Errors
    ///
    /// As [`Table::new`], and [`TableError::InvalidColumnName`] for a bad name.
    pub fn single_string_key(column: &str, options: TableOptions) -> Result<Self, TableError> {
        Self::new(Schema::single_string(column)?, options)
    }

    /// A table on the given clock (a [`ManualClock`] makes tests and replays exact).
    ///
    /// # Errors
    ///
    /// As [`Table::new`].
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::table::{ManualClock, Schema, Table, TableOptions};
    ///
    /// let clock = ManualClock::new(1_700_000_000_000);
    /// let table = Table::with_clock(Schema::single_string("pk")?, TableOptions::default(), clock.clone())?;
    /// assert_eq!(table.now_ms(), 1_700_000_000_000);
    /// # Ok::<(), pk_codec::table::TableError>(())
    /// ```
    pub fn with_clock(
        schema: Schema,
        options: TableOptions,
        clock: impl Clock + 'static,
    ) -> Result<Self, TableError> {
        options.check()?;
        for (index, p) in options.pre_split.iter().enumerate() {
            schema
                .check_partition_value(p)
                .map_err(|_| TableError::InvalidSplitPoint {
                    index,
                    reason: "a split point must be a real value of the partition key's type",
                })?;
            if index > 0 && options.pre_split[index - 1] >= *p {
                return Err(TableError::InvalidSplitPoint {
                    index,
                    reason: "split points must be strictly increasing",
                });
            }
        }
        let clock: Arc<dyn Clock> = Arc::new(clock);
        let window_ms = options.load_window_ms;
        let now = clock.now_ms();
        let mut bounds = vec![PkValue::InfMin];
        bounds.extend(options.pre_split.iter().cloned());
        let mut map = Vec::with_capacity(bounds.len());
        for (i, lower) in bounds.iter().enumerate() {
            let upper = bounds.get(i + 1).cloned().unwrap_or(PkValue::InfMax);
            map.push(Arc::new(Partition::new(
                i as u64,
                lower.clone(),
                upper,
                PartData::default(),
            )));
        }
        Ok(Self {
            policy: VersionPolicy::of(&options),
            pinned: options.pre_split.clone(),
            next_id: AtomicU64::new(map.len() as u64),
            map: PartitionMap::new(map),
            sample_every: u64::from(options.load_sample_every),
            window_ms,
            current_window: AtomicI64::new(now.div_euclid(window_ms)),
            next_window_ms: AtomicI64::new(next_window_start(now.div_euclid(window_ms), window_ms)),
            rotate_lock: Mutex::new(Vec::new()),
            log: Mutex::new(Log::default()),
            splits: AtomicU64::new(0),
            busy_rejections: AtomicU64::new(0),
            merges: AtomicU64::new(0),
            schema,
            options,
            clock,
        })
    }

    /// The schema.
    #[must_use]
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The options the table was created with.
    #[must_use]
    pub fn options(&self) -> &TableOptions {
        &self.options
    }

    /// The table clock's time, ms.
    #[must_use]
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// Number of partitions now.
    #[must_use]
    pub fn partition_count(&self) -> usize {
        self.map.read().len()
    }

    /// The partitions' `[lower, upper)` ranges of the partition key, in order.
    #[must_use]
    pub fn partition_bounds(&self) -> Vec<(PkValue, PkValue)> {
        self.map
            .read()
            .iter()
            .map(|p| (p.lower.clone(), p.upper.clone()))
            .collect()
    }

    /// The partitions' lower bounds, in order.
    pub(crate) fn partition_lowers(&self) -> Vec<PkValue> {
        let mut lowers = Vec::new();
        self.partition_lowers_into(&mut lowers);
        lowers
    }

    /// The partitions' lower bounds, in order, into `out` (reusing its values' buffers).
    pub(crate) fn partition_lowers_into(&self, out: &mut Vec<PkValue>) {
        let map = self.map.read();
        out.truncate(map.len());
        for (i, p) in map.iter().enumerate() {
            match out.get_mut(i) {
                Some(v) => v.clone_from(&p.lower),
                None => out.push(p.lower.clone()),
            }
        }
    }

    /// Rows stored (expired rows count until they are dropped by a write or [`Table::compact`]).
    #[must_use]
    pub fn stored_rows(&self) -> usize {
        self.map
            .read()
            .iter()
            .map(|p| read(&p.data).rows.len())
            .sum()
    }

    /// Reads the clock and closes the load window if it has ended.
    #[inline]
    fn tick(&self) -> i64 {
        let now = self.clock.now_ms();
        if now >= self.next_window_ms.load(Relaxed) {
            self.rotate(now.div_euclid(self.window_ms));
        }
        now
    }

    /// Writes a row, replacing any row with the same key.
    ///
    /// Attributes without a version get the clock's time; several versions of one column may be
    /// written at once (the newest `max_versions` are kept).
    ///
    /// # Errors
    ///
    /// [`TableError::KeyArity`], [`TableError::KeyTypeMismatch`], [`TableError::InfiniteKeyValue`],
    /// [`TableError::KeyValueTooLarge`] for a bad key; [`TableError::InvalidColumnName`],
    /// [`TableError::AttributeTooLarge`], [`TableError::VersionOutOfRange`] for a bad attribute.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::table::{Attribute, Table, TableOptions};
    ///
    /// let table = Table::single_string_key("pk", TableOptions::default())?;
    /// table.put("order:1", vec![Attribute::new("amount_cents", 532)])?;
    /// # Ok::<(), pk_codec::table::TableError>(())
    /// ```
    pub fn put(
        &self,
        key: impl Into<PrimaryKey>,
        attributes: Vec<Attribute>,
    ) -> Result<(), TableError> {
        self.put_attributes(&key.into(), Cow::Owned(attributes))
    }

    /// Writes a row as [`Table::put`] does, from a borrowed key and attributes.
    ///
    /// The table keeps neither (it stores the row in its own encoding), so a caller that writes
    /// many rows can keep one key and one attribute list and refill them between puts instead
    /// of allocating new ones for every row. Attributes already in the stored order (by name,
    /// newest version first, at most `max_versions` per column: any single attribute) are
    /// encoded as they are; others are sorted and trimmed as [`Table::put`] does.
    ///
    /// # Errors
    ///
    /// As [`Table::put`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::fmt::Write;
    ///
    /// use pk_codec::table::{Attribute, AttributeValue, PkValue, PrimaryKey, ReadOptions, Table, TableOptions};
    ///
    /// let table = Table::single_string_key("pk", TableOptions::default())?;
    /// let mut key = PrimaryKey::from("order:0");
    /// let mut attributes = vec![Attribute::new("amount_cents", 0)];
    /// for i in 1..=3 {
    ///     // Refill the same key and attribute for every row: no allocation per row.
    ///     let mut values = key.into_values();
    ///     if let Some(PkValue::String(text)) = values.first_mut() {
    ///         text.clear();
    ///         write!(text, "order:{i}").unwrap();
    ///     }
    ///     key = PrimaryKey::new(values);
    ///     attributes[0].value = AttributeValue::Integer(i * 100);
    ///     table.put_ref(&key, &attributes)?;
    /// }
    /// let row = table.get("order:2", &ReadOptions::default())?.unwrap();
    /// assert_eq!(row.value("amount_cents"), Some(&AttributeValue::Integer(200)));
    /// assert_eq!(table.stored_rows(), 3);
    /// # Ok::<(), pk_codec::table::TableError>(())
    /// ```
    pub fn put_ref(&self, key: &PrimaryKey, attributes: &[Attribute]) -> Result<(), TableError> {
        self.put_attributes(key, Cow::Borrowed(attributes))
    }

    /// [`Table::put`] and [`Table::put_ref`].
    #[inline]
    fn put_attributes(
        &self,
        key: &PrimaryKey,
        attributes: Cow<'_, [Attribute]>,
    ) -> Result<(), TableError> {
        self.schema.check_row_key(key)?;
        let now = self.tick();
        let cells = self.policy.stored_cells(attributes, now)?;
        self.put_encoded(key, &cells)
    }

    /// Stores the row of `key` (checked) holding `cells`.
    #[inline]
    fn put_encoded(&self, key: &PrimaryKey, cells: &StoredCells<'_>) -> Result<(), TableError> {
        let size = (key.size() + cells.bytes()) as u64;
        with_scratch(|buf| {
            // Encoded before the partition is locked, then copied into its leaf.
            let partition_len = encode_row_with(key, cells.iter(), size, buf);
            let row: &[u8] = buf;
            // The partition is found by the row's encoded key (one buffer of encoded bounds).
            let map = self.map.read();
            let partition_bytes = &RowRef::new(row).key()[..partition_len];
            let at = if map.len() == 1 {
                0
            } else {
                map.index_of_encoded(partition_bytes)
            };
            let value = key.partition_value();
            self.write_at(map, at, value, Some(partition_bytes), move |data| {
                if let Some(old) = data.rows.insert(row) {
                    data.bytes -= old;
                }
                data.bytes += size;
                data.window.bytes_written += size;
            })
        })
    }

    /// Runs `f` on the partition holding partition-key value `value` under its write lock,
    /// counts the write, samples it, and splits the partition afterwards when it crossed a
    /// threshold.
    ///
    /// # Errors
    ///
    /// [`TableError::PartitionBusy`] when the partition is throttled and served its capacity in
    /// this window (then `f` does not run).
    #[inline]
    fn write_with<R>(
        &self,
        value: &PkValue,
        f: impl FnOnce(&mut PartData) -> R,
    ) -> Result<R, TableError> {
        let map = self.map.read();
        let at = index_of(&map, value);
        self.write_at(map, at, value, None, f)
    }

    /// [`Table::write_with`] on partition `at` of `map`, which holds `value` (`encoded`, when
    /// the caller has it encoded: a sample then copies it).
    #[inline]
    fn write_at<R>(
        &self,
        map: RwLockReadGuard<'_, MapCopy>,
        at: usize,
        value: &PkValue,
        encoded: Option<&[u8]>,
        f: impl FnOnce(&mut PartData) -> R,
    ) -> Result<R, TableError> {
        let p = &map[at];
        let mut data = write(&p.data);
        debug_assert!(!data.retired && p.contains(value));
        self.admit(data.window.writes + p.reads.load(Relaxed))?;
        data.window.writes += 1;
        let writes = data.window.writes;
        if self.sampled(writes) {
            match encoded {
                Some(v) => p.sample_encoded(v),
                None => p.sample(value),
            }
        }
        let r = f(&mut data);
        let size_split = size_split_needed(&self.options, data.bytes, || data.single_value());
        drop(data);
        let load_split = self.load_split_due(p, writes + p.reads.load(Relaxed));
        if size_split || load_split {
            let (id, lower) = (p.id, p.lower.clone());
            drop(map);
            self.split(
                id,
                &lower,
                if size_split {
                    SplitKind::Size
                } else {
                    SplitKind::Load
                },
            );
        }
        Ok(r)
    }

    /// Refuses an operation on a throttled partition that already served `window_ops`
    /// operations of its capacity in this window.
    #[inline]
    fn admit(&self, window_ops: u64) -> Result<(), TableError> {
        match self.over_capacity(window_ops) {
            Some(capacity) => Err(self.busy(capacity)),
            None => Ok(()),
        }
    }

    /// The partition's capacity when it is throttled and already served `window_ops`
    /// operations of it in this window.
    #[inline]
    fn over_capacity(&self, window_ops: u64) -> Option<u64> {
        self.options
            .partition_capacity_ops
            .filter(|&capacity| window_ops >= capacity)
    }

    #[cold]
    fn busy(&self, capacity: u64) -> TableError {
        self.busy_rejections.fetch_add(1, Relaxed);
        TableError::PartitionBusy {
            capacity,
            window: self.current_window.load(Relaxed),
        }
    }

    /// Whether the `n`-th operation of a window is sampled (a mask when the rate is a power of
    /// two, to keep a division off the hot path).
    #[inline]
    fn sampled(&self, n: u64) -> bool {
        sampled(self.sample_every, n)
    }

    /// Reads one row.
    ///
    /// Returns `None` when no row has the key (or all its data expired).
    ///
    /// # Errors
    ///
    /// The key errors of [`Table::put`]; [`TableError::ConflictingReadOptions`],
    /// [`TableError::InvalidMaxVersions`], [`TableError::InvalidTimeRange`] for bad options.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::table::{Attribute, ReadOptions, Table, TableOptions, AttributeValue};
    ///
    /// let table = Table::single_string_key("pk", TableOptions::default().max_versions(2))?;
    /// table.put("k", vec![Attribute::new("a", 1), Attribute::new("b", true)])?;
    /// let row = table.get("k", &ReadOptions::default().columns(["a"]))?.unwrap();
    /// assert_eq!(row.cells.len(), 1);
    /// assert_eq!(row.value("a"), Some(&AttributeValue::Integer(1)));
    /// assert!(table.get("nope", &ReadOptions::default())?.is_none());
    /// # Ok::<(), pk_codec::table::TableError>(())
    /// ```
    pub fn get(
        &self,
        key: impl Into<PrimaryKey>,
        options: &ReadOptions,
    ) -> Result<Option<Row>, TableError> {
        let key = key.into();
        self.schema.check_row_key(&key)?;
        options.check()?;
        let now = self.tick();
        let live_from = self.policy.live_from_seconds(now);
        let map = self.map.read();
        let p = &map[index_of(&map, key.partition_value())];
        let data = read(&p.data);
        self.admit(data.window.writes + p.reads.load(Relaxed))?;
        let reads = p.reads.fetch_add(1, Relaxed) + 1;
        if self.sampled(reads) {
            p.sample(key.partition_value());
        }
        let found = with_scratch(|buf| {
            buf.clear();
            encode_key(key.values(), buf);
            data.rows.get(buf)
        });
        let cells = found.and_then(|r| {
            visible(r, live_from).then(|| {
                let mut cells = Vec::with_capacity(r.cells().count());
                select_cells(r.cells(), options, live_from, &mut cells);
                cells
            })
        });
        // The key read is the key returned: moved into the row, not copied.
        let row = cells.map(|cells| Row { key, cells });
        if let Some(r) = &row {
            p.rows_read.fetch_add(1, Relaxed);
            p.bytes_read.fetch_add(r.size() as u64, Relaxed);
        }
        let window_ops = reads + data.window.writes;
        drop(data);
        if self.load_split_due(p, window_ops) {
            let (id, lower) = (p.id, p.lower.clone());
            drop(map);
            self.split(id, &lower, SplitKind::Load);
        }
        Ok(row)
    }

    /// Changes some columns of a row, creating it when missing. Operations apply in order.
    ///
    /// # Errors
    ///
    /// As [`Table::put`].
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::table::{Attribute, Table, TableOptions, UpdateOp};
    ///
    /// let table = Table::single_string_key("pk", TableOptions::default())?;
    /// table.put("k", vec![Attribute::new("a", 1), Attribute::new("b", 2)])?;
    /// table.update("k", vec![UpdateOp::DeleteColumn("a".into()), UpdateOp::Put(Attribute::new("c", 3))])?;
    /// let row = table.get("k", &Default::default())?.unwrap();
    /// assert_eq!(row.cells.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["b", "c"]);
    /// # Ok::<(), pk_codec::table::TableError>(())
    /// ```
    pub fn update(&self, key: impl Into<PrimaryKey>, ops: Vec<UpdateOp>) -> Result<(), TableError> {
        let key = key.into();
        self.schema.check_row_key(&key)?;
        let now = self.tick();
        let live_from = self.policy.live_from_seconds(now);
        let mut changes = Vec::with_capacity(ops.len());
        for op in ops {
            match op {
                UpdateOp::Put(a) => changes.extend(
                    self.policy
                        .cells_from_attributes(vec![a], now)?
                        .into_iter()
                        .map(Change::Put),
                ),
                UpdateOp::DeleteColumn(n) => {
                    check_column_name(&n)?;
                    changes.push(Change::DeleteColumn(n));
                }
                UpdateOp::DeleteVersion { name, version } => {
                    check_column_name(&name)?;
                    changes.push(Change::DeleteVersion(name, version));
                }
            }
        }
        let max_versions = self.policy.max_versions;
        let (key, query) = (&key, key_bytes(&key));
        self.write_with(key.partition_value(), move |data| {
            let key_size = key.size() as u64;
            let (mut cells, old_size, existed) = match data.rows.get(&query) {
                Some(old) => {
                    let live = visible(old, live_from);
                    let cells = if live {
                        old.cells()
                            .filter(|c| VersionPolicy::is_live(c.version, live_from))
                            .map(|c| c.to_cell())
                            .collect()
                    } else {
                        Vec::new()
                    };
                    (cells, old.size(), live)
                }
                None => (Vec::new(), 0, false),
            };
            for ch in changes {
                match ch {
                    Change::Put(c) => cells.push(c),
                    Change::DeleteColumn(n) => cells.retain(|c| c.name != n),
                    Change::DeleteVersion(n, v) => cells.retain(|c| c.name != n || c.version != v),
                }
            }
            normalize(&mut cells, max_versions);
            data.bytes -= old_size;
            if cells.is_empty() && !existed {
                data.rows.remove(&query);
                return;
            }
            let size = key_size + cells.iter().map(|c| c.size() as u64).sum::<u64>();
            data.bytes += size;
            data.window.bytes_written += size;
            let mut row = Vec::new();
            encode_row(key, &cells, size, &mut row);
            data.rows.insert(&row);
        })
    }
}

/// One prepared change of an update.
enum Change {
    Put(Cell),
    DeleteColumn(String),
    DeleteVersion(String, i64),
}

/// A stored row is visible when it has no columns (a key-only row) or a live cell.
#[inline]
fn visible(r: RowRef<'_>, live_from: i64) -> bool {
    r.has_no_cells()
        || r.cells()
            .any(|c| VersionPolicy::is_live(c.version, live_from))
}

impl Table {
    /// Deletes a row; deleting a missing row is not an error.
    ///
    /// # Errors
    ///
    /// The key errors of [`Table::put`].
    pub fn delete(&self, key: impl Into<PrimaryKey>) -> Result<(), TableError> {
        let key = key.into();
        self.schema.check_row_key(&key)?;
        self.tick();
        let query = key_bytes(&key);
        self.write_with(key.partition_value(), |data| {
            if let Some(old) = data.rows.remove(&query) {
                data.bytes -= old;
            }
        })
    }

    /// Writes up to 200 rows (4 MB) at once. The batch as a whole fails on its limits or when
    /// two rows share a key; otherwise each row succeeds or fails on its own.
    ///
    /// # Errors
    ///
    /// [`TableError::BatchTooManyRows`], [`TableError::BatchTooLarge`],
    /// [`TableError::DuplicateRowInBatch`] for the whole batch; each row's result holds the
    /// errors of [`Table::put`], [`Table::update`] or [`Table::delete`].
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::table::{Attribute, RowWrite, Table, TableError, TableOptions};
    ///
    /// let table = Table::single_string_key("pk", TableOptions::default())?;
    /// let results = table.batch_write(vec![
    ///     RowWrite::Put { key: "a".into(), attributes: vec![Attribute::new("n", 1)] },
    ///     RowWrite::Put { key: "b".into(), attributes: vec![Attribute::new("bad-name", 1)] },
    /// ])?;
    /// assert!(results[0].is_ok());
    /// assert!(matches!(results[1], Err(TableError::InvalidColumnName { .. })));
    /// # Ok::<(), pk_codec::table::TableError>(())
    /// ```
    pub fn batch_write(
        &self,
        rows: Vec<RowWrite>,
    ) -> Result<Vec<Result<(), TableError>>, TableError> {
        if rows.len() > MAX_BATCH_ROWS {
            return Err(TableError::BatchTooManyRows {
                rows: rows.len(),
                max: MAX_BATCH_ROWS,
            });
        }
        let bytes: usize = rows.iter().map(RowWrite::size).sum();
        if bytes > MAX_BATCH_BYTES {
            return Err(TableError::BatchTooLarge {
                bytes,
                max: MAX_BATCH_BYTES,
            });
        }
        let mut seen: HashMap<&PrimaryKey, usize> = HashMap::with_capacity(rows.len());
        for (index, r) in rows.iter().enumerate() {
            if let Some(&first) = seen.get(r.key()) {
                return Err(TableError::DuplicateRowInBatch { index, first });
            }
            seen.insert(r.key(), index);
        }
        drop(seen);
        Ok(rows
            .into_iter()
            .map(|r| match r {
                RowWrite::Put { key, attributes } => self.put(key, attributes),
                RowWrite::Update { key, ops } => self.update(key, ops),
                RowWrite::Delete { key } => self.delete(&key),
            })
            .collect())
    }

    /// Reads a range of rows, forward (`start < end`, ascending) or backward (`start > end`,
    /// descending); `start` is included, `end` excluded. Stops at the row limit or at a
    /// response cap of 5,000 rows or 4 MB (at a row boundary), and then gives the key to start
    /// the next read from. Splits may happen between partitions of one read: rows still come
    /// in order, each once. A throttled partition
    /// ([`TableOptions::throttle_ops_per_window`](super::TableOptions::throttle_ops_per_window))
    /// that served its capacity in this window serves no row: the read stops before its first
    /// row in range and gives that row's key to start the next read from.
    ///
    /// # Errors
    ///
    /// [`TableError::KeyArity`] or [`TableError::KeyTypeMismatch`] for bad bounds,
    /// [`TableError::InvalidRange`] when the bounds do not match the direction,
    /// [`TableError::InvalidLimit`] for a limit of 0, and the option errors of [`Table::get`];
    /// [`TableError::PartitionBusy`] when the read would stop at a throttled partition before
    /// taking any row.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::table::{Attribute, PkValue, PrimaryKey, RangeRequest, Table, TableOptions};
    ///
    /// let table = Table::single_string_key("pk", TableOptions::default())?;
    /// for k in ["a", "b", "c", "d"] {
    ///     table.put(k, vec![Attribute::new("n", 1)])?;
    /// }
    /// let r = table.get_range(&RangeRequest::forward("b", PrimaryKey::inf_max(1)).limit(2))?;
    /// let keys: Vec<String> = r.rows.iter().map(|r| r.key.to_string()).collect();
    /// assert_eq!(keys, ["b", "c"]);
    /// assert_eq!(r.next_start, Some("d".into()));
    ///
    /// let r = table.get_range(&RangeRequest::backward("c", PrimaryKey::inf_min(1)))?;
    /// let keys: Vec<String> = r.rows.iter().map(|r| r.key.to_string()).collect();
    /// assert_eq!(keys, ["c", "b", "a"]);
    /// # Ok::<(), pk_codec::table::TableError>(())
    /// ```
    pub fn get_range(&self, req: &RangeRequest) -> Result<RangeResult, TableError> {
        let mut sink = Collect(Vec::new());
        let next_start = self.range_scan(req, &mut sink)?;
        Ok(RangeResult {
            rows: sink.0,
            next_start,
        })
    }

    /// Reads a range as [`Table::get_range`] does, handing each row to `f` instead of
    /// collecting them: the same rows in the same order, under the same limits (the row limit,
    /// 5,000 rows, 4 MB); returns the key to resume from, as [`RangeResult::next_start`].
    ///
    /// The row is lent: its key and cells are refilled for the next row, reusing their
    /// buffers, so a long read allocates next to nothing per row. `f` runs with no lock held
    /// and may use the table.
    ///
    /// # Errors
    ///
    /// As [`Table::get_range`].
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::table::{Attribute, PrimaryKey, RangeRequest, Table, TableOptions};
    ///
    /// let table = Table::single_string_key("pk", TableOptions::default())?;
    /// for k in ["a", "b", "c", "d"] {
    ///     table.put(k, vec![Attribute::new("n", 1)])?;
    /// }
    /// let mut keys = Vec::new();
    /// let req = RangeRequest::forward("b", PrimaryKey::inf_max(1)).limit(2);
    /// let next = table.for_each_in_range(&req, |row| keys.push(row.key.to_string()))?;
    /// assert_eq!(keys, ["b", "c"]);
    /// assert_eq!(next, Some("d".into()));
    /// # Ok::<(), pk_codec::table::TableError>(())
    /// ```
    pub fn for_each_in_range(
        &self,
        req: &RangeRequest,
        f: impl FnMut(&Row),
    ) -> Result<Option<PrimaryKey>, TableError> {
        let mut sink = Lend {
            bytes: Vec::new(),
            ends: Vec::new(),
            row: Row {
                key: PrimaryKey::new(Vec::new()),
                cells: Vec::new(),
            },
            f,
        };
        self.range_scan(req, &mut sink)
    }

    /// A range read: checks the request, then takes its rows into `sink` partition by
    /// partition; returns the key to resume from.
    fn range_scan(
        &self,
        req: &RangeRequest,
        sink: &mut impl RangeSink,
    ) -> Result<Option<PrimaryKey>, TableError> {
        self.schema.check_bound(&req.start)?;
        self.schema.check_bound(&req.end)?;
        req.options.check()?;
        if req.limit == Some(0) {
            return Err(TableError::InvalidLimit);
        }
        match req.direction {
            Direction::Forward if req.start >= req.end => {
                return Err(TableError::InvalidRange {
                    reason: "a forward read needs start below end",
                });
            }
            Direction::Backward if req.start <= req.end => {
                return Err(TableError::InvalidRange {
                    reason: "a backward read needs start above end",
                });
            }
            _ => {}
        }
        let now = self.tick();
        let mut scan = Scan {
            live_from: self.policy.live_from_seconds(now),
            options: &req.options,
            max_rows: req.limit.unwrap_or(usize::MAX).min(MAX_RANGE_ROWS),
            rows: 0,
            bytes: 0,
            next_start: None,
        };
        let n = self.schema.columns().len();
        match req.direction {
            Direction::Forward => {
                // The request's start, then each next partition's lowest key.
                let mut lo = Cow::Borrowed(&req.start);
                let end_row = key_bytes(&req.end);
                loop {
                    let lo_row = key_bytes(&lo);
                    let map = self.map.read();
                    let p = &map[index_of(&map, lo.partition_value())];
                    let data = read(&p.data);
                    // When the end lies at or past the partition's upper bound, every row from
                    // `lo` on is in range: no search for the end.
                    let end = if *req.end.partition_value() >= p.upper {
                        Bound::Unbounded
                    } else {
                        Excluded(end_row.as_slice())
                    };
                    let rows = data.rows.range(Included(&lo_row), end);
                    let stop = self.take_from(p, data.window.writes, rows, &mut scan, sink)?;
                    let next =
                        (!stop && p.upper != PkValue::InfMax).then(|| bound_key(&p.upper, n));
                    // The rows are handed on with no lock held.
                    drop(data);
                    drop(map);
                    sink.unlocked(scan.live_from, scan.options);
                    let Some(next) = next else {
                        break;
                    };
                    lo = Cow::Owned(next);
                    if *lo >= req.end {
                        break;
                    }
                }
            }
            Direction::Backward => {
                let mut hi: Bound<PrimaryKey> = Included(req.start.clone());
                let end_row = key_bytes(&req.end);
                loop {
                    let hi_row = hi.as_ref().map(key_bytes);
                    let map = self.map.read();
                    let i = match &hi {
                        Included(k) => index_of(&map, k.partition_value()),
                        Excluded(k) => map
                            .partition_point(|p| p.lower < *k.partition_value())
                            .saturating_sub(1),
                        Bound::Unbounded => 0,
                    };
                    let p = &map[i];
                    let data = read(&p.data);
                    let rows = data
                        .rows
                        .range(Excluded(&end_row), hi_row.as_ref().map(Vec::as_slice));
                    let stop =
                        self.take_from(p, data.window.writes, rows.rev(), &mut scan, sink)?;
                    let next =
                        (!stop && p.lower != PkValue::InfMin).then(|| bound_key(&p.lower, n));
                    drop(data);
                    drop(map);
                    sink.unlocked(scan.live_from, scan.options);
                    let Some(below) = next else {
                        break;
                    };
                    if req.end >= below {
                        break;
                    }
                    hi = Excluded(below);
                }
            }
        }
        Ok(scan.next_start)
    }

    /// Takes `rows`, partition `p`'s rows in range in the read's order (`p` wrote
    /// `window_writes` times in this window), into `sink`; returns whether the read stops
    /// there. A throttled partition that served its capacity serves no row
    /// ([`Scan::take_or_stop`]): the read is refused when it would stop there having taken none.
    #[inline]
    fn take_from<'r>(
        &self,
        p: &Partition,
        window_writes: u64,
        rows: impl Iterator<Item = RowRef<'r>>,
        scan: &mut Scan<'_>,
        sink: &mut impl RangeSink,
    ) -> Result<bool, TableError> {
        let busy = self.over_capacity(window_writes + p.reads.load(Relaxed));
        let (stop, took) = scan.take_or_stop(rows, sink, busy.is_some());
        match busy {
            Some(capacity) if stop && scan.rows == 0 => Err(self.busy(capacity)),
            Some(_) => Ok(stop),
            None => {
                count_read(p, took);
                Ok(stop)
            }
        }
    }

    /// Writes a stream of `(key, attributes, timestamp_ms)` events, setting `clock` (which must
    /// be this table's clock) to each event's timestamp before its put. This replays a day of
    /// traffic under a key design in a moment, with exact load windows.
    ///
    /// # Errors
    ///
    /// [`TableError::Replay`] with the index and error of the first event that fails (the
    /// events before it stay written); its error is [`TableError::ForeignClock`] when `clock`
    /// is not the table's (setting it does not move the table's time).
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::table::{Attribute, ManualClock, Schema, Table, TableOptions};
    ///
    /// let clock = ManualClock::new(0);
    /// let table = Table::with_clock(Schema::single_string("pk")?, TableOptions::default(), clock.clone())?;
    /// let events = (0..10).map(|i| (format!("k{i}"), vec![Attribute::new("n", i)], i * 1000));
    /// let stats = table.replay(&clock, events)?;
    /// assert_eq!(stats.events, 10);
    /// assert_eq!(table.report().windows.len(), 10);
    /// # Ok::<(), pk_codec::table::TableError>(())
    /// ```
    pub fn replay<K, I>(&self, clock: &ManualClock, events: I) -> Result<ReplayStats, TableError>
    where
        K: Into<PrimaryKey>,
        I: IntoIterator<Item = (K, Vec<Attribute>, i64)>,
    {
        let mut stats = ReplayStats::default();
        for (event, (key, attributes, ts)) in events.into_iter().enumerate() {
            clock.set(ts);
            // Another clock would leave every event at the table's own time: refused.
            let table_ms = self.now_ms();
            if table_ms != ts {
                return Err(TableError::Replay {
                    event,
                    source: Box::new(TableError::ForeignClock {
                        set_ms: ts,
                        table_ms,
                    }),
                });
            }
            let key = key.into();
            let bytes = key.size()
                + attributes
                    .iter()
                    .map(|a| a.name.len() + a.value.size() + 8)
                    .sum::<usize>();
            self.put(key, attributes).map_err(|e| TableError::Replay {
                event,
                source: Box::new(e),
            })?;
            stats.events += 1;
            stats.bytes += bytes as u64;
        }
        Ok(stats)
    }

    /// Drops expired cells, and rows left with none, from every partition.
    pub fn compact(&self) {
        let live_from = self.policy.live_from_seconds(self.tick());
        let map = self.map.read();
        for p in map.iter() {
            let mut data = write(&p.data);
            let mut freed = 0u64;
            let rows = std::mem::take(&mut data.rows);
            let mut buf = Vec::new();
            for r in rows.iter() {
                let kept = if r
                    .cells()
                    .all(|c| VersionPolicy::is_live(c.version, live_from))
                {
                    Some(r.bytes())
                } else {
                    let cells: Vec<Cell> = r
                        .cells()
                        .filter(|c| VersionPolicy::is_live(c.version, live_from))
                        .map(|c| c.to_cell())
                        .collect();
                    if cells.is_empty() {
                        freed += r.size();
                        None
                    } else {
                        let key = r.decode_key();
                        let size =
                            key.size() as u64 + cells.iter().map(|c| c.size() as u64).sum::<u64>();
                        freed += r.size() - size;
                        encode_row(&key, &cells, size, &mut buf);
                        Some(buf.as_slice())
                    }
                };
                if let Some(row) = kept {
                    data.rows.insert(row);
                }
            }
            data.bytes -= freed;
        }
    }
}

thread_local! {
    /// A buffer each thread encodes its rows and keys in before they are copied into a leaf.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` on this thread's scratch buffer (a fresh one if it is in use).
#[inline]
fn with_scratch<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    /// A buffer grown past this by a large row is not kept.
    const KEEP: usize = 64 << 10;
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut buf) => {
            let r = f(&mut buf);
            if buf.capacity() > KEEP {
                *buf = Vec::new();
            }
            r
        }
        Err(_) => f(&mut Vec::new()),
    })
}

/// A key of `n` columns: `v` then INF_MIN, the lowest key of partition-key value `v`.
pub(super) fn bound_key(v: &PkValue, n: usize) -> PrimaryKey {
    let mut k = Vec::with_capacity(n);
    k.push(v.clone());
    k.resize(n, PkValue::InfMin);
    PrimaryKey::new(k)
}

fn count_read(p: &Partition, rows: (u64, u64)) {
    p.reads.fetch_add(1, Relaxed);
    p.rows_read.fetch_add(rows.0, Relaxed);
    p.bytes_read.fetch_add(rows.1, Relaxed);
}

/// The state of one range read.
struct Scan<'a> {
    live_from: i64,
    options: &'a ReadOptions,
    max_rows: usize,
    /// Rows taken so far.
    rows: usize,
    bytes: usize,
    next_start: Option<PrimaryKey>,
}

impl Scan<'_> {
    /// [`Scan::take`] from a partition that may be `busy` (throttled, its capacity served in
    /// this window): a busy partition serves no row. At its first visible row in range the
    /// read stops, that row's key the one to resume from (the caller refuses the read when it
    /// has taken no row); a busy partition with no such row is passed over, as it has nothing
    /// to serve.
    #[inline]
    fn take_or_stop<'r>(
        &mut self,
        rows: impl Iterator<Item = RowRef<'r>>,
        sink: &mut impl RangeSink,
        busy: bool,
    ) -> (bool, (u64, u64)) {
        if !busy {
            return self.take(rows, sink);
        }
        let max_rows = std::mem::replace(&mut self.max_rows, self.rows);
        let r = self.take(rows, sink);
        self.max_rows = max_rows;
        r
    }

    /// Takes rows in order into `sink`; returns whether the read must stop, and (rows, bytes)
    /// taken.
    fn take<'r>(
        &mut self,
        rows: impl Iterator<Item = RowRef<'r>>,
        sink: &mut impl RangeSink,
    ) -> (bool, (u64, u64)) {
        let (mut n, mut b) = (0u64, 0u64);
        // Without a TTL every cell is live, and so every row visible.
        let all_visible = self.live_from == i64::MIN;
        for r in rows {
            if !all_visible && !visible(r, self.live_from) {
                continue;
            }
            if self.rows >= self.max_rows {
                self.next_start = Some(r.decode_key());
                return (true, (n, b));
            }
            let mut size = encoded_key_size(r.key()).unwrap_or_default();
            select_cells_with(r.cells(), self.options, self.live_from, |c| {
                size += c.size()
            });
            if self.rows > 0 && self.bytes + size > MAX_RANGE_BYTES {
                self.next_start = Some(r.decode_key());
                return (true, (n, b));
            }
            sink.take(r, self.live_from, self.options);
            self.rows += 1;
            self.bytes += size;
            n += 1;
            b += size as u64;
        }
        (false, (n, b))
    }
}

/// Where a range read's rows go.
trait RangeSink {
    /// One row of the read, under its partition's read lock.
    fn take(&mut self, r: RowRef<'_>, live_from: i64, options: &ReadOptions);

    /// The partition's lock was released.
    #[inline]
    fn unlocked(&mut self, _live_from: i64, _options: &ReadOptions) {}
}

/// [`Table::get_range`]'s rows, owned.
struct Collect(Vec<Row>);

impl RangeSink for Collect {
    fn take(&mut self, r: RowRef<'_>, live_from: i64, options: &ReadOptions) {
        let mut cells = Vec::with_capacity(r.cells().count());
        select_cells(r.cells(), options, live_from, &mut cells);
        self.0.push(Row {
            key: r.decode_key(),
            cells,
        });
    }
}

/// [`Table::for_each_in_range`]'s rows: copied as stored while the partition is locked, then
/// decoded one by one into the lent row and handed to `f`.
struct Lend<F> {
    bytes: Vec<u8>,
    /// Where each copied row ends in `bytes`.
    ends: Vec<usize>,
    row: Row,
    f: F,
}

/// A stored row longer than this is copied for a lent read as its selected cells only.
const LEND_WHOLE_ROW_BYTES: usize = 4096;

impl<F: FnMut(&Row)> RangeSink for Lend<F> {
    #[inline]
    fn take(&mut self, r: RowRef<'_>, live_from: i64, options: &ReadOptions) {
        if r.bytes().len() <= LEND_WHOLE_ROW_BYTES {
            self.bytes.extend_from_slice(r.bytes());
        } else {
            // Only the cells the read selects (selecting again from them, in `unlocked`, gives
            // the same cells): a read of one small column of rows that hold megabytes copies
            // that column, not the rows (the read's byte cap counts selected cells only).
            self.bytes.extend_from_slice(r.head());
            select_cells_with(r.cells(), options, live_from, |c| {
                self.bytes.extend_from_slice(r.cell_bytes(c));
            });
        }
        self.ends.push(self.bytes.len());
    }

    fn unlocked(&mut self, live_from: i64, options: &ReadOptions) {
        let mut start = 0;
        for &end in &self.ends {
            let r = RowRef::new(&self.bytes[start..end]);
            start = end;
            if !decode_key_into(r.key(), &mut self.row.key) {
                debug_assert!(false, "a stored key does not decode");
                continue;
            }
            let cells = &mut self.row.cells;
            let mut n = 0;
            select_cells_with(r.cells(), options, live_from, |c| {
                match cells.get_mut(n) {
                    Some(cell) => c.write_to(cell),
                    None => cells.push(c.to_cell()),
                }
                n += 1;
            });
            cells.truncate(n);
            (self.f)(&self.row);
        }
        self.bytes.clear();
        self.ends.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_key_is_the_lowest_key_of_a_value() {
        let k = bound_key(&"m".into(), 3);
        assert_eq!(
            k.values(),
            [PkValue::from("m"), PkValue::InfMin, PkValue::InfMin]
        );
        assert!(k < PrimaryKey::new(vec!["m".into(), i64::MIN.into(), "".into()]));
        assert!(k > PrimaryKey::new(vec!["l".into(), PkValue::InfMax, PkValue::InfMax]));
    }

    #[test]
    fn key_only_rows_stay_visible_expired_ones_do_not() {
        let cell = |version| Cell {
            name: "a".into(),
            version,
            value: 1.into(),
        };
        let row = |cells: Vec<Cell>| {
            let mut b = Vec::new();
            encode_row(&"k".into(), &cells, 0, &mut b);
            b
        };
        assert!(visible(RowRef::new(&row(vec![])), i64::MAX));
        assert!(visible(RowRef::new(&row(vec![cell(5_000)])), 5));
        assert!(!visible(RowRef::new(&row(vec![cell(4_999)])), 5));
    }

    #[test]
    fn index_of_finds_the_partition_holding_a_value() {
        let parts: Vec<Arc<Partition>> = [
            (PkValue::InfMin, PkValue::from("g")),
            ("g".into(), "p".into()),
            ("p".into(), PkValue::InfMax),
        ]
        .into_iter()
        .enumerate()
        .map(|(i, (l, u))| Arc::new(Partition::new(i as u64, l, u, PartData::default())))
        .collect();
        assert_eq!(index_of(&parts, &"a".into()), 0);
        assert_eq!(index_of(&parts, &"g".into()), 1);
        assert_eq!(index_of(&parts, &"oz".into()), 1);
        assert_eq!(index_of(&parts, &PkValue::InfMax), 2);
        assert_eq!(index_of(&parts, &PkValue::InfMin), 0);
    }
}
