//! Load windows: closing a window records every partition's load; the records make the load
//! report.

use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;

use super::load::{
    Counts, Extremes, Load, LoadReport, Log, OversizedKeyValue, PartitionStats, PartitionWindow,
    WindowRecord, assemble, next_window_start, summarize,
};
use super::partition::{PartData, Partition, WriteLoad};
use super::splits::size_over;
use super::store::{Table, lock, read, write};

/// Load windows and reports.
impl Table {
    /// Closes the current load window (records every partition's load) and moves to `w`.
    #[cold]
    pub(super) fn rotate(&self, w: i64) {
        {
            // The records are gathered in the lock's buffer, kept from one window to the next.
            let mut records = lock(&self.rotate_lock);
            let old = self.current_window.load(Relaxed);
            if w <= old {
                return;
            }
            let partitions = {
                // Map, then partition: the order every writer takes them in. The map's lock is
                // released before the log's is taken (a report takes the log's, then the map's).
                let map = self.map.read();
                for p in map.iter() {
                    let mut data = write(&p.data);
                    if data.retired {
                        continue;
                    }
                    let (ops, rec) = take_window(p, &mut data, old);
                    p.last_window_ops.store(ops, Relaxed);
                    records.extend(rec);
                }
                map.len()
            };
            self.current_window.store(w, Relaxed);
            self.next_window_ms
                .store(next_window_start(w, self.window_ms), Relaxed);
            let mut log = lock(&self.log);
            log.partitions_at.insert(old, partitions);
            log.records.append(&mut records);
        }
        self.merge_cold();
    }

    /// Every partition-window record so far, the open window included (its counts so far).
    #[must_use]
    pub fn load_records(&self) -> Vec<PartitionWindow> {
        self.with_records(|records, _| records.iter().map(|r| r.to_public()).collect())
    }

    /// Runs `f` on every partition-window record so far, the open window's last, as
    /// [`Table::load_records`] returns them but borrowed (a report does not copy the log), and
    /// on the log.
    pub(super) fn with_records<R>(&self, f: impl FnOnce(&[&WindowRecord], &Log) -> R) -> R {
        // No one takes the log's lock while holding a partition's, so holding it while the
        // open window's records are read keeps the log and the open window consistent.
        let log = lock(&self.log);
        let window = self.current_window.load(Relaxed);
        let open: Vec<WindowRecord> = self
            .map
            .read()
            .iter()
            .filter_map(|p| {
                let data = read(&p.data);
                (window_ops(p, &data) > 0).then(|| window_record(p, &data, window))
            })
            .collect();
        let all: Vec<&WindowRecord> = log.records.iter().chain(&open).collect();
        f(&all, &log)
    }

    /// The skew report: partitions, hottest share, max/mean, oversized and hot key values,
    /// per-partition and per-window figures.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::table::{Attribute, Table, TableOptions};
    ///
    /// let table = Table::single_string_key("pk", TableOptions::default())?;
    /// table.put("a", vec![Attribute::new("n", 1)])?;
    /// let report = table.report();
    /// assert_eq!((report.partitions, report.writes, report.hottest_share), (1, 1, 1.0));
    /// # Ok::<(), pk_codec::table::TableError>(())
    /// ```
    #[must_use]
    pub fn report(&self) -> LoadReport {
        let (windows, reads, writes, hot) = self.with_records(|records, log| {
            let current = self.map.read().len();
            let (windows, reads, writes) =
                summarize(records, &log.partitions_at, current, self.window_ms);
            (windows, reads, writes, log.hot.clone())
        });
        let parts: Vec<Arc<Partition>> = self.map.read().to_vec();
        let mut stats = Vec::with_capacity(parts.len());
        let mut oversized = Vec::new();
        for p in &parts {
            let data = read(&p.data);
            stats.push(PartitionStats {
                id: p.id,
                lower: p.lower.clone(),
                upper: p.upper.clone(),
                rows: data.rows.len() as u64,
                bytes: data.bytes,
                reads: p.total_reads.load(Relaxed) + p.reads.load(Relaxed),
                writes: data.total_writes + data.window.writes,
            });
            if size_over(&self.options, data.bytes)
                && data.single_value()
                && let Some(first) = data.rows.first()
            {
                oversized.push(OversizedKeyValue {
                    value: first.partition_value(),
                    bytes: data.bytes,
                    rows: data.rows.len() as u64,
                });
            }
        }
        assemble(
            windows,
            (reads, writes),
            stats,
            oversized,
            hot,
            Counts {
                splits: self.splits.load(Relaxed),
                merges: self.merges.load(Relaxed),
                busy_rejections: self.busy_rejections.load(Relaxed),
            },
        )
    }

    /// The load window length, ms.
    #[must_use]
    pub fn load_window_ms(&self) -> i64 {
        self.window_ms
    }
}

/// A record of a partition's open-window load, without resetting it.
pub(super) fn window_record(p: &Partition, data: &PartData, window: i64) -> WindowRecord {
    let sampled = lock(&p.samples).extremes();
    record(p, data, window, sampled)
}

fn record(p: &Partition, data: &PartData, window: i64, sampled: Option<Extremes>) -> WindowRecord {
    WindowRecord {
        window,
        partition: p.id,
        bounds: Arc::clone(&p.bounds),
        load: Load {
            reads: p.reads.load(Relaxed),
            writes: data.window.writes,
            rows_read: p.rows_read.load(Relaxed),
            bytes_read: p.bytes_read.load(Relaxed),
            bytes_written: data.window.bytes_written,
        },
        sampled,
        rows: data.rows.len() as u64,
        bytes: data.bytes,
    }
}

/// Operations of a partition's open window.
fn window_ops(p: &Partition, data: &PartData) -> u64 {
    p.reads.load(Relaxed) + data.window.writes
}

/// Resets a partition's window load (under the partition's write lock); returns its operations
/// and, when there were any, its record (a window without operations leaves no record).
pub(super) fn take_window(
    p: &Partition,
    data: &mut PartData,
    window: i64,
) -> (u64, Option<WindowRecord>) {
    let reads = p.reads.load(Relaxed);
    let ops = reads + data.window.writes;
    if ops == 0 {
        // Nothing was counted or sampled (every count and sample comes with an operation,
        // under the partition's lock, which the caller holds for writing): nothing to reset.
        return (0, None);
    }
    let sampled = {
        let mut samples = lock(&p.samples);
        let sampled = samples.extremes();
        samples.clear();
        sampled
    };
    let rec = Some(record(p, data, window, sampled));
    p.reads.store(0, Relaxed);
    p.rows_read.store(0, Relaxed);
    p.bytes_read.store(0, Relaxed);
    p.total_reads.fetch_add(reads, Relaxed);
    data.total_writes += data.window.writes;
    data.window = WriteLoad::default();
    p.load_split_tried.store(false, Relaxed);
    (ops, rec)
}
