//! A picture of load over key space and time, like the key visualizers of managed stores.

use std::fmt::Write as _;

use plotters::prelude::*;
use serde::Serialize;

use super::error::{Result, TableError};
use super::load::PartitionWindow;
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
    /// Most key bands (rows of the picture).
    pub max_bands: usize,
    /// Most time columns.
    pub max_columns: usize,
}

impl Default for HeatmapOptions {
    fn default() -> Self {
        Self {
            metric: Metric::Ops,
            max_bands: 32,
            max_columns: 64,
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
/// let map = table.heatmap(&HeatmapOptions::default());
/// assert_eq!(map.bands.len(), 2);
/// assert_eq!(map.cells[0].iter().sum::<f64>(), 20.0);
/// assert!(map.to_text().contains("INF_MIN"));
/// assert!(map.to_svg(640, 360)?.starts_with("<svg"));
/// # Ok::<(), pk_codec::table::TableError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Heatmap {
    /// What the cells count.
    pub metric: Metric,
    /// Lowest partition-key value of each band, top to bottom.
    pub bands: Vec<PkValue>,
    /// Start (ms) of each time column.
    pub columns_ms: Vec<i64>,
    /// `cells[band][column]`.
    pub cells: Vec<Vec<f64>>,
    /// The largest cell.
    pub max: f64,
}

impl Table {
    /// The heatmap of this table's load so far.
    #[must_use]
    pub fn heatmap(&self, options: &HeatmapOptions) -> Heatmap {
        let mut bounds: Vec<PkValue> = self.partition_bounds().into_iter().map(|b| b.0).collect();
        let records = self.load_records();
        bounds.extend(records.iter().map(|r| r.lower.clone()));
        Heatmap::build(records, bounds, self.load_window_ms(), options)
    }
}

impl Heatmap {
    fn build(
        records: Vec<PartitionWindow>,
        mut bounds: Vec<PkValue>,
        window_ms: i64,
        options: &HeatmapOptions,
    ) -> Self {
        bounds.push(PkValue::InfMin);
        bounds.sort_unstable();
        bounds.dedup();
        let fine = bounds.len();
        let bands = options.max_bands.clamp(1, fine);
        let band_of = |i: usize| i * bands / fine;
        let (w0, w1) = records.iter().fold((i64::MAX, i64::MIN), |(a, b), r| {
            (a.min(r.window), b.max(r.window))
        });
        let windows = if records.is_empty() {
            0
        } else {
            usize::try_from(w1.saturating_sub(w0).saturating_add(1)).unwrap_or(usize::MAX)
        };
        let columns = options.max_columns.clamp(1, windows.max(1));
        let per_column = windows.div_ceil(columns).max(1);
        let columns = windows.div_ceil(per_column).max(1);
        let mut cells = vec![vec![0.0f64; columns]; bands];
        for r in &records {
            #[allow(clippy::cast_precision_loss)]
            let value = match options.metric {
                Metric::Ops => r.load.ops(),
                Metric::Writes => r.load.writes,
                Metric::Reads => r.load.reads,
                Metric::BytesWritten => r.load.bytes_written,
            } as f64;
            if value == 0.0 {
                continue;
            }
            // The finest ranges the partition covered, narrowed to the sampled keys if any.
            let idx = |v: &PkValue| bounds.partition_point(|b| b <= v).saturating_sub(1);
            let lo = idx(&r.lower);
            let hi = bounds.partition_point(|b| *b < r.upper).max(lo + 1);
            let from = r.sampled_low.as_ref().map_or(lo, idx).clamp(lo, hi - 1);
            let to = r
                .sampled_high
                .as_ref()
                .map_or(hi, |v| idx(v) + 1)
                .clamp(from + 1, hi);
            let col = (usize::try_from(r.window.saturating_sub(w0)).unwrap_or(0) / per_column)
                .min(columns - 1);
            #[allow(clippy::cast_precision_loss)]
            let share = value / (to - from) as f64;
            for i in from..to {
                cells[band_of(i)][col] += share;
            }
        }
        let band_starts = (0..bands)
            .map(|b| bounds[(0..fine).find(|&i| band_of(i) == b).unwrap_or(0)].clone())
            .collect();
        let max = cells.iter().flatten().copied().fold(0.0, f64::max);
        let start = if records.is_empty() { 0 } else { w0 };
        Self {
            metric: options.metric,
            bands: band_starts,
            columns_ms: (0..columns)
                .map(|c| {
                    let offset = i64::try_from(c * per_column).unwrap_or(i64::MAX);
                    start.saturating_add(offset).saturating_mul(window_ms)
                })
                .collect(),
            cells,
            max,
        }
    }

    /// A text picture for terminals: one line per key band, one character per time column,
    /// darker for more load (` .:-=+*#%@`).
    #[must_use]
    pub fn to_text(&self) -> String {
        const SHADES: &[u8] = b" .:-=+*#%@";
        let labels: Vec<String> = self.bands.iter().map(|b| label(b, 16)).collect();
        let width = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{:width$} | load ({:?}) over time, left to right; max cell {:.0}",
            "key band", self.metric, self.max
        );
        for (l, row) in labels.iter().zip(&self.cells) {
            let line: String = row
                .iter()
                .map(|v| {
                    let i = if self.max > 0.0 && *v > 0.0 {
                        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                        let i = ((v / self.max) * 9.0).ceil() as usize;
                        i.clamp(1, 9)
                    } else {
                        0
                    };
                    SHADES[i] as char
                })
                .collect();
            let _ = writeln!(s, "{l:width$} |{line}|");
        }
        s
    }

    /// The heatmap as an SVG document of `width` x `height` pixels.
    ///
    /// # Errors
    ///
    /// [`TableError::Render`] when the plotting library fails.
    pub fn to_svg(&self, width: u32, height: u32) -> Result<String> {
        let mut out = String::new();
        draw(self, &mut out, width, height).map_err(|e| TableError::Render {
            reason: e.to_string(),
        })?;
        Ok(out)
    }
}

fn label(v: &PkValue, max: usize) -> String {
    let s = v.to_string();
    if s.chars().count() > max {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('~');
        t
    } else {
        s
    }
}

/// Black through red to yellow as `t` goes from 0 to 1.
fn heat(t: f64) -> RGBColor {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let c = |x: f64| (x.clamp(0.0, 1.0) * 255.0).round() as u8;
    RGBColor(c(t * 2.0), c(t * 2.0 - 1.0), c(t * 4.0 - 3.0))
}

fn draw(
    map: &Heatmap,
    out: &mut String,
    width: u32,
    height: u32,
) -> std::result::Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(out, (width, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let cols = map.columns_ms.len().max(1);
    let bands = map.bands.len().max(1);
    let first_ms = map.columns_ms.first().copied().unwrap_or(0);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "{:?} by key band (top: lowest keys) and time; brightest cell = {:.0}",
                map.metric, map.max
            ),
            ("sans-serif", 15),
        )
        .margin(8)
        .x_label_area_size(34)
        .y_label_area_size(110)
        .build_cartesian_2d(0usize..cols, (0usize..bands - 1).into_segmented())?;
    let labels: Vec<String> = map.bands.iter().map(|b| label(b, 14)).collect();
    let starts = map.columns_ms.clone();
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc("seconds from the first window")
        .x_labels(8)
        .y_labels(bands.min(24))
        .x_label_formatter(&|c| {
            starts.get(*c).map_or(String::new(), |ms| {
                format!("{}", ms.saturating_sub(first_ms).div_euclid(1000))
            })
        })
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
    chart.draw_series(map.cells.iter().enumerate().flat_map(|(b, row)| {
        let y = bands - 1 - b;
        row.iter().enumerate().map(move |(c, v)| {
            let t = if map.max > 0.0 { v / map.max } else { 0.0 };
            // The integer range is inclusive: `bands` segments, the last one closed by `Last`.
            let top = if y + 1 == bands {
                SegmentValue::Last
            } else {
                SegmentValue::Exact(y + 1)
            };
            Rectangle::new(
                [(c, SegmentValue::Exact(y)), (c + 1, top)],
                heat(t).filled(),
            )
        })
    }))?;
    root.present()?;
    Ok(())
}
