//! `pk analyze`: replay a dump into the table model under one or more key designs.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufRead, BufReader, IsTerminal, Read};
use std::path::PathBuf;
use std::time::Instant;

use pk_codec::Layout;
use pk_codec::table::analysis::{
    Analysis, AnalysisOptions, DesignReplay, DesignSpec, HeaderColumns, KeySource, Where, bucket_of,
};
use pk_codec::table::{
    AttributeAudit, Finding, FindingCode, Growth, HeatmapOptions, HotspotReport, LoadReport,
    PkValue, TableOptions, ValueVolume,
};

use crate::Failure;
use crate::values;

/// Malformed rows reported one by one before the rest are only counted.
const SHOWN_MALFORMED: u64 = 10;

/// Options of `pk analyze`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// CSV files with a header row (or key lists with --lines); `-` reads standard input.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Each line is one key (no header, no columns).
    #[arg(long)]
    lines: bool,
    /// A column holding the key as it is (a design of its own).
    #[arg(long)]
    key: Option<String>,
    /// A key design: a layout spec whose field names are column names (repeatable).
    #[arg(long = "design")]
    designs: Vec<String>,
    /// A column holding each row's time in ms since the epoch: rows are replayed in time order
    /// (ties by key), whatever their order in the files, so the report does not depend on it
    /// (otherwise rows are spread evenly, --row-ms apart, in file order).
    #[arg(long)]
    time: Option<String>,
    /// Replay the dump N times faster than its times (or --row-ms) say: its times compressed
    /// N-fold from the first, so one run answers "at N times today's traffic, which design runs
    /// hot?".
    #[arg(long, default_value_t = 1.0, value_parser = load_scale)]
    load_scale: f64,
    /// Spacing of rows without --time, in ms.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(i64).range(1..))]
    row_ms: i64,
    /// Load window length, in ms.
    #[arg(long, default_value_t = 60_000, value_parser = clap::value_parser!(i64).range(1..))]
    window_ms: i64,
    /// A partition splits when it serves more than this many writes in a window.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    split_ops: u64,
    /// A partition splits when it holds more than this many bytes.
    #[arg(long, default_value_t = 64 << 20, value_parser = clap::value_parser!(u64).range(1..))]
    split_bytes: u64,
    /// Merge small, cold partitions back together, as the store does (off by default: in the
    /// model each merge copies the rows of both partitions, which on long dumps with a
    /// sequential key costs time growing with the square of the rows, and merges do not
    /// change where a window's writes go).
    #[arg(long)]
    merge: bool,
    /// Operations a partition serves per window in the capacity model (default: --split-ops).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    ops_per_tick: Option<u64>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Write one heatmap SVG per design into this directory.
    #[arg(long)]
    svg: Option<PathBuf>,
    /// Shade heatmaps by the logarithm of load.
    #[arg(long)]
    log_scale: bool,
    /// Exit with status 2 when a design's hottest share exceeds this (0 to 1).
    #[arg(long)]
    fail_above: Option<f64>,
    /// Stop at the first malformed row (exit status 1).
    #[arg(long)]
    strict: bool,
    /// Hot key values listed per design, and partition-key values with the most data.
    #[arg(long, default_value_t = 5)]
    top: usize,
    /// The attribute columns (comma-separated) checked against the practices; by default every
    /// column that no design's key and not --time reads.
    #[arg(long, value_delimiter = ',')]
    columns: Option<Vec<String>>,
    /// The data one partition-key value may hold, in bytes (the practices: 10 GB).
    #[arg(long, default_value_t = pk_codec::table::DEFAULT_PARTITION_LIMIT, value_parser = clap::value_parser!(u64).range(1..))]
    partition_limit: u64,
    /// A partition-key value that crosses --partition-limit within this many days of the dump's
    /// last time, at the dump's own rate, is a `partition-volume` finding.
    #[arg(long, default_value_t = 365, value_parser = clap::value_parser!(u64).range(0..=365_000))]
    horizon_days: u64,
    /// Exit with status 2 when the report has any of these findings (comma-separated): over-2mb,
    /// wide-row, large-text, money-as-float, split-columns, partition-volume, table-size.
    #[arg(long, value_delimiter = ',', value_parser = finding_code)]
    fail_on: Vec<FindingCode>,
}

/// A `--fail-on` code.
fn finding_code(text: &str) -> Result<FindingCode, String> {
    FindingCode::parse(text.trim()).ok_or_else(|| {
        format!(
            "{text:?} is not a finding; one of {}",
            FindingCode::ALL.map(FindingCode::name).join(", ")
        )
    })
}

/// The longest line `analyze` reads: past it, reading stops with an error naming the file and
/// line (a key is at most 1 KB, so such a line holds no row worth reading, and reading it whole
/// would take memory without bound).
const MAX_LINE_BYTES: usize = 16 << 20;

/// A reader that fails once a line runs past [`MAX_LINE_BYTES`], so that neither the line reader
/// nor the CSV reader buffers a line without bound. For a CSV dump a line is a record: it ends
/// at `\r` or `\n` outside a quoted field (the CSV reader holds a whole record, and a quoted
/// field may span lines, or the rest of the file when its quote is left open).
struct LineCapped<R> {
    inner: R,
    /// Bytes since the last line end.
    run: usize,
    /// Where a CSV dump's reading is (`None` for `--lines`, whose lines end at `\n` only).
    csv: Option<Csv>,
    /// The lines of a CSV dump read so far (unused for `--lines`).
    lines: Lines,
}

/// Which line of the file a byte is on, for a CSV dump: the CSV reader's own count is off for
/// lines ended by CRLF or a lone CR and after blank lines (rust-csv issues 395 and 208), and
/// the byte position it gives for a record may fall on the line ends before the record. A line
/// ends at `\n`, `\r\n` or a lone `\r`, as the CSV reader ends records.
#[derive(Default)]
struct Lines {
    /// The offset of the next byte.
    at: u64,
    /// Lines ended so far.
    ended: u64,
    /// Whether the last byte was `\r` (a `\n` after it ends no line of its own).
    after_cr: bool,
    /// Whether the current line has a byte that is not a line end yet.
    begun: bool,
    /// `(offset, line)` of the first byte of each line with one, from the record last asked
    /// about on: the CSV reader reads ahead of its records by its buffer, so this holds few.
    starts: VecDeque<(u64, u64)>,
}

impl Lines {
    fn scan(&mut self, bytes: &[u8]) {
        let mut i = 0;
        while let Some(&b) = bytes.get(i) {
            if b == b'\n' || b == b'\r' {
                if !(b == b'\n' && self.after_cr) {
                    self.ended += 1;
                    self.begun = false;
                }
                self.after_cr = b == b'\r';
                i += 1;
                continue;
            }
            if !self.begun {
                self.starts.push_back((self.at + i as u64, self.ended + 1));
                self.begun = true;
            }
            self.after_cr = false;
            // The rest of the line: no line end in it.
            i = memchr::memchr2(b'\n', b'\r', &bytes[i..]).map_or(bytes.len(), |k| i + k);
        }
        self.at += bytes.len() as u64;
    }

    /// The line of a record (or error) the CSV reader places at byte `at`: the first line with
    /// a byte at or after `at` (what lies between is line ends). Forgets the lines before it:
    /// records are asked about in file order.
    fn record_line(&mut self, at: u64) -> u64 {
        while self.starts.front().is_some_and(|&(o, _)| o < at) {
            self.starts.pop_front();
        }
        self.starts
            .front()
            .map_or(self.ended + 1, |&(_, line)| line)
    }

    /// The last line with a byte before `end` (the CSV reader's position after a record): the
    /// record's last line.
    fn last_line_before(&self, end: u64) -> u64 {
        self.starts
            .iter()
            .take_while(|&&(o, _)| o < end)
            .last()
            .map_or(self.ended + 1, |&(_, line)| line)
    }
}

/// Where the CSV reader is, as far as line ends go: the CSV reader's own rules (csv-core,
/// comma-separated, `"` quotes doubled inside a quoted field).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Csv {
    /// At the start of a field, where a quote opens a quoted field.
    FieldStart,
    /// In a field that is not quoted (a quote there is a character of it).
    Unquoted,
    /// In a quoted field: line ends are its text.
    Quoted,
    /// Just after a quote in a quoted field: a second quote is one quote of the text,
    /// anything else follows the closed field.
    QuoteInQuoted,
}

impl Csv {
    /// The state after `b`, and whether `b` ends a line (a record).
    fn next(self, b: u8) -> (Self, bool) {
        match (self, b) {
            (Self::Quoted, b'"') => (Self::QuoteInQuoted, false),
            (Self::Quoted, _) | (Self::QuoteInQuoted, b'"') => (Self::Quoted, false),
            (_, b'\n' | b'\r') => (Self::FieldStart, true),
            (_, b',') => (Self::FieldStart, false),
            (Self::FieldStart, b'"') => (Self::Quoted, false),
            _ => (Self::Unquoted, false),
        }
    }
}

impl<R: Read> Read for LineCapped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let read = &buf[..n];
        if self.csv.is_some() {
            self.lines.scan(read);
        }
        let cr = self.csv.is_some();
        let line_end = |b: &u8| *b == b'\n' || (cr && *b == b'\r');
        let run = match self.csv {
            // Quotes to follow: byte by byte.
            Some(mut state)
                if matches!(state, Csv::Quoted | Csv::QuoteInQuoted) || read.contains(&b'"') =>
            {
                let mut run = self.run;
                for &b in read {
                    let (next, ends) = state.next(b);
                    state = next;
                    run = if ends { 0 } else { run + 1 };
                }
                self.csv = Some(state);
                run
            }
            // No quote: the last line end, and the state after the last byte.
            csv => {
                if let (Some(_), Some(&last)) = (csv, read.last()) {
                    self.csv = Some(if matches!(last, b',' | b'\n' | b'\r') {
                        Csv::FieldStart
                    } else {
                        Csv::Unquoted
                    });
                }
                match read.iter().rposition(line_end) {
                    Some(last) => n - last - 1,
                    None => self.run + n,
                }
            }
        };
        self.run = run;
        if self.run > MAX_LINE_BYTES {
            let what = if self.csv.is_some() {
                "a record (a line, or the lines a quoted field spans)"
            } else {
                "a line"
            };
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{what} is longer than {MAX_LINE_BYTES} bytes"),
            ));
        }
        Ok(n)
    }
}

/// `--load-scale`: a finite factor above 0.
fn load_scale(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(format!(
            "{text:?} is not a load scale: give a number above 0 (10 replays the dump 10 times faster)"
        )),
    }
}

/// A heatmap band's name under a layout design: the decoded fields of its first key, after its
/// bucket (`bucket 03, device=54, ts=1700000000000`); `None` for a key the layout does not
/// decode.
fn band_name(layout: &Layout, bucketed: bool, key: &PkValue) -> Option<String> {
    let bytes = match key {
        PkValue::String(text) => text.as_bytes(),
        PkValue::Binary(bytes) => bytes,
        _ => return None,
    };
    let values = layout.decode_bytes(bytes).ok()?;
    let mut parts = Vec::with_capacity(values.len() + 1);
    if bucketed && let Some(b) = bucket_of(layout, bytes) {
        parts.push(format!("bucket {b:02}"));
    }
    for (f, v) in layout.fields().iter().zip(&values) {
        let shown = match values::to_json(v) {
            serde_json::Value::String(s) => s,
            other => other.to_string(),
        };
        parts.push(format!("{}={shown}", f.name()));
    }
    Some(parts.join(", "))
}

struct Outcome {
    name: String,
    hot: HotspotReport,
    model: LoadReport,
    efficiency: f64,
    /// The hottest share a perfectly spread design would have at this load ([`fair_share`]).
    fair: f64,
    /// The load replayed (the same rows for every design).
    load: LoadFigures,
    /// The dump's rows, bytes and span (the same for every design).
    growth: Growth,
    /// The partition-key values with the most data, and the design's volume findings.
    top_values: Vec<ValueVolume>,
    findings: Vec<Finding>,
    diagnostics: Vec<String>,
    /// The heatmap SVG, when --svg asked for one.
    svg: Option<Result<String, pk_codec::table::TableError>>,
}

#[allow(clippy::cast_precision_loss)]
fn pct(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        100.0 * a as f64 / b as f64
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Outcome {
    #[allow(clippy::cast_precision_loss)]
    fn of(replay: DesignReplay, args: &Args) -> Result<Self, Failure> {
        let hot = replay.judge().hotspot();
        let model = replay.judge().report();
        let fair = fair_share(&hot, args.split_ops);
        let load = LoadFigures::of(&replay, args);
        let growth = Growth {
            rows: replay.rows(),
            bytes: replay.bytes(),
            span_ms: load.last_ms.saturating_sub(load.first_ms),
        };
        let horizon_ms = i64::try_from(args.horizon_days)
            .unwrap_or(i64::MAX)
            .saturating_mul(86_400_000);
        let findings = pk_codec::table::volume_findings(
            replay.name(),
            replay.volume(),
            &growth,
            args.partition_limit,
            horizon_ms,
        );
        let top_values = replay.volume().top(args.top);
        let efficiency = model
            .capacity(args.ops_per_tick.unwrap_or(args.split_ops))
            .efficiency;
        let mut d = Vec::new();
        let rows = replay.rows();
        let sequential =
            rows >= 10 && replay.new_max().saturating_mul(10) >= rows.saturating_mul(9);
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
        } = replay.source()
        {
            let used = replay.bucket_rows().iter().filter(|&&c| c > 0).count();
            let max = replay.bucket_rows().iter().copied().max().unwrap_or(0);
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
        for h in model.hot_key_values.iter().take(args.top) {
            d.push(format!(
                "key value {:?} took {:.0}% of its partition's load in a window; one key value is never split, so no split can help",
                h.value.to_string(),
                h.share * 100.0
            ));
        }
        for o in model.oversized_key_values.iter().take(args.top) {
            d.push(format!(
                "key value {:?} holds {} bytes in {} rows, more than a partition; no split can help",
                o.value.to_string(),
                o.bytes,
                o.rows
            ));
        }
        let svg = args.svg.as_ref().map(|_| {
            let mut map = replay
                .judge()
                .heatmap(&heatmap_options(args, replay.name()));
            if let KeySource::Layout {
                layout, buckets, ..
            } = replay.source()
            {
                map.name_bands(|key| band_name(layout, buckets.is_some(), key));
            }
            map.to_svg(1100, 600)
        });
        Ok(Outcome {
            svg,
            name: replay.name().to_owned(),
            hot,
            model,
            efficiency,
            fair,
            load,
            growth,
            top_values,
            findings,
            diagnostics: d,
        })
    }
}

/// The load a replay wrote: the same for every design (they replay the same rows).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct LoadFigures {
    rows: u64,
    /// The first and last times replayed (after `--load-scale`), ms.
    first_ms: i64,
    last_ms: i64,
    /// Load windows with writes, and their writes: median and peak.
    windows: usize,
    median: u64,
    peak: u64,
    /// Partitions the peak window needs at the split threshold (each serves at most
    /// `--split-ops` writes a window).
    needed: u64,
    scale: f64,
}

impl LoadFigures {
    fn of(replay: &DesignReplay, args: &Args) -> Self {
        let mut writes = replay.window_writes().to_vec();
        let peak = writes.iter().copied().max().unwrap_or(0);
        let median = if writes.is_empty() {
            0
        } else {
            let mid = writes.len() / 2;
            *writes.select_nth_unstable(mid).1
        };
        let (first_ms, last_ms) = replay.span().unwrap_or((0, 0));
        Self {
            rows: replay.rows(),
            first_ms,
            last_ms,
            windows: replay.window_writes().len(),
            median,
            peak,
            needed: needed(peak, args.split_ops),
            scale: args.load_scale,
        }
    }

    /// Whether one partition serves every window: no split is ever needed, so no design can
    /// run hot at this load.
    const fn one_partition_serves(&self) -> bool {
        self.needed <= 1
    }
}

/// The fewest partitions that serve `writes` in a window, each at most `split_ops`.
const fn needed(writes: u64, split_ops: u64) -> u64 {
    if writes == 0 {
        1
    } else {
        writes.div_ceil(split_ops)
    }
}

/// The hottest share a perfectly spread design would have at this load: in each window, its
/// writes spread evenly over the fewest partitions that serve them (`ceil(writes /
/// split_ops)`), so its busiest range takes one of them; weighted by writes over the windows
/// the design's hottest share counts (those that began with more than one partition, or all
/// when none did). No design, however spread, reads much below it: partitions split only when
/// the load passes the threshold.
#[allow(clippy::cast_precision_loss)]
fn fair_share(hot: &HotspotReport, split_ops: u64) -> f64 {
    let split = hot.per_window.iter().any(|w| w.ranges > 1);
    let (mut fair, mut writes) = (0.0, 0u64);
    for w in hot.per_window.iter().filter(|w| !split || w.ranges > 1) {
        fair += w.writes as f64 / needed(w.writes, split_ops) as f64;
        writes += w.writes;
    }
    if writes == 0 {
        1.0
    } else {
        fair / writes as f64
    }
}

/// How far above the fair share a design's hottest share must be for its writes to count as
/// concentrated: above this many times the fair share, and above it by [`CONCENTRATED_BY`]
/// too. A spread design lands near the fair share (binary splits give it one of
/// `2^k >= ceil(load / split_ops)` ranges, at or below the fair share; cuts at sampled keys are
/// not exact halves, and windows whose load rises before the partitions split put it somewhat
/// above, a few points at most); a tail, an unsplittable value or a collapsed bucket keeps one
/// range at several times it.
const CONCENTRATED: f64 = 1.5;

/// See [`CONCENTRATED`]: the share, in points, a concentrated design is above the fair share
/// at least (at a high load the fair share is a few percent, and a spread design's uneven cuts
/// are more than 1.5 times that while taking no range hot).
const CONCENTRATED_BY: f64 = 0.10;

/// What the report says of a design's spread.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Verdict {
    /// One partition serves the load: nothing to spread.
    OnePartition,
    /// As spread as the load allows.
    Spread,
    /// Its writes concentrate where splits cannot spread them.
    Concentrated,
}

impl Verdict {
    fn of(o: &Outcome) -> Self {
        if o.load.one_partition_serves() {
            Self::OnePartition
        } else if o.hot.hottest_share > (CONCENTRATED * o.fair).max(o.fair + CONCENTRATED_BY) {
            Self::Concentrated
        } else {
            Self::Spread
        }
    }

    const fn word(self) -> &'static str {
        match self {
            Self::OnePartition => "1 partition serves",
            Self::Spread => "spread",
            Self::Concentrated => "HOT",
        }
    }

    const fn json(self) -> &'static str {
        match self {
            Self::OnePartition => "one_partition_serves",
            Self::Spread => "spread",
            Self::Concentrated => "concentrated",
        }
    }
}

/// Whether `--fail-above t` fails a design: its hottest share is above `t` and its writes are
/// concentrated (a design as spread as the load allows passes, whatever its share).
fn fails(o: &Outcome, t: f64) -> bool {
    Verdict::of(o) == Verdict::Concentrated && o.hot.hottest_share > t
}

/// Counts of the whole run.
#[derive(Default)]
struct Totals {
    rows: u64,
    malformed: u64,
    out_of_order: u64,
}

/// Runs `pk analyze`.
pub(crate) fn run(args: &Args) -> Result<(), Failure> {
    if let Some(t) = args.fail_above
        && !(0.0..=1.0).contains(&t)
    {
        return Err(format!("--fail-above takes a share from 0 to 1, not {t}").into());
    }
    let mut designs = Vec::new();
    if let Some(k) = &args.key {
        if args.lines {
            return Err("--key names a CSV column; with --lines each line is the key".into());
        }
        designs.push(DesignSpec::column(k));
    }
    for spec in &args.designs {
        if args.lines {
            return Err("--design builds keys from CSV columns; --lines has none".into());
        }
        designs.push(DesignSpec::layout(spec)?);
    }
    if args.lines {
        if args.time.is_some() {
            return Err("--time names a CSV column; --lines has none".into());
        }
        designs.push(DesignSpec::line());
    }
    let mut table = TableOptions::default()
        .split_load_ops(args.split_ops)
        .split_size_bytes(args.split_bytes)
        .load_window_ms(args.window_ms);
    if !args.merge {
        table = table.no_merge();
    }
    let mut options = AnalysisOptions::default();
    options.table = table;
    options.load_scale = args.load_scale;
    options.time.clone_from(&args.time);
    options.columns.clone_from(&args.columns);
    let analysis = Analysis::new(designs, options)?;
    let started = Instant::now();
    let total_bytes: u64 = args
        .files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(total_bytes);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {bytes}/{total_bytes} {per_sec} eta {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let mut st = State {
        analysis,
        totals: Totals::default(),
        last_ts: i64::MIN,
        done_bytes: 0,
        bar,
    };
    for path in &args.files {
        let name = path.display().to_string();
        let input: Box<dyn Read> = if name == "-" {
            Box::new(std::io::stdin().lock())
        } else {
            Box::new(File::open(path).map_err(|e| format!("cannot read {name}: {e}"))?)
        };
        let input = LineCapped {
            inner: input,
            run: 0,
            csv: (!args.lines).then_some(Csv::FieldStart),
            lines: Lines::default(),
        };
        if args.lines {
            let mut reader = BufReader::with_capacity(1 << 16, input);
            let mut buf = Vec::new();
            let mut n = 0u64;
            loop {
                buf.clear();
                // A read that fails (an unreadable file, a line past the cap) would fail again
                // on the next call: it ends the input, it is not a malformed row.
                let read = reader
                    .read_until(b'\n', &mut buf)
                    .map_err(|e| format!("cannot read {name} at line {}: {e}", n + 1))?;
                if read == 0 {
                    break;
                }
                n += 1;
                // A UTF-8 byte order mark opens the file, not its first key (the CSV reader
                // strips it too).
                if n == 1 && buf.starts_with(b"\xef\xbb\xbf") {
                    buf.drain(..3);
                }
                st.done_bytes += read as u64;
                let at = Where {
                    file: &name,
                    line: n,
                };
                let Ok(line) = std::str::from_utf8(&buf) else {
                    malformed(args, &mut st.totals, &at, "the line is not valid UTF-8")?;
                    continue;
                };
                let line = line.trim_end_matches('\n').trim_end_matches('\r');
                if line.trim().is_empty() {
                    malformed(args, &mut st.totals, &at, "empty line")?;
                    continue;
                }
                on_row(&mut st, args, &[line], &at, None)?;
            }
        } else {
            let mut reader = csv::ReaderBuilder::new()
                .flexible(true)
                .buffer_capacity(1 << 16)
                .from_reader(input);
            let header: Vec<String> = reader
                .headers()
                .map_err(|e| format!("{name} line 1: cannot read the header: {e}"))?
                .iter()
                .map(|h| h.trim().to_owned())
                .collect();
            let HeaderColumns {
                time: time_col,
                used,
            } = st.analysis.header(&header, &name)?;
            let mut record = csv::StringRecord::new();
            let mut last_line = 1;
            // The last record read, if a field of it runs on to the end of the file (see below).
            let mut run_on: Option<(u64, String)> = None;
            loop {
                match reader.read_record(&mut record) {
                    Ok(false) => {
                        if let Some((line, why)) = run_on.take()
                            && reader.get_ref().csv == Some(Csv::Quoted)
                        {
                            malformed(args, &mut st.totals, &Where { file: &name, line }, &why)?;
                        }
                        break;
                    }
                    Ok(true) => {
                        run_on = None;
                        let byte = record.position().map_or(0, csv::Position::byte);
                        let pos = (reader.get_mut().lines.record_line(byte), byte);
                        st.done_bytes = pos.1;
                        last_line = pos.0;
                        // The record's last line (a quoted field may span lines).
                        let to = reader
                            .get_ref()
                            .lines
                            .last_line_before(reader.position().byte())
                            .max(pos.0);
                        let spans = if to > pos.0 {
                            format!(
                                " (the record runs from line {} to line {to}: a quote left open?)",
                                pos.0
                            )
                        } else {
                            String::new()
                        };
                        if record.len() != header.len() {
                            malformed(
                                args,
                                &mut st.totals,
                                &Where {
                                    file: &name,
                                    line: pos.0,
                                },
                                &format!(
                                    "expected {} fields as in the header, found {}{spans}",
                                    header.len(),
                                    record.len()
                                ),
                            )?;
                            continue;
                        }
                        let fields: Vec<&str> = record.iter().collect();
                        let at = Where {
                            file: &name,
                            line: pos.0,
                        };
                        // A quoted field may span lines, but a key or time that does is a quote
                        // left open: the CSV reader takes every line up to the next quote (or
                        // the end of the file) into it, and those rows would vanish unnamed.
                        if let Some(&c) = used.iter().find(|&&c| fields[c].contains(['\n', '\r'])) {
                            malformed(
                                args,
                                &mut st.totals,
                                &at,
                                &format!("column {:?} holds a line break{spans}", header[c]),
                            )?;
                            continue;
                        }
                        // In a column not read, a quoted field may span lines; but if the
                        // file ends inside its quotes (known at the next read, from the quote
                        // state `LineCapped` keeps), the quote was left open, and the lines it
                        // took are rows that would vanish unnamed.
                        run_on = (to > pos.0)
                            .then(|| fields.iter().rposition(|f| f.contains(['\n', '\r'])))
                            .flatten()
                            .map(|c| {
                                (
                                    pos.0,
                                    format!(
                                        "column {:?} runs on in quotes to the end of the file{spans}; \
                                         the lines it holds were not read as rows",
                                        header[c]
                                    ),
                                )
                            });
                        on_row(&mut st, args, &fields, &at, time_col.map(|c| fields[c]))?;
                    }
                    Err(e) if matches!(e.kind(), csv::ErrorKind::Io(_)) => {
                        // An I/O error has no position: the line after the last record read.
                        let line = e.position().map_or(last_line + 1, |p| {
                            reader.get_mut().lines.record_line(p.byte())
                        });
                        return Err(format!("cannot read {name} at line {line}: {e}").into());
                    }
                    Err(e) => {
                        let line = e
                            .position()
                            .map_or(0, |p| reader.get_mut().lines.record_line(p.byte()));
                        malformed(
                            args,
                            &mut st.totals,
                            &Where { file: &name, line },
                            &e.to_string(),
                        )?;
                    }
                }
            }
        }
    }
    st.analysis.seal()?;
    if let Some(b) = &st.bar {
        b.finish_and_clear();
        // Judging in time order goes on after the reading: its own bar, until every design is
        // judged.
        let all = st.totals.rows * st.analysis.design_count() as u64;
        let judging = indicatif::ProgressBar::new(all);
        judging.set_style(
            indicatif::ProgressStyle::with_template(
                "judging in time order {bar:40} {pos}/{len} rows {per_sec} eta {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        while !st.analysis.judged() {
            judging.set_position(st.analysis.judged_rows().min(all));
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        judging.finish_and_clear();
    }
    let totals = st.totals;
    let (replays, audit) = st.analysis.finish()?;
    let outcomes: Vec<Outcome> = replays
        .into_iter()
        .map(|d| Outcome::of(d, args))
        .collect::<Result<_, _>>()?;
    // The findings of the whole table: its attribute columns and its size, then each design's.
    let mut findings = audit
        .as_ref()
        .map(AttributeAudit::findings)
        .unwrap_or_default();
    if let Some(first) = outcomes.first() {
        findings.extend(pk_codec::table::table_findings(&first.growth));
    }
    findings.extend(outcomes.iter().flat_map(|o| o.findings.iter().cloned()));
    if let Some(dir) = &args.svg {
        write_svgs(dir, &outcomes)?;
    }
    if args.json {
        crate::out_line(json(&outcomes, &totals, &findings, args))?;
    } else {
        crate::out_text(&text(&outcomes, &findings, args))?;
    }
    crate::note(format_args!(
        "pk: {} rows from {} file(s) under {} design(s) in {:.1} s; {} malformed row(s) skipped{}",
        totals.rows,
        args.files.len(),
        outcomes.len(),
        started.elapsed().as_secs_f64(),
        totals.malformed,
        if totals.out_of_order > 0 {
            format!(
                "; {} row(s) earlier than the row before (the rows were replayed in time order)",
                totals.out_of_order
            )
        } else {
            String::new()
        }
    ));
    let mut failed = Vec::new();
    let gated: Vec<&Finding> = findings
        .iter()
        .filter(|f| args.fail_on.contains(&f.code))
        .collect();
    if !gated.is_empty() {
        let mut codes: Vec<&str> = gated.iter().map(|f| f.code.name()).collect();
        codes.dedup();
        failed.push(format!(
            "findings named by --fail-on: {} ({} in all)",
            codes.join(", "),
            gated.len()
        ));
    }
    if let Some(t) = args.fail_above {
        let hot: Vec<String> = outcomes
            .iter()
            .filter(|o| fails(o, t))
            .map(|o| {
                format!(
                    "{} (hottest share {:.1}%, {:.1}x the {:.1}% a spread design has at this load)",
                    o.name,
                    o.hot.hottest_share * 100.0,
                    o.hot.hottest_share / o.fair,
                    o.fair * 100.0
                )
            })
            .collect();
        if !hot.is_empty() {
            failed.push(format!(
                "hotter than --fail-above {:.1}%, with writes concentrated where splits cannot spread them: {}",
                t * 100.0,
                hot.join(", ")
            ));
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Failure {
            message: failed.join("; "),
            status: 2,
        })
    }
}

/// The state of a run.
struct State {
    analysis: Analysis,
    totals: Totals,
    last_ts: i64,
    done_bytes: u64,
    bar: Option<indicatif::ProgressBar>,
}

/// Replays one row under every design.
fn on_row(
    st: &mut State,
    args: &Args,
    row: &[&str],
    at: &Where<'_>,
    time: Option<&str>,
) -> Result<(), Failure> {
    let ts = match time {
        Some(t) => {
            if let Ok(ts) = t.trim().parse::<i64>() {
                ts
            } else {
                let why = format!(
                    "column {}: {t:?} is not a time in ms",
                    args.time.as_deref().unwrap_or_default()
                );
                return malformed(args, &mut st.totals, at, &why);
            }
        }
        // Every later row would land on the last instant, its spacing lost: an error.
        None => i64::try_from(st.totals.rows)
            .ok()
            .and_then(|n| n.checked_mul(args.row_ms))
            .ok_or_else(|| {
                format!(
                    "{} line {}: --row-ms {} puts row {} past the last time in ms (i64::MAX); use a smaller --row-ms",
                    at.file,
                    at.line,
                    args.row_ms,
                    st.totals.rows + 1
                )
            })?,
    };
    // Replayed in time order all the same (`Spill`): counted for the summary only.
    if ts < st.last_ts {
        st.totals.out_of_order += 1;
    }
    st.last_ts = ts;
    st.analysis.row(row, ts, at)?;
    st.totals.rows += 1;
    if let Some(b) = &st.bar
        && st.totals.rows.is_multiple_of(65_536)
    {
        b.set_position(st.done_bytes);
    }
    Ok(())
}

/// Reports a malformed row; an error under --strict.
fn malformed(args: &Args, totals: &mut Totals, at: &Where<'_>, why: &str) -> Result<(), Failure> {
    totals.malformed += 1;
    let message = format!("{} line {}: malformed row: {why}", at.file, at.line);
    if args.strict {
        return Err(format!("{message} (--strict)").into());
    }
    if totals.malformed <= SHOWN_MALFORMED {
        crate::note(format_args!("pk: {message}; skipped and counted"));
    } else if totals.malformed == SHOWN_MALFORMED + 1 {
        crate::note("pk: more malformed rows: counted in the summary");
    }
    Ok(())
}

fn write_svgs(dir: &std::path::Path, outcomes: &[Outcome]) -> Result<(), Failure> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (i, o) in outcomes.iter().enumerate() {
        let Some(svg) = &o.svg else { continue };
        let svg = svg
            .as_ref()
            .map_err(|e| format!("heatmap of {}: {e}", o.name))?;
        let slug: String = o
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .take(40)
            .collect();
        let path = dir.join(format!("{}-{slug}.svg", i + 1));
        std::fs::write(&path, svg).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        crate::note(format_args!("pk: wrote {}", path.display()));
    }
    Ok(())
}

/// A span of ms in the largest unit that reads well.
#[allow(clippy::cast_precision_loss)]
fn span_text(ms: i64) -> String {
    let ms = ms as f64;
    match ms {
        m if m >= 86_400_000.0 => format!("{:.1} days", m / 86_400_000.0),
        m if m >= 3_600_000.0 => format!("{:.1} h", m / 3_600_000.0),
        m if m >= 60_000.0 => format!("{:.1} min", m / 60_000.0),
        m => format!("{:.1} s", m / 1_000.0),
    }
}

/// The load lines of the report.
fn load_text(load: &LoadFigures, args: &Args) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "load: {} rows from {} to {} ({}){}; {} load windows of {} ms with writes: median {}, peak {} writes; the peak needs {} partition(s) (a partition splits above {} writes per window)",
        load.rows,
        pk_codec::table::utc(load.first_ms),
        pk_codec::table::utc(load.last_ms),
        span_text(load.last_ms.saturating_sub(load.first_ms)),
        if (load.scale - 1.0).abs() > f64::EPSILON {
            format!(", replayed {}x faster (--load-scale)", load.scale)
        } else {
            String::new()
        },
        load.windows,
        args.window_ms,
        load.median,
        load.peak,
        load.needed,
        args.split_ops
    );
    if load.one_partition_serves() {
        let _ = writeln!(
            s,
            "one partition serves this load: no window passes the split threshold, so no design runs hot at it and --fail-above passes every design; to ask about more traffic, replay it faster (--load-scale 10, 100, 1000)"
        );
    }
    s
}

/// The table's size, the data under the partition-key values, and every finding.
#[allow(clippy::cast_precision_loss)]
fn practices_text(outcomes: &[Outcome], findings: &[Finding], args: &Args) -> String {
    let mut s = String::new();
    let Some(first) = outcomes.first() else {
        return s;
    };
    let g = &first.growth;
    let _ = write!(
        s,
        "\ntable: {} rows, {} bytes (keys and attributes) over {}",
        g.rows,
        g.bytes,
        span_text(g.span_ms)
    );
    for years in [1.0, 3.0, 5.0] {
        if let Some((rows, bytes)) = g.projected(years) {
            let _ = write!(
                s,
                "; in {years:.0} year(s) at this rate: {rows} rows, {bytes} bytes"
            );
        }
    }
    let _ = writeln!(
        s,
        "\nrows sharing a key value are distinct rows under it: their data adds up under that value"
    );
    let _ = writeln!(
        s,
        "\npartition-key values with the most data (the line: {} bytes a value):",
        args.partition_limit
    );
    for o in outcomes {
        let _ = writeln!(s, "  {}:", o.name);
        for v in &o.top_values {
            let crossing = match g.value_crossing(v, args.partition_limit) {
                Some(0) => "over the line".to_owned(),
                Some(ms) => format!(
                    "crosses the line {} ({:.0} days after the dump's last time)",
                    pk_codec::table::utc(
                        g.span_ms
                            .saturating_add(first.load.first_ms)
                            .saturating_add(ms)
                    ),
                    ms as f64 / 86_400_000.0
                ),
                None => "no growth to project (one row, or no time span)".to_owned(),
            };
            let bound = if v.missed > 0 {
                format!(" (up to {} more)", v.missed)
            } else {
                String::new()
            };
            let _ = writeln!(
                s,
                "    {:?}  {} bytes{bound} in {} rows; {crossing}",
                String::from_utf8_lossy(&v.value),
                v.bytes,
                v.rows
            );
        }
    }
    if findings.is_empty() {
        let _ = writeln!(s, "\nfindings: none");
    } else {
        let _ = writeln!(s, "\nfindings:");
    }
    for f in findings {
        let mut at = Vec::new();
        if let Some(d) = &f.design {
            at.push(format!("design {d}"));
        }
        if let Some(c) = &f.column {
            at.push(format!("column {c:?}"));
        }
        if let Some(l) = f.example_line {
            at.push(format!("e.g. line {l}"));
        }
        let at = if at.is_empty() {
            String::new()
        } else {
            format!(" ({})", at.join(", "))
        };
        let _ = writeln!(
            s,
            "  - {}{at}: {}; fix: {}",
            f.code.name(),
            f.message,
            f.fix
        );
    }
    s
}

fn text(outcomes: &[Outcome], findings: &[Finding], args: &Args) -> String {
    let width = outcomes
        .iter()
        .map(|o| o.name.chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    let mut s = String::new();
    if let Some(first) = outcomes.first() {
        s.push_str(&load_text(&first.load, args));
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "{:width$}  {:>9}  {:>8}  {:>6}  {:>10}  {:>7}  {:>7}  {:>10}  {:>8}  {:>10}  verdict",
        "design",
        "rows",
        "hottest",
        "fair",
        "partitions",
        "written",
        "tail",
        "hot (part)",
        "max/mean",
        "efficiency"
    );
    for o in outcomes {
        let _ = writeln!(
            s,
            "{:width$}  {:>9}  {:>7.1}%  {:>5.1}%  {:>10}  {:>7.1}  {:>6.1}%  {:>9.1}%  {:>8.2}  {:>9.1}%  {}",
            o.name,
            o.hot.writes,
            o.hot.hottest_share * 100.0,
            o.fair * 100.0,
            o.model.partitions,
            o.model.mean_partitions_written_per_window,
            o.hot.tail_share * 100.0,
            o.model.hottest_share * 100.0,
            o.model.max_over_mean,
            o.efficiency * 100.0,
            Verdict::of(o).word()
        );
    }
    let _ = write!(
        s,
        "\n\
         hottest: share of each window's writes in its busiest key range, the ranges being the partitions at the window's start ({} ms windows), weighted by writes over the windows that began with more than one partition\n\
         fair: the hottest share a perfectly spread design has at this load (each window's writes over the fewest partitions that serve them, at most {} writes each); no design reads much below it\n\
         partitions: partitions at the end of the replay (the table splits a partition above {} writes per window or {} bytes)\n\
         written: partitions written per window, on average\n\
         tail: share of writes above the previous window's highest key (near 100% for a sequential key)\n\
         hot (part): the busiest single partition's share of each window's writes (a tail that splits inside a window reads lower here than in hottest)\n\
         max/mean: the busiest partition's writes over the mean partition's, per window, weighted by writes (1.00 is perfectly even)\n\
         efficiency: share of the reserved capacity used when every partition is provisioned for the busiest one ({} operations per partition and window)\n\
         verdict: HOT when the hottest share is above {CONCENTRATED} times the fair share and {} points above it (writes concentrate where splits cannot spread them: a tail, a key value too hot to split, a collapsed bucket), spread otherwise; --fail-above fails HOT designs above its share only\n",
        args.window_ms,
        args.split_ops,
        args.split_ops,
        args.split_bytes,
        args.ops_per_tick.unwrap_or(args.split_ops),
        CONCENTRATED_BY * 100.0
    );
    for o in outcomes {
        if o.diagnostics.is_empty() {
            continue;
        }
        let _ = writeln!(s, "\n{}:", o.name);
        for d in &o.diagnostics {
            let _ = writeln!(s, "  - {d}");
        }
    }
    s.push_str(&practices_text(outcomes, findings, args));
    s
}

fn load_json(load: &LoadFigures) -> serde_json::Value {
    serde_json::json!({
        "rows": load.rows,
        "first_ms": load.first_ms,
        "last_ms": load.last_ms,
        "span_ms": load.last_ms.saturating_sub(load.first_ms),
        "windows_with_writes": load.windows,
        "writes_per_window_median": load.median,
        "writes_per_window_peak": load.peak,
        "partitions_needed": load.needed,
        "one_partition_serves": load.one_partition_serves(),
        "load_scale": load.scale,
    })
}

fn outcome_json(o: &Outcome, fail_above: Option<f64>, partition_limit: u64) -> serde_json::Value {
    serde_json::json!({
        "design": o.name,
        "rows": o.hot.writes,
        "hottest_share": o.hot.hottest_share,
        "fair_share": o.fair,
        "verdict": Verdict::of(o).json(),
        "fails": fail_above.is_some_and(|t| fails(o, t)),
        "tail_share": o.hot.tail_share,
        "partitions": o.model.partitions,
        "partitions_with_writes": o.model.partitions_with_writes,
        "mean_partitions_written_per_window": o.model.mean_partitions_written_per_window,
        "hottest_partition_share": o.model.hottest_share,
        "max_over_mean": o.model.max_over_mean,
        "efficiency": o.efficiency,
        "splits": o.model.splits,
        "windows": o.hot.windows,
        "warmup_windows": o.hot.warmup_windows,
        "hot_key_values": o.model.hot_key_values,
        "top_values": o.top_values.iter().map(|v| serde_json::json!({
            "value": String::from_utf8_lossy(&v.value),
            "bytes": v.bytes,
            "rows": v.rows,
            "missed": v.missed,
            "crossing_ms_after_end": o.growth.value_crossing(v, partition_limit),
        })).collect::<Vec<_>>(),
        "diagnostics": o.diagnostics,
    })
}

fn json(
    outcomes: &[Outcome],
    totals: &Totals,
    findings: &[Finding],
    args: &Args,
) -> serde_json::Value {
    let load = outcomes.first().map(|o| load_json(&o.load));
    let table = outcomes.first().map(|o| {
        let g = &o.growth;
        let projected: Vec<serde_json::Value> = [1u8, 3, 5]
            .into_iter()
            .filter_map(|y| {
                let (rows, bytes) = g.projected(f64::from(y))?;
                Some(serde_json::json!({"years": y, "rows": rows, "bytes": bytes}))
            })
            .collect();
        serde_json::json!({
            "rows": g.rows,
            "bytes": g.bytes,
            "span_ms": g.span_ms,
            "projected": projected,
        })
    });
    let findings = serde_json::to_value(findings).unwrap_or_default();
    if let [one] = outcomes {
        let mut v = outcome_json(one, args.fail_above, args.partition_limit);
        v["malformed_rows"] = totals.malformed.into();
        v["load"] = load.unwrap_or_default();
        v["table"] = table.unwrap_or_default();
        v["findings"] = findings;
        return v;
    }
    let hottest = outcomes
        .iter()
        .map(|o| o.hot.hottest_share)
        .fold(0.0, f64::max);
    serde_json::json!({
        "hottest_share": hottest,
        "rows": totals.rows,
        "malformed_rows": totals.malformed,
        "load": load,
        "table": table,
        "findings": findings,
        "designs": outcomes.iter().map(|o| outcome_json(o, args.fail_above, args.partition_limit)).collect::<Vec<_>>(),
    })
}

fn heatmap_options(args: &Args, name: &str) -> HeatmapOptions {
    HeatmapOptions {
        title: Some(name.to_owned()),
        log_scale: args.log_scale,
        ..HeatmapOptions::default()
    }
}
