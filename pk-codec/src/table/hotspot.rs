//! A hotspot measure that holds whatever splits happen inside a load window.
//!
//! [`LoadReport::hottest_share`](crate::table::LoadReport::hottest_share) counts each partition
//! apart. A time-first key writes every operation of a window to the tail of the key space, yet
//! when the tail partition splits several times inside the window, each new tail partition is
//! counted on its own, and the busiest of them looks modest. The [`HotspotMeter`] fixes the
//! partition bounds at each window's start and counts the window's writes per *key range*
//! between those bounds: a tail hotspot lands in one range (the last), however often it splits
//! meanwhile. It also counts the share of writes above the previous window's highest key, the
//! plainest sign of a sequential key.

use serde::Serialize;

use super::partition::count_at_or_below;
use super::schema::PkValue;
use super::store::Table;

/// Per-window figures of a [`HotspotMeter`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HotspotWindow {
    /// Window index: `time_ms / load_window_ms`.
    pub window: i64,
    /// Partitions of the table when the window began.
    pub ranges: usize,
    /// Writes in the window.
    pub writes: u64,
    /// Writes to the busiest key range (bounds fixed at the window's start).
    pub max_range_writes: u64,
    /// Lowest key of the busiest range (`INF_MIN` for the first range).
    pub hottest_lower: PkValue,
    /// Writes above the previous window's highest key (0 in the first window).
    pub above_previous_high: u64,
}

/// The figures of a [`HotspotMeter`] over all windows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HotspotReport {
    /// Share of writes that went to the busiest key range of their window, the ranges being the
    /// partitions at the window's start, weighted by writes. Windows that began with a single
    /// partition say nothing about a design and are left out (unless all are).
    pub hottest_share: f64,
    /// Share of writes (from the second window on) above the previous window's highest key:
    /// near 1.0 for a sequential key, near 0 for a spread one.
    pub tail_share: f64,
    /// Windows seen.
    pub windows: usize,
    /// Windows left out of `hottest_share` because they began with one partition.
    pub warmup_windows: usize,
    /// Writes seen.
    pub writes: u64,
    /// Per-window figures, in time order.
    pub per_window: Vec<HotspotWindow>,
}

/// Counts writes per key range, with the partition bounds fixed at each load window's start.
///
/// Call [`HotspotMeter::record`] before each write to the table, then
/// [`HotspotMeter::report`]. Memory: the current partition bounds and one record per window.
///
/// # Examples
///
/// ```
/// use pk_codec::table::{Attribute, HotspotMeter, ManualClock, PkValue, Schema, Table, TableOptions};
///
/// let clock = ManualClock::new(0);
/// let options = TableOptions::default().split_load_ops(20).load_window_ms(1_000);
/// let table = Table::with_clock(Schema::single_string("pk")?, options, clock.clone())?;
/// let mut meter = HotspotMeter::new(1_000);
/// // A sequential key: ten windows of 100 increasing keys each.
/// for i in 0..1_000i64 {
///     clock.set(i * 10);
///     let key = PkValue::String(format!("{i:08}"));
///     meter.record(&table, &key, i * 10);
///     table.put(key, vec![Attribute::new("n", i)])?;
/// }
/// let report = meter.report();
/// assert!(table.partition_count() > 1);
/// assert_eq!(report.hottest_share, 1.0); // one range takes every write, however it splits
/// assert_eq!(report.tail_share, 1.0);
/// # Ok::<(), pk_codec::table::TableError>(())
/// ```
#[derive(Debug, Clone)]
pub struct HotspotMeter {
    window_ms: i64,
    /// Lower bounds of the partitions at the current window's start, sorted.
    bounds: Vec<PkValue>,
    /// Each bound's [`PkValue::head`]: a search compares these, and bounds only on a tie.
    heads: Vec<u64>,
    counts: Vec<u64>,
    current: Option<HotspotWindow>,
    /// The previous window's highest key, and this window's so far (with their heads).
    previous_high: Option<(u64, PkValue)>,
    high: Option<(u64, PkValue)>,
    windows: Vec<HotspotWindow>,
}

/// Whether value `a` (of head `ah`) lies above `b` (of head `bh`).
#[inline]
fn above(ah: u64, a: &PkValue, (bh, b): &(u64, PkValue)) -> bool {
    ah > *bh || (ah == *bh && a > b)
}

impl HotspotMeter {
    /// A meter for windows of `window_ms` (use the table's load window); a window below 1 ms is
    /// taken as 1 ms (a window has a length, and the table's own is at least that).
    #[must_use]
    pub fn new(window_ms: i64) -> Self {
        Self {
            window_ms: window_ms.max(1),
            bounds: Vec::new(),
            heads: Vec::new(),
            counts: Vec::new(),
            current: None,
            previous_high: None,
            high: None,
            windows: Vec::new(),
        }
    }

    /// Counts one write of `key` at `time_ms`, before it is written to `table`. A `time_ms`
    /// before the open window's counts in the open window, as the table counts a write when
    /// its clock goes back.
    pub fn record(&mut self, table: &Table, key: &PkValue, time_ms: i64) {
        self.record_in(|out| table.partition_lowers_into(out), key, time_ms);
    }

    /// [`HotspotMeter::record`] with the partitions' lower bounds written by `lowers` into the
    /// vector it is given (called only when a window opens): the table's or the judge's.
    pub(crate) fn record_in(
        &mut self,
        lowers: impl FnOnce(&mut Vec<PkValue>),
        key: &PkValue,
        time_ms: i64,
    ) {
        let window = time_ms.div_euclid(self.window_ms);
        // A time before the open window's (the clock went back) counts in the open window, as
        // the table counts it: windows stay in time order, each once.
        if self.current.as_ref().is_none_or(|w| window > w.window) {
            self.close();
            lowers(&mut self.bounds);
            self.heads.clear();
            self.heads.extend(self.bounds.iter().map(PkValue::head));
            self.counts.clear();
            self.counts.resize(self.bounds.len().max(1), 0);
            // The window that ends hands on its highest key; the new one starts with none.
            std::mem::swap(&mut self.previous_high, &mut self.high);
            self.high = None;
            self.current = Some(HotspotWindow {
                window,
                ranges: self.bounds.len().max(1),
                writes: 0,
                max_range_writes: 0,
                hottest_lower: PkValue::InfMin,
                above_previous_high: 0,
            });
        }
        let head = key.head();
        let at_or_below = count_at_or_below(&self.heads, head, |i| self.bounds[i] <= *key);
        let i = at_or_below.saturating_sub(1).min(self.counts.len() - 1);
        self.counts[i] += 1;
        let w = self.current.as_mut().expect("opened above");
        w.writes += 1;
        if self
            .previous_high
            .as_ref()
            .is_some_and(|h| above(head, key, h))
        {
            w.above_previous_high += 1;
        }
        match &mut self.high {
            Some(h) if above(head, key, h) => {
                h.0 = head;
                h.1.clone_from(key);
            }
            Some(_) => {}
            None => self.high = Some((head, key.clone())),
        }
    }

    fn close(&mut self) {
        if let Some(mut w) = self.current.take() {
            if let Some((i, &max)) = self
                .counts
                .iter()
                .enumerate()
                .max_by_key(|&(i, c)| (c, std::cmp::Reverse(i)))
            {
                w.max_range_writes = max;
                w.hottest_lower = self.bounds.get(i).cloned().unwrap_or(PkValue::InfMin);
            }
            self.windows.push(w);
        }
    }

    /// The figures so far (the open window included).
    #[must_use]
    pub fn report(&self) -> HotspotReport {
        let mut me = self.clone();
        me.close();
        let windows = me.windows;
        let split: Vec<&HotspotWindow> = windows.iter().filter(|w| w.ranges > 1).collect();
        let counted: Vec<&HotspotWindow> = if split.is_empty() {
            windows.iter().collect()
        } else {
            split
        };
        let ratio = |num: u64, den: u64| {
            #[allow(clippy::cast_precision_loss)]
            if den == 0 {
                0.0
            } else {
                num as f64 / den as f64
            }
        };
        let hottest_share = ratio(
            counted.iter().map(|w| w.max_range_writes).sum(),
            counted.iter().map(|w| w.writes).sum(),
        );
        let later = windows.iter().skip(1);
        let tail_share = ratio(
            later.clone().map(|w| w.above_previous_high).sum(),
            later.map(|w| w.writes).sum(),
        );
        HotspotReport {
            hottest_share,
            tail_share,
            windows: windows.len(),
            warmup_windows: windows.len() - counted.len(),
            writes: windows.iter().map(|w| w.writes).sum(),
            per_window: windows,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::{Attribute, ManualClock, Schema, TableOptions};

    fn run(keys: impl Fn(i64) -> String) -> (HotspotReport, crate::table::LoadReport) {
        let clock = ManualClock::new(0);
        let options = TableOptions::default()
            .split_load_ops(20)
            .load_window_ms(1_000);
        let table = Table::with_clock(Schema::single_string("pk").unwrap(), options, clock.clone())
            .unwrap();
        let mut meter = HotspotMeter::new(1_000);
        for i in 0..4_000i64 {
            clock.set(i * 5);
            let key = PkValue::String(keys(i));
            meter.record(&table, &key, i * 5);
            table.put(key, vec![Attribute::new("n", i)]).unwrap();
        }
        (meter.report(), table.report())
    }

    #[test]
    fn a_tail_hotspot_is_one_range_however_it_splits() {
        let (hot, model) = run(|i| format!("{i:08}"));
        assert!(model.splits > 20, "{}", model.splits);
        assert!(model.hottest_share < 0.9, "{}", model.hottest_share);
        assert!((hot.hottest_share - 1.0).abs() < 1e-12);
        assert!((hot.tail_share - 1.0).abs() < 1e-12);
        assert_eq!(hot.writes, 4_000);
    }

    /// The meter's figures are those of a plain count over the values: the bounds at each
    /// window's start searched value by value, and every key compared with the highest keys.
    /// Keys share long prefixes (their heads tie) and partitions split between them.
    #[test]
    fn the_meter_counts_as_a_plain_search_does() {
        let clock = ManualClock::new(0);
        let options = TableOptions::default()
            .split_load_ops(20)
            .load_window_ms(1_000);
        let table = Table::with_clock(Schema::single_string("pk").unwrap(), options, clock.clone())
            .unwrap();
        let mut meter = HotspotMeter::new(1_000);
        let mut next = crate::table::test_lcg(5);
        let mut expected: Vec<HotspotWindow> = Vec::new();
        let (mut bounds, mut counts) = (Vec::new(), Vec::new());
        let (mut high, mut previous_high): (Option<PkValue>, Option<PkValue>) = (None, None);
        for i in 0..6_000i64 {
            let t = i * 3;
            clock.set(t);
            // Mostly spread keys of one long prefix, some rising, some of other lengths.
            let key = PkValue::String(match next() % 8 {
                0 => format!("sensor:{i:07}"),
                1 => format!("sensor:{}", next() % 30),
                2 => "sensor".to_owned(),
                _ => format!("sensor:{:07}", next() % 9_000),
            });
            if expected.last().is_none_or(|w| w.window != t / 1_000) {
                bounds = table.partition_bounds().into_iter().map(|b| b.0).collect();
                counts = vec![0u64; bounds.len()];
                previous_high = high.take();
                expected.push(HotspotWindow {
                    window: t / 1_000,
                    ranges: bounds.len(),
                    writes: 0,
                    max_range_writes: 0,
                    hottest_lower: PkValue::InfMin,
                    above_previous_high: 0,
                });
            }
            let range = bounds.iter().filter(|b| **b <= key).count() - 1;
            counts[range] += 1;
            let w = expected.last_mut().unwrap();
            w.writes += 1;
            w.above_previous_high += u64::from(previous_high.as_ref().is_some_and(|h| key > *h));
            if high.as_ref().is_none_or(|h| key > *h) {
                high = Some(key.clone());
            }
            let max = *counts.iter().max().unwrap();
            let first = counts.iter().position(|&c| c == max).unwrap();
            (w.max_range_writes, w.hottest_lower) = (max, bounds[first].clone());
            meter.record(&table, &key, t);
            table.put(key, vec![Attribute::new("n", i)]).unwrap();
        }
        assert!(table.partition_count() > 10, "{}", table.partition_count());
        assert_eq!(meter.report().per_window, expected);
    }

    #[test]
    fn a_spread_key_has_a_small_share() {
        let (hot, _) = run(|i| format!("{:08}", (i * 7_919) % 100_003));
        assert!(hot.hottest_share < 0.3, "{}", hot.hottest_share);
        assert!(hot.tail_share < 0.1, "{}", hot.tail_share);
        assert_eq!(hot.warmup_windows, 1);
    }
}
