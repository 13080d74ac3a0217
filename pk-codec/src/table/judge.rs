//! The [`Judge`]: the table model's verdict on a stream of writes, in memory that grows with the
//! partitions and load windows, not with the rows.
//!
//! A [`Table`](super::Table) holds every row, so judging a dump of a billion keys would take
//! about 90 GB. To decide where a key design's load goes, the model needs less: per partition
//! its bounds, its load in the open window (counts and the sampled keys the load-split rule
//! cuts at), and where its bytes lie (the size-split rule cuts where they balance). The judge
//! keeps exactly that: the same split and merge rules (`splits.rs`, shared with the table),
//! the same window records, report and heatmap code, and, instead of the rows, a **sketch** of
//! each partition's keys: every distinct key with its bytes while the judge's whole budget
//! ([`Judge::with_sketch_budget`]) allows, coarsened past it by folding neighbouring keys
//! together (the lower key keeps their bytes and rows), largest sketches first.
//!
//! While no sketch has been coarsened ([`Judge::exact`]), the judge's figures are the table's,
//! to the write: same partitions, splits, load records, report, hotspot figures and heatmap
//! (a property test replays random dumps into both). Once a partition's sketch is coarse, every
//! eighth write of it is added to the sketch standing for eight, a size split cuts at a key
//! that balances the sketch's bytes (near the table's cut), and a rewrite of a key counts as a
//! new row, so a partition's rows and bytes are an upper bound. Load splits, which decide the
//! hotspot figures, are unchanged: they cut at the window's samples, which the judge keeps as
//! the table does.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::error::TableError;
use super::heatmap::{Heatmap, HeatmapOptions};
use super::hotspot::{HotspotMeter, HotspotReport};
use super::load::{
    Counts, HotKeyValue, Load, LoadReport, OversizedKeyValue, PartitionStats, WindowRecord,
    assemble, next_window_start, summarize,
};
use super::options::TableOptions;
use super::partition::{Samples, balanced_point};
use super::row::{decode_partition_value, encode_key, first_value_len, value_bytes};
use super::schema::{Attribute, PkValue, PrimaryKey, Schema};
use super::small_bytes::{SmallBytes, compare};
use super::splits::{
    SplitKind, load_split_needed, merge_cold_enough, merge_fits, sampled, size_over,
    size_split_needed, split_point,
};
use super::version::VersionPolicy;

/// Once a partition's sketch is coarse, every this many writes of it one is added to it,
/// standing for them all (the partition's bytes and rows are counted at every write).
const SKETCH_EVERY: u64 = 8;

/// Sketch entries a partition keeps at least, whatever the budget.
const MIN_ENTRIES: usize = 16;

/// Sketch entries a judge keeps by default, over all its partitions: 65,536, about 6 MB.
pub const DEFAULT_SKETCH_BUDGET: usize = 1 << 16;

/// The keys of one partition: each key (encoded) with the bytes and rows it stands for.
#[derive(Debug, Default)]
struct Sketch {
    entries: BTreeMap<SmallBytes, Entry>,
    /// Whether entries were folded: each entry then stands for the keys from it to the next,
    /// and only every [`SKETCH_EVERY`]-th write of the partition is added, standing for that
    /// many.
    coarse: bool,
    /// Writes of the partition since its sketch was coarse.
    tick: u64,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    bytes: u64,
    /// Rows folded into this entry: 1 for a key of its own (a rewrite replaces it).
    rows: u64,
}

impl Sketch {
    /// Whether every key shares one partition-key value (no split can cut such a partition).
    fn single_value(&self) -> bool {
        match (
            self.entries.first_key_value(),
            self.entries.last_key_value(),
        ) {
            (Some((a, _)), Some((b, _))) => partition_bytes(a) == partition_bytes(b),
            _ => true,
        }
    }

    /// The partition-key value whose cut balances the bytes best ([`balanced_point`], as the
    /// table's size split).
    fn size_split_point(&self) -> Option<PkValue> {
        let items = self
            .entries
            .iter()
            .map(|(k, e)| (partition_bytes(k), e.bytes));
        balanced_point(items, self.bytes()).map(decode_partition_value)
    }

    /// The bytes the entries stand for.
    fn bytes(&self) -> u64 {
        self.entries.values().map(|e| e.bytes).sum()
    }

    /// Adds `bytes` and `rows` at `key` to a coarse sketch: to the entry below it while that
    /// entry stays within `cap` bytes (one search, no allocation), else to an entry of its own.
    /// Returns whether an entry was made.
    fn add_coarse(&mut self, key: &[u8], bytes: u64, rows: u64, cap: u64) -> bool {
        let key = SmallBytes::from(key);
        let floor = self
            .entries
            .range_mut::<SmallBytes, _>((
                std::ops::Bound::Unbounded,
                std::ops::Bound::Included(&key),
            ))
            .next_back();
        if let Some((k, e)) = floor
            && (e.bytes + bytes <= cap || *k == key)
        {
            e.bytes += bytes;
            e.rows += rows;
            return false;
        }
        self.entries.insert(key, Entry { bytes, rows });
        true
    }

    /// Folds runs of neighbouring entries into the lowest of each, about halving the entries:
    /// a run takes entries while its bytes stay within four times the mean entry's, so that
    /// folded entries weigh about alike and a cut between them stays near the balance. Two
    /// neighbouring runs weigh more than the cap together, so at most half the entries (and
    /// one) remain. Returns the entries removed.
    fn halve(&mut self) -> usize {
        let before = self.entries.len();
        let total: u128 = self.entries.values().map(|e| u128::from(e.bytes)).sum();
        let cap = (4 * total / before.max(1) as u128).max(1);
        let mut folded = BTreeMap::new();
        let mut run: Option<(SmallBytes, Entry)> = None;
        for (k, e) in std::mem::take(&mut self.entries) {
            match &mut run {
                Some((_, r)) if u128::from(r.bytes) + u128::from(e.bytes) <= cap => {
                    r.bytes += e.bytes;
                    r.rows += e.rows;
                }
                _ => {
                    if let Some((rk, r)) = run.replace((k, e)) {
                        folded.insert(rk, r);
                    }
                }
            }
        }
        if let Some((k, e)) = run {
            folded.insert(k, e);
        }
        self.entries = folded;
        before - self.entries.len()
    }
}

/// The partition-key value's bytes at the front of an encoded key.
fn partition_bytes(key: &[u8]) -> &[u8] {
    &key[..first_value_len(key).unwrap_or(key.len())]
}

/// One partition of the judge.
#[derive(Debug)]
struct Part {
    id: u64,
    /// `(lower, upper)`, shared with the partition's window records.
    bounds: Arc<(PkValue, PkValue)>,
    sketch: Sketch,
    bytes: u64,
    rows: u64,
    window_writes: u64,
    window_bytes_written: u64,
    total_writes: u64,
    last_window_ops: u64,
    load_split_tried: bool,
    samples: Samples,
}

impl Part {
    fn new(id: u64, lower: PkValue, upper: PkValue) -> Self {
        Self {
            id,
            bounds: Arc::new((lower, upper)),
            sketch: Sketch::default(),
            bytes: 0,
            rows: 0,
            window_writes: 0,
            window_bytes_written: 0,
            total_writes: 0,
            last_window_ops: 0,
            load_split_tried: false,
            samples: Samples::default(),
        }
    }

    fn lower(&self) -> &PkValue {
        &self.bounds.0
    }

    /// The record of the open window, without resetting it (`None` without operations).
    fn record(&self, window: i64) -> Option<WindowRecord> {
        (self.window_writes > 0).then(|| WindowRecord {
            window,
            partition: self.id,
            bounds: Arc::clone(&self.bounds),
            load: Load {
                writes: self.window_writes,
                bytes_written: self.window_bytes_written,
                ..Load::default()
            },
            sampled: self.samples.extremes(),
            rows: self.rows,
            bytes: self.bytes,
        })
    }

    /// Closes the open window, as the table's `take_window`: its operations and record.
    fn take_window(&mut self, window: i64) -> (u64, Option<WindowRecord>) {
        let ops = self.window_writes;
        if ops == 0 {
            return (0, None);
        }
        let rec = self.record(window);
        self.samples.clear();
        self.total_writes += self.window_writes;
        self.window_writes = 0;
        self.window_bytes_written = 0;
        self.load_split_tried = false;
        (ops, rec)
    }
}

/// The table model's verdict on a stream of writes, in bounded memory (the module docs say
/// what is kept and when its figures are the table's exactly).
///
/// Feed it writes in time order with [`Judge::write`]; read the [`LoadReport`],
/// [`HotspotReport`] and [`Heatmap`] a [`Table`](super::Table) would give for the same writes.
///
/// # Examples
///
/// ```
/// use pk_codec::table::{Attribute, HotspotMeter, ManualClock, Judge, PrimaryKey, Schema, Table, TableOptions};
///
/// let options = TableOptions::default().split_load_ops(20).load_window_ms(1_000);
/// let mut judge = Judge::new(Schema::single_string("pk")?, options.clone())?;
/// // The same writes into the full model, for comparison.
/// let clock = ManualClock::new(0);
/// let table = Table::with_clock(Schema::single_string("pk")?, options, clock.clone())?;
/// let mut meter = HotspotMeter::new(1_000);
/// for i in 0..2_000i64 {
///     let key = PrimaryKey::from(format!("{:05}", (i * 7_919) % 10_007));
///     judge.write(&key, 0, i * 10)?;
///     meter.record(&table, key.partition_value(), i * 10);
///     clock.set(i * 10);
///     table.put(key, vec![])?;
/// }
/// assert!(judge.exact());
/// assert_eq!(judge.report(), table.report());
/// assert_eq!(judge.hotspot(), meter.report());
/// # Ok::<(), pk_codec::table::TableError>(())
/// ```
#[derive(Debug)]
pub struct Judge {
    schema: Schema,
    options: TableOptions,
    /// The table's version rules: which cells a put stores.
    policy: VersionPolicy,
    window_ms: i64,
    sample_every: u64,
    /// The partitions in key order, and each one's lower bound encoded (searched by key).
    /// Boxed: a split inserts one, and moves a pointer per later partition rather than the
    /// partition.
    #[allow(clippy::vec_box)]
    parts: Vec<Box<Part>>,
    lowers: Vec<Vec<u8>>,
    pinned: Vec<PkValue>,
    current_window: i64,
    next_window_ms: i64,
    next_id: u64,
    splits: u64,
    merges: u64,
    records: Vec<WindowRecord>,
    partitions_at: HashMap<i64, usize>,
    hot: Vec<HotKeyValue>,
    meter: HotspotMeter,
    /// Sketch entries over all partitions, the most allowed, and whether any was folded.
    entries: usize,
    budget: usize,
    coarse: bool,
    /// The encoded key of the write at hand (kept between writes).
    scratch: Vec<u8>,
}

impl Judge {
    /// A judge of writes to a table of `schema` under `options` (its split, merge and window
    /// settings; capacity throttling is not modelled), at clock time 0 as a table with a
    /// [`ManualClock`](super::ManualClock) at 0 starts.
    ///
    /// # Errors
    ///
    /// As [`Table::with_clock`](super::Table::with_clock): bad options or pre-split points.
    pub fn new(schema: Schema, options: TableOptions) -> Result<Self, TableError> {
        Self::with_sketch_budget(schema, options, DEFAULT_SKETCH_BUDGET)
    }

    /// A judge that keeps at most `budget` sketch entries over all its partitions (up to 32 per
    /// partition are kept whatever the budget).
    ///
    /// # Errors
    ///
    /// As [`Judge::new`].
    pub fn with_sketch_budget(
        schema: Schema,
        options: TableOptions,
        budget: usize,
    ) -> Result<Self, TableError> {
        // The table checks the options and the split points: a judge accepts what it accepts.
        let table =
            super::Table::with_clock(schema.clone(), options.clone(), super::ManualClock::new(0))?;
        drop(table);
        let window_ms = options.load_window_ms;
        let mut bounds = vec![PkValue::InfMin];
        bounds.extend(options.pre_split.iter().cloned());
        let parts: Vec<Box<Part>> = bounds
            .iter()
            .enumerate()
            .map(|(i, lower)| {
                let upper = bounds.get(i + 1).cloned().unwrap_or(PkValue::InfMax);
                Box::new(Part::new(i as u64, lower.clone(), upper))
            })
            .collect();
        let lowers = parts.iter().map(|p| value_bytes(p.lower())).collect();
        Ok(Self {
            pinned: options.pre_split.clone(),
            next_id: parts.len() as u64,
            parts,
            lowers,
            sample_every: u64::from(options.load_sample_every),
            window_ms,
            current_window: 0,
            next_window_ms: next_window_start(0, window_ms),
            splits: 0,
            merges: 0,
            records: Vec::new(),
            partitions_at: HashMap::new(),
            hot: Vec::new(),
            meter: HotspotMeter::new(window_ms),
            entries: 0,
            budget: budget.max(1),
            coarse: false,
            scratch: Vec::new(),
            policy: VersionPolicy::of(&options),
            schema,
            options,
        })
    }

    /// Whether no sketch has been coarsened: the figures are then the table's exactly.
    #[must_use]
    pub const fn exact(&self) -> bool {
        !self.coarse
    }

    /// Sketch entries kept now, over all partitions: at most the budget, or 32 a partition when
    /// partitions outnumber the budget's thirty-seconds.
    #[must_use]
    pub const fn sketch_entries(&self) -> usize {
        self.entries
    }

    /// Partitions now.
    #[must_use]
    pub fn partition_count(&self) -> usize {
        self.parts.len()
    }

    /// Checks a partition-key value as the table does (its type and size), without a key.
    ///
    /// # Errors
    ///
    /// The table's error for a value it refuses.
    pub fn check_partition_value(&self, value: &PkValue) -> Result<(), TableError> {
        self.schema.check_partition_value(value)
    }

    /// Checks a key as the table does before writing it.
    ///
    /// # Errors
    ///
    /// The table's error for a key it refuses (wrong columns, a value over its limit).
    pub fn check_key(&self, key: &PrimaryKey) -> Result<(), TableError> {
        self.schema.check_row_key(key)
    }

    /// Writes a row of `key` holding `attribute_bytes` bytes of attributes at `time_ms`, as
    /// [`Table::put`](super::Table::put) at that clock time would (with the write counted by
    /// the hotspot meter first, as a [`HotspotMeter`] recorded before each put). A time before
    /// the open window's counts in the open window, as the table counts it.
    ///
    /// # Errors
    ///
    /// As [`Judge::check_key`]; nothing is counted then.
    pub fn write(
        &mut self,
        key: &PrimaryKey,
        attribute_bytes: u64,
        time_ms: i64,
    ) -> Result<(), TableError> {
        self.check_key(key)?;
        let value = key.partition_value();
        let parts = &self.parts;
        self.meter.record_in(
            |out| {
                out.truncate(parts.len());
                for (i, p) in parts.iter().enumerate() {
                    match out.get_mut(i) {
                        Some(v) => v.clone_from(p.lower()),
                        None => out.push(p.lower().clone()),
                    }
                }
            },
            value,
            time_ms,
        );
        self.tick(time_ms);
        let size = key.size() as u64 + attribute_bytes;
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        // The partition-key value first: its end is where the encoding stands then.
        let (first, rest) = key.values().split_at(key.values().len().min(1));
        encode_key(first, &mut scratch);
        let partition_len = scratch.len();
        encode_key(rest, &mut scratch);
        let pbytes = &scratch[..partition_len];
        let at = self
            .lowers
            .partition_point(|l| compare(l, pbytes).is_le())
            .saturating_sub(1);
        let per_part = (self.budget / self.parts.len()).max(MIN_ENTRIES);
        let p = &mut self.parts[at];
        p.window_writes += 1;
        if sampled(self.sample_every, p.window_writes) {
            p.samples.push_encoded(pbytes);
        }
        if p.sketch.coarse {
            // Counted as a new row: a rewrite of a folded key is an upper bound.
            p.bytes += size;
            p.rows += 1;
            p.sketch.tick += 1;
            if p.sketch.tick.is_multiple_of(SKETCH_EVERY) {
                let cap = (2 * p.bytes / per_part as u64).max(size * SKETCH_EVERY);
                if p.sketch
                    .add_coarse(&scratch, size * SKETCH_EVERY, SKETCH_EVERY, cap)
                {
                    self.entries += 1;
                }
            }
        } else {
            match p.sketch.entries.entry(scratch.as_slice().into()) {
                std::collections::btree_map::Entry::Occupied(mut o) => {
                    // A rewrite: the row's new size replaces the old.
                    let e = o.get_mut();
                    p.bytes = p.bytes - e.bytes + size;
                    e.bytes = size;
                }
                std::collections::btree_map::Entry::Vacant(v) => {
                    v.insert(Entry {
                        bytes: size,
                        rows: 1,
                    });
                    p.bytes += size;
                    p.rows += 1;
                    self.entries += 1;
                }
            }
        }
        p.window_bytes_written += size;
        let size_split = size_split_needed(&self.options, p.bytes, || p.sketch.single_value());
        let load_split =
            load_split_needed(&self.options, p.window_writes, p.load_split_tried, || {
                p.samples.len()
            });
        if load_split {
            p.load_split_tried = true;
        }
        self.scratch = scratch;
        if size_split || load_split {
            self.split(
                at,
                if size_split {
                    SplitKind::Size
                } else {
                    SplitKind::Load
                },
            );
        }
        if self.entries > self.budget.max(2 * MIN_ENTRIES * self.parts.len()) {
            self.coarsen();
        }
        Ok(())
    }

    /// Writes a row of `key` holding `attributes` at `time_ms`: [`Judge::write`] with the
    /// bytes of the cells that a [`Table::put`](super::Table::put) of them at that clock time
    /// stores (each cell its name, its value and 8 bytes of version; an attribute named twice
    /// with one version is stored once, its last value; at most `max_versions` a column).
    ///
    /// # Errors
    ///
    /// As [`Judge::write`], and the table's error for attributes it refuses (a bad column
    /// name, a value over its limit, a version outside the window at `time_ms`); nothing is
    /// counted then, but the clock moves to `time_ms` as the table's does before it checks
    /// the attributes (a window that ended closes).
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::table::{Attribute, Judge, PrimaryKey, Schema, TableOptions};
    ///
    /// let mut judge = Judge::new(Schema::single_string("pk")?, TableOptions::default())?;
    /// // One cell of column "a" is stored, its last value: 1 + 8 + 8 bytes, and the key's 1.
    /// judge.put(&PrimaryKey::from("k"), &[Attribute::new("a", 1), Attribute::new("a", 2)], 0)?;
    /// assert_eq!(judge.report().bytes, 18);
    /// # Ok::<(), pk_codec::table::TableError>(())
    /// ```
    pub fn put(
        &mut self,
        key: &PrimaryKey,
        attributes: &[Attribute],
        time_ms: i64,
    ) -> Result<(), TableError> {
        self.check_key(key)?;
        let cells = match self
            .policy
            .stored_cells(std::borrow::Cow::Borrowed(attributes), time_ms)
        {
            Ok(cells) => cells,
            Err(e) => {
                self.tick(time_ms);
                return Err(e);
            }
        };
        self.write(key, cells.bytes() as u64, time_ms)
    }

    /// Moves the clock to `time_ms`: closes the open window if it has ended, as the table's
    /// clock reading does.
    #[inline]
    fn tick(&mut self, time_ms: i64) {
        if time_ms >= self.next_window_ms {
            self.rotate(time_ms.div_euclid(self.window_ms));
        }
    }

    /// Closes the open window (records every partition's load), moves to window `w`, and
    /// merges cold neighbours, as the table's rotation does.
    fn rotate(&mut self, w: i64) {
        let old = self.current_window;
        if w <= old {
            return;
        }
        for p in &mut self.parts {
            let (ops, rec) = p.take_window(old);
            p.last_window_ops = ops;
            self.records.extend(rec);
        }
        self.current_window = w;
        self.next_window_ms = next_window_start(w, self.window_ms);
        self.partitions_at.insert(old, self.parts.len());
        self.merge_cold();
    }

    /// Splits partition `at` if the rule finds a cut, as the table's split.
    fn split(&mut self, at: usize, kind: SplitKind) {
        let p = &self.parts[at];
        let (point, hot) = split_point(kind, &self.options, p.bytes, &p.samples, || {
            p.sketch.size_split_point()
        });
        let Some(point) = point else {
            if let Some((value, share)) = hot {
                self.hot.push(HotKeyValue {
                    value,
                    share,
                    window: self.current_window,
                });
            }
            return;
        };
        let part = &mut self.parts[at];
        debug_assert!(*part.lower() < point && point < part.bounds.1);
        let (_, rec) = part.take_window(self.current_window);
        // The lowest key of the point's value: every key of it and above goes right.
        let mut cut = Vec::new();
        encode_key(
            super::store::bound_key(&point, self.schema.columns().len()).values(),
            &mut cut,
        );
        let (all_bytes, all_rows) = part
            .sketch
            .entries
            .values()
            .fold((0u64, 0u64), |(b, r), e| (b + e.bytes, r + e.rows));
        let right_entries = part.sketch.entries.split_off(cut.as_slice());
        let (right_bytes, right_rows) = right_entries
            .values()
            .fold((0u64, 0u64), |(b, r), e| (b + e.bytes, r + e.rows));
        // The partition's bytes and rows shared as the entries' are: exactly them while the
        // sketch is exact (its entries are then the rows), in proportion once it is coarse.
        let share = |of: u64, part: u64, all: u64| -> u64 {
            u64::try_from(u128::from(of) * u128::from(part) / u128::from(all.max(1))).unwrap_or(of)
        };
        let right_bytes = share(part.bytes, right_bytes, all_bytes);
        let right_rows = share(part.rows, right_rows, all_rows);
        let id = self.next_id;
        self.next_id += 2;
        let coarse = part.sketch.coarse;
        let mut left = Part::new(id, part.lower().clone(), point.clone());
        left.sketch = std::mem::take(&mut part.sketch);
        left.bytes = part.bytes - right_bytes;
        left.rows = part.rows - right_rows;
        let mut right = Part::new(id + 1, point, part.bounds.1.clone());
        right.sketch = Sketch {
            entries: right_entries,
            coarse,
            tick: 0,
        };
        right.bytes = right_bytes;
        right.rows = right_rows;
        let right_lower = value_bytes(right.lower());
        **part = left;
        self.parts.insert(at + 1, Box::new(right));
        self.lowers.insert(at + 1, right_lower);
        self.splits += 1;
        self.records.extend(rec);
    }

    /// Merges neighbours that are small and were cold in the last window, never across a
    /// pre-split point, as the table's merge.
    fn merge_cold(&mut self) {
        let Some(max_bytes) = self.options.effective_merge_size() else {
            return;
        };
        let max_ops = self.options.effective_merge_ops();
        let window = self.current_window;
        let mut i = 0;
        while i + 1 < self.parts.len() {
            let (a, b) = (&self.parts[i], &self.parts[i + 1]);
            let pinned = self.pinned.binary_search(b.lower()).is_ok();
            if !merge_cold_enough(max_ops, (a.last_window_ops, b.last_window_ops), pinned)
                || !merge_fits(max_bytes, a.bytes + b.bytes)
            {
                i += 1;
                continue;
            }
            let mut b = self.parts.remove(i + 1);
            self.lowers.remove(i + 1);
            let mut a = self.parts.remove(i);
            for p in [&mut a, &mut b] {
                self.records.extend(p.take_window(window).1);
            }
            let id = self.next_id;
            self.next_id += 1;
            let mut m = Part::new(id, a.lower().clone(), b.bounds.1.clone());
            a.sketch.entries.append(&mut b.sketch.entries);
            a.sketch.coarse |= b.sketch.coarse;
            m.sketch = std::mem::take(&mut a.sketch);
            m.bytes = a.bytes + b.bytes;
            m.rows = a.rows + b.rows;
            m.last_window_ops = a.last_window_ops + b.last_window_ops;
            self.parts.insert(i, Box::new(m));
            self.merges += 1;
        }
    }

    /// Folds the largest sketches until the entries are within three quarters of the budget.
    #[cold]
    fn coarsen(&mut self) {
        let floor = MIN_ENTRIES;
        let target = (self.budget - self.budget / 4).max(MIN_ENTRIES * self.parts.len());
        let mut order: Vec<usize> = (0..self.parts.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(self.parts[i].sketch.entries.len()));
        for i in order {
            if self.entries <= target {
                break;
            }
            let sketch = &mut self.parts[i].sketch;
            while sketch.entries.len() > floor && self.entries > target {
                let removed = sketch.halve();
                self.entries -= removed;
                self.coarse |= removed > 0;
                sketch.coarse |= removed > 0;
                if removed == 0 {
                    break;
                }
            }
        }
    }

    /// The open window's records beside the closed ones'.
    fn with_records<R>(&self, f: impl FnOnce(&[&WindowRecord]) -> R) -> R {
        let open: Vec<WindowRecord> = self
            .parts
            .iter()
            .filter_map(|p| p.record(self.current_window))
            .collect();
        let all: Vec<&WindowRecord> = self.records.iter().chain(&open).collect();
        f(&all)
    }

    /// The load report a table would give for the writes so far.
    #[must_use]
    pub fn report(&self) -> LoadReport {
        let (windows, reads, writes) = self.with_records(|records| {
            summarize(
                records,
                &self.partitions_at,
                self.parts.len(),
                self.window_ms,
            )
        });
        let mut stats = Vec::with_capacity(self.parts.len());
        let mut oversized = Vec::new();
        for p in &self.parts {
            stats.push(PartitionStats {
                id: p.id,
                lower: p.lower().clone(),
                upper: p.bounds.1.clone(),
                rows: p.rows,
                bytes: p.bytes,
                reads: 0,
                writes: p.total_writes + p.window_writes,
            });
            if size_over(&self.options, p.bytes)
                && p.sketch.single_value()
                && let Some((first, _)) = p.sketch.entries.first_key_value()
            {
                oversized.push(OversizedKeyValue {
                    value: decode_partition_value(partition_bytes(first)),
                    bytes: p.bytes,
                    rows: p.rows,
                });
            }
        }
        assemble(
            windows,
            (reads, writes),
            stats,
            oversized,
            self.hot.clone(),
            Counts {
                splits: self.splits,
                merges: self.merges,
                busy_rejections: 0,
            },
        )
    }

    /// The hotspot figures ([`HotspotMeter`]) of the writes so far.
    #[must_use]
    pub fn hotspot(&self) -> HotspotReport {
        self.meter.report()
    }

    /// The heatmap a table would draw for the writes so far.
    #[must_use]
    pub fn heatmap(&self, options: &HeatmapOptions) -> Heatmap {
        let lowers: Vec<PkValue> = self.parts.iter().map(|p| p.lower().clone()).collect();
        self.with_records(|records| Heatmap::of_records(&lowers, records, self.window_ms, options))
    }
}
