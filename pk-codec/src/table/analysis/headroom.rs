//! The load no split cures, recorded once and asked at any multiple of the dump's traffic.
//!
//! A write above every key written before it (a *tail* write) lands in the last partition
//! whatever the store split before: a split cuts at a key that exists, and the tail write is
//! above all of them. So in each load window the tail's writes are one partition's load,
//! whatever the splits, and past the partition's capacity they are throttled with no cure.
//!
//! A layout with a bucket prefix has a tail in each bucket: its keys are a range of their own,
//! and a write above every key before it *in its bucket* lands in that range's last partition,
//! whatever the splits. [`Tails`] keeps one series a bucket, and the load no split cures in a
//! window is the busiest bucket tail's (a split between buckets parts their tails, none parts
//! one). Rows that collapse into a few buckets are judged by the busiest of them.
//!
//! [`TailSeries`] counts tail writes per slice of the dump's own time: per millisecond, so
//! exactly, until [`MAX_SLICES`] slices hold tail writes; past it, neighbouring slices merge
//! (the width doubles each time, and a slice counts in the window its start falls in). The dump replayed `m` times faster puts the slices
//! that start in one window of its compressed time into that window, so the busiest window's
//! tail at any `m` is one pass over the slices, with no replay; [`headroom`] searches `m` by
//! bisection over a geometric range (about 20 passes).

use serde::Serialize;

/// Slices kept before two neighbours become one (memory: 16 bytes a slice, 32 MiB), shared by
/// the buckets' series of a bucketed layout.
const MAX_SLICES: usize = 1 << 21;

/// Slices a bucket's series keeps at least, however many buckets share [`MAX_SLICES`].
const MIN_BUCKET_SLICES: usize = 256;

/// The tail writes of a design: one series for a key without buckets, one a bucket for a
/// bucket-prefixed layout, all timed from the dump's first row.
#[derive(Clone, Debug)]
pub(crate) struct Tails {
    t0: Option<i64>,
    series: Vec<TailSeries>,
}

impl Tails {
    /// Tails of a design whose keys fall in `buckets` buckets (1: no bucket prefix).
    pub(crate) fn new(buckets: usize) -> Self {
        let buckets = buckets.max(1);
        let cap = (MAX_SLICES / buckets).max(MIN_BUCKET_SLICES);
        Self {
            t0: None,
            series: vec![TailSeries::with_cap(cap); buckets],
        }
    }

    /// Whether the design has a tail a bucket.
    pub(crate) const fn bucketed(&self) -> bool {
        self.series.len() > 1
    }

    /// Counts a tail write of bucket `bucket` (0 without buckets) at `ts` (the dump's own time,
    /// in time order; the first call's is the dump's first time). A bucket past the design's
    /// counts in the last.
    pub(crate) fn add(&mut self, bucket: usize, ts: i64) {
        let t0 = *self.t0.get_or_insert(ts);
        let last = self.series.len() - 1;
        self.series[bucket.min(last)].add(t0, ts);
    }

    /// Per window (index: compressed time / `window_ms`) with the dump replayed `scale` times
    /// faster, the busiest bucket tail's writes, in window order.
    pub(crate) fn per_window(&self, scale: f64, window_ms: i64) -> Vec<(i64, u64)> {
        let Some(t0) = self.t0 else {
            return Vec::new();
        };
        if let [one] = self.series.as_slice() {
            return one.per_window(t0, scale, window_ms);
        }
        let mut all: Vec<(i64, u64)> = self
            .series
            .iter()
            .flat_map(|s| s.per_window(t0, scale, window_ms))
            .collect();
        all.sort_unstable();
        let mut out: Vec<(i64, u64)> = Vec::new();
        for (w, n) in all {
            match out.last_mut() {
                Some((cw, c)) if *cw == w => *c = (*c).max(n),
                _ => out.push((w, n)),
            }
        }
        out
    }

    /// The busiest window of any one bucket tail with the dump replayed `scale` times faster,
    /// windows of `window_ms`: its writes, and its start (ms from the dump's first time,
    /// compressed).
    pub(crate) fn busiest(&self, scale: f64, window_ms: i64) -> (u64, i64) {
        let Some(t0) = self.t0 else { return (0, 0) };
        self.series
            .iter()
            .map(|s| s.busiest(t0, scale, window_ms))
            .fold((0, 0), |best, b| if b.0 > best.0 { b } else { best })
    }
}

/// Tail writes per slice of the dump's time, in time order, timed from the dump's first time
/// (`t0`, the replay compresses times from it).
#[derive(Clone, Debug)]
struct TailSeries {
    /// Slice width, ms.
    width: i64,
    /// `(slice index from t0, tail writes)`, slices with tail writes only.
    slices: Vec<(i64, u64)>,
    /// Slices kept before neighbours merge.
    cap: usize,
}

impl TailSeries {
    const fn with_cap(cap: usize) -> Self {
        Self {
            width: 1,
            slices: Vec::new(),
            cap,
        }
    }

    /// Counts a tail write at `ts` (the dump's own time, in time order, not before `t0`).
    fn add(&mut self, t0: i64, ts: i64) {
        let slice = ts.saturating_sub(t0) / self.width;
        match self.slices.last_mut() {
            Some((s, n)) if *s == slice => *n += 1,
            _ => {
                if self.slices.len() >= self.cap {
                    self.coarsen();
                    return self.add(t0, ts);
                }
                self.slices.push((slice, 1));
            }
        }
    }

    /// Doubles the slice width, adding neighbours together.
    fn coarsen(&mut self) {
        self.width = self.width.saturating_mul(2);
        let mut out: Vec<(i64, u64)> = Vec::with_capacity(self.slices.len() / 2 + 1);
        for &(s, n) in &self.slices {
            let s = s / 2;
            match out.last_mut() {
                Some((last, m)) if *last == s => *m += n,
                _ => out.push((s, n)),
            }
        }
        self.slices = out;
    }

    /// Tail writes per window (index: compressed time / `window_ms`) with the dump replayed
    /// `scale` times faster, in window order.
    fn per_window(&self, t0: i64, scale: f64, window_ms: i64) -> Vec<(i64, u64)> {
        let mut out: Vec<(i64, u64)> = Vec::new();
        for &(s, n) in &self.slices {
            let t = super::scaled(t0.saturating_add(s.saturating_mul(self.width)), t0, scale);
            let w = t.div_euclid(window_ms);
            match out.last_mut() {
                Some((cw, c)) if *cw == w => *c += n,
                _ => out.push((w, n)),
            }
        }
        out
    }

    /// The busiest window's tail writes with the dump replayed `scale` times faster, windows
    /// of `window_ms`, and that window's start (ms from the dump's first time, compressed).
    fn busiest(&self, t0: i64, scale: f64, window_ms: i64) -> (u64, i64) {
        let (mut best, mut at) = (0u64, 0i64);
        let mut current: Option<(i64, u64)> = None;
        for &(s, n) in &self.slices {
            let t = super::scaled(t0.saturating_add(s.saturating_mul(self.width)), t0, scale);
            let w = t.div_euclid(window_ms);
            current = match current {
                Some((cw, c)) if cw == w => Some((cw, c + n)),
                _ => Some((w, n)),
            };
            if let Some((cw, c)) = current
                && c > best
            {
                best = c;
                at = cw.saturating_mul(window_ms).saturating_sub(t0);
            }
        }
        (best, at)
    }
}

/// A design's headroom: the largest multiple of the dump's traffic at which nothing is
/// throttled that no split cures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Headroom {
    /// The multiple (within the stated tolerance), `None` when nothing throttles up to
    /// `searched_up_to` ("beyond N").
    pub multiple: Option<f64>,
    /// The largest multiple tried.
    pub searched_up_to: f64,
    /// The relative tolerance of `multiple` (0.05: the true headroom is within 5% above).
    pub tolerance: f64,
    /// What throttles first past the headroom (`tail` or `hot key value ...`), `None` beyond.
    pub first_throttled_by: Option<String>,
}

/// The largest multiple `m` in `[lowest, highest]` at which `uncured(m)` is within `capacity`,
/// to `tolerance` (relative), by bisection in log space; `None` when even `highest` is.
pub(crate) fn search(
    uncured: impl Fn(f64) -> u64,
    capacity: u64,
    lowest: f64,
    highest: f64,
    tolerance: f64,
) -> Option<f64> {
    if uncured(highest) <= capacity {
        return None;
    }
    if uncured(lowest) > capacity {
        return Some(0.0);
    }
    let (mut lo, mut hi) = (lowest, highest);
    while hi / lo > 1.0 + tolerance {
        let mid = (lo * hi).sqrt();
        if uncured(mid) <= capacity {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(lo)
}
