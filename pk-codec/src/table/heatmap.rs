//! A picture of load over key space and time, like the key visualizers of managed stores.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::Arc;

#[cfg(feature = "svg")]
use plotters::prelude::*;
use serde::Serialize;

#[cfg(feature = "svg")]
use super::error::TableError;
use super::load::WindowRecord;
use super::row::{decode_partition_value, value_bytes};
use super::schema::PkValue;
use super::store::Table;

/// What a heatmap shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum Metric {
    /// Reads plus writes.
    #[default]
    Ops,
    /// Writes only.
    Writes,
    /// Reads only.
    Reads,
    /// Bytes written.
    BytesWritten,
}

/// Size and content of a heatmap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeatmapOptions {
    /// What to count.
    pub metric: Metric,
    /// Most key bands (rows of the picture); at most [`HeatmapOptions::MAX_BANDS`] are drawn,
    /// whatever this asks.
    pub max_bands: usize,
    /// Most time columns; at most [`HeatmapOptions::MAX_COLUMNS`] are drawn, whatever this asks.
    pub max_columns: usize,
    /// What the picture is of (the design's name), put before the metric in the title.
    pub title: Option<String>,
    /// Shade cells by `ln(1 + load)` rather than load, so that cold cells beside a hot one show.
    pub log_scale: bool,
}

impl HeatmapOptions {
    /// The most key bands a heatmap has: a larger [`max_bands`](Self::max_bands) is taken as
    /// this, so that a heatmap's cells stay a bounded allocation (with
    /// [`MAX_COLUMNS`](Self::MAX_COLUMNS), 32 MiB at most) whatever the options ask.
    pub const MAX_BANDS: usize = 1024;

    /// The most time columns a heatmap has: a larger [`max_columns`](Self::max_columns) is taken
    /// as this (each column then spans more load windows).
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::table::{HeatmapOptions, ManualClock, Schema, Table, TableOptions};
    ///
    /// let clock = ManualClock::new(0);
    /// let table = Table::with_clock(
    ///     Schema::single_string("pk")?,
    ///     TableOptions::default().load_window_ms(1),
    ///     clock.clone(),
    /// )?;
    /// table.put("a", vec![])?;
    /// clock.set(1_000_000_000); // a billion load windows later
    /// table.put("b", vec![])?;
    /// let map = table.heatmap(&HeatmapOptions { max_columns: usize::MAX, ..HeatmapOptions::default() });
    /// assert!(map.columns_ms.len() <= HeatmapOptions::MAX_COLUMNS);
    /// # Ok::<(), pk_codec::table::TableError>(())
    /// ```
    pub const MAX_COLUMNS: usize = 4096;
}

impl Default for HeatmapOptions {
    fn default() -> Self {
        Self {
            metric: Metric::Ops,
            max_bands: 32,
            max_columns: 64,
            title: None,
            log_scale: false,
        }
    }
}

/// Load over key space (bands of the partition key, top = lowest keys) and time (columns of
/// load windows).
///
/// A partition's load in a window is spread evenly over the finest key ranges (between any two
/// split points ever seen) that it covered at the time, narrowed to those between the lowest
/// and highest sampled keys of the window.
///
/// # Examples
///
/// ```
/// use pk_codec::table::{Attribute, HeatmapOptions, ManualClock, Schema, Table, TableOptions};
///
/// let clock = ManualClock::new(0);
/// let table = Table::with_clock(
///     Schema::single_string("pk")?,
///     TableOptions::default().pre_split(vec!["m".into()]),
///     clock.clone(),
/// )?;
/// table.replay(&clock, (0..20).map(|i| ("a", vec![Attribute::new("n", i)], i * 1000)))?;
/// let options = HeatmapOptions { title: Some("one key".into()), ..HeatmapOptions::default() };
/// let map = table.heatmap(&options);
/// assert_eq!(map.bands.len(), 2);
/// assert_eq!(map.cells[0].iter().sum::<f64>(), 20.0);
/// assert_eq!(map.band_totals, vec![20.0, 0.0]);
/// let text = map.to_text();
/// assert!(text.contains("one key: Ops"));
/// assert!(text.contains("1970-01-01 00:00:00 UTC"));
/// assert!(!text.contains("INF_MIN")); // the first band shows its first key
/// # #[cfg(feature = "svg")]
/// assert!(map.to_svg(640, 360)?.starts_with("<svg"));
/// # Ok::<(), pk_codec::table::TableError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Heatmap {
    /// The title: the design's name (if given) and the metric.
    pub title: String,
    /// What the cells count.
    pub metric: Metric,
    /// Whether cells are shaded by `ln(1 + load)`.
    pub log_scale: bool,
    /// Lowest partition-key value of each band, top to bottom.
    pub bands: Vec<PkValue>,
    /// The lowest key that was used (the first band's label rather than `INF_MIN`).
    pub first_key: Option<PkValue>,
    /// A name for each band, shown in place of its lowest key where not empty (a key
    /// layout's decoded fields: [`Heatmap::name_bands`]); empty for none.
    pub band_names: Vec<String>,
    /// Start (ms) of each time column.
    pub columns_ms: Vec<i64>,
    /// Length (ms) of each time column.
    pub column_ms: i64,
    /// `cells[band][column]`.
    pub cells: Vec<Vec<f64>>,
    /// Load per band, over all time.
    pub band_totals: Vec<f64>,
    /// Load per time column, over all bands.
    pub column_totals: Vec<f64>,
    /// Per column, the bands whose upper edge is a partition boundary at that time (a partition
    /// that served load began inside the band): where the table had split.
    pub boundaries: Vec<Vec<usize>>,
    /// The largest cell.
    pub max: f64,
}

impl Table {
    /// The heatmap of this table's load so far.
    #[must_use]
    pub fn heatmap(&self, options: &HeatmapOptions) -> Heatmap {
        let lowers = self.partition_lowers();
        self.with_records(|records, _| {
            Heatmap::of_records(&lowers, records, self.load_window_ms(), options)
        })
    }
}

impl Heatmap {
    /// The heatmap of a log's `records`, the partitions now starting at `lowers`: the table's
    /// and the judge's alike.
    pub(super) fn of_records(
        lowers: &[PkValue],
        records: &[&WindowRecord],
        window_ms: i64,
        options: &HeatmapOptions,
    ) -> Self {
        let mut bounds: Vec<&PkValue> = lowers.iter().collect();
        // Each past partition's lower bound once (its records share their bounds), rather
        // than once per record to be sorted and deduplicated.
        let mut partitions = HashSet::new();
        bounds.extend(
            records
                .iter()
                .filter(|r| partitions.insert(Arc::as_ptr(&r.bounds)))
                .map(|r| r.lower()),
        );
        Self::build(records, bounds, window_ms, options)
    }

    fn build(
        records: &[&WindowRecord],
        mut bounds: Vec<&PkValue>,
        window_ms: i64,
        options: &HeatmapOptions,
    ) -> Self {
        bounds.push(&PkValue::InfMin);
        bounds.sort_unstable();
        bounds.dedup();
        let fine = bounds.len();
        let bands = options
            .max_bands
            .min(HeatmapOptions::MAX_BANDS)
            .clamp(1, fine);
        let band_of = |i: usize| i * bands / fine;
        let (w0, w1) = records.iter().fold((i64::MAX, i64::MIN), |(a, b), r| {
            (a.min(r.window), b.max(r.window))
        });
        let windows = if records.is_empty() {
            0
        } else {
            usize::try_from(w1.saturating_sub(w0).saturating_add(1)).unwrap_or(usize::MAX)
        };
        let columns = options
            .max_columns
            .min(HeatmapOptions::MAX_COLUMNS)
            .clamp(1, windows.max(1));
        let per_column = windows.div_ceil(columns).max(1);
        let columns = windows.div_ceil(per_column).max(1);
        let mut cells = vec![vec![0.0f64; columns]; bands];
        let mut boundaries = vec![Vec::new(); columns];
        // The lowest sampled key, encoded.
        let mut first_key: Option<&[u8]> = None;
        let idx = |v: &PkValue| bounds.partition_point(|&b| b <= v).saturating_sub(1);
        // The bounds encoded, to place the records' (encoded) sampled keys.
        let encoded: Vec<Vec<u8>> = bounds.iter().map(|b| value_bytes(b)).collect();
        // Searched among a partition's finest ranges `lo..hi` only: a value outside them is
        // clamped to them below anyway.
        let idx_encoded = |v: &[u8], lo: usize, hi: usize| {
            (lo + encoded[lo..hi].partition_point(|b| b.as_slice() <= v)).saturating_sub(1)
        };
        // Per partition (records of one partition share its bounds): its finest ranges.
        let mut ranges: HashMap<*const (PkValue, PkValue), (usize, usize)> = HashMap::new();
        for r in records {
            #[allow(clippy::cast_precision_loss)]
            let value = match options.metric {
                Metric::Ops => r.load.ops(),
                Metric::Writes => r.load.writes,
                Metric::Reads => r.load.reads,
                Metric::BytesWritten => r.load.bytes_written,
            } as f64;
            let col = (usize::try_from(r.window.saturating_sub(w0)).unwrap_or(0) / per_column)
                .min(columns - 1);
            let (lo, hi) = *ranges.entry(Arc::as_ptr(&r.bounds)).or_insert_with(|| {
                let lo = idx(r.lower());
                (lo, bounds.partition_point(|&b| b < r.upper()).max(lo + 1))
            });
            let sampled = r.sampled();
            if lo > 0 {
                // A partition starting on a band's first key: the lower edge of the band above;
                // one starting inside a band: that band's lower edge (the nearest drawn).
                let edge = if band_of(lo) == band_of(lo - 1) {
                    band_of(lo)
                } else {
                    band_of(lo) - 1
                };
                if !boundaries[col].contains(&edge) {
                    boundaries[col].push(edge);
                }
            }
            if let Some((low, _)) = sampled
                && first_key.is_none_or(|f| low < f)
            {
                first_key = Some(low);
            }
            if value == 0.0 {
                continue;
            }
            // The finest ranges the partition covered, narrowed to the sampled keys if any.
            let from = sampled
                .map_or(lo, |(low, _)| idx_encoded(low, lo, hi))
                .clamp(lo, hi - 1);
            let to = sampled
                .map_or(hi, |(_, high)| idx_encoded(high, lo, hi) + 1)
                .clamp(from + 1, hi);
            #[allow(clippy::cast_precision_loss)]
            let share = value / (to - from) as f64;
            for i in from..to {
                cells[band_of(i)][col] += share;
            }
        }
        for b in &mut boundaries {
            b.sort_unstable();
        }
        let band_starts = (0..bands)
            .map(|b| bounds[(0..fine).find(|&i| band_of(i) == b).unwrap_or(0)].clone())
            .collect();
        let max = cells.iter().flatten().copied().fold(0.0, f64::max);
        let band_totals = cells.iter().map(|row| row.iter().sum()).collect();
        let column_totals = (0..columns)
            .map(|c| cells.iter().map(|row| row[c]).sum())
            .collect();
        let start = if records.is_empty() { 0 } else { w0 };
        let metric = options.metric;
        let title = match &options.title {
            Some(t) => format!("{t}: {metric:?} by key band and time"),
            None => format!("{metric:?} by key band and time"),
        };
        let column_ms = window_ms.saturating_mul(i64::try_from(per_column).unwrap_or(i64::MAX));
        Self {
            title,
            metric,
            log_scale: options.log_scale,
            bands: band_starts,
            first_key: first_key.map(decode_partition_value),
            band_names: Vec::new(),
            columns_ms: (0..columns)
                .map(|c| {
                    let offset = i64::try_from(c * per_column).unwrap_or(i64::MAX);
                    start.saturating_add(offset).saturating_mul(window_ms)
                })
                .collect(),
            column_ms,
            cells,
            band_totals,
            column_totals,
            boundaries,
            max,
        }
    }

    /// A cell's shade from 0 (no load) to 1 (the largest cell), on the linear or log scale.
    #[must_use]
    pub fn shade(&self, value: f64) -> f64 {
        if self.max <= 0.0 || value <= 0.0 {
            0.0
        } else if self.log_scale {
            (value.ln_1p() / self.max.ln_1p()).clamp(0.0, 1.0)
        } else {
            (value / self.max).clamp(0.0, 1.0)
        }
    }

    /// The load a shade stands for (the inverse of [`Heatmap::shade`]).
    #[must_use]
    pub fn value_at(&self, shade: f64) -> f64 {
        if self.log_scale {
            (shade * self.max.ln_1p()).exp_m1()
        } else {
            shade * self.max
        }
    }

    /// Names each band by `name` of its lowest key (the first key used, for the first band),
    /// where `name` gives one: a key layout's decoded fields read better than the key's text.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::table::{HeatmapOptions, PkValue, Table, TableOptions};
    ///
    /// let options = TableOptions::default().load_sample_every(1).pre_split(vec!["b|7".into()]);
    /// let table = Table::single_string_key("pk", options)?;
    /// table.put("a|3", vec![])?;
    /// table.put("b|7", vec![])?;
    /// let mut map = table.heatmap(&HeatmapOptions::default());
    /// map.name_bands(|key| match key {
    ///     PkValue::String(s) => s.split_once('|').map(|(city, n)| format!("city={city}, n={n}")),
    ///     _ => None,
    /// });
    /// assert_eq!(map.band_label(0, 40), "city=a, n=3");
    /// assert_eq!(map.band_label(1, 40), "city=b, n=7");
    /// # Ok::<(), pk_codec::table::TableError>(())
    /// ```
    pub fn name_bands(&mut self, mut name: impl FnMut(&PkValue) -> Option<String>) {
        self.band_names = self
            .bands
            .iter()
            .map(|b| match (b, &self.first_key) {
                (PkValue::InfMin, Some(first)) => name(first),
                (PkValue::InfMin, None) => None,
                (b, _) => name(b),
            })
            .map(Option::unwrap_or_default)
            .collect();
    }

    /// The label of band `i`: its name ([`Heatmap::name_bands`]), else its lowest key, the
    /// first key used for the first band.
    #[must_use]
    pub fn band_label(&self, i: usize, max_chars: usize) -> String {
        if let Some(name) = self.band_names.get(i).filter(|n| !n.is_empty()) {
            return truncated(name.clone(), max_chars);
        }
        match (self.bands.get(i), &self.first_key) {
            (Some(PkValue::InfMin), Some(first)) => label(first, max_chars),
            (Some(PkValue::InfMin), None) => "(lowest)".to_owned(),
            (Some(v), _) => label(v, max_chars),
            (None, _) => String::new(),
        }
    }

    /// A text picture for terminals: a title, one line per key band (its first key, its cells,
    /// its total), one character per time column, darker for more load (` .:-=+*#%@`), a
    /// legend with the scale, the time axis in UTC, the per-column totals and the partition
    /// boundaries of the last column (the SVG draws them over time).
    #[must_use]
    pub fn to_text(&self) -> String {
        const SHADES: &[u8] = b" .:-=+*#%@";
        let labels: Vec<String> = (0..self.bands.len())
            .map(|i| self.band_label(i, 16))
            .collect();
        let width = labels
            .iter()
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(0)
            .max(8);
        let mut s = String::new();
        let _ = writeln!(s, "{}", self.title);
        let _ = writeln!(
            s,
            "{:width$} | time, left to right, one character = {} | total",
            "key band",
            duration(self.column_ms)
        );
        for (l, (row, total)) in labels.iter().zip(self.cells.iter().zip(&self.band_totals)) {
            let line: String = row
                .iter()
                .map(|v| {
                    let t = self.shade(*v);
                    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                    let i = if t > 0.0 {
                        ((t * 9.0).ceil() as usize).clamp(1, 9)
                    } else {
                        0
                    };
                    SHADES[i] as char
                })
                .collect();
            let _ = writeln!(s, "{l:width$} |{line}| {total:.0}");
        }
        let first = self.columns_ms.first().copied().unwrap_or(0);
        let last = self.columns_ms.last().copied().unwrap_or(0);
        let _ = writeln!(
            s,
            "{:width$}  from {} to {}",
            "time",
            utc(first),
            utc(last.saturating_add(self.column_ms))
        );
        let peak = self.column_totals.iter().copied().fold(0.0, f64::max);
        let _ = writeln!(
            s,
            "{:width$}  per column: min {:.0}, max {:.0}; {} partition boundaries at the end",
            "totals",
            self.column_totals
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min)
                .min(peak),
            peak,
            self.boundaries.last().map_or(0, Vec::len)
        );
        let scale = if self.log_scale { "log" } else { "linear" };
        let legend: Vec<String> = (1..=9)
            .map(|i| {
                #[allow(clippy::cast_precision_loss)]
                let v = self.value_at(i as f64 / 9.0);
                format!("{}<={v:.0}", SHADES[i] as char)
            })
            .collect();
        let _ = writeln!(
            s,
            "{:width$}  {scale} scale: ' '=0 {}",
            "legend",
            legend.join(" ")
        );
        s
    }

    /// The heatmap as an SVG document of `width` x `height` pixels: the title, the key bands
    /// labelled by their first key with their totals, the time axis in UTC, a bar of load per
    /// time column, a colour legend with its scale and partition boundaries over time (cyan).
    ///
    /// # Errors
    ///
    /// [`TableError::Render`] when the plotting library fails, or when the fields (public, so a
    /// heatmap may be built by hand) disagree on its shape: `cells` must have one row per band
    /// (`bands`) and each row one cell per time column (`columns_ms`), and every load must be
    /// a finite number; or when `width` or `height` is above [`Heatmap::MAX_SVG_SIDE`].
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::table::{Heatmap, Metric, PkValue, TableError};
    ///
    /// let map = Heatmap {
    ///     title: "by hand".into(),
    ///     metric: Metric::Ops,
    ///     log_scale: false,
    ///     bands: vec![PkValue::InfMin],
    ///     first_key: None,
    ///     band_names: vec![],
    ///     columns_ms: vec![0],
    ///     column_ms: 1000,
    ///     cells: vec![vec![1.0], vec![2.0]], // two rows for one band
    ///     band_totals: vec![3.0],
    ///     column_totals: vec![3.0],
    ///     boundaries: vec![vec![]],
    ///     max: 2.0,
    /// };
    /// let err = map.to_svg(640, 360).unwrap_err();
    /// assert!(matches!(err, TableError::Render { .. }));
    /// assert!(err.to_string().contains("2 rows of cells for 1 bands"));
    /// ```
    #[cfg(feature = "svg")]
    pub fn to_svg(&self, width: u32, height: u32) -> Result<String, TableError> {
        self.check_shape()
            .map_err(|reason| TableError::Render { reason })?;
        if width > Self::MAX_SVG_SIDE || height > Self::MAX_SVG_SIDE {
            return Err(TableError::Render {
                reason: format!(
                    "an SVG of {width} x {height} pixels: width and height must be at most {} \
                     (the drawing library's coordinates overflow past that)",
                    Self::MAX_SVG_SIDE
                ),
            });
        }
        let mut out = String::new();
        draw(self, &mut out, width, height).map_err(|e| TableError::Render {
            reason: e.to_string(),
        })?;
        Ok(out)
    }
}

impl Heatmap {
    /// The widest and highest SVG [`Heatmap::to_svg`] draws, in pixels (2^24): larger sizes
    /// are refused, as the drawing library's coordinates overflow past 2^31.
    #[cfg(feature = "svg")]
    pub const MAX_SVG_SIDE: u32 = 1 << 24;

    /// Whether `cells` has one row per band and each row one cell per time column, as a built
    /// heatmap has, and every load a finite number: what drawing it needs. The error says how
    /// the fields disagree.
    #[cfg(feature = "svg")]
    fn check_shape(&self) -> Result<(), String> {
        if self.cells.len() != self.bands.len() {
            return Err(format!(
                "the heatmap has {} rows of cells for {} bands: `cells` must have one row per \
                 band",
                self.cells.len(),
                self.bands.len()
            ));
        }
        if let Some((b, row)) = self
            .cells
            .iter()
            .enumerate()
            .find(|(_, row)| row.len() != self.columns_ms.len())
        {
            return Err(format!(
                "row {b} of the heatmap's cells has {} cells for {} time columns: each row of \
                 `cells` must have one cell per entry of `columns_ms`",
                row.len(),
                self.columns_ms.len()
            ));
        }
        // A load that is not a finite number has no shade, and an infinite total made the
        // plotting library's axis search run for ever.
        let fields: [(&str, Box<dyn Iterator<Item = f64> + '_>); 4] = [
            ("cells", Box::new(self.cells.iter().flatten().copied())),
            ("band_totals", Box::new(self.band_totals.iter().copied())),
            (
                "column_totals",
                Box::new(self.column_totals.iter().copied()),
            ),
            ("max", Box::new(std::iter::once(self.max))),
        ];
        for (field, mut values) in fields {
            if let Some(v) = values.find(|v| !v.is_finite()) {
                return Err(format!(
                    "the heatmap's `{field}` holds {v}: every load must be a finite number"
                ));
            }
        }
        Ok(())
    }
}

fn label(v: &PkValue, max: usize) -> String {
    truncated(v.to_string(), max)
}

/// `s`, cut to `max` characters with `~` as the last when longer.
fn truncated(s: String, max: usize) -> String {
    if s.chars().count() > max {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('~');
        t
    } else {
        s
    }
}

/// A duration in words: `1 s`, `5 min`, `2 h`, `1 d`.
fn duration(ms: i64) -> String {
    match ms {
        m if m % 86_400_000 == 0 => format!("{} d", m / 86_400_000),
        m if m % 3_600_000 == 0 => format!("{} h", m / 3_600_000),
        m if m % 60_000 == 0 => format!("{} min", m / 60_000),
        m if m % 1_000 == 0 => format!("{} s", m / 1_000),
        m => format!("{m} ms"),
    }
}

/// `YYYY-MM-DD hh:mm:ss UTC` of ms since the epoch (proleptic Gregorian calendar), as heatmaps
/// and `pk analyze` print times.
///
/// # Examples
///
/// ```
/// assert_eq!(pk_codec::table::utc(0), "1970-01-01 00:00:00 UTC");
/// assert_eq!(pk_codec::table::utc(1_700_000_000_000), "2023-11-14 22:13:20 UTC");
/// assert_eq!(pk_codec::table::utc(-1), "1969-12-31 23:59:59 UTC");
/// ```
#[must_use]
pub fn utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The colour of a shade: white for no load, then pale yellow through orange and red to dark
/// red for the busiest cell (the sequential "yellow-orange-red" scale of maps), so that the
/// hottest cells read as the hottest and an empty cell as empty.
#[cfg(feature = "svg")]
const HEAT_STOPS: [(f64, [f64; 3]); 5] = [
    (0.0, [255.0, 255.0, 204.0]),
    (0.25, [254.0, 217.0, 118.0]),
    (0.5, [253.0, 141.0, 60.0]),
    (0.75, [227.0, 26.0, 28.0]),
    (1.0, [128.0, 0.0, 38.0]),
];

/// White for `t` = 0 (no load), then [`HEAT_STOPS`] from pale yellow to dark red as `t` goes
/// to 1.
#[cfg(feature = "svg")]
fn heat(t: f64) -> RGBColor {
    if t <= 0.0 || t.is_nan() {
        return RGBColor(255, 255, 255);
    }
    let t = t.min(1.0);
    let i = HEAT_STOPS
        .iter()
        .rposition(|&(at, _)| at <= t)
        .unwrap_or(0)
        .min(HEAT_STOPS.len() - 2);
    let ((a, lo), (b, hi)) = (HEAT_STOPS[i], HEAT_STOPS[i + 1]);
    let f = (t - a) / (b - a);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let c = |k: usize| (lo[k] + (hi[k] - lo[k]) * f).round().clamp(0.0, 255.0) as u8;
    RGBColor(c(0), c(1), c(2))
}

/// A short clock label for an axis: the date only at midnight of long spans.
#[cfg(feature = "svg")]
fn clock_label(ms: i64, span_ms: i64) -> String {
    let full = utc(ms);
    if span_ms >= 2 * 86_400_000 {
        full[5..16].to_owned() // MM-DD hh:mm
    } else if span_ms >= 3_600_000 {
        full[11..16].to_owned() // hh:mm
    } else {
        full[11..19].to_owned() // hh:mm:ss
    }
}

#[cfg(feature = "svg")]
fn draw(
    map: &Heatmap,
    out: &mut String,
    width: u32,
    height: u32,
) -> std::result::Result<(), Box<dyn std::error::Error>> {
    // Named bands (a layout's decoded fields) get a wider label area than raw keys.
    let named = map.band_names.iter().any(|n| !n.is_empty());
    let (label_px, label_chars): (u32, usize) = if named { (260, 30) } else { (150, 12) };
    let root = SVGBackend::with_string(out, (width, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(&map.title, ("sans-serif", 18))?;
    let (_, h) = root.dim_in_pixel();
    let (main, legend) = root.split_horizontally(width.saturating_sub(110));
    let (heat_area, totals_area) = main.split_vertically(h.saturating_sub(110));
    let cols = map.columns_ms.len().max(1);
    let bands = map.bands.len().max(1);
    let first_ms = map.columns_ms.first().copied().unwrap_or(0);
    let span = map
        .column_ms
        .saturating_mul(i64::try_from(cols).unwrap_or(i64::MAX));
    let labels: Vec<String> = (0..bands)
        .map(|i| {
            format!(
                "{} ({:.0})",
                map.band_label(i, label_chars),
                map.band_totals.get(i).copied().unwrap_or(0.0)
            )
        })
        .collect();
    let mut chart = ChartBuilder::on(&heat_area)
        .margin(8)
        .margin_bottom(0)
        .x_label_area_size(0)
        .y_label_area_size(label_px)
        .build_cartesian_2d(0usize..cols, (0usize..bands - 1).into_segmented())?;
    chart
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .label_style(("sans-serif", 12))
        .axis_desc_style(("sans-serif", 13))
        .y_desc(if named {
            "key band: its first key's fields (total), top = lowest"
        } else {
            "key band: first key (total), top = lowest"
        })
        .y_labels(bands.min(24))
        .y_label_formatter(&|v| match v {
            // Band 0 (lowest keys) is drawn at the top.
            SegmentValue::CenterOf(y) | SegmentValue::Exact(y) => bands
                .checked_sub(y + 1)
                .and_then(|i| labels.get(i))
                .cloned()
                .unwrap_or_default(),
            SegmentValue::Last => String::new(),
        })
        .draw()?;
    let top_of = |y: usize| {
        if y + 1 == bands {
            SegmentValue::Last
        } else {
            SegmentValue::Exact(y + 1)
        }
    };
    chart.draw_series(map.cells.iter().enumerate().flat_map(|(b, row)| {
        let y = bands - 1 - b;
        row.iter().enumerate().map(move |(c, v)| {
            Rectangle::new(
                [(c, SegmentValue::Exact(y)), (c + 1, top_of(y))],
                heat(map.shade(*v)).filled(),
            )
        })
    }))?;
    // Partition boundaries: a cyan line on the lower edge of the band above each boundary.
    let cyan = RGBColor(0, 200, 230).stroke_width(2);
    chart.draw_series(map.boundaries.iter().enumerate().flat_map(|(c, edges)| {
        edges.iter().filter(|&&b| b < bands - 1).map(move |&b| {
            let y = bands - 1 - b;
            PathElement::new(
                vec![(c, SegmentValue::Exact(y)), (c + 1, SegmentValue::Exact(y))],
                cyan,
            )
        })
    }))?;
    // Load per time column, with the UTC clock axis.
    let peak = map
        .column_totals
        .iter()
        .copied()
        .fold(0.0, f64::max)
        .max(1.0);
    let mut bars = ChartBuilder::on(&totals_area)
        .margin(8)
        .margin_top(4)
        .x_label_area_size(44)
        .y_label_area_size(label_px)
        .build_cartesian_2d(0usize..cols, 0f64..peak)?;
    let starts = map.columns_ms.clone();
    bars.configure_mesh()
        .disable_mesh()
        .label_style(("sans-serif", 12))
        .axis_desc_style(("sans-serif", 13))
        .x_desc(format!(
            "time (UTC) from {}, one column = {}",
            &utc(first_ms)[..16],
            duration(map.column_ms)
        ))
        .y_desc("total")
        .x_labels(8)
        .y_labels(3)
        .y_label_formatter(&|v| format!("{v:.0}"))
        .x_label_formatter(&|c| {
            starts
                .get(*c)
                .map_or(String::new(), |ms| clock_label(*ms, span))
        })
        .draw()?;
    bars.draw_series(
        map.column_totals
            .iter()
            .enumerate()
            .map(|(c, v)| Rectangle::new([(c, 0.0), (c + 1, *v)], RGBColor(90, 90, 90).filled())),
    )?;
    // The colour legend, with its scale.
    let mut key = ChartBuilder::on(&legend)
        .margin(8)
        .margin_bottom(160)
        .x_label_area_size(0)
        .y_label_area_size(70)
        .caption(
            if map.log_scale {
                "load a cell (log)"
            } else {
                "load a cell"
            },
            ("sans-serif", 13),
        )
        .build_cartesian_2d(0f64..1.0, 0f64..1.0)?;
    key.configure_mesh()
        .disable_mesh()
        .label_style(("sans-serif", 12))
        .disable_x_axis()
        .y_labels(6)
        .y_label_formatter(&|t| format!("{:.0}", map.value_at(*t)))
        .draw()?;
    key.draw_series((0..100).map(|i| {
        let (a, b) = (f64::from(i) / 100.0, f64::from(i + 1) / 100.0);
        Rectangle::new([(0.0, a), (1.0, b)], heat(a).filled())
    }))?;
    legend.draw(&Text::new(
        "dark red: busiest",
        (8, i32::try_from(h).unwrap_or(0) - 110),
        ("sans-serif", 12),
    ))?;
    legend.draw(&Text::new(
        "white: no load",
        (8, i32::try_from(h).unwrap_or(0) - 95),
        ("sans-serif", 12),
    ))?;
    legend.draw(&Text::new(
        "cyan: partition",
        (8, i32::try_from(h).unwrap_or(0) - 140),
        ("sans-serif", 12),
    ))?;
    legend.draw(&Text::new(
        "boundaries",
        (8, i32::try_from(h).unwrap_or(0) - 125),
        ("sans-serif", 12),
    ))?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The busiest cells read as the hottest: white for no load, then darker at every step
    /// up (the sum of the channels falls), dark red at the top. (Before, no load was black and
    /// the busiest near-white.)
    #[cfg(feature = "svg")]
    #[test]
    fn busier_cells_are_darker_and_redder() {
        let sum = |c: RGBColor| u32::from(c.0) + u32::from(c.1) + u32::from(c.2);
        assert_eq!(sum(heat(0.0)), 765);
        let mut last = sum(heat(0.0));
        for i in 1..=100 {
            let c = heat(f64::from(i) / 100.0);
            assert!(sum(c) < last, "step {i}: {c:?}");
            assert!(c.0 >= c.1 && c.0 >= c.2, "step {i}: red leads, {c:?}");
            last = sum(c);
        }
        assert_eq!(heat(1.0), RGBColor(128, 0, 38));
    }
    use crate::table::load::{Extremes, Load};

    /// A partition's load is spread over the finest ranges between its sampled lowest and
    /// highest keys (searched among the partition's own ranges), clamped to the partition.
    #[test]
    fn load_lands_between_the_sampled_keys() {
        let v = |s: &str| PkValue::from(s);
        let record =
            |window, lower: PkValue, upper, writes, sampled: Option<(&str, &str)>| WindowRecord {
                window,
                partition: 0,
                bounds: Arc::new((lower, upper)),
                load: Load {
                    writes,
                    ..Load::default()
                },
                sampled: sampled
                    .map(|(l, h)| Extremes::new(&value_bytes(&v(l)), &value_bytes(&v(h)))),
                rows: 0,
                bytes: 0,
            };
        let records = [
            // The whole key space, sampled from "c" to "f": the ranges of "c" and "e".
            record(0, PkValue::InfMin, PkValue::InfMax, 6, Some(("c", "f"))),
            // Sampled beyond its bounds: its one range.
            record(1, v("e"), v("g"), 4, Some(("a", "z"))),
            // Not sampled: all its ranges (one).
            record(1, PkValue::InfMin, v("c"), 2, None),
            // From "c" up, sampled at "e" only: the range of "e".
            record(2, v("c"), PkValue::InfMax, 4, Some(("e", "e"))),
        ];
        let records: Vec<&WindowRecord> = records.iter().collect();
        let (c, e, g) = (v("c"), v("e"), v("g"));
        let map = Heatmap::build(
            &records,
            vec![&c, &e, &g],
            1_000,
            &HeatmapOptions::default(),
        );
        assert_eq!(
            map.bands,
            vec![PkValue::InfMin, c.clone(), e.clone(), g.clone()]
        );
        assert_eq!(
            map.cells,
            vec![
                vec![0.0, 2.0, 0.0],
                vec![3.0, 0.0, 0.0],
                vec![3.0, 4.0, 4.0],
                vec![0.0, 0.0, 0.0],
            ]
        );
    }
}
