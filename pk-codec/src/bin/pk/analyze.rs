//! `pk analyze`: replay a dump into the table model under one or more key designs.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufRead, BufReader, IsTerminal, Read};
use std::path::PathBuf;
use std::time::Instant;

use pk_codec::Layout;
use pk_codec::table::analysis::format::{bytes, count, span};
use pk_codec::table::analysis::{
    Analysis, AnalysisOptions, AnalysisReport, DesignReplay, DesignSpec, Figure,
    HEADROOM_TOLERANCE, HeaderColumns, Headroom, KeySource, STORE_NAMES, StoreProfile, Where,
    bucket_of,
};
use pk_codec::table::{Finding, FindingCode, HeatmapOptions, PkValue};

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
    /// The store whose partitions the report judges in: generic (this crate's model: 100 writes
    /// a 60 s window, 64 MiB), dynamodb, tikv, cockroachdb, hbase, tablestore. Each figure's
    /// source is in the docs of pk_codec::table::analysis::StoreProfile; a figure the store
    /// does not publish must be given by its option.
    #[arg(long, default_value = "generic", value_parser = store_name)]
    store: String,
    /// Load window length, in ms (default: the store's; a store's per-second figures scale
    /// with it).
    #[arg(long, value_parser = clap::value_parser!(i64).range(1..))]
    window_ms: Option<i64>,
    /// Writes one partition serves per window (default: the store's).
    #[arg(long, alias = "ops-per-tick", value_parser = clap::value_parser!(u64).range(1..))]
    write_capacity: Option<u64>,
    /// A partition splits when it serves more than this many writes in a window (default: the
    /// store's load-split threshold).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    split_ops: Option<u64>,
    /// A partition splits when it holds more than this many bytes (default: the store's).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    split_bytes: Option<u64>,
    /// Merge small, cold partitions back together, as the store does (off by default: in the
    /// model each merge copies the rows of both partitions, which on long dumps with a
    /// sequential key costs time growing with the square of the rows, and merges do not
    /// change where a window's writes go).
    #[arg(long)]
    merge: bool,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Write one heatmap SVG per design into this directory.
    #[arg(long)]
    svg: Option<PathBuf>,
    /// Shade heatmaps by the logarithm of load.
    #[arg(long)]
    log_scale: bool,
    /// Exit with status 2 when a HOT design's hottest share exceeds this (0 to 1).
    #[arg(long)]
    fail_above: Option<f64>,
    /// Exit with status 2 when a design's headroom (the multiple of the dump's traffic at which
    /// writes no split cures are throttled) is below N ("this design must hold 10x").
    #[arg(long, value_parser = load_scale)]
    fail_below_headroom: Option<f64>,
    /// The largest multiple of the dump's traffic the headroom search tries.
    #[arg(long, default_value_t = 1000.0, value_parser = load_scale)]
    headroom_up_to: f64,
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
    /// The data one partition-key value may hold, in bytes (default: the store's, 10 GB where it
    /// publishes none).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    partition_limit: Option<u64>,
    /// A partition-key value that crosses --partition-limit within this many days of the dump's
    /// last time, at the dump's own rate, is a `partition-volume` finding.
    #[arg(long, default_value_t = 365, value_parser = clap::value_parser!(u64).range(0..=365_000))]
    horizon_days: u64,
    /// Exit with status 2 when the report has any of these findings (comma-separated): over-2mb,
    /// wide-row, large-text, money-as-float, split-columns, partition-volume, table-size.
    #[arg(long, value_delimiter = ',', value_parser = finding_code)]
    fail_on: Vec<FindingCode>,
}

/// A `--store` name.
fn store_name(text: &str) -> Result<String, String> {
    let name = text.trim().to_ascii_lowercase();
    if STORE_NAMES.contains(&name.as_str()) {
        Ok(name)
    } else {
        Err(format!(
            "{text:?} is not a store profile; one of {}",
            STORE_NAMES.join(", ")
        ))
    }
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
    let mut store = StoreProfile::named(&args.store)
        .ok_or_else(|| format!("no store profile {:?}", args.store))?;
    if let Some(ms) = args.window_ms {
        store = store.with_window_ms(ms);
    }
    if let Some(n) = args.split_ops {
        store = store.with_split_ops(n);
    }
    if let Some(n) = args.write_capacity {
        store = store.with_write_capacity(n);
    }
    if let Some(n) = args.split_bytes {
        store = store.with_split_bytes(n);
    }
    if let Some(n) = args.partition_limit {
        store = store.with_value_limit(n);
    } else if store.value_limit == Figure::Unpublished {
        store = store.with_value_limit(pk_codec::table::DEFAULT_PARTITION_LIMIT);
    }
    let mut options = AnalysisOptions::default();
    options.store = store;
    options.merge = args.merge;
    options.load_scale = args.load_scale;
    options.time.clone_from(&args.time);
    options.columns.clone_from(&args.columns);
    options.top = args.top;
    options.horizon_days = args.horizon_days;
    options.fail_above = args.fail_above;
    options.fail_below_headroom = args.fail_below_headroom;
    options.headroom_up_to = args.headroom_up_to;
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
            // The fields' list, its allocation kept from row to row (`recycled`).
            let mut spare: Vec<&str> = Vec::new();
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
                        let mut fields: Vec<&str> = recycled(std::mem::take(&mut spare));
                        fields.extend(record.iter());
                        let at = Where {
                            file: &name,
                            line: pos.0,
                        };
                        // A quoted field may span lines, but a key or time that does is a quote
                        // left open: the CSV reader takes every line up to the next quote (or
                        // the end of the file) into it, and those rows would vanish unnamed.
                        if let Some(&c) = used
                            .iter()
                            .find(|&&c| fields[c].bytes().any(|b| b == b'\n' || b == b'\r'))
                        {
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
                        spare = recycled(fields);
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
    st.analysis.set_malformed_rows(totals.malformed);
    let (report, replays) = st.analysis.finish()?;
    if let Some(dir) = &args.svg {
        write_svgs(dir, &replays, args)?;
    }
    if args.json {
        crate::out_line(serde_json::to_string(&report)?)?;
    } else {
        crate::out_text(&text(&report, args))?;
    }
    crate::note(format_args!(
        "pk: {} rows from {} file(s) under {} design(s) in {:.1} s; {} malformed row(s) skipped{}",
        totals.rows,
        args.files.len(),
        report.designs.len(),
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
    let gated: Vec<&Finding> = report
        .findings
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
        let hot: Vec<String> = report
            .designs
            .iter()
            .filter(|d| d.fails)
            .map(|d| {
                format!(
                    "{} (hottest share {:.1}%; {} writes throttled that no split cures: {})",
                    d.design,
                    d.hottest_share * 100.0,
                    count(d.throttling.uncured_writes),
                    d.throttling.cause.as_deref().unwrap_or("")
                )
            })
            .collect();
        if !hot.is_empty() {
            failed.push(format!(
                "hotter than --fail-above {:.1}%, with writes past a partition's capacity that no split cures: {}",
                t * 100.0,
                hot.join(", ")
            ));
        }
    }
    if let Some(n) = args.fail_below_headroom {
        let short: Vec<String> = report
            .designs
            .iter()
            .filter(|d| d.fails_headroom)
            .map(|d| format!("{} ({})", d.design, headroom_text(&d.headroom)))
            .collect();
        if !short.is_empty() {
            failed.push(format!(
                "headroom below --fail-below-headroom {n}x: {}",
                short.join(", ")
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

/// `v` emptied, as a list of fields of another lifetime: the same allocation (a collect from a
/// vector's own iterator into elements of its size reuses its buffer), so that the fields of each
/// row need no allocation of their own.
fn recycled<'b>(mut v: Vec<&str>) -> Vec<&'b str> {
    v.clear();
    v.into_iter().map(|_| "").collect()
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

fn write_svgs(dir: &std::path::Path, replays: &[DesignReplay], args: &Args) -> Result<(), Failure> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (i, r) in replays.iter().enumerate() {
        let mut map = r.judge().heatmap(&HeatmapOptions {
            title: Some(r.name().to_owned()),
            log_scale: args.log_scale,
            ..HeatmapOptions::default()
        });
        if let KeySource::Layout {
            layout, buckets, ..
        } = r.spec().source()
        {
            map.name_bands(|key| band_name(layout, buckets.is_some(), key));
        }
        let svg = map
            .to_svg(1100, 600)
            .map_err(|e| format!("heatmap of {}: {e}", r.name()))?;
        let slug: String = r
            .name()
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

/// A design's headroom as the report says it.
fn headroom_text(h: &Headroom) -> String {
    match h.multiple {
        None => format!("beyond {}x", h.searched_up_to),
        Some(m) if m < 0.001 * 1.5 => "below 0.001x".to_owned(),
        Some(m) => format!(
            "{m:.3}x; then {} throttles first",
            h.first_throttled_by.as_deref().unwrap_or("the load")
        ),
    }
}

/// The load lines of the report.
fn load_text(report: &AnalysisReport) -> String {
    let load = &report.load;
    let c = &report.capacity;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "store: {} (a partition serves {} writes per {} window; {}); {}",
        report.store.name,
        count(c.writes_per_window),
        span(c.window_ms),
        match c.split_ops {
            Some(n) => format!(
                "splits above {} writes per window or {}",
                count(n),
                bytes(c.split_bytes)
            ),
            None => format!("splits by size only, at {}", bytes(c.split_bytes)),
        },
        report.store.source
    );
    let _ = writeln!(
        s,
        "load: {} rows {}{}; {} load windows with writes: median {}, peak {} writes; the peak needs {} partition(s)",
        count(load.rows),
        if load.projected {
            format!("over {}", span(load.span_ms))
        } else {
            format!(
                "from {} to {}",
                pk_codec::table::utc(load.first_ms),
                pk_codec::table::utc(load.last_ms)
            ) + &format!(" ({})", span(load.span_ms))
        },
        if load.projected {
            format!(
                ", projected: the dump replayed {}x faster (--load-scale); times below are from the replay's start",
                load.load_scale
            )
        } else {
            String::new()
        },
        count(load.windows_with_writes as u64),
        count(load.writes_per_window_median),
        count(load.writes_per_window_peak),
        count(load.partitions_needed),
    );
    if load.one_partition_serves {
        let _ = writeln!(
            s,
            "one partition serves this load: no window passes a partition's capacity, so no design runs hot at it and --fail-above passes every design; to ask about more traffic, replay it faster (--load-scale 10, 100, 1000) or read each design's headroom"
        );
    }
    s
}

/// The table's size, the data under the partition-key values, and every finding.
#[allow(clippy::cast_precision_loss)]
fn practices_text(report: &AnalysisReport, args: &Args) -> String {
    let mut s = String::new();
    let g = &report.table;
    let _ = write!(
        s,
        "\ntable: {} rows, {} (keys and attributes) over {} of the dump's time",
        count(g.rows),
        bytes(g.bytes),
        span(g.span_ms)
    );
    for p in &g.projected {
        let _ = write!(
            s,
            "; in {} year(s) at this rate: {} rows, {}",
            p.years,
            count(p.rows),
            bytes(p.bytes)
        );
    }
    let _ = writeln!(
        s,
        "\nrows sharing a key value are distinct rows under it: their data adds up under that value"
    );
    let limit = report.store.value_limit.value().unwrap_or(u64::MAX);
    let _ = writeln!(
        s,
        "\npartition-key values with the most data (the line: {} a value; crossing dates within {} days at the dump's own rate):",
        bytes(limit),
        args.horizon_days
    );
    for d in &report.designs {
        let _ = writeln!(s, "  {}:", d.design);
        for v in &d.top_values {
            let crossing = match v.crossing_ms_after_end {
                Some(0) => "over the line".to_owned(),
                Some(ms) => format!(
                    "crosses the line {} ({:.0} days after the dump's last time, at its own rate)",
                    pk_codec::table::utc(
                        report
                            .load
                            .first_ms
                            .saturating_add(g.span_ms)
                            .saturating_add(ms)
                    ),
                    ms as f64 / 86_400_000.0
                ),
                None => format!("not within {} days", args.horizon_days),
            };
            let bound = if v.missed > 0 {
                format!(" (up to {} more)", bytes(v.missed))
            } else {
                String::new()
            };
            let _ = writeln!(
                s,
                "    {:?}  {}{bound} in {} rows; {crossing}",
                v.value,
                bytes(v.bytes),
                count(v.rows)
            );
        }
    }
    if report.findings.is_empty() {
        let _ = writeln!(s, "\nfindings: none");
    } else {
        let _ = writeln!(s, "\nfindings:");
    }
    for f in &report.findings {
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

fn text(report: &AnalysisReport, args: &Args) -> String {
    let width = report
        .designs
        .iter()
        .map(|d| d.design.chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    let mut s = load_text(report);
    s.push('\n');
    let _ = writeln!(
        s,
        "{:width$}  {:>11}  {:>8}  {:>6}  {:>10}  {:>7}  {:>7}  {:>10}  {:>8}  {:>10}  {:>10}  {:>12}  verdict",
        "design",
        "rows",
        "hottest",
        "fair",
        "partitions",
        "written",
        "tail",
        "hot (part)",
        "max/mean",
        "efficiency",
        "throttled",
        "headroom",
    );
    for d in &report.designs {
        let _ = writeln!(
            s,
            "{:width$}  {:>11}  {:>7.1}%  {:>5.1}%  {:>10}  {:>7.1}  {:>6.1}%  {:>9.1}%  {:>8.2}  {:>9.1}%  {:>9.2}%  {:>12}  {}",
            d.design,
            count(d.rows),
            d.hottest_share * 100.0,
            d.fair_share * 100.0,
            count(d.partitions as u64),
            d.mean_partitions_written_per_window,
            d.tail_share * 100.0,
            d.hottest_partition_share * 100.0,
            d.max_over_mean,
            d.efficiency * 100.0,
            d.throttling.share * 100.0,
            match d.headroom.multiple {
                None => format!(">{}x", d.headroom.searched_up_to),
                Some(m) => format!("{m:.3}x"),
            },
            d.verdict.word()
        );
    }
    let c = &report.capacity;
    let _ = write!(
        s,
        "\n\
         hottest: share of each window's writes in its busiest key range, the ranges being the partitions at the window's start ({} windows), weighted by writes over the windows that began with more than one partition\n\
         fair: the hottest share a perfectly spread design has at this load (each window's writes over the fewest partitions that serve them, at most {} writes each); no design reads much below it\n\
         partitions: partitions at the end of the replay\n\
         written: partitions written per window, on average\n\
         tail: share of writes above the previous window's highest key (near 100% for a sequential key)\n\
         hot (part): the busiest single partition's share of each window's writes\n\
         max/mean: the busiest partition's writes over the mean partition's, per window, weighted by writes (1.00 is perfectly even)\n\
         efficiency: share of the reserved capacity used when every partition is provisioned for the busiest one\n\
         throttled: share of writes past a partition's capacity ({} a window), after the store's splits have acted\n\
         headroom: the largest multiple of the dump's traffic at which nothing is throttled that splits cannot cure (within {:.0}%)\n\
         verdict: HOT when writes past a partition's capacity are throttled that no split cures (a tail, one hot key value, a collapsed bucket); spread otherwise (throttling while the load ramps before a split is cured by the split, and a pre-split avoids it); --fail-above fails HOT designs above its share only\n",
        span(c.window_ms),
        count(c.writes_per_window),
        count(c.writes_per_window),
        HEADROOM_TOLERANCE * 100.0,
    );
    for d in &report.designs {
        let t = &d.throttling;
        let mut lines: Vec<String> = Vec::new();
        if t.writes > 0 {
            lines.push(format!(
                "throttled: {} writes ({:.2}%) in {} window(s); {} of them no split cures{}; {} while the load ramped before a split (a pre-split avoids them)",
                count(t.writes),
                t.share * 100.0,
                count(t.windows),
                count(t.uncured_writes),
                t.cause
                    .as_ref()
                    .map(|c| format!(" (cause: {c})"))
                    .unwrap_or_default(),
                count(t.cured_by_splits)
            ));
        }
        lines.push(format!("headroom: {}", headroom_text(&d.headroom)));
        lines.extend(d.diagnostics.iter().cloned());
        let _ = writeln!(s, "\n{}:", d.design);
        for l in lines {
            let _ = writeln!(s, "  - {l}");
        }
    }
    s.push_str(&practices_text(report, args));
    s
}
