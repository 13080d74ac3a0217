//! The per-row path of an analysis: each design's keys built from a row's columns, handed in
//! batches to the design's own thread, put in time order ([`Spill`]) and fed to its [`Judge`].
//!
//! Parsing and key building run on the caller's thread, each design's judge on another (two
//! cores: the run takes the longer of the two).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::thread::JoinHandle;

use super::headroom::Tails;
use super::spill::Spill;
use crate::table::small_bytes::compare;
use crate::table::{
    Judge, PkColumn, PkType, PkValue, PrimaryKey, Schema, TableError, TableOptions, VolumeMeter,
};
use crate::{Form, Layout, Prefix, Value};

/// How a design makes a row's key.
#[derive(Clone, Debug)]
pub enum KeySource {
    /// The key column as it is.
    Column(String),
    /// The whole line (a dump of keys, one a line).
    Line,
    /// A layout whose field names are column names.
    Layout {
        /// The spec as given.
        spec: String,
        /// The layout parsed from it.
        layout: Layout,
        /// Bucket count and the modulo field, if bucketed.
        buckets: Option<(u32, Option<String>)>,
    },
}

/// Rows handed to a design's replay thread at once.
const BATCH: usize = 4_096;

/// Keys to replay, all from one file: the keys one after the other (no allocation a row), and
/// each row's end of key, time, line and attribute bytes.
struct Batch {
    file: Arc<str>,
    keys: Vec<u8>,
    rows: Vec<BatchRow>,
}

/// A row of a [`Batch`]: its key is `keys[previous end..end]`.
#[derive(Clone, Copy)]
struct BatchRow {
    end: usize,
    ts: i64,
    line: u64,
    attribute_bytes: u64,
}

impl Batch {
    fn new(file: Arc<str>) -> Self {
        Self {
            file,
            keys: Vec::with_capacity(BATCH * 16),
            rows: Vec::with_capacity(BATCH),
        }
    }

    /// Each row with its key.
    fn iter(&self) -> impl Iterator<Item = (&[u8], BatchRow)> {
        let mut start = 0;
        self.rows.iter().map(move |&row| {
            let key = &self.keys[start..row.end];
            start = row.end;
            (key, row)
        })
    }
}

/// Memory for the rows `--time` puts in order, shared by the designs (each sorts its own keys).
const SPILL_BUDGET: usize = 256 << 20;

/// The judging side of a design, fed by its own thread: parsing and key building on the reading
/// thread, the judge on another (two cores: the run takes the longer of the two).
///
/// With `--time` the rows also gather in a [`Spill`], which puts them in `(time, key)` order.
/// While they arrive in that order (a dump exported in time order) the judge takes them at
/// once, beside the reading; the first row out of order starts the judge again, and it takes
/// the rows from the spill once the dump is read. Either way it judges the same rows in the
/// same order.
pub(super) struct Replay {
    pub(super) judging: Judging,
    /// The rows in `(time, key)` order, with `--time`.
    spill: Option<Spill>,
    /// Whether every row so far came in `(time, key, bytes)` order, and the last one's time,
    /// bytes and key (its buffer kept from row to row).
    in_order: bool,
    last: Option<(i64, u64)>,
    last_key: Vec<u8>,
    /// The partition-key value checked before a row is kept (its buffer kept from row to row).
    probe: PkValue,
    /// What a fresh judge is made of.
    options: TableOptions,
    scale: f64,
    window_ms: i64,
}

/// A judge and the load it was fed.
pub(super) struct Judging {
    pub(super) judge: Judge,
    /// `--load-scale`, and the first time replayed (times are compressed from it).
    scale: f64,
    t0: Option<i64>,
    /// The highest key so far, and the rows that were written above every key before them.
    max_key: Vec<u8>,
    pub(super) new_max: u64,
    pub(super) rows: u64,
    /// Writes of each load window with writes, in time order, and the window counted last.
    pub(super) window_writes: Vec<u64>,
    window: Option<i64>,
    window_ms: i64,
    /// The first and last times replayed (scaled).
    pub(super) span: Option<(i64, i64)>,
    /// A key kept between writes (its buffer is refilled).
    key: Option<PrimaryKey>,
    /// Whether the keys are a binary layout's (a binary partition key) rather than text.
    binary: bool,
    /// The data under each partition-key value (the largest ones), and the bytes of every row.
    pub(super) volume: VolumeMeter,
    pub(super) bytes: u64,
    /// Writes above every key before them (in their bucket, for a bucketed layout), per slice
    /// of the dump's time (for the verdict and the headroom).
    pub(super) tails: Tails,
    /// A bucketed layout, and the highest key of each of its buckets so far.
    buckets: Option<TailBuckets>,
    /// Rows judged, over every design, for the progress bar (counted in steps), and this
    /// judge's rows counted there so far.
    progress: Arc<AtomicU64>,
    counted: u64,
}

/// The buckets of a bucket-prefixed layout, for its tails: each bucket's highest key so far.
#[derive(Clone)]
struct TailBuckets {
    layout: Layout,
    highest: Vec<Option<Vec<u8>>>,
}

impl TailBuckets {
    /// The buckets of `source`'s keys, if it is a layout with a bucket prefix.
    fn of(source: &KeySource) -> Option<Self> {
        match source {
            KeySource::Layout {
                layout,
                buckets: Some((n, _)),
                ..
            } => Some(Self {
                layout: layout.clone(),
                highest: vec![None; usize::try_from(*n).ok()?],
            }),
            _ => None,
        }
    }

    /// The bucket of `key` if `key` is above every key of its bucket before it.
    fn tail_of(&mut self, key: &[u8]) -> Option<usize> {
        let b = usize::try_from(bucket_of(&self.layout, key)?).ok()?;
        let highest = self.highest.get_mut(b)?;
        match highest {
            Some(h) if compare(key, h).is_le() => None,
            Some(h) => {
                h.clear();
                h.extend_from_slice(key);
                Some(b)
            }
            None => {
                *highest = Some(key.to_vec());
                Some(b)
            }
        }
    }
}

/// Partition-key values whose data a design's [`VolumeMeter`] keeps.
const VOLUME_VALUES: usize = 1_024;

/// The judges' schema: the design's key (a string column for text keys, a binary one for a
/// binary layout's), then a row number, so that rows sharing a key are distinct rows under one
/// partition-key value (they add up; none overwrites another).
fn schema(binary: bool) -> Result<Schema, TableError> {
    Schema::new(vec![
        PkColumn::new(
            "pk",
            if binary {
                PkType::Binary
            } else {
                PkType::String
            },
        ),
        PkColumn::new("row", PkType::Integer),
    ])
}

/// A design's key: text (checked UTF-8 once, where it enters the judging thread) or a binary
/// layout's bytes.
#[derive(Clone, Copy)]
enum KeyRef<'a> {
    Text(&'a str),
    Binary(&'a [u8]),
}

impl<'a> KeyRef<'a> {
    /// `key` read as a design's key.
    fn new(key: &'a [u8], binary: bool) -> Result<Self, String> {
        if binary {
            Ok(Self::Binary(key))
        } else {
            std::str::from_utf8(key)
                .map(Self::Text)
                .map_err(|e| format!("a text key that is not UTF-8: {e}"))
        }
    }

    const fn bytes(self) -> &'a [u8] {
        match self {
            Self::Text(text) => text.as_bytes(),
            Self::Binary(bytes) => bytes,
        }
    }

    /// `value` made this key's partition-key value, its buffer reused when it has the type.
    fn fill(self, value: &mut PkValue) {
        match (self, &mut *value) {
            (Self::Text(key), PkValue::String(text)) => {
                text.clear();
                text.push_str(key);
            }
            (Self::Binary(key), PkValue::Binary(bytes)) => {
                bytes.clear();
                bytes.extend_from_slice(key);
            }
            (Self::Text(key), _) => *value = PkValue::String(key.to_owned()),
            (Self::Binary(key), _) => *value = PkValue::Binary(key.to_vec()),
        }
    }
}

/// The bucket of a design's key, if its layout has a bucket prefix and the key one.
///
/// # Examples
///
/// ```
/// use pk_codec::Layout;
/// use pk_codec::table::analysis::bucket_of;
///
/// let layout: Layout = "buckets=16:mod(device); device: u32 width=6".parse()?;
/// let key = layout.encode_bytes(&[pk_codec::Value::Uint(35)])?;
/// assert_eq!(bucket_of(&layout, &key), Some(3));
/// # Ok::<(), pk_codec::Error>(())
/// ```
#[must_use]
pub fn bucket_of(layout: &Layout, key: &[u8]) -> Option<u32> {
    match layout.form() {
        Form::Text => layout
            .shape()
            .bucket_of_key(std::str::from_utf8(key).ok()?)
            .ok(),
        Form::Binary => match layout.shape().prefix() {
            Prefix::Bucket { .. } => Some(
                key.get(..layout.shape().prefix().bin_len())?
                    .iter()
                    .fold(0u32, |v, &b| v << 8 | u32::from(b)),
            ),
            _ => None,
        },
    }
}

/// Rows a judge judges between updates of the shared progress count.
const PROGRESS_STEP: u64 = 1 << 16;

impl Judging {
    fn new(
        options: &TableOptions,
        scale: f64,
        window_ms: i64,
        progress: Arc<AtomicU64>,
        binary: bool,
        buckets: Option<TailBuckets>,
    ) -> Result<Self, TableError> {
        Ok(Self {
            judge: Judge::new(schema(binary)?, options.clone())?,
            scale,
            t0: None,
            max_key: Vec::new(),
            new_max: 0,
            rows: 0,
            window_writes: Vec::new(),
            window: None,
            window_ms,
            span: None,
            key: None,
            binary,
            volume: VolumeMeter::new(VOLUME_VALUES),
            bytes: 0,
            tails: Tails::new(buckets.as_ref().map_or(1, |b| b.highest.len())),
            buckets,
            progress,
            counted: 0,
        })
    }

    /// Judges one row at `ts` (before scaling) holding `attribute_bytes` of attributes, in time
    /// order. Rows of one key are distinct rows under it (a row number follows the key), so
    /// their data adds up, as rows under one partition-key value do.
    fn feed(&mut self, ts: i64, key: KeyRef<'_>, attribute_bytes: u64) -> Result<(), String> {
        let key_ref = key;
        let key = key.bytes();
        let t0 = *self.t0.get_or_insert(ts);
        let t = scaled(ts, t0, self.scale);
        if self.rows == 0 || compare(key, &self.max_key).is_gt() {
            self.new_max += 1;
            if self.buckets.is_none() {
                self.tails.add(0, ts);
            }
            self.max_key.clear();
            self.max_key.extend_from_slice(key);
        }
        if let Some(b) = self.buckets.as_mut().and_then(|b| b.tail_of(key)) {
            self.tails.add(b, ts);
        }
        self.rows += 1;
        if self.rows.is_multiple_of(PROGRESS_STEP) {
            self.progress.fetch_add(PROGRESS_STEP, Relaxed);
            self.counted += PROGRESS_STEP;
        }
        let w = t.div_euclid(self.window_ms);
        if self.window == Some(w) {
            *self.window_writes.last_mut().expect("a window is open") += 1;
        } else {
            self.window = Some(w);
            self.window_writes.push(1);
        }
        self.span = Some(self.span.map_or((t, t), |(a, b)| (a.min(t), b.max(t))));
        let row = i64::try_from(self.rows).unwrap_or(i64::MAX);
        let mut values = self
            .key
            .take()
            .map(PrimaryKey::into_values)
            .unwrap_or_default();
        if let [value, PkValue::Integer(n)] = values.as_mut_slice() {
            key_ref.fill(value);
            *n = row;
        } else {
            let mut value = PkValue::InfMin;
            key_ref.fill(&mut value);
            values = vec![value, PkValue::Integer(row)];
        }
        let pk = PrimaryKey::new(values);
        let bytes = key.len() as u64 + attribute_bytes;
        self.volume.add(key, bytes);
        self.bytes += bytes;
        let written = self.judge.write(&pk, attribute_bytes, t);
        self.key = Some(pk);
        written.map_err(|e| format!("the table refused a key it had accepted: {e}"))
    }
}

impl Replay {
    /// Takes a batch: checks each key as the table would (naming its line), then judges it at
    /// once, or keeps it to judge in time order.
    fn take(&mut self, batch: &Batch, design: &str) -> Result<(), String> {
        for (key, row) in batch.iter() {
            let BatchRow {
                ts,
                line,
                attribute_bytes: bytes,
                ..
            } = row;
            // The row number the judge adds is an integer the table always takes.
            let key = KeyRef::new(key, self.judging.binary)?;
            key.fill(&mut self.probe);
            self.judging
                .judge
                .check_partition_value(&self.probe)
                .map_err(|e| {
                    format!(
                        "{} line {line}: the table refused the key of design {design}: {e}",
                        batch.file
                    )
                })?;
            let Some(spill) = &mut self.spill else {
                self.judging.feed(ts, key, bytes)?;
                continue;
            };
            spill.push(ts, key.bytes(), bytes)?;
            if !self.in_order {
                continue;
            }
            let ordered = self
                .last
                .is_none_or(|(t, b)| (t, self.last_key.as_slice(), b) <= (ts, key.bytes(), bytes));
            if ordered {
                self.judging.feed(ts, key, bytes)?;
                self.last = Some((ts, bytes));
                self.last_key.clear();
                self.last_key.extend_from_slice(key.bytes());
            } else {
                // The spill has every row: the judge starts again from it at the end.
                self.in_order = false;
                self.last = None;
                // A judge started again takes its rows back from the count.
                self.judging
                    .progress
                    .fetch_sub(self.judging.counted, Relaxed);
                self.judging = Judging::new(
                    &self.options,
                    self.scale,
                    self.window_ms,
                    Arc::clone(&self.judging.progress),
                    self.judging.binary,
                    self.judging.buckets.as_ref().map(|b| TailBuckets {
                        layout: b.layout.clone(),
                        highest: vec![None; b.highest.len()],
                    }),
                )
                .map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    }

    /// Judges the rows kept for time order, unless the judge took them all as they came.
    fn finish(&mut self) -> Result<(), String> {
        if let Some(spill) = self.spill.take()
            && !self.in_order
        {
            let judging = &mut self.judging;
            let binary = judging.binary;
            spill.drain(|t, key, bytes| judging.feed(t, KeyRef::new(key, binary)?, bytes))?;
        }
        Ok(())
    }
}

/// `ts` with the time since `t0` divided by `scale`: the dump replayed `scale` times faster.
pub(super) fn scaled(ts: i64, t0: i64, scale: f64) -> i64 {
    if scale == 1.0 {
        return ts;
    }
    #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
    let since = (ts.saturating_sub(t0) as f64 / scale).floor() as i64;
    t0.saturating_add(since)
}

/// A design's replay thread: its queue and its result.
struct Worker {
    /// `None` once every row is sent.
    queue: Option<SyncSender<Batch>>,
    done: JoinHandle<(Replay, Option<String>)>,
}

/// One design being replayed.
pub(super) struct Design {
    pub(super) name: String,
    pub(super) source: KeySource,
    /// Column index of each field (or of the key column), for the current file.
    pub(super) columns: Vec<usize>,
    values: Vec<Value>,
    /// A text key's buffer, kept from row to row.
    text: String,
    pub(super) bucket_rows: Vec<u64>,
    /// Greatest common divisor of the modulo field's values.
    pub(super) modulo_gcd: u128,
    batch: Batch,
    worker: Option<Worker>,
}

/// Where a row is, for messages: its file and line.
#[derive(Clone, Copy, Debug)]
pub struct Where<'a> {
    /// The file's name as given.
    pub file: &'a str,
    /// The row's line (1 is the first).
    pub line: u64,
}

/// What replaying a design needs besides its key source.
#[derive(Clone, Debug)]
pub(super) struct ReplayOptions {
    /// The table the judge models (split, merge and window rules).
    pub(super) table: TableOptions,
    /// The replay's speed-up (`--load-scale`).
    pub(super) load_scale: f64,
    /// Whether rows are put in time order before judging (a time column was given).
    pub(super) time_order: bool,
    /// The designs sharing the spill's memory.
    pub(super) designs: usize,
}

impl Design {
    pub(super) fn new(
        name: String,
        source: KeySource,
        args: &ReplayOptions,
        progress: &Arc<AtomicU64>,
    ) -> Result<Self, TableError> {
        let options = args.table.clone();
        let window_ms = options.load_window_ms;
        let mut replay = Replay {
            judging: Judging::new(
                &options,
                args.load_scale,
                window_ms,
                Arc::clone(progress),
                matches!(&source, KeySource::Layout { layout, .. } if layout.form() == Form::Binary),
                TailBuckets::of(&source),
            )?,
            spill: args
                .time_order
                .then(|| Spill::new(SPILL_BUDGET / args.designs.max(1))),
            in_order: true,
            last: None,
            last_key: Vec::new(),
            probe: PkValue::InfMin,
            options,
            scale: args.load_scale,
            window_ms,
        };
        let (queue, batches) = sync_channel::<Batch>(4);
        let design = name.clone();
        let done = std::thread::spawn(move || {
            for batch in batches {
                if let Err(e) = replay.take(&batch, &design) {
                    return (replay, Some(e));
                }
            }
            let finished = replay.finish().err();
            (replay, finished)
        });
        let buckets = match &source {
            KeySource::Layout {
                buckets: Some((n, _)),
                ..
            } => usize::try_from(*n).unwrap_or(0),
            _ => 0,
        };
        Ok(Self {
            name,
            source,
            columns: Vec::new(),
            values: Vec::new(),
            text: String::new(),
            bucket_rows: vec![0; buckets],
            modulo_gcd: 0,
            batch: Batch::new(Arc::from("")),
            worker: Some(Worker {
                queue: Some(queue),
                done,
            }),
        })
    }

    /// Finds this design's columns in a file's header.
    pub(super) fn resolve(&mut self, header: &[String], file: &str) -> Result<(), String> {
        let find = |name: &str, rule: &str| column(header, name, rule, file);
        self.columns = match &self.source {
            KeySource::Line => Vec::new(),
            KeySource::Column(c) => vec![find(c, "named by --key")?],
            KeySource::Layout { spec, layout, .. } => layout
                .fields()
                .iter()
                .map(|f| find(f.name(), &format!("field of design '{spec}'")))
                .collect::<Result<_, _>>()?,
        };
        Ok(())
    }

    /// Builds the row's key and writes it at `ts`.
    pub(super) fn write(
        &mut self,
        row: &[&str],
        ts: i64,
        attribute_bytes: u64,
        at: &Where<'_>,
    ) -> Result<(), String> {
        if *self.batch.file != *at.file {
            self.flush()?;
            self.batch.file = Arc::from(at.file);
        }
        match &self.source {
            KeySource::Line => self
                .batch
                .keys
                .extend_from_slice(row.first().copied().unwrap_or_default().as_bytes()),
            KeySource::Column(_) => self
                .batch
                .keys
                .extend_from_slice(row[self.columns[0]].as_bytes()),
            KeySource::Layout {
                spec,
                layout,
                buckets,
            } => {
                self.values.clear();
                for (f, &c) in layout.fields().iter().zip(&self.columns) {
                    let v = super::field_value(f, row[c]).map_err(|e| {
                        format!(
                            "{} line {}, column {}: {e} (design '{spec}')",
                            at.file,
                            at.line,
                            f.name()
                        )
                    })?;
                    if let Some((_, Some(m))) = buckets
                        && m == f.name()
                    {
                        let n = match &v {
                            Value::Uint(n) => *n,
                            Value::Int(n) => n.unsigned_abs(),
                            _ => 0,
                        };
                        self.modulo_gcd = gcd(self.modulo_gcd, n);
                    }
                    self.values.push(v);
                }
                let start = self.batch.keys.len();
                let encoded = if layout.form() == Form::Text {
                    self.text.clear();
                    layout
                        .encode_into(&self.values, &mut self.text)
                        .map(|()| self.batch.keys.extend_from_slice(self.text.as_bytes()))
                } else {
                    layout.encode_bytes_into(&self.values, &mut self.batch.keys)
                };
                encoded.map_err(|e| {
                    format!(
                        "{} line {}, columns {}: cannot encode under design '{spec}': {e}",
                        at.file,
                        at.line,
                        layout
                            .fields()
                            .iter()
                            .map(|f| f.name())
                            .collect::<Vec<_>>()
                            .join(",")
                    )
                })?;
                if buckets.is_some()
                    && let Some(b) = bucket_of(layout, &self.batch.keys[start..])
                    && let Some(n) = self.bucket_rows.get_mut(b as usize)
                {
                    *n += 1;
                }
            }
        }
        self.batch.rows.push(BatchRow {
            end: self.batch.keys.len(),
            ts,
            line: at.line,
            attribute_bytes,
        });
        if self.batch.rows.len() >= BATCH {
            self.flush()?;
        }
        Ok(())
    }

    /// Hands the rows so far to the replay thread.
    pub(super) fn flush(&mut self) -> Result<(), String> {
        if self.batch.rows.is_empty() {
            return Ok(());
        }
        let next = Batch::new(self.batch.file.clone());
        let batch = std::mem::replace(&mut self.batch, next);
        let sent = self
            .worker
            .as_ref()
            .and_then(|w| w.queue.as_ref())
            .is_some_and(|q| q.send(batch).is_ok());
        if sent {
            Ok(())
        } else {
            // The thread stopped at a refused key: its message is the error.
            self.join().map(|_| ())
        }
    }

    /// Sends the last rows and tells the replay thread there are no more, so that it judges
    /// what it keeps for time order while the other designs' threads do.
    pub(super) fn seal(&mut self) -> Result<(), String> {
        self.flush()?;
        if let Some(w) = &mut self.worker {
            w.queue = None;
        }
        Ok(())
    }

    /// Whether the replay thread has ended (judged every row, or stopped at an error).
    pub(super) fn judged(&self) -> bool {
        self.worker.as_ref().is_none_or(|w| w.done.is_finished())
    }

    /// Waits for the replay thread to write everything sent.
    pub(super) fn join(&mut self) -> Result<Replay, String> {
        let Worker { queue, done } = self
            .worker
            .take()
            .ok_or_else(|| "replay already finished".to_owned())?;
        drop(queue);
        match done.join() {
            Ok((replay, None)) => Ok(replay),
            Ok((_, Some(e))) => Err(e),
            Err(_) => Err("the replay thread panicked".to_owned()),
        }
    }
}

/// The index of the header's column `name`, which `rule` names: an error naming the file when
/// the header has no such column, or has it more than once (which one would be read is a guess,
/// and the other's values would be ignored without a word).
pub(super) fn column(
    header: &[String],
    name: &str,
    rule: &str,
    file: &str,
) -> Result<usize, String> {
    let mut at = header
        .iter()
        .enumerate()
        .filter(|(_, h)| *h == name)
        .map(|(i, _)| i);
    match (at.next(), at.next()) {
        (Some(i), None) => Ok(i),
        (None, _) => Err(format!(
            "{file} line 1: no column {name:?} in the header ({rule}); columns: {}",
            header.join(", ")
        )),
        (Some(first), Some(second)) => Err(format!(
            "{file} line 1: the header has column {name:?} more than once (columns {} and {}; {rule}); name each column once",
            first + 1,
            second + 1
        )),
    }
}

pub(super) fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `buckets=N:mod(field)` or `buckets=N:hash...` of a spec, read from its text: a layout's
/// own (`Layout`'s `Display`), which spells it so.
pub(super) fn buckets_of(spec: &str) -> Option<(u32, Option<String>)> {
    let part = spec
        .split(';')
        .map(str::trim)
        .find_map(|p| p.strip_prefix("buckets="))?;
    let (n, how) = part.split_once(':').unwrap_or((part, "hash"));
    let n = n.trim().parse().ok()?;
    let modulo = how
        .trim()
        .strip_prefix("mod(")
        .and_then(|r| r.split_once(')'))
        .map(|(f, _)| f.trim().to_owned());
    Some((n, modulo))
}
