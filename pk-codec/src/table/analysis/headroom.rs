//! The load no split cures, recorded once and asked at any multiple of the dump's traffic.
//!
//! A write above every key written before it (a *tail* write) lands in the last partition
//! whatever the store split before: a split cuts at a key that exists, and the tail write is
//! above all of them. So in each load window the tail's writes are one partition's load,
//! whatever the splits, and past the partition's capacity they are throttled with no cure.
//!
//! [`TailSeries`] counts tail writes per slice of the dump's own time: per millisecond, so
//! exactly, until [`MAX_SLICES`] slices hold tail writes; past it, neighbouring slices merge
//! (the width doubles each time, and a slice counts in the window its start falls in). The dump replayed `m` times faster puts the slices
//! that start in one window of its compressed time into that window, so the busiest window's
//! tail at any `m` is one pass over the slices, with no replay; [`headroom`] searches `m` by
//! bisection over a geometric range (about 20 passes).

use serde::Serialize;

/// Slices kept before two neighbours become one (memory: 16 bytes a slice, 32 MiB).
const MAX_SLICES: usize = 1 << 21;

/// Tail writes per slice of the dump's time, in time order.
#[derive(Clone, Debug, Default)]
pub(crate) struct TailSeries {
    /// The first time seen (the replay compresses times from it).
    t0: Option<i64>,
    /// Slice width, ms.
    width: i64,
    /// `(slice index from t0, tail writes)`, slices with tail writes only.
    slices: Vec<(i64, u64)>,
}

impl TailSeries {
    pub(crate) const fn new() -> Self {
        Self {
            t0: None,
            width: 1,
            slices: Vec::new(),
        }
    }

    /// Counts a tail write at `ts` (the dump's own time, in time order).
    pub(crate) fn add(&mut self, ts: i64) {
        let t0 = *self.t0.get_or_insert(ts);
        let slice = ts.saturating_sub(t0) / self.width;
        match self.slices.last_mut() {
            Some((s, n)) if *s == slice => *n += 1,
            _ => {
                if self.slices.len() >= MAX_SLICES {
                    self.coarsen();
                    return self.add(ts);
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
    pub(crate) fn per_window(&self, scale: f64, window_ms: i64) -> Vec<(i64, u64)> {
        let Some(t0) = self.t0 else {
            return Vec::new();
        };
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
    pub(crate) fn busiest(&self, scale: f64, window_ms: i64) -> (u64, i64) {
        let Some(t0) = self.t0 else { return (0, 0) };
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
