//! Load accounting per partition and window, the log of past windows, the skew report (put
//! together in one place for the table and the judge) and the capacity model.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use serde::Serialize;

use super::row::{decode_partition_value, first_value_len};
use super::schema::PkValue;
use super::small_bytes::SmallBytes;

/// Operations and volume one partition served in one window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Load {
    /// Read operations (a get, or one partition's share of a range read).
    pub reads: u64,
    /// Write operations (a put, update or delete, or one row of a batch).
    pub writes: u64,
    /// Rows returned by reads.
    pub rows_read: u64,
    /// Bytes returned by reads.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
}

impl Load {
    /// Reads plus writes, saturating at `u64::MAX` (the fields are public and may hold any
    /// counts).
    #[must_use]
    pub fn ops(&self) -> u64 {
        self.reads.saturating_add(self.writes)
    }
}

/// The load of one partition in one window, as recorded when the window closed (or the
/// partition was split or merged).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartitionWindow {
    /// Window index: `time_ms / load_window_ms`.
    pub window: i64,
    /// The partition's id.
    pub partition: u64,
    /// The partition's lowest partition-key value (inclusive).
    pub lower: PkValue,
    /// The partition's upper bound (exclusive).
    pub upper: PkValue,
    /// What it served.
    pub load: Load,
    /// Lowest partition-key value among the window's sampled operations.
    pub sampled_low: Option<PkValue>,
    /// Highest partition-key value among the window's sampled operations.
    pub sampled_high: Option<PkValue>,
    /// Rows it held at the end.
    pub rows: u64,
    /// Bytes it held at the end.
    pub bytes: u64,
}

/// A [`PartitionWindow`] as the table's log keeps it: the partition's bounds are shared by
/// every record of the partition (and the partition itself) instead of copied into each.
#[derive(Debug, Clone)]
pub(crate) struct WindowRecord {
    pub(crate) window: i64,
    pub(crate) partition: u64,
    /// `(lower, upper)`.
    pub(crate) bounds: Arc<(PkValue, PkValue)>,
    pub(crate) load: Load,
    /// The lowest and highest sampled partition-key values, encoded one after the other.
    pub(crate) sampled: Option<Extremes>,
    pub(crate) rows: u64,
    pub(crate) bytes: u64,
}

impl WindowRecord {
    /// The partition's lowest partition-key value.
    pub(crate) fn lower(&self) -> &PkValue {
        &self.bounds.0
    }

    /// The partition's upper bound.
    pub(crate) fn upper(&self) -> &PkValue {
        &self.bounds.1
    }

    /// The lowest and highest sampled partition-key values, encoded.
    pub(crate) fn sampled(&self) -> Option<(&[u8], &[u8])> {
        let s = self.sampled.as_ref()?.as_bytes();
        Some(s.split_at(first_value_len(s).unwrap_or(s.len())))
    }

    /// The record as [`Table::load_records`](crate::table::Table::load_records) returns it.
    pub(crate) fn to_public(&self) -> PartitionWindow {
        PartitionWindow {
            window: self.window,
            partition: self.partition,
            lower: self.lower().clone(),
            upper: self.upper().clone(),
            load: self.load,
            sampled_low: self.sampled().map(|s| decode_partition_value(s.0)),
            sampled_high: self.sampled().map(|s| decode_partition_value(s.1)),
            rows: self.rows,
            bytes: self.bytes,
        }
    }
}

/// Bytes of [`Extremes`] kept inline: two short partition-key values (a key of up to about 20
/// bytes each, as most spliced keys are). Chosen so that the whole type takes 48 bytes.
const INLINE_EXTREMES: usize = 46;

/// The lowest and highest sampled partition-key values of a window, encoded one after the other:
/// inline when they are short, so that the record of a partition's window (one per partition
/// and window, tens of thousands in a day's simulation) costs no allocation of its own.
#[derive(Debug, Clone)]
pub(crate) struct Extremes(SmallBytes<INLINE_EXTREMES>);

const _: () = assert!(std::mem::size_of::<Extremes>() == 48);

impl Extremes {
    /// The two values `low` and `high`, encoded, one after the other.
    pub(crate) fn new(low: &[u8], high: &[u8]) -> Self {
        Self(SmallBytes::concat(&[low, high]))
    }

    /// Both values' bytes, the lowest first.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        self.0.as_slice()
    }

    /// Whether both values are kept inline.
    #[cfg(test)]
    pub(crate) const fn is_inline(&self) -> bool {
        self.0.is_inline()
    }
}

/// One current partition in a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartitionStats {
    /// The partition's id.
    pub id: u64,
    /// Lowest partition-key value (inclusive).
    pub lower: PkValue,
    /// Upper bound (exclusive).
    pub upper: PkValue,
    /// Rows held.
    pub rows: u64,
    /// Bytes held.
    pub bytes: u64,
    /// Reads since the partition was created.
    pub reads: u64,
    /// Writes since the partition was created.
    pub writes: u64,
}

/// Skew figures of one window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WindowStats {
    /// Window index.
    pub window: i64,
    /// Window start, ms.
    pub start_ms: i64,
    /// Partitions the table had at the window's end.
    pub partitions: usize,
    /// Partitions that received any write in the window.
    pub partitions_with_writes: usize,
    /// All operations in the window.
    pub ops: u64,
    /// Operations of the busiest partition.
    pub max_ops: u64,
    /// Lower bound of the busiest partition.
    pub hottest_lower: Option<PkValue>,
}

/// One partition-key value that holds more than the split size by itself: it cannot be split.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OversizedKeyValue {
    /// The value.
    pub value: PkValue,
    /// Bytes under it.
    pub bytes: u64,
    /// Rows under it.
    pub rows: u64,
}

/// One partition-key value that took most of its partition's load, so a load split could not
/// help.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HotKeyValue {
    /// The value.
    pub value: PkValue,
    /// Its share of the sampled operations of its partition (0.5 to 1).
    pub share: f64,
    /// The window in which it was seen.
    pub window: i64,
}

/// Whether a design runs hot: skew figures over the windows seen so far.
///
/// `hottest_share` and `max_over_mean` are computed per window and weighted by operations,
/// because a hotspot is about load at the same time: a sequential key spreads its rows over
/// many partitions by the end of the day, yet at every moment writes to one of them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadReport {
    /// Current number of partitions.
    pub partitions: usize,
    /// Current partitions that received any write since they were created.
    pub partitions_with_writes: usize,
    /// Mean over windows with writes of the partitions that received writes.
    pub mean_partitions_written_per_window: f64,
    /// Rows stored.
    pub rows: u64,
    /// Bytes stored.
    pub bytes: u64,
    /// All reads.
    pub reads: u64,
    /// All writes.
    pub writes: u64,
    /// Share of all operations served by the busiest partition of their window (1 / partitions
    /// is perfectly even, 1.0 is one partition doing everything).
    pub hottest_share: f64,
    /// Busiest partition's operations over the mean per partition, weighted over windows
    /// (1.0 is perfectly even).
    pub max_over_mean: f64,
    /// Splits so far.
    pub splits: u64,
    /// Merges so far.
    pub merges: u64,
    /// Operations refused as [`TableError::PartitionBusy`](super::TableError::PartitionBusy) by
    /// throttling (0 without it).
    pub busy_rejections: u64,
    /// Key values too large for one partition.
    pub oversized_key_values: Vec<OversizedKeyValue>,
    /// Key values whose load no split could spread (largest share seen per value).
    pub hot_key_values: Vec<HotKeyValue>,
    /// The current partitions, in key order.
    pub partition_stats: Vec<PartitionStats>,
    /// Per-window figures, in time order (windows without operations are left out).
    pub windows: Vec<WindowStats>,
}

/// Time a workload takes when each partition serves at most `ops_per_tick` operations per tick
/// (one tick = one load window), against the same operations spread perfectly evenly.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CapacityEstimate {
    /// Operations one partition serves per tick.
    pub ops_per_tick: u64,
    /// Ticks the workload takes: per window, its busiest partition's operations / capacity.
    pub ticks: u64,
    /// Ticks with the same operations spread evenly over the same partitions.
    pub ideal_ticks: u64,
    /// `ideal_ticks / ticks` (1.0 is perfect).
    pub efficiency: f64,
}

impl LoadReport {
    /// Runs the capacity model: each partition serves at most `ops_per_tick` operations per
    /// tick; a window lasts as many ticks as its busiest partition needs (at least 1). The tick
    /// counts saturate at `u64::MAX` (a report's fields are public and may hold any counts).
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::table::{Attribute, ManualClock, Schema, Table, TableOptions};
    ///
    /// let clock = ManualClock::new(1_700_000_000_000);
    /// let table = Table::with_clock(
    ///     Schema::single_string("pk")?,
    ///     TableOptions::default().pre_split(vec!["m".into()]),
    ///     clock.clone(),
    /// )?;
    /// for k in ["a", "b", "c", "z"] {
    ///     table.put(k, vec![Attribute::new("n", 1)])?;
    /// }
    /// let est = table.report().capacity(1);
    /// assert_eq!((est.ticks, est.ideal_ticks), (3, 2));
    /// # Ok::<(), pk_codec::table::TableError>(())
    /// ```
    #[must_use]
    pub fn capacity(&self, ops_per_tick: u64) -> CapacityEstimate {
        let c = ops_per_tick.max(1);
        let mut ticks = 0u64;
        let mut ideal = 0u64;
        for w in &self.windows {
            if w.ops == 0 {
                continue;
            }
            // Saturating: the fields are public, so a report may hold any counts.
            ticks = ticks.saturating_add(w.max_ops.div_ceil(c).max(1));
            let p = u64::try_from(w.partitions.max(1)).unwrap_or(u64::MAX);
            ideal = ideal.saturating_add(w.ops.div_ceil(c.saturating_mul(p)).max(1));
        }
        #[allow(clippy::cast_precision_loss)]
        let efficiency = if ticks == 0 {
            1.0
        } else {
            ideal as f64 / ticks as f64
        };
        CapacityEstimate {
            ops_per_tick: c,
            ticks,
            ideal_ticks: ideal,
            efficiency,
        }
    }

    /// A few lines for a terminal.
    #[must_use]
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "partitions: {} ({} with writes, {:.1} written per window), splits {}, merges {}",
            self.partitions,
            self.partitions_with_writes,
            self.mean_partitions_written_per_window,
            self.splits,
            self.merges
        );
        let _ = writeln!(
            s,
            "rows {} bytes {} reads {} writes {}",
            self.rows, self.bytes, self.reads, self.writes
        );
        let _ = writeln!(
            s,
            "hottest partition share {:.1}%, max/mean {:.2}",
            self.hottest_share * 100.0,
            self.max_over_mean
        );
        for o in &self.oversized_key_values {
            let _ = writeln!(
                s,
                "oversized key value {:?}: {} bytes in {} rows (one value is never split)",
                o.value.to_string(),
                o.bytes,
                o.rows
            );
        }
        for h in &self.hot_key_values {
            let _ = writeln!(
                s,
                "hot key value {:?}: {:.0}% of its partition's load, no split can help",
                h.value.to_string(),
                h.share * 100.0
            );
        }
        s
    }
}

/// One comparison table of several designs (a line each): partitions, partitions with
/// writes, hottest share, max/mean and the capacity model's efficiency at `ops_per_tick`.
///
/// # Examples
///
/// ```
/// use pk_codec::table::{Attribute, Table, TableOptions, compare_designs};
///
/// let table = Table::single_string_key("pk", TableOptions::default())?;
/// table.put("a", vec![Attribute::new("n", 1)])?;
/// let text = compare_designs(&[("plain", &table.report())], 100);
/// assert!(text.contains("plain"));
/// # Ok::<(), pk_codec::table::TableError>(())
/// ```
#[must_use]
pub fn compare_designs(designs: &[(&str, &LoadReport)], ops_per_tick: u64) -> String {
    let width = designs
        .iter()
        .map(|d| d.0.chars().count())
        .max()
        .unwrap_or(0)
        .max(6);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:width$}  {:>10}  {:>8}  {:>8}  {:>8}  {:>10}",
        "design", "partitions", "written", "hottest", "max/mean", "efficiency"
    );
    for (name, r) in designs {
        let cap = r.capacity(ops_per_tick);
        let _ = writeln!(
            s,
            "{:width$}  {:>10}  {:>8}  {:>7.1}%  {:>8.2}  {:>9.1}%",
            name,
            r.partitions,
            r.partitions_with_writes,
            r.hottest_share * 100.0,
            r.max_over_mean,
            cap.efficiency * 100.0
        );
    }
    s
}

/// Builds the per-window skew figures from partition-window records and partition counts.
pub(crate) fn window_stats(
    records: &[&WindowRecord],
    partitions_at: impl Fn(i64) -> usize,
    window_ms: i64,
) -> Vec<WindowStats> {
    let mut idx: Vec<usize> = (0..records.len()).collect();
    idx.sort_by_key(|&i| records[i].window);
    let mut out: Vec<WindowStats> = Vec::new();
    for i in idx {
        let r = records[i];
        let ops = r.load.ops();
        if ops == 0 {
            continue;
        }
        if out.last().is_none_or(|w| w.window != r.window) {
            out.push(WindowStats {
                window: r.window,
                start_ms: r.window.saturating_mul(window_ms),
                partitions: partitions_at(r.window),
                partitions_with_writes: 0,
                ops: 0,
                max_ops: 0,
                hottest_lower: None,
            });
        }
        let w = out.last_mut().expect("pushed above");
        w.ops = w.ops.saturating_add(ops);
        if r.load.writes > 0 {
            w.partitions_with_writes += 1;
        }
        if ops > w.max_ops {
            w.max_ops = ops;
            w.hottest_lower = Some(r.lower().clone());
        }
    }
    out
}

/// Ops-weighted skew: (hottest share, max over mean, mean partitions written per window).
#[allow(clippy::cast_precision_loss)]
pub(crate) fn skew(windows: &[WindowStats]) -> (f64, f64, f64) {
    let ops: u64 = windows.iter().map(|w| w.ops).sum();
    if ops == 0 {
        return (0.0, 0.0, 0.0);
    }
    let max: u64 = windows.iter().map(|w| w.max_ops).sum();
    let mean: f64 = windows
        .iter()
        .map(|w| w.ops as f64 / w.partitions.max(1) as f64)
        .sum();
    let written: Vec<usize> = windows
        .iter()
        .filter(|w| w.partitions_with_writes > 0)
        .map(|w| w.partitions_with_writes)
        .collect();
    let mean_written = if written.is_empty() {
        0.0
    } else {
        written.iter().sum::<usize>() as f64 / written.len() as f64
    };
    (max as f64 / ops as f64, max as f64 / mean, mean_written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(window: i64, partition: u64, writes: u64) -> WindowRecord {
        WindowRecord {
            window,
            partition,
            bounds: Arc::new((
                PkValue::Integer(i64::try_from(partition).unwrap()),
                PkValue::InfMax,
            )),
            load: Load {
                writes,
                ..Load::default()
            },
            sampled: None,
            rows: 0,
            bytes: 0,
        }
    }

    #[test]
    fn skew_of_one_hot_partition_per_window() {
        let records = [rec(0, 1, 10), rec(1, 2, 10), rec(1, 1, 0)];
        let w = window_stats(&records.iter().collect::<Vec<_>>(), |_| 2, 1000);
        assert_eq!(w.len(), 2);
        assert_eq!((w[1].ops, w[1].max_ops, w[1].start_ms), (10, 10, 1000));
        let (share, max_mean, written) = skew(&w);
        assert!((share - 1.0).abs() < 1e-12);
        assert!((max_mean - 2.0).abs() < 1e-12);
        assert!((written - 1.0).abs() < 1e-12);
    }
}

/// Everything recorded about past windows.
#[derive(Debug, Default)]
pub(super) struct Log {
    pub(super) records: Vec<WindowRecord>,
    /// Partitions at the close of each window.
    pub(super) partitions_at: HashMap<i64, usize>,
    pub(super) hot: Vec<HotKeyValue>,
}

/// The first millisecond of the window after window `w`, saturating: a clock at the end of
/// time has no next window.
pub(super) fn next_window_start(w: i64, window_ms: i64) -> i64 {
    w.saturating_add(1).saturating_mul(window_ms)
}

/// The per-window figures of a log's records (with the partitions at each window's close,
/// `current` for the open window), and the reads and writes they hold.
pub(super) fn summarize(
    records: &[&WindowRecord],
    partitions_at: &HashMap<i64, usize>,
    current: usize,
    window_ms: i64,
) -> (Vec<WindowStats>, u64, u64) {
    let windows = window_stats(
        records,
        |w| partitions_at.get(&w).copied().unwrap_or(current),
        window_ms,
    );
    let reads = records.iter().map(|r| r.load.reads).sum();
    let writes = records.iter().map(|r| r.load.writes).sum();
    (windows, reads, writes)
}

/// Counters of a table's life.
pub(super) struct Counts {
    pub(super) splits: u64,
    pub(super) merges: u64,
    pub(super) busy_rejections: u64,
}

/// The load report of per-window figures, per-partition figures, oversized and hot key values
/// (hot ones sorted and each value kept once, at its highest share): the one place a
/// [`LoadReport`] is put together, for the table and the judge alike.
pub(super) fn assemble(
    windows: Vec<WindowStats>,
    (reads, writes): (u64, u64),
    stats: Vec<PartitionStats>,
    oversized: Vec<OversizedKeyValue>,
    mut hot: Vec<HotKeyValue>,
    counts: Counts,
) -> LoadReport {
    hot.sort_by(|a, b| a.value.cmp(&b.value).then(b.share.total_cmp(&a.share)));
    hot.dedup_by(|later, first| later.value == first.value);
    let (hottest_share, max_over_mean, mean_written) = skew(&windows);
    LoadReport {
        partitions: stats.len(),
        partitions_with_writes: stats.iter().filter(|s| s.writes > 0).count(),
        mean_partitions_written_per_window: mean_written,
        rows: stats.iter().map(|s| s.rows).sum(),
        bytes: stats.iter().map(|s| s.bytes).sum(),
        reads,
        writes,
        hottest_share,
        max_over_mean,
        splits: counts.splits,
        merges: counts.merges,
        busy_rejections: counts.busy_rejections,
        oversized_key_values: oversized,
        hot_key_values: hot,
        partition_stats: stats,
        windows,
    }
}
