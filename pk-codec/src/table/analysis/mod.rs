//! The judge as a library: key designs from specs, a dump's rows in, each design's replay out.
//!
//! An [`Analysis`] takes designs ([`DesignSpec`]: a key column, the whole line, or a runtime
//! [`Layout`] whose field names are column names), then a dump's rows (a header per file, then
//! rows with their times), builds each design's keys and replays them through a [`Judge`] of
//! its own, in time order (rows out of order are put in order through sorted runs on disk, in
//! bounded memory), on a thread per design. `pk analyze` reads files and renders; everything
//! it decides is made here.
//!
//! The verdicts are in a store's terms ([`StoreProfile`]): writes past one partition's
//! capacity, after the store's splits, are throttled; a design is `HOT`
//! ([`Verdict::Concentrated`]) when some are throttled that no split cures (its tail: writes
//! above every key before them, or, for a layout with a bucket prefix, the busiest bucket's
//! tail: writes above every key of their bucket before them; a hot key value), and its
//! [`Headroom`] is the largest multiple of the dump's traffic at which none are.
//!
//! ```
//! use pk_codec::table::analysis::{Analysis, AnalysisOptions, DesignSpec, Verdict, Where};
//!
//! let mut options = AnalysisOptions::default(); // the generic store: 100 writes a minute
//! options.time = Some("ts".to_owned());
//! let designs = vec![
//!     DesignSpec::layout("ts: u64 width=13")?,                  // time first: a tail
//!     DesignSpec::layout("order_no: u64 width=8; hash=md5:4")?, // hashed
//! ];
//! let mut analysis = Analysis::new(designs, options)?;
//! let header = ["order_no".to_owned(), "ts".to_owned()];
//! analysis.header(&header, "orders.csv")?;
//! // 150 orders a minute for ten minutes.
//! for i in 0..1_500u64 {
//!     let ts = 1_700_000_000_000 + i as i64 * 400;
//!     let (order, time) = ((10_000_000 + i).to_string(), ts.to_string());
//!     let at = Where { file: "orders.csv", line: i + 2 };
//!     analysis.row(&[&order, &time], ts, &at)?;
//! }
//! analysis.seal()?;
//! let (report, _replays) = analysis.finish()?;
//! assert_eq!(report.load.writes_per_window_peak, 150);
//! let (tail, hashed) = (&report.designs[0], &report.designs[1]);
//! assert_eq!(tail.verdict, Verdict::Concentrated); // 150 writes a minute at the tail > 100
//! assert!(tail.throttling.uncured_writes > 0);
//! let h = tail.headroom.multiple.unwrap();
//! assert!((0.6..0.7).contains(&h), "{h}"); // 100 / 150, within 5%
//! assert_eq!(hashed.verdict, Verdict::Spread);
//! # Ok::<(), pk_codec::table::analysis::AnalysisError>(())
//! ```
//!
//! [`Judge`]: crate::table::Judge

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::table::{
    AttributeAudit, Growth, Judge, TableError, TableOptions, VolumeMeter, table_findings,
};
use crate::{Error, FieldDef, Layout, Value};

pub mod format;
mod headroom;
mod ingest;
mod report;
mod spill;
mod store;

pub use headroom::Headroom;
use ingest::{Design, ReplayOptions, column, scaled};
pub use ingest::{KeySource, Where, bucket_of};
pub use report::{
    AnalysisReport, DesignReport, HEADROOM_TOLERANCE, LoadFigures, Projection, TableGrowth,
    Throttling, TopValue, Verdict,
};
pub use store::{Capacity, Figure, LoadSplit, STORE_NAMES, StoreProfile};

/// An analysis that cannot go on: what went wrong and where (file and line when a row is at
/// fault).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnalysisError {
    message: String,
}

impl AnalysisError {
    /// The message.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for AnalysisError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for AnalysisError {}

impl From<String> for AnalysisError {
    fn from(message: String) -> Self {
        Self { message }
    }
}

impl From<TableError> for AnalysisError {
    fn from(e: TableError) -> Self {
        Self {
            message: e.to_string(),
        }
    }
}

/// Parses `text` as a value of `field`'s kind ([`FieldSpec::parse_value`]), the error as a
/// sentence naming the field, the text and the kind.
///
/// # Errors
///
/// When the text is not a value of the field's kind.
///
/// # Examples
///
/// ```
/// use pk_codec::Layout;
/// use pk_codec::table::analysis::field_value;
///
/// let layout: Layout = "device: u32 width=6".parse()?;
/// assert!(field_value(&layout.fields()[0], "42").is_ok());
/// assert!(field_value(&layout.fields()[0], "x").unwrap_err().contains("device"));
/// # Ok::<(), pk_codec::Error>(())
/// ```
///
/// [`FieldSpec::parse_value`]: crate::FieldSpec::parse_value
pub fn field_value(field: &FieldDef, text: &str) -> Result<Value, String> {
    field
        .spec()
        .parse_value(field.name(), text)
        .map_err(|err| match err {
            Error::BadValueText {
                field,
                text,
                ty,
                why,
            } => format!("field {field}: {text:?} is not a {ty} ({why})"),
            other => other.to_string(),
        })
}

/// A key design to judge: its name in the report and how a row's key is made.
#[derive(Clone, Debug)]
pub struct DesignSpec {
    name: String,
    source: KeySource,
}

impl DesignSpec {
    /// A design whose key is the column `name` as it is.
    #[must_use]
    pub fn column(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            source: KeySource::Column(name.to_owned()),
        }
    }

    /// A design whose key is the whole line (a dump of keys, one a line), named `key`.
    #[must_use]
    pub fn line() -> Self {
        Self {
            name: "key".to_owned(),
            source: KeySource::Line,
        }
    }

    /// A design from a layout spec whose field names are column names (`"device: u32
    /// width=6; ts: u64 width=13"`), named by the spec as given.
    ///
    /// # Errors
    ///
    /// When the spec is not a layout.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::table::analysis::DesignSpec;
    ///
    /// let d = DesignSpec::layout("hash=md5:4; device: u32 width=6; ts: u64 width=13")?;
    /// assert_eq!(d.name(), "hash=md5:4; device: u32 width=6; ts: u64 width=13");
    /// assert!(DesignSpec::layout("device: nope").is_err());
    /// # Ok::<(), pk_codec::table::analysis::AnalysisError>(())
    /// ```
    pub fn layout(spec: &str) -> Result<Self, AnalysisError> {
        let layout = spec
            .parse::<Layout>()
            .map_err(|e| format!("bad design spec {spec:?}: {e}"))?;
        Ok(Self {
            name: spec.to_owned(),
            source: KeySource::Layout {
                spec: spec.to_owned(),
                // The layout's own spec: the text given may be spaced as the parser allows.
                buckets: ingest::buckets_of(&layout.to_string()),
                layout,
            },
        })
    }

    /// The design's name in the report.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How a row's key is made.
    #[must_use]
    pub const fn source(&self) -> &KeySource {
        &self.source
    }
}

/// How an [`Analysis`] replays its rows and judges them.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AnalysisOptions {
    /// The store: its partitions' capacity, its splits, its window and per-value limit.
    pub store: StoreProfile,
    /// Merge small, cold partitions back together, as the store does (each merge copies the
    /// rows of both partitions in the model: slow on long sequential dumps).
    pub merge: bool,
    /// Replay the dump this many times faster than its times say (above 0).
    pub load_scale: f64,
    /// The column holding each row's time (ms since the epoch): rows are judged in time order,
    /// whatever their order. Without it rows are judged in the order given.
    pub time: Option<String>,
    /// The attribute columns checked against the practices; `None`: every column no design's
    /// key and not the time column reads.
    pub columns: Option<Vec<String>>,
    /// Hot key values and partition-key values with the most data listed per design.
    pub top: usize,
    /// A value crossing the per-value limit within this many days is a finding, and its
    /// crossing date is shown (beyond it: "not within").
    pub horizon_days: u64,
    /// A HOT design hotter than this share (0 to 1) fails.
    pub fail_above: Option<f64>,
    /// A design whose headroom is below this multiple fails.
    pub fail_below_headroom: Option<f64>,
    /// The largest multiple of the dump's traffic the headroom search tries.
    pub headroom_up_to: f64,
}

impl Default for AnalysisOptions {
    fn default() -> Self {
        Self {
            store: StoreProfile::named("generic").expect("the generic profile"),
            merge: false,
            load_scale: 1.0,
            time: None,
            columns: None,
            top: 5,
            horizon_days: 365,
            fail_above: None,
            fail_below_headroom: None,
            headroom_up_to: 1_000.0,
        }
    }
}

/// The columns of a file's header an analysis reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeaderColumns {
    /// The time column's index, if the options name one.
    pub time: Option<usize>,
    /// The columns the designs' keys and the time read (sorted, each once).
    pub used: Vec<usize>,
}

/// Designs replayed over a dump's rows. See the [module docs](self).
pub struct Analysis {
    designs: Vec<Design>,
    options: AnalysisOptions,
    capacity: Capacity,
    malformed: u64,
    audit: Option<AttributeAudit>,
    attribute_columns: Option<Vec<usize>>,
    progress: Arc<AtomicU64>,
    rows: u64,
}

/// One design's replay, finished.
pub struct DesignReplay {
    spec: DesignSpec,
    judge: Judge,
    rows: u64,
    new_max: u64,
    window_writes: Vec<u64>,
    span: Option<(i64, i64)>,
    volume: VolumeMeter,
    bytes: u64,
    bucket_rows: Vec<u64>,
    modulo_gcd: u128,
    tails: headroom::Tails,
}

impl DesignReplay {
    /// The design.
    #[must_use]
    pub const fn spec(&self) -> &DesignSpec {
        &self.spec
    }
    /// The design's name.
    #[must_use]
    pub fn name(&self) -> &str {
        self.spec.name()
    }
    /// The judge the rows went through.
    #[must_use]
    pub const fn judge(&self) -> &Judge {
        &self.judge
    }
    /// Rows judged.
    #[must_use]
    pub const fn rows(&self) -> u64 {
        self.rows
    }
    /// Rows written above every key before them.
    #[must_use]
    pub const fn new_max(&self) -> u64 {
        self.new_max
    }
    /// Writes of each load window with writes, in time order.
    #[must_use]
    pub fn window_writes(&self) -> &[u64] {
        &self.window_writes
    }
    /// The first and last times replayed (after the load scale), ms.
    #[must_use]
    pub const fn span(&self) -> Option<(i64, i64)> {
        self.span
    }
    /// The data under the partition-key values with the most.
    #[must_use]
    pub const fn volume(&self) -> &VolumeMeter {
        &self.volume
    }
    /// Bytes of every row (keys and attributes).
    #[must_use]
    pub const fn bytes(&self) -> u64 {
        self.bytes
    }
    /// Rows per bucket of a bucketed layout (empty otherwise).
    #[must_use]
    pub fn bucket_rows(&self) -> &[u64] {
        &self.bucket_rows
    }
    /// The greatest common divisor of the modulo field's values (0 when none).
    #[must_use]
    pub const fn modulo_gcd(&self) -> u128 {
        self.modulo_gcd
    }
}

impl Analysis {
    /// An analysis of `designs` under `options`; each design's judge starts on a thread of its
    /// own.
    ///
    /// # Errors
    ///
    /// When there is no design, the load scale is not above 0, or the store profile lacks a
    /// figure the run needs (the error names the option that sets it).
    pub fn new(designs: Vec<DesignSpec>, options: AnalysisOptions) -> Result<Self, AnalysisError> {
        if designs.is_empty() {
            return Err("give --key COLUMN, one or more --design SPEC, or --lines"
                .to_owned()
                .into());
        }
        if !(options.load_scale.is_finite() && options.load_scale > 0.0) {
            return Err(format!("a load scale above 0, not {}", options.load_scale).into());
        }
        let capacity = options.store.capacity()?;
        let mut table = TableOptions::default()
            .split_size_bytes(capacity.split_bytes)
            .load_window_ms(capacity.window_ms);
        table.split_load_ops = capacity.split_ops;
        if !options.merge {
            table = table.no_merge();
        }
        let progress = Arc::new(AtomicU64::new(0));
        let replay = ReplayOptions {
            table,
            load_scale: options.load_scale,
            time_order: options.time.is_some(),
            designs: designs.len(),
        };
        let designs = designs
            .into_iter()
            .map(|d| Design::new(d.name, d.source, &replay, &progress))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            designs,
            options,
            capacity,
            malformed: 0,
            audit: None,
            attribute_columns: None,
            progress,
            rows: 0,
        })
    }

    /// Reads a file's header: each design's columns, the time column and the attribute
    /// columns (every file's must be the first file's).
    ///
    /// # Errors
    ///
    /// When a column is missing or named twice, or the attribute columns differ from the
    /// first file's.
    pub fn header(
        &mut self,
        header: &[String],
        file: &str,
    ) -> Result<HeaderColumns, AnalysisError> {
        for d in &mut self.designs {
            d.resolve(header, file)?;
        }
        let time = match &self.options.time {
            Some(t) => Some(column(header, t, "named by --time", file)?),
            None => None,
        };
        let mut used: Vec<usize> = self
            .designs
            .iter()
            .flat_map(|d| d.columns.iter().copied())
            .chain(time)
            .collect();
        used.sort_unstable();
        used.dedup();
        // The attribute columns: the options', or every column that no key and not the time
        // reads; every file must have the first one's.
        let indices: Vec<usize> = match &self.options.columns {
            Some(chosen) => chosen
                .iter()
                .map(|c| column(header, c.trim(), "named by --columns", file))
                .collect::<Result<_, _>>()?,
            None => (0..header.len()).filter(|i| !used.contains(i)).collect(),
        };
        let names: Vec<String> = indices.iter().map(|&i| header[i].clone()).collect();
        match &self.audit {
            Some(audit) if !audit.columns().eq(names.iter().map(String::as_str)) => {
                return Err(format!(
                    "{file} line 1: its attribute columns ({}) are not the first file's ({}); name them with --columns",
                    names.join(", "),
                    audit.columns().collect::<Vec<_>>().join(", ")
                )
                .into());
            }
            Some(_) => {}
            None => self.audit = Some(AttributeAudit::new(names)),
        }
        self.attribute_columns = Some(indices);
        Ok(HeaderColumns { time, used })
    }

    /// Replays one row at `ts` (ms) under every design.
    ///
    /// # Errors
    ///
    /// When a design cannot build the row's key (naming the file, line and column), or the
    /// table refuses it.
    pub fn row(&mut self, row: &[&str], ts: i64, at: &Where<'_>) -> Result<(), AnalysisError> {
        let attribute_bytes = match (&mut self.audit, &self.attribute_columns) {
            (Some(audit), Some(columns)) => audit.add_row(at.line, columns.iter().map(|&c| row[c])),
            _ => 0,
        };
        for d in &mut self.designs {
            d.write(row, ts, attribute_bytes, at)?;
        }
        self.rows += 1;
        Ok(())
    }

    /// Sets the count of malformed rows the reader skipped (the report says how many).
    pub const fn set_malformed_rows(&mut self, rows: u64) {
        self.malformed = rows;
    }

    /// Rows replayed so far.
    #[must_use]
    pub const fn rows(&self) -> u64 {
        self.rows
    }

    /// The designs.
    #[must_use]
    pub fn design_count(&self) -> usize {
        self.designs.len()
    }

    /// Rows judged so far over every design (counted in steps), for a progress bar.
    #[must_use]
    pub fn judged_rows(&self) -> u64 {
        self.progress.load(Relaxed)
    }

    /// Tells every design there are no more rows, so that each judges what it keeps for time
    /// order while the others do.
    ///
    /// # Errors
    ///
    /// When a design stopped at a key the table refused.
    pub fn seal(&mut self) -> Result<(), AnalysisError> {
        for d in &mut self.designs {
            d.seal()?;
        }
        Ok(())
    }

    /// Whether every design has judged every row sent (or stopped at an error).
    #[must_use]
    pub fn judged(&self) -> bool {
        self.designs.iter().all(Design::judged)
    }

    /// The attribute columns' audit (after a header).
    #[must_use]
    pub const fn audit(&self) -> Option<&AttributeAudit> {
        self.audit.as_ref()
    }

    /// Waits for every design's judge and reports; hands over each design's replay too (its
    /// judge draws the heatmap).
    ///
    /// # Errors
    ///
    /// When a design stopped at a key the table refused.
    pub fn finish(self) -> Result<(AnalysisReport, Vec<DesignReplay>), AnalysisError> {
        let mut replays = Vec::with_capacity(self.designs.len());
        for mut d in self.designs {
            d.flush()?;
            let replay = d.join()?.judging;
            replays.push(DesignReplay {
                spec: DesignSpec {
                    name: d.name,
                    source: d.source,
                },
                rows: replay.rows,
                new_max: replay.new_max,
                window_writes: replay.window_writes,
                span: replay.span,
                volume: replay.volume,
                bytes: replay.bytes,
                tails: replay.tails,
                judge: replay.judge,
                bucket_rows: d.bucket_rows,
                modulo_gcd: d.modulo_gcd,
            });
        }
        let load = replays
            .first()
            .map(|r| LoadFigures::of(r, &self.capacity, self.options.load_scale))
            .unwrap_or_default();
        // The findings of the whole table: its attribute columns and its size, then each
        // design's.
        let mut findings = self
            .audit
            .as_ref()
            .map(AttributeAudit::findings)
            .unwrap_or_default();
        let growth = replays.first().map_or(
            Growth {
                rows: 0,
                bytes: 0,
                span_ms: 0,
            },
            |r| report::dump_growth(r, &load),
        );
        findings.extend(table_findings(&growth));
        let mut designs = Vec::with_capacity(replays.len());
        for r in &replays {
            let (d, f) = report::design_report(r, &self.options, &self.capacity, &load);
            designs.push(d);
            findings.extend(f);
        }
        let report = AnalysisReport {
            rows: self.rows,
            malformed_rows: self.malformed,
            hottest_share: designs.iter().map(|d| d.hottest_share).fold(0.0, f64::max),
            store: self.options.store.clone(),
            capacity: self.capacity,
            load,
            table: report::table_growth(&growth),
            findings,
            designs,
        };
        Ok((report, replays))
    }
}
