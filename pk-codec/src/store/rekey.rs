//! [`RekeyJob`]: online re-keying of a live table from one [`Layout`] to another, with nothing
//! lost and the latest value of every row kept.
//!
//! The design is written in [`RekeyJob`]'s docs (rendered by rustdoc), where its users read.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use super::{
    BulkOptions, BulkWriter, CondWrite, Expect, RangePage, RangeQuery, RangeStore, StoreError,
    StoreErrorKind, WriteOp, WriteProfile, show_key, show_range,
};
use crate::field_spec::FieldSpec;
use crate::key_range::{ByteRange, after_all_bytes_starting_with};
use crate::kinds::{Kind, Value};
use crate::layout::Layout;

/// A layout's keys in a store: the layout's keys in its form ([`Layout::encode_bytes`]: text or
/// binary), each after `namespace` (printable ASCII, as its bytes).
///
/// # Examples
///
/// ```
/// use pk_codec::Layout;
/// use pk_codec::store::KeySpace;
///
/// let layout: Layout = "card_id: u64 width=8; buckets=64:mod(card_id):sep".parse()?;
/// let space = KeySpace::new(layout).under("v2/");
/// assert_eq!(space.key(&[1234u64.into()])?, b"v2/18,00001234");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySpace {
    layout: Layout,
    namespace: String,
}

impl KeySpace {
    /// The layout's keys as they are (no namespace).
    #[must_use]
    pub const fn new(layout: Layout) -> Self {
        Self {
            layout,
            namespace: String::new(),
        }
    }

    /// The same key space under `namespace`: printable ASCII (checked when a job starts).
    #[must_use]
    pub fn under(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = namespace.into();
        self
    }

    /// The layout.
    #[must_use]
    pub const fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The namespace.
    #[must_use]
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The key of the row with `values`: the namespace, then the layout's key.
    ///
    /// # Errors
    ///
    /// [`RekeyError::Key`] with the layout's refusal.
    pub fn key(&self, values: &[Value]) -> Result<Vec<u8>, RekeyError> {
        let mut key = self.namespace.as_bytes().to_vec();
        self.layout
            .encode_bytes_into(values, &mut key)
            .map_err(|error| RekeyError::Key {
                key: format!("{values:?}"),
                error,
            })?;
        Ok(key)
    }

    /// The byte ranges a full read of the space visits: the layout's ranges of all its keys
    /// ([`Layout::byte_ranges`] with nothing fixed: one per bucket for a bucketed layout), each
    /// under the namespace; for a layout whose keys have no range read (a whole-key hash
    /// prefix), every key under the namespace. A re-keying keeps its state and the other key
    /// space out of every one of them ([`RekeyJob::start`]), so a read of either space during
    /// a job finds only its own keys.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{ByteRange, Layout};
    /// use pk_codec::store::KeySpace;
    ///
    /// let layout: Layout = "device: u32; ts: u64; buckets=4:hash(device); form=binary".parse()?;
    /// let reads = KeySpace::new(layout).read_ranges();
    /// assert_eq!(reads.len(), 4); // one per bucket
    /// assert!(reads[0].contains(b"\0pk-codec/rekey")); // bucket 0's keys start with byte 00
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn read_ranges(&self) -> Vec<ByteRange> {
        let namespace = self.namespace.as_bytes();
        match self
            .layout
            .byte_ranges(&[], std::ops::Bound::Unbounded, std::ops::Bound::Unbounded)
        {
            Ok(ranges) => ranges.iter().map(|r| r.under(namespace)).collect(),
            Err(_) => vec![ByteRange::starting_with(namespace)],
        }
    }

    /// The row values of `key`, if it is a key of this space.
    fn decode(&self, key: &[u8]) -> Option<Vec<Value>> {
        self.layout
            .decode_bytes(key.strip_prefix(self.namespace.as_bytes())?)
            .ok()
    }

    /// The key range a scan of the space reads: the namespace's keys.
    fn bounds(&self) -> (&[u8], Option<Vec<u8>>) {
        let start = self.namespace.as_bytes();
        (start, after_all_bytes_starting_with(start))
    }

    /// How the space is written in a job's state: the namespace and the layout's spec.
    fn describe(&self) -> String {
        format!("{:?} {}", self.namespace, self.layout)
    }
}

/// A token bucket that lets the backfill copy at most `rows_per_second` rows a second on
/// average, in bursts of at most `burst` rows, on an injectable clock (tests pass a manual one;
/// nothing sleeps in [`RekeyJob::step`], which answers [`Step::Throttled`] instead).
///
/// # Examples
///
/// ```
/// use std::sync::{Arc, atomic::{AtomicU64, Ordering}};
/// use std::time::Duration;
/// use pk_codec::store::Throttle;
///
/// let now = Arc::new(AtomicU64::new(0));
/// let clock = Arc::clone(&now);
/// let throttle = Throttle::new(100, 10)
///     .clock(move || Duration::from_millis(clock.load(Ordering::Relaxed)));
/// assert_eq!(throttle.rows_per_second(), 100);
/// ```
#[derive(Clone)]
pub struct Throttle {
    rows_per_second: u64,
    burst: u64,
    clock: Arc<dyn Fn() -> Duration + Send + Sync>,
}

impl fmt::Debug for Throttle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Throttle")
            .field("rows_per_second", &self.rows_per_second)
            .field("burst", &self.burst)
            .finish_non_exhaustive()
    }
}

impl Throttle {
    /// At most `rows_per_second` rows a second, `burst` at once, on the system's monotonic
    /// clock. Both must be above 0 (checked when a job starts).
    #[must_use]
    pub fn new(rows_per_second: u64, burst: u64) -> Self {
        let start = Instant::now();
        Self {
            rows_per_second,
            burst,
            clock: Arc::new(move || start.elapsed()),
        }
    }

    /// The same throttle on another clock: the time since any fixed start.
    #[must_use]
    pub fn clock(mut self, clock: impl Fn() -> Duration + Send + Sync + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// The average rate.
    #[must_use]
    pub const fn rows_per_second(&self) -> u64 {
        self.rows_per_second
    }
}

/// The bucket's tokens: in row-microseconds, so that the integer arithmetic loses nothing.
#[derive(Debug)]
struct Bucket {
    throttle: Throttle,
    credit: u128,
    last: Duration,
}

const MICROS: u128 = 1_000_000;

impl Bucket {
    fn new(throttle: Throttle) -> Self {
        let last = (throttle.clock)();
        let credit = u128::from(throttle.burst) * MICROS;
        Self {
            throttle,
            credit,
            last,
        }
    }

    /// The rows it lets through now (at most `want`), or how long until one.
    fn take(&mut self, want: usize) -> Result<usize, Duration> {
        let now = (self.throttle.clock)();
        let elapsed = now.saturating_sub(self.last).as_micros();
        self.last = self.last.max(now);
        let cap = u128::from(self.throttle.burst) * MICROS;
        let rate = u128::from(self.throttle.rows_per_second);
        self.credit = (self.credit + elapsed.saturating_mul(rate)).min(cap);
        let rows = usize::try_from(self.credit / MICROS)
            .unwrap_or(usize::MAX)
            .min(want);
        if rows == 0 {
            let missing = MICROS - self.credit;
            let micros = missing.div_ceil(rate);
            return Err(Duration::from_micros(
                u64::try_from(micros).unwrap_or(u64::MAX),
            ));
        }
        self.credit -= rows as u128 * MICROS;
        Ok(rows)
    }

    /// Gives back rows taken but not used.
    fn give_back(&mut self, rows: usize) {
        let cap = u128::from(self.throttle.burst) * MICROS;
        self.credit = (self.credit + rows as u128 * MICROS).min(cap);
    }
}

/// How a [`RekeyJob`] paces itself.
#[derive(Debug, Clone)]
pub struct RekeyOptions {
    /// The most rows one [`RekeyJob::step`] copies, verifies or drops: the budget that keeps a
    /// step short, so that live writes between steps keep their share (1 or more).
    pub step_rows: usize,
    /// A rate limit over steps, if any.
    pub throttle: Option<Throttle>,
    /// How the backfill's [`BulkWriter`] writes (its unset options from the store's
    /// [`WriteProfile`]).
    pub bulk: BulkOptions,
}

impl Default for RekeyOptions {
    /// 1,000 rows a step, no rate limit, the bulk writer's defaults.
    fn default() -> Self {
        Self {
            step_rows: 1000,
            throttle: None,
            bulk: BulkOptions::default(),
        }
    }
}

/// A re-keying: its id, the key space it moves rows from and the one it moves them to, values
/// for the fields the old layout lacks, and where its state lives.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use pk_codec::{Layout, Value};
/// use pk_codec::store::{KeySpace, MemoryStore, Phase, RangeStore, Rekey, RekeyJob, RekeyOptions};
///
/// let old: Layout = "card_id: u64 width=8; buckets=16:mod(card_id):sep".parse()?;
/// let new: Layout = "card_id: u64 width=8; buckets=64:mod(card_id):sep".parse()?;
/// let store = Arc::new(MemoryStore::default());
/// for id in 0..100u64 {
///     store.put(&old.encode_bytes(&[id.into()])?, format!("card {id}").as_bytes())?;
/// }
/// let rekey = Rekey::new("cards-16-to-64", KeySpace::new(old), KeySpace::new(new).under("v2/"));
/// let job = RekeyJob::start(Arc::clone(&store), rekey, RekeyOptions::default())?;
/// // Live writes go through the job while it runs.
/// job.put(&[Value::Uint(7)], b"card 7, topped up")?;
/// job.run()?;
/// assert_eq!(job.state().phase, Phase::Done);
/// assert_eq!(job.get(&[Value::Uint(7)])?, Some(b"card 7, topped up".to_vec()));
/// assert_eq!(store.get(b"v2/07,00000007")?, Some(b"card 7, topped up".to_vec()));
/// assert_eq!(store.get(b"07,00000007")?, None);
/// assert_eq!(job.state().counts.verified, 100);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Rekey {
    job_id: String,
    from: KeySpace,
    to: KeySpace,
    fill: Vec<(String, Value)>,
    state_key: String,
    /// Whether [`Rekey::state_key`] chose the state key (otherwise the job picks the default).
    state_key_given: bool,
}

impl Rekey {
    /// Where a job's state lives unless [`Rekey::state_key`] says otherwise: a key that starts
    /// with a NUL byte, below the keys of any text layout whose first character is printable.
    /// Where a read of either key space visits it (a binary layout's first bucket, whose keys
    /// start with byte `00`), the job keeps its state at [`Rekey::ALTERNATE_STATE_KEY`] instead;
    /// where a read visits both, [`RekeyJob::start`] refuses and asks for
    /// [`Rekey::state_key`].
    pub const DEFAULT_STATE_KEY: &'static str = "\0pk-codec/rekey";

    /// Where a job keeps its state when a read of one of its key spaces visits
    /// [`Rekey::DEFAULT_STATE_KEY`]: a key that starts with DEL (`7F`), above every printable
    /// ASCII text key and every binary bucket prefix of fewer than 32,512 buckets.
    pub const ALTERNATE_STATE_KEY: &'static str = "\u{7f}pk-codec/rekey";

    /// A re-keying called `job_id` from `from` to `to`.
    #[must_use]
    pub fn new(job_id: impl Into<String>, from: KeySpace, to: KeySpace) -> Self {
        Self {
            job_id: job_id.into(),
            from,
            to,
            fill: Vec::new(),
            state_key: Self::DEFAULT_STATE_KEY.to_owned(),
            state_key_given: false,
        }
    }

    /// The value of the new layout's field `field`, which the old layout lacks, for every row.
    #[must_use]
    pub fn fill(mut self, field: impl Into<String>, value: Value) -> Self {
        self.fill.push((field.into(), value));
        self
    }

    /// Keeps the job's state at `key`, which no read of either key space may visit
    /// ([`KeySpace::read_ranges`]; checked when the job starts).
    #[must_use]
    pub fn state_key(mut self, key: impl Into<String>) -> Self {
        self.state_key = key.into();
        self.state_key_given = true;
        self
    }

    /// The job's id.
    #[must_use]
    pub fn job_id(&self) -> &str {
        &self.job_id
    }

    /// Where each of the new layout's fields comes from, checked: every field of the old
    /// layout has a place in the new one that can hold each of its values, every new field
    /// has a value, the layouts differ, no read of one key space visits the other, and none
    /// visits the state key (the default one moved to [`Rekey::ALTERNATE_STATE_KEY`] where a
    /// read visits it).
    fn check(&mut self, options: &RekeyOptions) -> Result<Vec<Source>, RekeyError> {
        if self.job_id.is_empty() {
            return Err(RekeyError::BadOption {
                why: "a job needs an id (an empty id cannot tell two jobs apart)".into(),
            });
        }
        if options.step_rows == 0 {
            return Err(RekeyError::BadOption {
                why: "a step needs room for at least one row (step_rows is 0)".into(),
            });
        }
        if let Some(t) = &options.throttle
            && (t.rows_per_second == 0 || t.burst == 0)
        {
            return Err(RekeyError::BadOption {
                why: format!(
                    "a throttle needs a rate and a burst above 0, not {} rows a second in \
                     bursts of {}",
                    t.rows_per_second, t.burst
                ),
            });
        }
        if self.from.layout == self.to.layout {
            return Err(RekeyError::SameLayout {
                layout: self.from.layout.to_string(),
            });
        }
        for space in [&self.from, &self.to] {
            if let Some(c) = space.namespace.chars().find(|c| !(' '..='~').contains(c)) {
                return Err(RekeyError::KeySpacesOverlap {
                    why: format!(
                        "the namespace {:?} holds {c:?}: a namespace is printable ASCII",
                        space.namespace
                    ),
                });
            }
        }
        let (a, b) = (&self.from.namespace, &self.to.namespace);
        if a == b || (!a.is_empty() && b.starts_with(a.as_str())) || a.starts_with(b.as_str()) {
            return Err(RekeyError::KeySpacesOverlap {
                why: format!(
                    "the namespaces {a:?} (old) and {b:?} (new) do not tell the layouts' keys \
                     apart: give the new layout a namespace that is not a prefix of the old \
                     one's, nor the old one's of it (the old may be empty)"
                ),
            });
        }
        let reads: Vec<(&str, ByteRange)> = [("old", &self.from), ("new", &self.to)]
            .into_iter()
            .flat_map(|(side, space)| space.read_ranges().into_iter().map(move |r| (side, r)))
            .collect();
        for (_, old) in reads.iter().filter(|(side, _)| *side == "old") {
            for (_, new) in reads.iter().filter(|(side, _)| *side == "new") {
                if old.overlaps(new) {
                    return Err(RekeyError::KeySpacesOverlap {
                        why: format!(
                            "a read of the old key space visits {} and one of the new key \
                             space {}: each would find the other's rows (a layout without a \
                             namespace or a bucket prefix is read over every key): give the \
                             old and new keys namespaces or buckets that keep their reads apart",
                            show_range(old),
                            show_range(new)
                        ),
                    });
                }
            }
        }
        let visitor = |key: &str| {
            reads
                .iter()
                .find(|(_, r)| r.contains(key.as_bytes()))
                .map(|(side, r)| (*side, show_range(r)))
        };
        if !self.state_key_given && visitor(&self.state_key).is_some() {
            self.state_key = Self::ALTERNATE_STATE_KEY.to_owned();
        }
        if let Some((side, range)) = visitor(&self.state_key) {
            return Err(RekeyError::StateKeyInKeySpace {
                key: self.state_key.clone(),
                why: format!(
                    "a read of the {side} key space visits it ({range}){}",
                    if self.state_key_given {
                        ""
                    } else {
                        ", as it visits the default state key: choose one with Rekey::state_key"
                    }
                ),
            });
        }
        let old = self.from.layout.fields();
        for def in old {
            if !self
                .to
                .layout
                .fields()
                .iter()
                .any(|d| d.name() == def.name())
            {
                return Err(RekeyError::FieldLost {
                    field: def.name().to_owned(),
                });
            }
        }
        for (name, _) in &self.fill {
            if old.iter().any(|d| d.name() == name)
                || !self.to.layout.fields().iter().any(|d| d.name() == name)
            {
                return Err(RekeyError::BadOption {
                    why: format!(
                        "a fill value for {name:?}, which is not a field the new layout adds"
                    ),
                });
            }
        }
        self.to
            .layout
            .fields()
            .iter()
            .map(|def| {
                if let Some(i) = old.iter().position(|d| d.name() == def.name()) {
                    carries(old[i].spec(), def.spec()).map_err(|why| {
                        RekeyError::FieldCannotCarry {
                            field: def.name().to_owned(),
                            why,
                        }
                    })?;
                    return Ok(Source::Old(i));
                }
                self.fill
                    .iter()
                    .find(|(name, _)| name == def.name())
                    .map(|(_, v)| Source::Fill(v.clone()))
                    .ok_or_else(|| RekeyError::FieldWithoutValue {
                        field: def.name().to_owned(),
                    })
            })
            .collect()
    }
}

/// Whether a field written as `new` holds every value one written as `old` holds; why not.
fn carries(old: &FieldSpec, new: &FieldSpec) -> Result<(), String> {
    let kinds_carry = match (old.kind(), new.kind()) {
        (Kind::Uint { bits: a }, Kind::Uint { bits: b })
        | (Kind::Int { bits: a }, Kind::Int { bits: b }) => a.get() <= b.get(),
        (a, b) => a == b,
    };
    if !kinds_carry {
        return Err(format!(
            "it is {:?} in the old layout and {:?} in the new one, which cannot hold every old \
             value",
            old.kind(),
            new.kind()
        ));
    }
    if old.kind().width_form().is_some() && new.width() < old.width() {
        return Err(format!(
            "the new layout writes it in {} characters, the old in {}: wider values would not fit",
            new.width(),
            old.width()
        ));
    }
    if old.is_optional() && !new.is_optional() {
        return Err("it may be null in the old layout, not in the new one".into());
    }
    if old.is_escaped() && !new.is_escaped() {
        return Err(
            "it is escaped in the old layout (any text), not in the new one (text without the \
             delimiter)"
                .into(),
        );
    }
    if old.has_precision() && old.precision() != new.precision() {
        return Err(format!(
            "its precision is {:?} in the old layout and {:?} in the new one",
            old.precision(),
            new.precision()
        ));
    }
    Ok(())
}

/// Where a new field's value comes from.
#[derive(Debug, Clone)]
enum Source {
    /// The old layout's field at this index.
    Old(usize),
    /// A fixed value.
    Fill(Value),
}

/// A job's phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    /// Writes go to both layouts; the rows from before the start are copied.
    Backfill,
    /// Writes go to both layouts; every old row is read back by its new key.
    Verify,
    /// Reads and writes use the new layout; the old keys are deleted.
    Drop,
    /// Every row is under its new key, the old keys are gone.
    Done,
}

impl Phase {
    const fn name(self) -> &'static str {
        match self {
            Self::Backfill => "backfill",
            Self::Verify => "verify",
            Self::Drop => "drop",
            Self::Done => "done",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        [Self::Backfill, Self::Verify, Self::Drop, Self::Done]
            .into_iter()
            .find(|p| p.name() == name)
    }
}

/// What a job has done, persisted with its state (a step redone after a crash counts its rows
/// again: the copies it redoes count as `skipped`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RekeyCounts {
    /// Rows the backfill wrote under their new key.
    pub copied: u64,
    /// Rows the backfill found under their new key already, or changed since it read them: a
    /// live write (or a copy before a crash) got there first, and the copy wrote nothing.
    pub skipped: u64,
    /// Rows the verify pass found under their new key with their old key's value.
    pub verified: u64,
    /// Rows the verify pass found missing or different under their new key and wrote again
    /// (0 unless something wrote the old keys behind the job's back).
    pub repaired: u64,
    /// Old keys deleted.
    pub dropped: u64,
}

/// A job's persisted state: what a resumed job goes on from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RekeyState {
    /// The job's id.
    pub job_id: String,
    /// The old key space, as its namespace (quoted) and the layout's spec.
    pub from: String,
    /// The new key space, likewise.
    pub to: String,
    /// The phase.
    pub phase: Phase,
    /// Where the phase's pass goes on (the next old key to read), `None` at its start.
    pub cursor: Option<Vec<u8>>,
    /// What it did so far.
    pub counts: RekeyCounts,
}

const STATE_MAGIC: &str = "pk-codec rekey state 1";

impl RekeyState {
    /// The state as stored: a line per field, text fields in hex.
    fn to_bytes(&self) -> Vec<u8> {
        let c = &self.counts;
        format!(
            "{STATE_MAGIC}\njob {}\nfrom {}\nto {}\nphase {}\ncursor {}\ncounts {} {} {} {} {}\n",
            hex(self.job_id.as_bytes()),
            hex(self.from.as_bytes()),
            hex(self.to.as_bytes()),
            self.phase.name(),
            self.cursor.as_deref().map_or_else(|| "-".to_owned(), hex),
            c.copied,
            c.skipped,
            c.verified,
            c.repaired,
            c.dropped
        )
        .into_bytes()
    }

    fn from_bytes(bytes: &[u8]) -> Option<Self> {
        let text = std::str::from_utf8(bytes).ok()?;
        let mut lines = text.lines();
        if lines.next()? != STATE_MAGIC {
            return None;
        }
        let mut field = |name: &str| {
            lines
                .next()?
                .strip_prefix(name)?
                .strip_prefix(' ')
                .map(str::to_owned)
        };
        let text = |hex: &str| String::from_utf8(unhex(hex)?).ok();
        let job_id = text(&field("job")?)?;
        let from = text(&field("from")?)?;
        let to = text(&field("to")?)?;
        let phase = Phase::from_name(&field("phase")?)?;
        let cursor = match field("cursor")?.as_str() {
            "-" => None,
            h => Some(unhex(h)?),
        };
        let counts = field("counts")?;
        let n: Vec<u64> = counts
            .split(' ')
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        let [copied, skipped, verified, repaired, dropped] = n[..] else {
            return None;
        };
        Some(Self {
            job_id,
            from,
            to,
            phase,
            cursor,
            counts: RekeyCounts {
                copied,
                skipped,
                verified,
                repaired,
                dropped,
            },
        })
    }
}

fn hex(bytes: &[u8]) -> String {
    use fmt::Write as _;
    bytes.iter().fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    // An odd length leaves a last pair that `get` cannot take: `None`.
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Why a re-keying was refused or stopped.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use pk_codec::Layout;
/// use pk_codec::store::{KeySpace, MemoryStore, Rekey, RekeyError, RekeyJob, RekeyOptions};
///
/// let old: Layout = "id: u64 width=8".parse()?;
/// let narrower: Layout = "id: u32 width=8".parse()?;
/// let plan = Rekey::new("j", KeySpace::new(old).under("v1/"), KeySpace::new(narrower).under("v2/"));
/// let err = RekeyJob::start(Arc::new(MemoryStore::default()), plan, RekeyOptions::default()).unwrap_err();
/// assert!(matches!(&err, RekeyError::FieldCannotCarry { field, .. } if field == "id"));
/// assert!(err.to_string().starts_with("field \"id\" cannot carry the old rows"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RekeyError {
    /// The new layout is the old one.
    SameLayout {
        /// The layout's spec.
        layout: String,
    },
    /// A field of the old layout has no place in the new one: rows that differ only in it
    /// would share a key.
    FieldLost {
        /// The field.
        field: String,
    },
    /// A field the new layout adds has no value ([`Rekey::fill`]).
    FieldWithoutValue {
        /// The field.
        field: String,
    },
    /// A field of both layouts cannot hold in the new layout every value it holds in the old.
    FieldCannotCarry {
        /// The field.
        field: String,
        /// Why.
        why: String,
    },
    /// The two key spaces could share keys.
    KeySpacesOverlap {
        /// Why.
        why: String,
    },
    /// A read of one of the key spaces visits the state key.
    StateKeyInKeySpace {
        /// The state key.
        key: String,
        /// Which read visits it.
        why: String,
    },
    /// The state in the store belongs to another job.
    JobMismatch {
        /// The id of the job asked for.
        expected: String,
        /// The id of the job whose state the store holds.
        found: String,
    },
    /// The store holds this job's state with other key spaces.
    PlanMismatch {
        /// Which side (`from` or `to`).
        side: &'static str,
        /// The key space the state records.
        stored: String,
        /// The key space given.
        given: String,
    },
    /// [`RekeyJob::start`] found the state of a job that is under way (resume it instead).
    JobUnderWay {
        /// Its id.
        job_id: String,
        /// Its phase.
        phase: Phase,
    },
    /// [`RekeyJob::resume`] found no state.
    NoJob {
        /// Where it looked.
        state_key: String,
    },
    /// The state key holds something that is not a job's state.
    BadState {
        /// The state key.
        state_key: String,
    },
    /// An option or a fill value that cannot work.
    BadOption {
        /// Why.
        why: String,
    },
    /// A key that the layouts could not encode or decode.
    Key {
        /// The key (or the values).
        key: String,
        /// The codec's refusal.
        error: crate::Error,
    },
    /// The store's refusal (the state says where to resume).
    Store(StoreError),
    /// A typed value ([`RekeyJob::put_typed`], [`RekeyJob::get_typed`]) that cannot be stored
    /// exactly, or a stored value that is not of the type asked for.
    #[cfg(feature = "typed")]
    Value(super::value::ValueError),
}

impl fmt::Display for RekeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SameLayout { layout } => write!(
                f,
                "re-keying to the same layout ({layout}) moves nothing: give a new layout"
            ),
            Self::FieldLost { field } => write!(
                f,
                "field {field:?} of the old layout is not in the new one: rows that differ only \
                 in it would share a key"
            ),
            Self::FieldWithoutValue { field } => write!(
                f,
                "field {field:?} of the new layout is not in the old one and has no value: give \
                 it one with Rekey::fill"
            ),
            Self::FieldCannotCarry { field, why } => write!(
                f,
                "field {field:?} cannot carry the old rows into the new layout: {why}"
            ),
            Self::KeySpacesOverlap { why } => write!(f, "the key spaces overlap: {why}"),
            Self::StateKeyInKeySpace { key, why } => write!(
                f,
                "the state key {key:?} lies where a key space is read: {why}"
            ),
            Self::JobMismatch { expected, found } => write!(
                f,
                "the store holds the state of job {found:?}, not of job {expected:?}"
            ),
            Self::PlanMismatch {
                side,
                stored,
                given,
            } => write!(
                f,
                "the job's state says it moves {side} {stored}, not {given}: resume it with \
                 the layouts it started with"
            ),
            Self::JobUnderWay { job_id, phase } => write!(
                f,
                "job {job_id:?} is under way (phase {}): resume it, or let it finish first",
                phase.name()
            ),
            Self::NoJob { state_key } => write!(f, "no job state at {state_key:?} to resume"),
            Self::BadState { state_key } => {
                write!(
                    f,
                    "the value at {state_key:?} is not a re-keying job's state"
                )
            }
            Self::BadOption { why } => write!(f, "{why}"),
            Self::Key { key, error } => write!(f, "key {key:?}: {error}"),
            Self::Store(e) => write!(f, "{e}"),
            #[cfg(feature = "typed")]
            Self::Value(e) => write!(f, "value: {e}"),
        }
    }
}

impl std::error::Error for RekeyError {}

impl From<StoreError> for RekeyError {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

/// What one [`RekeyJob::step`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// It worked through `rows` rows of `phase` (the phase moves on when its pass ends).
    Worked {
        /// The phase the rows were in.
        phase: Phase,
        /// Rows read.
        rows: usize,
    },
    /// The throttle lets no row through for `wait`.
    Throttled {
        /// How long until it lets one through.
        wait: Duration,
    },
    /// The job is done.
    Done,
}

/// An online re-keying under way in `store`: the writes and reads of the table while it runs,
/// and the steps that move it. An example is on [`Rekey`].
///
/// # How it works
///
/// Each layout's keys live in a [`KeySpace`]: the layout under a namespace (a text prefix,
/// empty for a table's original keys). A job moves every row from the old key space to the new
/// one, in one store, through four phases recorded in a persisted [`RekeyState`]:
///
/// 1. **Backfill** (from the moment `T` the job starts): every write through the job
///    ([`RekeyJob::put`], [`RekeyJob::delete`]) goes to both layouts, as one atomic write; the
///    rows written before `T` are copied from a resumable cursor through a [`BulkWriter`],
///    throttled ([`RekeyOptions::step_rows`], [`Throttle`]) so that live traffic keeps its share.
/// 2. **Verify**: every row of the old layout is read back by its new key.
/// 3. **Drop**: reads switch to the new layout ([`RekeyJob::get`]), writes go to it alone, and
///    the old keys are deleted from a cursor.
/// 4. **Done**.
///
/// After each step the state (phase, cursor, counts) is written back; a job dropped at any
/// point (a crash) is reloaded with [`RekeyJob::resume`] and goes on from its cursor. A step
/// redone after a crash copies nothing twice: its copies find their rows already there.
///
/// # The race it closes
///
/// A backfill that reads an old row, then writes it under its new key, can overwrite a live
/// write that landed on the new key in between with the stale value it read (or bring back a
/// row deleted in between). Here each copy is a conditional write ([`RangeStore::write_if`]):
/// the new key is written only if the old key still holds the value read **and** the new key is
/// absent, checked and written atomically. A live write changes both keys at once, so a copy
/// either lands before it (and is overwritten by it) or finds the old key changed and writes
/// nothing. The store must offer conditional writes: [`MemoryStore`](super::MemoryStore),
/// redb, etcd and the table model do.
///
/// # Where the state lives
///
/// In the store itself, at [`Rekey::state_key`] (by default [`Rekey::DEFAULT_STATE_KEY`],
/// which starts with a NUL byte, or [`Rekey::ALTERNATE_STATE_KEY`] where a read of a key space
/// visits that), which no read of either key space visits ([`KeySpace::read_ranges`]): a scan of
/// the old or the new table while the job runs finds only its own rows. It records the job's
/// id and both key spaces, so that a resume with another job's id, or with other layouts, is
/// refused.
///
/// All writers of the table must write through the job (one handle per process, each
/// reloaded after the others move the phase): a writer that writes the old keys alone after
/// `T` escapes the backfill's cursor.
pub struct RekeyJob<S: RangeStore + 'static> {
    store: Arc<S>,
    rekey: Rekey,
    sources: Vec<Source>,
    options: RekeyOptions,
    state: RwLock<RekeyState>,
    bucket: Mutex<Option<Bucket>>,
}

impl<S: RangeStore + 'static> fmt::Debug for RekeyJob<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RekeyJob")
            .field("state", &self.state())
            .finish_non_exhaustive()
    }
}

impl<S: RangeStore + 'static> RekeyJob<S> {
    /// Starts `rekey` in `store`: from now on writes through the job go to both layouts.
    ///
    /// # Errors
    ///
    /// [`RekeyError::SameLayout`], [`RekeyError::FieldLost`], [`RekeyError::FieldWithoutValue`],
    /// [`RekeyError::FieldCannotCarry`], [`RekeyError::KeySpacesOverlap`],
    /// [`RekeyError::StateKeyInKeySpace`] and [`RekeyError::BadOption`] for a re-keying that
    /// cannot work; [`RekeyError::JobUnderWay`] when the store holds the state of a job not yet
    /// done (this one's too: resume it); the store's refusal.
    pub fn start(
        store: Arc<S>,
        mut rekey: Rekey,
        options: RekeyOptions,
    ) -> Result<Self, RekeyError> {
        let sources = rekey.check(&options)?;
        if let Some(found) = load(&*store, &rekey.state_key)?
            && found.phase != Phase::Done
        {
            return Err(RekeyError::JobUnderWay {
                job_id: found.job_id,
                phase: found.phase,
            });
        }
        let state = RekeyState {
            job_id: rekey.job_id.clone(),
            from: rekey.from.describe(),
            to: rekey.to.describe(),
            phase: Phase::Backfill,
            cursor: None,
            counts: RekeyCounts::default(),
        };
        store.put(rekey.state_key.as_bytes(), &state.to_bytes())?;
        Ok(Self::with_state(store, rekey, sources, options, state))
    }

    /// Reloads the job `rekey` names from its state in `store` (after a crash, or in another
    /// process), to go on from its cursor.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use pk_codec::Layout;
    /// use pk_codec::store::{KeySpace, MemoryStore, Phase, RangeStore, Rekey, RekeyError, RekeyJob, RekeyOptions};
    ///
    /// let old = KeySpace::new("id: u32 width=4".parse::<Layout>()?).under("v1/");
    /// let new = KeySpace::new("id: u32 width=4; hash=md5:4:sep".parse::<Layout>()?).under("v2/");
    /// let plan = || Rekey::new("add-a-hash", old.clone(), new.clone());
    /// let store = Arc::new(MemoryStore::default());
    /// for id in 0..10u32 {
    ///     store.put(&old.key(&[id.into()])?, b"row")?;
    /// }
    /// let options = RekeyOptions { step_rows: 4, ..RekeyOptions::default() };
    /// let job = RekeyJob::start(Arc::clone(&store), plan(), options.clone())?;
    /// job.step()?;
    /// drop(job); // a crash
    /// let job = RekeyJob::resume(Arc::clone(&store), plan(), options.clone())?;
    /// assert!(job.state().cursor.is_some());
    /// assert_eq!(job.run()?.phase, Phase::Done);
    ///
    /// // Another job's id is refused.
    /// let other = Rekey::new("other", old.clone(), new.clone());
    /// let err = RekeyJob::resume(store, other, options).unwrap_err();
    /// assert!(matches!(err, RekeyError::JobMismatch { .. }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`RekeyJob::start`] for a re-keying that cannot work; [`RekeyError::NoJob`] when the
    /// store holds no state; [`RekeyError::JobMismatch`] when it holds another job's;
    /// [`RekeyError::PlanMismatch`] when this job's state names other key spaces;
    /// [`RekeyError::BadState`] when the state cannot be read; the store's refusal.
    pub fn resume(
        store: Arc<S>,
        mut rekey: Rekey,
        options: RekeyOptions,
    ) -> Result<Self, RekeyError> {
        let sources = rekey.check(&options)?;
        let state = load(&*store, &rekey.state_key)?.ok_or_else(|| RekeyError::NoJob {
            state_key: rekey.state_key.clone(),
        })?;
        if state.job_id != rekey.job_id {
            return Err(RekeyError::JobMismatch {
                expected: rekey.job_id,
                found: state.job_id,
            });
        }
        for (side, stored, given) in [
            ("from", &state.from, rekey.from.describe()),
            ("to", &state.to, rekey.to.describe()),
        ] {
            if *stored != given {
                return Err(RekeyError::PlanMismatch {
                    side,
                    stored: stored.clone(),
                    given,
                });
            }
        }
        Ok(Self::with_state(store, rekey, sources, options, state))
    }

    fn with_state(
        store: Arc<S>,
        rekey: Rekey,
        sources: Vec<Source>,
        options: RekeyOptions,
        state: RekeyState,
    ) -> Self {
        let bucket = options.throttle.clone().map(Bucket::new);
        Self {
            store,
            rekey,
            sources,
            options,
            state: RwLock::new(state),
            bucket: Mutex::new(bucket),
        }
    }

    /// The job's state as it stands.
    #[must_use]
    pub fn state(&self) -> RekeyState {
        read(&self.state).clone()
    }

    /// The new key of the row with the old layout's `values`.
    fn new_key(&self, old_values: &[Value]) -> Result<Vec<u8>, RekeyError> {
        let values: Vec<Value> = self
            .sources
            .iter()
            .map(|s| match s {
                Source::Old(i) => old_values[*i].clone(),
                Source::Fill(v) => v.clone(),
            })
            .collect();
        self.rekey.to.key(&values)
    }

    /// Both keys of the row with the old layout's `values`.
    fn keys(&self, values: &[Value]) -> Result<(Vec<u8>, Vec<u8>), RekeyError> {
        let old = self.rekey.from.key(values)?;
        if self.rekey.to.decode(&old).is_some() {
            return Err(self.overlap(&old));
        }
        Ok((old, self.new_key(values)?))
    }

    /// Refuses `key` of the new key space when it is a key of the old one too (an old layout
    /// without a namespace whose keys can start with the new namespace).
    fn apart(&self, key: &[u8]) -> Result<(), RekeyError> {
        if self.rekey.from.decode(key).is_some() {
            return Err(self.overlap(key));
        }
        Ok(())
    }

    #[cold]
    fn overlap(&self, key: &[u8]) -> RekeyError {
        RekeyError::KeySpacesOverlap {
            why: format!(
                "{} is a key of both layouts (the new namespace {:?} starts keys of the \
                 old layout): choose another namespace",
                show_key(key),
                self.rekey.to.namespace
            ),
        }
    }

    /// Writes `value` for the row with the old layout's field `values`: both keys at once
    /// until reads switch, the new key alone after.
    ///
    /// # Errors
    ///
    /// [`RekeyError::Key`] for values the layouts refuse; the store's refusal (nothing written).
    pub fn put(&self, values: &[Value], value: &[u8]) -> Result<(), RekeyError> {
        let (old, new) = self.keys(values)?;
        // Held while writing, so that reads do not switch (and the old keys' drop does not
        // pass this key) between the phase read and the write.
        let state = read(&self.state);
        let put = |key: Vec<u8>| WriteOp::put(key, value);
        let ops = if state.phase < Phase::Drop {
            vec![put(old), put(new)]
        } else {
            vec![put(new)]
        };
        self.write_all(ops)
    }

    /// Deletes the row with the old layout's field `values`, under both keys.
    ///
    /// # Errors
    ///
    /// As [`RekeyJob::put`].
    pub fn delete(&self, values: &[Value]) -> Result<(), RekeyError> {
        let (old, new) = self.keys(values)?;
        let _state = read(&self.state);
        self.write_all(vec![WriteOp::delete(old), WriteOp::delete(new)])
    }

    /// Writes `ops` at once, unconditionally.
    fn write_all(&self, ops: Vec<WriteOp>) -> Result<(), RekeyError> {
        let write = CondWrite {
            expect: Vec::new(),
            ops,
        };
        if self.store.write_if(&write)? {
            Ok(())
        } else {
            Err(RekeyError::Store(StoreError::new(
                StoreErrorKind::Other,
                "the store refused a write with no condition",
            )))
        }
    }

    /// The value of the row with the old layout's field `values`: read by its old key until
    /// reads switch, by its new key after.
    ///
    /// # Errors
    ///
    /// As [`RekeyJob::put`].
    pub fn get(&self, values: &[Value]) -> Result<Option<Vec<u8>>, RekeyError> {
        let state = read(&self.state);
        let key = if state.phase < Phase::Drop {
            self.rekey.from.key(values)?
        } else {
            self.new_key(values)?
        };
        Ok(self.store.get(&key)?)
    }

    /// [`RekeyJob::put`] of a typed value, in the [value format](super::value) that
    /// [`Typed`](super::Typed) reads and writes: no value bytes made by hand.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use pk_codec::{Layout, Value};
    /// use pk_codec::store::{KeySpace, MemoryStore, Rekey, RekeyJob, RekeyOptions, Typed};
    ///
    /// let old: Layout = "card: u64 width=8; buckets=4:mod(card):sep".parse()?;
    /// let new: Layout = "card: u64 width=8; buckets=16:mod(card):sep".parse()?;
    /// let store = Arc::new(MemoryStore::default());
    /// let rekey = Rekey::new("grow", KeySpace::new(old), KeySpace::new(new.clone()).under("v2/"));
    /// let job = RekeyJob::start(Arc::clone(&store), rekey, RekeyOptions::default())?;
    /// job.put_typed(&[Value::Uint(7)], &27.49f64)?;
    /// job.run()?;
    /// assert_eq!(job.get_typed::<f64>(&[Value::Uint(7)])?, Some(27.49));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`RekeyError::Value`] for a value that cannot be stored exactly (nothing written); as
    /// [`RekeyJob::put`].
    #[cfg(feature = "typed")]
    pub fn put_typed<V: super::value::Storable + ?Sized>(
        &self,
        values: &[Value],
        value: &V,
    ) -> Result<(), RekeyError> {
        let bytes = super::value::to_bytes(value).map_err(RekeyError::Value)?;
        self.put(values, &bytes)
    }

    /// [`RekeyJob::get`], read as a `V` from the [value format](super::value).
    ///
    /// # Errors
    ///
    /// [`RekeyError::Value`] for a stored value that is not a `V`; as [`RekeyJob::get`].
    #[cfg(feature = "typed")]
    pub fn get_typed<V: serde::de::DeserializeOwned>(
        &self,
        values: &[Value],
    ) -> Result<Option<V>, RekeyError> {
        self.get(values)?
            .map(|bytes| super::value::from_bytes(&bytes).map_err(RekeyError::Value))
            .transpose()
    }

    /// Runs the job to its end, waiting out the throttle.
    ///
    /// # Errors
    ///
    /// As [`RekeyJob::step`].
    pub fn run(&self) -> Result<RekeyState, RekeyError> {
        loop {
            match self.step()? {
                Step::Done => return Ok(self.state()),
                Step::Throttled { wait } => std::thread::sleep(wait),
                Step::Worked { .. } => {}
            }
        }
    }

    /// One step: up to [`RekeyOptions::step_rows`] keys (fewer if the throttle says so) of the
    /// phase's pass, then the state written back. Never sleeps.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use pk_codec::Layout;
    /// use pk_codec::store::{KeySpace, MemoryStore, Phase, RangeStore, Rekey, RekeyJob, RekeyOptions, Step};
    ///
    /// let old: Layout = "id: u32 width=4".parse()?;
    /// let new: Layout = "id: u32 width=4; region: str".parse()?;
    /// let store = Arc::new(MemoryStore::default());
    /// let old_space = KeySpace::new(old).under("v1/");
    /// for id in 0..5u32 {
    ///     store.put(&old_space.key(&[id.into()])?, b"row")?;
    /// }
    /// // A field added at the end, with its value for the old rows.
    /// let plan = Rekey::new("add-region", old_space, KeySpace::new(new).under("v2/"))
    ///     .fill("region", "eu".into());
    /// let options = RekeyOptions { step_rows: 3, ..RekeyOptions::default() };
    /// let job = RekeyJob::start(Arc::clone(&store), plan, options)?;
    /// assert_eq!(job.step()?, Step::Worked { phase: Phase::Backfill, rows: 3 });
    /// assert_eq!(job.step()?, Step::Worked { phase: Phase::Backfill, rows: 2 });
    /// assert_eq!(job.state().phase, Phase::Verify);
    /// job.run()?;
    /// assert_eq!(store.get(b"v2/0004,eu")?, Some(b"row".to_vec()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The store's refusal, [`RekeyError::Key`] for an old key the old layout cannot decode
    /// (something else wrote into its key space) or a row the new layout cannot encode: the
    /// state stays at the step's start, and a later step (or a resumed job) does it again.
    pub fn step(&self) -> Result<Step, RekeyError> {
        let (phase, cursor) = {
            let s = read(&self.state);
            (s.phase, s.cursor.clone())
        };
        if phase == Phase::Done {
            return Ok(Step::Done);
        }
        let want = match lock(&self.bucket).as_mut() {
            Some(bucket) => match bucket.take(self.options.step_rows) {
                Ok(rows) => rows,
                Err(wait) => return Ok(Step::Throttled { wait }),
            },
            None => self.options.step_rows,
        };
        let want = if phase == Phase::Drop {
            want.min(self.store.max_batch().max(1))
        } else {
            want
        };
        let (start, end) = self.rekey.from.bounds();
        let page = self.store.range(
            &RangeQuery::new(start, end.as_deref())
                .limit(want)
                .resume(cursor.as_deref()),
        )?;
        let rows = self.old_rows(page.rows)?;
        if let Some(bucket) = lock(&self.bucket).as_mut() {
            bucket.give_back(want.saturating_sub(rows.len()));
        }
        let mut counts = RekeyCounts::default();
        match phase {
            Phase::Backfill => self.copy(&rows, &mut counts)?,
            Phase::Verify => self.verify(&rows, &mut counts)?,
            Phase::Drop => {
                let ops: Vec<WriteOp> = rows
                    .iter()
                    .map(|r| WriteOp::Delete { key: r.old.clone() })
                    .collect();
                for result in self.store.batch_write(&ops)? {
                    result?;
                }
                counts.dropped = rows.len() as u64;
            }
            Phase::Done => unreachable!("returned above"),
        }
        self.advance(phase, page.next, &counts)?;
        Ok(Step::Worked {
            phase,
            rows: rows.len(),
        })
    }

    /// The old layout's rows of a page, with their new keys: the keys of the new key space and
    /// the state key (which lie in the old one's range when its namespace is empty) left out.
    fn old_rows(&self, rows: Vec<(Vec<u8>, Vec<u8>)>) -> Result<Vec<OldRow>, RekeyError> {
        let mut out = Vec::with_capacity(rows.len());
        for (key, value) in rows {
            if key == self.rekey.state_key.as_bytes() {
                continue;
            }
            if self.rekey.to.decode(&key).is_some() {
                self.apart(&key)?;
                continue;
            }
            let bare = &key[self.rekey.from.namespace.len()..];
            let values =
                self.rekey
                    .from
                    .layout
                    .decode_bytes(bare)
                    .map_err(|error| RekeyError::Key {
                        key: show_key(&key),
                        error,
                    })?;
            let new = self.new_key(&values)?;
            out.push(OldRow {
                old: key,
                new,
                value,
            });
        }
        Ok(out)
    }

    /// Copies `rows` to their new keys through a [`BulkWriter`], each copy conditional: only
    /// if the old key still holds the value read and the new key is absent.
    fn copy(&self, rows: &[OldRow], counts: &mut RekeyCounts) -> Result<(), RekeyError> {
        if rows.is_empty() {
            return Ok(());
        }
        let sink = Arc::new(CopySink {
            store: Arc::clone(&self.store),
            origins: rows
                .iter()
                .map(|r| (r.new.clone(), r.old.clone()))
                .collect(),
            tally: Mutex::new((0, 0)),
        });
        let writer = BulkWriter::new(Arc::clone(&sink), self.options.bulk.clone())?;
        for r in rows {
            writer.add(r.new.clone(), r.value.clone())?;
        }
        let stats = writer.close();
        if stats.rows_failed > 0 || stats.rows_lost() > 0 {
            return Err(RekeyError::Store(StoreError::new(
                StoreErrorKind::Unavailable,
                format!(
                    "the backfill's step wrote {} of {} rows ({} failed): it is done again from \
                     the cursor",
                    stats.rows_written, stats.rows_added, stats.rows_failed
                ),
            )));
        }
        let (copied, skipped) = *lock(&sink.tally);
        counts.copied = copied;
        counts.skipped = skipped;
        Ok(())
    }

    /// Checks that each row's new key holds its old key's value, atomically; a row changed by a
    /// live write in between is read again, and one still different after that is written
    /// again (only if its old key still holds what was read).
    fn verify(&self, rows: &[OldRow], counts: &mut RekeyCounts) -> Result<(), RekeyError> {
        let checks: Vec<CondWrite> = rows
            .iter()
            .map(|r| same_value(r, &r.value, Vec::new()))
            .collect();
        let results = self.store.batch_write_if(&checks)?;
        for (r, result) in rows.iter().zip(results) {
            if result? {
                counts.verified += 1;
                continue;
            }
            // Changed since the page was read (or missing): as it is now.
            let mut settled = false;
            for _ in 0..3 {
                let Some(now) = self.store.get(&r.old)? else {
                    // Deleted since: the delete removed both keys at once.
                    settled = true;
                    break;
                };
                if self.store.write_if(&same_value(r, &now, Vec::new()))? {
                    counts.verified += 1;
                    settled = true;
                    break;
                }
                let repair = CondWrite {
                    expect: vec![Expect::value(r.old.clone(), now.clone())],
                    ops: vec![WriteOp::put(r.new.clone(), now)],
                };
                if self.store.write_if(&repair)? {
                    counts.repaired += 1;
                    settled = true;
                    break;
                }
            }
            if !settled {
                return Err(RekeyError::Store(StoreError::new(
                    StoreErrorKind::Busy,
                    format!(
                        "row {} changed under every verification: the step is done again",
                        show_key(&r.old)
                    ),
                )));
            }
        }
        Ok(())
    }

    /// Records a step: its counts, and the cursor `next` (or the next phase when the pass
    /// ended), written to the store before the job moves on.
    fn advance(
        &self,
        phase: Phase,
        next: Option<Vec<u8>>,
        counts: &RekeyCounts,
    ) -> Result<(), RekeyError> {
        // The write lock waits for the live writes under way, so that none writes the old
        // key after reads switch.
        let mut state = write(&self.state);
        let mut new = state.clone();
        let c = &mut new.counts;
        c.copied += counts.copied;
        c.skipped += counts.skipped;
        c.verified += counts.verified;
        c.repaired += counts.repaired;
        c.dropped += counts.dropped;
        match next {
            Some(next) => new.cursor = Some(next),
            None => {
                new.cursor = None;
                new.phase = match phase {
                    Phase::Backfill => Phase::Verify,
                    Phase::Verify => Phase::Drop,
                    Phase::Drop | Phase::Done => Phase::Done,
                };
            }
        }
        self.store
            .put(self.rekey.state_key.as_bytes(), &new.to_bytes())?;
        *state = new;
        Ok(())
    }
}

/// A check that `r`'s old and new keys both hold `value`, then `ops`.
fn same_value(r: &OldRow, value: &[u8], ops: Vec<WriteOp>) -> CondWrite {
    CondWrite {
        expect: vec![
            Expect::value(r.old.clone(), value.to_vec()),
            Expect::value(r.new.clone(), value.to_vec()),
        ],
        ops,
    }
}

/// An old row read by a pass.
#[derive(Debug)]
struct OldRow {
    old: Vec<u8>,
    new: Vec<u8>,
    value: Vec<u8>,
}

/// Reads the job state at `key`, if any.
fn load<S: RangeStore + ?Sized>(store: &S, key: &str) -> Result<Option<RekeyState>, RekeyError> {
    match store.get(key.as_bytes())? {
        None => Ok(None),
        Some(bytes) => {
            RekeyState::from_bytes(&bytes)
                .map(Some)
                .ok_or_else(|| RekeyError::BadState {
                    state_key: key.to_owned(),
                })
        }
    }
}

/// The store a backfill's [`BulkWriter`] writes to: each put of a new key becomes a conditional
/// copy (the old key still holds the value, the new key is absent), so the writer's batching,
/// spreading and retries serve the copies.
struct CopySink<S: RangeStore> {
    store: Arc<S>,
    /// The old key of each new key of the step.
    origins: HashMap<Vec<u8>, Vec<u8>>,
    /// Rows copied, rows skipped.
    tally: Mutex<(u64, u64)>,
}

impl<S: RangeStore> CopySink<S> {
    fn copy_of(&self, key: &[u8], value: &[u8]) -> Result<CondWrite, StoreError> {
        let old = self.origins.get(key).ok_or_else(|| {
            StoreError::new(
                StoreErrorKind::Invalid,
                format!("the backfill read no old row for {}", show_key(key)),
            )
        })?;
        Ok(CondWrite {
            expect: vec![Expect::value(old.clone(), value), Expect::absent(key)],
            ops: vec![WriteOp::put(key, value)],
        })
    }
}

impl<S: RangeStore> RangeStore for CopySink<S> {
    fn max_batch(&self) -> usize {
        self.store.max_batch()
    }

    fn write_profile(&self) -> WriteProfile {
        self.store.write_profile()
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        super::put_as_batch(self, key, value)
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.store.get(key)
    }

    fn delete(&self, _key: &[u8]) -> Result<bool, StoreError> {
        Err(StoreError::new(
            StoreErrorKind::Invalid,
            "a backfill only copies",
        ))
    }

    fn batch_write(&self, ops: &[WriteOp]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        let writes = ops
            .iter()
            .map(|op| match op {
                WriteOp::Put { key, value } => self.copy_of(key, value),
                WriteOp::Delete { .. } => self.delete(op.key()).map(|_| CondWrite::default()),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let results = self.store.batch_write_if(&writes)?;
        let mut tally = lock(&self.tally);
        Ok(results
            .into_iter()
            .map(|r| {
                let copied = r?;
                if copied {
                    tally.0 += 1;
                } else {
                    tally.1 += 1;
                }
                Ok(())
            })
            .collect())
    }

    fn range(&self, query: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
        self.store.range(query)
    }
}

fn read<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn write<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips() {
        let state = RekeyState {
            job_id: "j 1\n".into(),
            from: "\"\" a: u8".into(),
            to: "\"v2/\" a: u16".into(),
            phase: Phase::Verify,
            cursor: Some(b"\0x,\xff\x00".to_vec()),
            counts: RekeyCounts {
                copied: 1,
                skipped: 2,
                verified: 3,
                repaired: 4,
                dropped: 5,
            },
        };
        assert_eq!(RekeyState::from_bytes(&state.to_bytes()), Some(state));
        assert_eq!(RekeyState::from_bytes(b"nonsense"), None);
    }

    #[test]
    fn the_bucket_lets_rows_through_at_its_rate() {
        let now = Arc::new(Mutex::new(Duration::ZERO));
        let clock = Arc::clone(&now);
        let mut bucket = Bucket::new(Throttle::new(10, 5).clock(move || *clock.lock().unwrap()));
        assert_eq!(bucket.take(100), Ok(5));
        assert_eq!(bucket.take(1), Err(Duration::from_millis(100)));
        *now.lock().unwrap() = Duration::from_millis(350);
        assert_eq!(bucket.take(100), Ok(3));
        bucket.give_back(2);
        assert_eq!(bucket.take(100), Ok(2));
    }
}
