//! The report of an analysis: the load, the table's growth, the findings, and per design its
//! figures, verdict, throttling, headroom and growth. Everything `pk analyze` prints is a field
//! here (its `--json` is this report's serde form).

use serde::Serialize;

use super::headroom::{Headroom, search};
use super::ingest::{KeySource, gcd};
use super::store::{Capacity, StoreProfile};
use super::{AnalysisOptions, DesignReplay};
use crate::table::{Finding, Growth, HotKeyValue, HotspotReport, LoadReport, volume_findings};

/// The report of an [`Analysis`](super::Analysis).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AnalysisReport {
    /// Rows replayed.
    pub rows: u64,
    /// Malformed rows skipped (counted by the reader).
    pub malformed_rows: u64,
    /// The hottest share over the designs.
    pub hottest_share: f64,
    /// The store profile, after the options' overrides.
    pub store: StoreProfile,
    /// The figures the run used.
    pub capacity: Capacity,
    /// The load replayed (the same rows for every design).
    pub load: LoadFigures,
    /// The table's size and growth.
    pub table: TableGrowth,
    /// Every finding: the attribute columns', the table's, then each design's.
    pub findings: Vec<Finding>,
    /// Per design.
    pub designs: Vec<DesignReport>,
}

/// The load a replay wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct LoadFigures {
    /// Rows replayed.
    pub rows: u64,
    /// The first and last times replayed (after the load scale), ms.
    pub first_ms: i64,
    /// See `first_ms`.
    pub last_ms: i64,
    /// `last_ms - first_ms`.
    pub span_ms: i64,
    /// Load windows with writes.
    pub windows_with_writes: usize,
    /// Writes per window with writes: median.
    pub writes_per_window_median: u64,
    /// Writes per window: peak.
    pub writes_per_window_peak: u64,
    /// Partitions the peak window needs (each serves at most the write capacity).
    pub partitions_needed: u64,
    /// Whether one partition serves every window: no design can run hot at this load.
    pub one_partition_serves: bool,
    /// The replay's speed-up.
    pub load_scale: f64,
    /// Whether the replay is a projection (a load scale other than 1): its times are then
    /// compressed, and read as times from its start, not clock times.
    pub projected: bool,
}

/// The table's size and its growth at the dump's own rate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TableGrowth {
    /// Rows.
    pub rows: u64,
    /// Bytes (keys and attributes).
    pub bytes: u64,
    /// The dump's own time span, ms (before the load scale).
    pub span_ms: i64,
    /// Rows and bytes in 1, 3 and 5 years.
    pub projected: Vec<Projection>,
}

/// Rows and bytes after some years at the dump's rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Projection {
    /// Years from the dump's last time.
    pub years: u8,
    /// Rows then.
    pub rows: u64,
    /// Bytes then.
    pub bytes: u64,
}

/// What the report says of a design.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// One partition serves the load: nothing to spread.
    OnePartitionServes,
    /// Nothing beyond a partition's capacity that splits cannot cure.
    Spread,
    /// Writes beyond a partition's capacity that no split cures (a tail, one hot key value,
    /// a collapsed bucket): `HOT`.
    Concentrated,
}

impl Verdict {
    /// The verdict as the text report prints it.
    #[must_use]
    pub const fn word(self) -> &'static str {
        match self {
            Self::OnePartitionServes => "1 partition serves",
            Self::Spread => "spread",
            Self::Concentrated => "HOT",
        }
    }
}

/// Writes beyond a partition's capacity, after the store's splits have acted.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Throttling {
    /// Writes throttled (at least: the busiest range of each window, and the tail).
    pub writes: u64,
    /// Their share of all writes.
    pub share: f64,
    /// Windows with throttled writes.
    pub windows: u64,
    /// Of them, writes no split cures (the tail's, a hot key value's).
    pub uncured_writes: u64,
    /// Windows with writes no split cures.
    pub uncured_windows: u64,
    /// Writes throttled while the load ramps before a split: splits cure them (a pre-split
    /// avoids them).
    pub cured_by_splits: u64,
    /// What causes the uncured ones, `None` when there are none.
    pub cause: Option<String>,
}

/// A partition-key value with the most data, and when it crosses the per-value limit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TopValue {
    /// The value (its text; bytes as lossy UTF-8).
    pub value: String,
    /// Bytes under it (at most the true figure).
    pub bytes: u64,
    /// Rows under it.
    pub rows: u64,
    /// How much it may be under-counted.
    pub missed: u64,
    /// Ms after the dump's last time at which it crosses the limit at the dump's rate (0:
    /// over it already); `None` when it does not cross within the horizon.
    pub crossing_ms_after_end: Option<i64>,
}

/// One design's figures, verdict and growth.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DesignReport {
    /// The design's name.
    pub design: String,
    /// Rows judged.
    pub rows: u64,
    /// Share of each window's writes in its busiest key range (ranges: the partitions at the
    /// window's start), weighted by writes.
    pub hottest_share: f64,
    /// The hottest share a perfectly spread design has at this load.
    pub fair_share: f64,
    /// The verdict.
    pub verdict: Verdict,
    /// Whether `fail_above` fails it (HOT and hotter than the share).
    pub fails: bool,
    /// Whether `fail_below_headroom` fails it.
    pub fails_headroom: bool,
    /// Share of writes above the previous window's highest key.
    pub tail_share: f64,
    /// Partitions at the end of the replay.
    pub partitions: usize,
    /// Partitions that received writes.
    pub partitions_with_writes: usize,
    /// Partitions written per window, on average.
    pub mean_partitions_written_per_window: f64,
    /// The busiest single partition's share of each window's writes.
    pub hottest_partition_share: f64,
    /// The busiest partition's writes over the mean partition's, per window.
    pub max_over_mean: f64,
    /// Share of reserved capacity used when every partition is provisioned for the busiest.
    pub efficiency: f64,
    /// Splits.
    pub splits: u64,
    /// Windows seen.
    pub windows: usize,
    /// Windows that began with one partition.
    pub warmup_windows: usize,
    /// Key values too hot to split.
    pub hot_key_values: Vec<HotKeyValue>,
    /// Throttled writes and their cause.
    pub throttling: Throttling,
    /// The largest multiple of the dump's traffic with nothing throttled that splits cannot
    /// cure.
    pub headroom: Headroom,
    /// The partition-key values with the most data.
    pub top_values: Vec<TopValue>,
    /// What the report explains of the design.
    pub diagnostics: Vec<String>,
}

/// The fewest partitions that serve `writes` in a window, each at most `capacity`.
const fn needed(writes: u64, capacity: u64) -> u64 {
    if writes == 0 {
        1
    } else {
        writes.div_ceil(capacity)
    }
}

impl LoadFigures {
    pub(super) fn of(replay: &DesignReplay, capacity: &Capacity, scale: f64) -> Self {
        let mut writes = replay.window_writes().to_vec();
        let peak = writes.iter().copied().max().unwrap_or(0);
        let median = if writes.is_empty() {
            0
        } else {
            let mid = writes.len() / 2;
            *writes.select_nth_unstable(mid).1
        };
        let (first_ms, last_ms) = replay.span().unwrap_or((0, 0));
        let partitions_needed = needed(peak, capacity.writes_per_window);
        Self {
            rows: replay.rows(),
            first_ms,
            last_ms,
            span_ms: last_ms.saturating_sub(first_ms),
            windows_with_writes: replay.window_writes().len(),
            writes_per_window_median: median,
            writes_per_window_peak: peak,
            partitions_needed,
            one_partition_serves: partitions_needed <= 1,
            load_scale: scale,
            projected: (scale - 1.0).abs() > f64::EPSILON,
        }
    }
}

/// The hottest share a perfectly spread design would have at this load: in each window, its
/// writes spread evenly over the fewest partitions that serve them, so its busiest range takes
/// one of them; weighted by writes over the windows the design's hottest share counts (those
/// that began with more than one partition, or all when none did).
#[allow(clippy::cast_precision_loss)]
fn fair_share(hot: &HotspotReport, capacity: u64) -> f64 {
    let split = hot.per_window.iter().any(|w| w.ranges > 1);
    let (mut fair, mut writes) = (0.0, 0u64);
    for w in hot.per_window.iter().filter(|w| !split || w.ranges > 1) {
        fair += w.writes as f64 / needed(w.writes, capacity) as f64;
        writes += w.writes;
    }
    if writes == 0 {
        1.0
    } else {
        fair / writes as f64
    }
}

#[allow(clippy::cast_precision_loss)]
fn pct(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        100.0 * a as f64 / b as f64
    }
}

/// A hot key value's writes in its window, estimated from its share of its partition's
/// sampled operations and the busiest range's writes that window.
#[allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)]
fn hot_key_writes(h: &HotKeyValue, hot: &HotspotReport) -> u64 {
    hot.per_window
        .iter()
        .find(|w| w.window == h.window)
        .map_or(0, |w| (w.max_range_writes as f64 * h.share).floor() as u64)
}

/// The smallest multiple tried by the headroom search.
const HEADROOM_LOWEST: f64 = 0.001;

/// The headroom search's tolerance: the true multiple is within 5% above the one reported.
pub const HEADROOM_TOLERANCE: f64 = 0.05;

#[allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)]
pub(super) fn design_report(
    replay: &DesignReplay,
    options: &AnalysisOptions,
    capacity: &Capacity,
    load: &LoadFigures,
) -> (DesignReport, Vec<Finding>) {
    let judge = replay.judge();
    let hot = judge.hotspot();
    let model = judge.report();
    let c = capacity.writes_per_window;
    let window = capacity.window_ms;
    let scale = options.load_scale;
    let fair = fair_share(&hot, c);
    let growth = dump_growth(replay, load);
    let horizon_ms = i64::try_from(options.horizon_days)
        .unwrap_or(i64::MAX)
        .saturating_mul(86_400_000);
    let limit = options.store.value_limit.value().unwrap_or(u64::MAX);
    let findings = volume_findings(replay.name(), replay.volume(), &growth, limit, horizon_ms);
    let top_values = replay
        .volume()
        .top(options.top)
        .into_iter()
        .map(|v| TopValue {
            crossing_ms_after_end: growth
                .value_crossing(&v, limit)
                .filter(|&ms| ms <= horizon_ms),
            value: String::from_utf8_lossy(&v.value).into_owned(),
            bytes: v.bytes,
            rows: v.rows,
            missed: v.missed,
        })
        .collect();
    let efficiency = model.capacity(c).efficiency;

    // Throttling at the replayed load: per window, the busiest range's writes past the
    // capacity (a ramp before a split), and the tail's and hot key values' (no split cures).
    let tails = &replay.tails;
    let tail_windows = tails.per_window(scale, window);
    let hot_keys: Vec<(i64, u64, String)> = model
        .hot_key_values
        .iter()
        .map(|h| (h.window, hot_key_writes(h, &hot), h.value.to_string()))
        .collect();
    let mut throttling = Throttling::default();
    let mut cause: Option<String> = None;
    for w in &hot.per_window {
        let tail = tail_windows
            .binary_search_by_key(&w.window, |&(win, _)| win)
            .map_or(0, |i| tail_windows[i].1);
        let key = hot_keys
            .iter()
            .filter(|k| k.0 == w.window)
            .max_by_key(|k| k.1);
        let uncured_tail = tail.saturating_sub(c);
        let uncured_key = key.map_or(0, |k| k.1.saturating_sub(c));
        let uncured = uncured_tail.max(uncured_key);
        let over = w.max_range_writes.saturating_sub(c).max(uncured);
        if over > 0 {
            throttling.writes += over;
            throttling.windows += 1;
        }
        if uncured > 0 {
            throttling.uncured_writes += uncured;
            throttling.uncured_windows += 1;
            if cause.is_none() {
                cause = Some(if uncured_tail >= uncured_key && tails.bucketed() {
                    "a bucket's tail: writes above every key before them in their bucket all go to that bucket's last partition, however it splits".to_owned()
                } else if uncured_tail >= uncured_key {
                    "the tail: writes above every key before them all go to the last partition, however it splits".to_owned()
                } else {
                    format!(
                        "key value {:?}: one key value is never split",
                        key.map_or("", |k| k.2.as_str())
                    )
                });
            }
        }
    }
    throttling.cured_by_splits = throttling.writes - throttling.uncured_writes;
    throttling.share = pct(throttling.writes, replay.rows()) / 100.0;
    throttling.cause = cause;

    let verdict = if load.one_partition_serves {
        Verdict::OnePartitionServes
    } else if throttling.uncured_writes > 0 {
        Verdict::Concentrated
    } else {
        Verdict::Spread
    };

    // Headroom: the uncured load at a multiple `m` of the dump's traffic.
    let key_peak = hot_keys.iter().map(|k| k.1).max().unwrap_or(0);
    let key_at = |m: f64| (key_peak as f64 * m / scale).ceil() as u64;
    let uncured = |m: f64| tails.busiest(m, window).0.max(key_at(m));
    let up_to = options.headroom_up_to;
    let multiple = search(uncured, c, HEADROOM_LOWEST, up_to, HEADROOM_TOLERANCE / 2.0);
    let first_throttled_by = multiple.map(|m| {
        let past = (m * (1.0 + HEADROOM_TOLERANCE)).max(HEADROOM_LOWEST);
        if tails.busiest(past, window).0 >= key_at(past) && tails.bucketed() {
            "a bucket's tail (writes above every key before them in their bucket)".to_owned()
        } else if tails.busiest(past, window).0 >= key_at(past) {
            "the tail (writes above every key before them)".to_owned()
        } else {
            "a hot key value".to_owned()
        }
    });
    let headroom = Headroom {
        multiple,
        searched_up_to: up_to,
        tolerance: HEADROOM_TOLERANCE,
        first_throttled_by,
    };

    let diagnostics = diagnostics(replay, &hot, &model, options.top);
    let fails = verdict == Verdict::Concentrated
        && options.fail_above.is_some_and(|t| hot.hottest_share > t);
    let fails_headroom = options
        .fail_below_headroom
        .is_some_and(|n| headroom.multiple.is_some_and(|m| m < n));
    let report = DesignReport {
        design: replay.name().to_owned(),
        rows: hot.writes,
        hottest_share: hot.hottest_share,
        fair_share: fair,
        verdict,
        fails,
        fails_headroom,
        tail_share: hot.tail_share,
        partitions: model.partitions,
        partitions_with_writes: model.partitions_with_writes,
        mean_partitions_written_per_window: model.mean_partitions_written_per_window,
        hottest_partition_share: model.hottest_share,
        max_over_mean: model.max_over_mean,
        efficiency,
        splits: model.splits,
        windows: hot.windows,
        warmup_windows: hot.warmup_windows,
        hot_key_values: model.hot_key_values.clone(),
        throttling,
        headroom,
        top_values,
        diagnostics,
    };
    (report, findings)
}

/// What the report explains of a design: a sequential key, its buckets, hot and oversized key
/// values.
#[allow(clippy::cast_precision_loss)]
fn diagnostics(
    replay: &DesignReplay,
    hot: &HotspotReport,
    model: &LoadReport,
    top: usize,
) -> Vec<String> {
    let mut d = Vec::new();
    let rows = replay.rows();
    let sequential = rows >= 10 && replay.new_max().saturating_mul(10) >= rows.saturating_mul(9);
    if sequential || hot.tail_share >= 0.9 {
        d.push(format!(
            "sequential key: {:.0}% of rows were written above every key before them ({:.0}% above the previous window's highest key), so every window's writes go to the last partition however it splits (a tail hotspot); put a hash prefix in front (e.g. hash=md5:4) or lead with a field whose values spread",
            pct(replay.new_max(), rows),
            hot.tail_share * 100.0
        ));
    }
    if let KeySource::Layout {
        buckets: Some((n, modulo)),
        ..
    } = replay.spec().source()
    {
        let bucket_rows = replay.bucket_rows();
        let used = bucket_rows.iter().filter(|&&c| c > 0).count();
        let max = bucket_rows.iter().copied().max().unwrap_or(0);
        let mean = rows as f64 / f64::from((*n).max(1));
        // Whole rows when the mean is large; a fraction of a row stays visible below 10.
        let mean_text = if mean >= 10.0 {
            format!("{mean:.0}")
        } else {
            format!("{mean:.2}")
        };
        d.push(format!(
            "buckets: {used} of {n} used; max {max} rows per bucket, {:.2}x the mean of {mean_text}",
            if mean > 0.0 { max as f64 / mean } else { 0.0 }
        ));
        if let Some(field) = modulo {
            let g = replay.modulo_gcd();
            let common = gcd(g, u128::from(*n));
            if g > 1 && common > 1 {
                d.push(format!(
                    "rows collapsed into {used} bucket(s) because every {field} value is a multiple of {g}, which shares the factor {common} with {n}: {field} % {n} only reaches {} of the {n} buckets (minute-granularity ms timestamps are all multiples of 60000, so % 16 gives 0 every time); fix: hash buckets (buckets={n}:hash({field})), or bucket by ({field} / {g}) % {n}",
                    u128::from(*n) / common
                ));
            }
        }
    }
    for h in model.hot_key_values.iter().take(top) {
        d.push(format!(
            "key value {:?} took {:.0}% of its partition's load in a window; one key value is never split, so no split can help",
            h.value.to_string(),
            h.share * 100.0
        ));
    }
    for o in model.oversized_key_values.iter().take(top) {
        d.push(format!(
            "key value {:?} holds {} in {} rows, more than a partition; no split can help",
            o.value.to_string(),
            super::format::bytes(o.bytes),
            super::format::count(o.rows)
        ));
    }
    d
}

/// The dump's rows, bytes and its own time span (the replayed span times the load scale).
#[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
pub(super) fn dump_growth(replay: &DesignReplay, load: &LoadFigures) -> Growth {
    Growth {
        rows: replay.rows(),
        bytes: replay.bytes(),
        span_ms: (load.span_ms as f64 * load.load_scale).round() as i64,
    }
}

/// The table's growth: rows, bytes, span and projections at 1, 3 and 5 years.
pub(super) fn table_growth(growth: &Growth) -> TableGrowth {
    TableGrowth {
        rows: growth.rows,
        bytes: growth.bytes,
        span_ms: growth.span_ms,
        projected: [1u8, 3, 5]
            .into_iter()
            .filter_map(|y| {
                let (rows, bytes) = growth.projected(f64::from(y))?;
                Some(Projection {
                    years: y,
                    rows,
                    bytes,
                })
            })
            .collect(),
    }
}
