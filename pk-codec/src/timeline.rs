//! [`Timeline`]: a key design over time. A sequence of [`Period`]s, each a [`Layout`] in force
//! from a time, each in its own key space (a table, and a key prefix inside it). Writes pick the
//! period in force at the row's time; a typed range read over a time span visits every key space
//! the span touches ([`Timeline::ranges`]), whose rows the stores' `scan_timeline` merges in
//! typed order.
//!
//! Keys and ranges are bytes, in each period's layout's [`Form`](crate::Form): a text layout's
//! keys as their UTF-8 bytes, a binary layout's as they are; periods of either form mix in one
//! timeline (rows merge by their decoded values, not their bytes).
//!
//! Sits above the layouts (`layout/`) and beside the typed keys: it uses [`Layout`]'s public API
//! only.

use std::cmp::Ordering;
use std::fmt;
use std::ops::{Bound, Range};

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::key_range::{ByteRange, after_all_bytes_starting_with};
use crate::kinds::Order;
use crate::kinds::Value;
use crate::layout::Layout;
use crate::schedule::{Schedule, period_at, unordered};

/// One period of a [`Timeline`]: a [`Layout`] in force from `start_ms` (ms since the epoch)
/// until the next period's start (or until its own `end_ms`, which must then be the next
/// period's start; only the last period may end with nothing after it), whose keys live in
/// `table`, each behind `key_prefix` (empty by default).
///
/// # Examples
///
/// ```
/// use pk_codec::{Layout, timeline::Period};
///
/// let layout: Layout = "card_id: u32 width=6; ts: u64 width=13".parse()?;
/// let january = Period::new(1_767_225_600_000, "purchases_2026_01", layout).key_prefix("p/");
/// assert_eq!((january.table(), january.prefix()), ("purchases_2026_01", "p/"));
/// # Ok::<(), pk_codec::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Period {
    start_ms: i64,
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    end_ms: Option<i64>,
    table: String,
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "String::is_empty")
    )]
    key_prefix: String,
    layout: Layout,
}

impl Period {
    /// A period of `layout` from `start_ms`, in `table`, without a key prefix.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn new(start_ms: i64, table: impl Into<String>, layout: Layout) -> Self {
        Self {
            start_ms,
            end_ms: None,
            table: table.into(),
            key_prefix: String::new(),
            layout,
        }
    }

    /// The same period, its keys behind `prefix` in its table (printable ASCII).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.key_prefix = prefix.into();
        self
    }

    /// The same period, ending at `end_ms` (exclusive): the next period's start, or for the last
    /// period, the end of the schedule.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn until(mut self, end_ms: i64) -> Self {
        self.end_ms = Some(end_ms);
        self
    }

    /// When the period starts (inclusive), ms since the epoch.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn start_ms(&self) -> i64 {
        self.start_ms
    }

    /// The end it was given (exclusive), if any.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn end_ms(&self) -> Option<i64> {
        self.end_ms
    }

    /// The table its keys are in.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The prefix in front of each of its keys.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn prefix(&self) -> &str {
        &self.key_prefix
    }

    /// Its layout.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn layout(&self) -> &Layout {
        &self.layout
    }
}

/// Why a [`Timeline`] refused a schedule, a row or a key.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TimelineError {
    /// A timeline needs at least one period.
    Empty,
    /// Period `index` does not start after the period before it.
    Unordered {
        /// The period.
        index: usize,
        /// Its start.
        start_ms: i64,
        /// The previous period's start.
        previous_ms: i64,
    },
    /// Period `index` ends at or before its start.
    EmptyPeriod {
        /// The period.
        index: usize,
        /// Its start.
        start_ms: i64,
        /// Its end.
        end_ms: i64,
    },
    /// Period `index` ends before the next period starts: rows of the time between would have
    /// no layout.
    Gap {
        /// The period.
        index: usize,
        /// Its end.
        end_ms: i64,
        /// The next period's start.
        next_start_ms: i64,
    },
    /// Period `index` ends after the next period starts: rows of the time between would have
    /// two layouts.
    Overlap {
        /// The period.
        index: usize,
        /// Its end.
        end_ms: i64,
        /// The next period's start.
        next_start_ms: i64,
    },
    /// Period `index`'s table name or key prefix cannot be used.
    BadSpace {
        /// The period.
        index: usize,
        /// What is wrong.
        reason: String,
    },
    /// Period `index`'s layout has other fields than the first period's: rows of the two could
    /// not be merged in one typed order.
    FieldsDiffer {
        /// The period.
        index: usize,
        /// Which field differs and how.
        reason: String,
    },
    /// Periods `first` and `second` write keys into one table that could collide (see
    /// [`Timeline::new`] for the rule).
    Collision {
        /// The earlier period.
        first: usize,
        /// The later period.
        second: usize,
        /// Their table.
        table: String,
        /// Why their keys could collide.
        reason: String,
    },
    /// No period is in force at `time_ms`.
    NoPeriod {
        /// The time asked for.
        time_ms: i64,
        /// Why: before the first start, or after the last end.
        reason: String,
    },
    /// A period number out of range.
    NoSuchPeriod {
        /// The number asked for.
        index: usize,
        /// How many periods there are.
        periods: usize,
    },
    /// The time field named by [`Timeline::with_time_field`] cannot give a row's time: no
    /// such field, or not an integer (ms since the epoch) or a timestamp.
    TimeField {
        /// The field named.
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A row's time field does not give it a time: null (an optional field), or out of range.
    NoRowTime {
        /// The time field.
        field: String,
        /// Why.
        reason: String,
    },
    /// The time given for a row and the row's own time field pick different periods: the row
    /// would be written where a read by its time field does not look.
    TimeDisagrees {
        /// The time field.
        field: String,
        /// The time given.
        time_ms: i64,
        /// The period it picks.
        period: usize,
        /// The row's time field, in ms.
        field_ms: i64,
        /// The period the field picks.
        field_period: usize,
    },
    /// [`Timeline::place`] on a timeline without a time field.
    NoTimeField,
    /// Period `period`'s layout refused values or a key.
    Key {
        /// The period.
        period: usize,
        /// The layout's error.
        error: Error,
    },
}

impl fmt::Display for TimelineError {
    #[cfg_attr(debug_assertions, inline)]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => write!(f, "a timeline needs at least one period; none was given"),
            Self::Unordered {
                index,
                start_ms,
                previous_ms,
            } => write!(
                f,
                "period {index} starts at {start_ms} ms, not after period {}'s start at {previous_ms} ms: \
                 periods must be given in increasing start order, each start once",
                index - 1
            ),
            Self::EmptyPeriod {
                index,
                start_ms,
                end_ms,
            } => write!(
                f,
                "period {index} ends at {end_ms} ms, not after its start at {start_ms} ms"
            ),
            Self::Gap {
                index,
                end_ms,
                next_start_ms,
            } => write!(
                f,
                "gap between periods {index} and {}: period {index} ends at {end_ms} ms but the next starts at \
                 {next_start_ms} ms, so rows in between would have no layout",
                index + 1
            ),
            Self::Overlap {
                index,
                end_ms,
                next_start_ms,
            } => write!(
                f,
                "periods {index} and {} overlap: period {index} ends at {end_ms} ms but the next starts at \
                 {next_start_ms} ms, so rows in between would have two layouts",
                index + 1
            ),
            Self::BadSpace { index, reason } => write!(f, "period {index}: {reason}"),
            Self::FieldsDiffer { index, reason } => write!(
                f,
                "period {index}'s layout differs from period 0's: {reason} (every period's layout must have \
                 the same field names, kinds, orders and optionality, so that rows of all periods merge in one \
                 typed order)"
            ),
            Self::Collision {
                first,
                second,
                table,
                reason,
            } => write!(
                f,
                "periods {first} and {second} could write colliding keys in table {table:?}: {reason}"
            ),
            Self::NoPeriod { time_ms, reason } => {
                write!(f, "no period is in force at {time_ms} ms: {reason}")
            }
            Self::NoSuchPeriod { index, periods } => write!(
                f,
                "period {index} does not exist: the timeline has {periods} periods"
            ),
            Self::TimeField { field, reason } => write!(f, "time field {field:?}: {reason}"),
            Self::NoRowTime { field, reason } => {
                write!(f, "the row's time field {field:?} gives no time: {reason}")
            }
            Self::TimeDisagrees {
                field,
                time_ms,
                period,
                field_ms,
                field_period,
            } => write!(
                f,
                "the row's time {time_ms} ms is in period {period} but its time field {field:?} holds \
                 {field_ms} ms, in period {field_period}: a row goes to the period of its own time field \
                 (give that time, or place the row by its field)"
            ),
            Self::NoTimeField => write!(
                f,
                "this timeline has no time field to place a row by (Timeline::with_time_field); give the \
                 row's time"
            ),
            Self::Key { period, error } => write!(f, "period {period}: {error}"),
        }
    }
}

impl std::error::Error for TimelineError {
    #[cfg_attr(debug_assertions, inline)]
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Key { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// A row placed by [`Timeline::encode`]: the period in force at its time, and its key (with
/// the period's key prefix), to be written into the period's table. The key is bytes in the
/// period's layout's form (a text key's UTF-8 bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed<'t> {
    /// The period's number.
    pub period: usize,
    /// The table to write into.
    pub table: &'t str,
    /// The key, key prefix included.
    pub key: Vec<u8>,
}

/// One key space a read over a [`Timeline`] visits ([`Timeline::ranges`]): a table and a key
/// prefix, with the periods whose keys live there (one layout), and the key ranges to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Visit {
    periods: Vec<usize>,
    table: String,
    key_prefix: String,
    /// The ranges within the key space (without the key prefix), as the layout answers them.
    space_ranges: Vec<ByteRange>,
    /// The same ranges as store keys (with the key prefix).
    ranges: Vec<ByteRange>,
}

impl Visit {
    /// The periods whose keys this space holds that the span touches, in time order (one layout).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn periods(&self) -> &[usize] {
        &self.periods
    }

    /// The table to read.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The key prefix of the space in its table.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn prefix(&self) -> &str {
        &self.key_prefix
    }

    /// The key ranges to read from the table, as store keys (key prefix included); one per bucket
    /// the read can find rows in, for a bucketed layout.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn ranges(&self) -> &[ByteRange] {
        &self.ranges
    }

    /// The same ranges inside the key space: without the key prefix, as the period's layout
    /// answers them ([`Layout::byte_ranges`]: what a store seen through the prefix reads).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn space_ranges(&self) -> &[ByteRange] {
        &self.space_ranges
    }
}

/// A key design over time: [`Period`]s of [`Layout`]s, each in force from a time, each in its
/// own key space (a table, and a key prefix in it).
///
/// A new layout takes effect from a future time and nothing is rewritten: writes go to the
/// period in force at the row's time ([`Timeline::encode`]); a read over a time span visits the
/// key spaces of every period the span touches ([`Timeline::ranges`]) and merges their rows in
/// typed order (`store::scan_timeline`, feature `store`). One table per month (hot and cold
/// tables) and a bucket count raised from a date on are both timelines.
///
/// Loaded with serde (feature `serde`) as `{"periods": [{"start_ms": ..., "table": ...,
/// "key_prefix": ..., "layout": {...}}, ...]}`, checked as [`Timeline::new`] checks it.
///
/// # Examples
///
/// ```
/// use std::ops::Bound::Unbounded;
/// use pk_codec::{Layout, Value, timeline::{Period, Timeline}};
///
/// const JAN: i64 = 1_767_225_600_000; // 2026-01-01
/// const FEB: i64 = 1_769_904_000_000; // 2026-02-01
/// const DAY: i64 = 86_400_000;
/// let old: Layout = "card_id: u32 width=6; ts: u64 width=13; buckets=16:hash(card_id):sep".parse()?;
/// let new: Layout = "card_id: u32 width=6; ts: u64 width=13; buckets=64:hash(card_id):sep".parse()?;
/// let timeline = Timeline::new(vec![
///     Period::new(JAN, "purchases_2026_01", old),
///     Period::new(FEB, "purchases_2026_02", new),
/// ])?;
///
/// // A row is written under the layout in force at its time, into that period's table.
/// let ts = FEB + 5;
/// let placed = timeline.encode(ts, &[Value::from(6777u32), Value::from(ts as u64)])?;
/// assert_eq!((placed.period, placed.table), (1, "purchases_2026_02"));
///
/// // Card 6777's rows of January 20 to February 10: both tables, one bucket each.
/// let card = [Value::from(6777u32)];
/// let visits = timeline.ranges(JAN + 19 * DAY..FEB + 10 * DAY, &card, Unbounded, Unbounded)?;
/// assert_eq!(visits.len(), 2);
/// assert_eq!(visits[1].ranges().len(), 1);
/// assert!(visits[1].ranges()[0].contains(&placed.key));
/// // A span of February alone reads February's table only.
/// let visits = timeline.ranges(FEB..FEB + DAY, &card, Unbounded, Unbounded)?;
/// assert_eq!(visits[0].table(), "purchases_2026_02");
/// assert_eq!(visits.len(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(try_from = "TimelineConfig", into = "TimelineConfig")
)]
pub struct Timeline {
    periods: Vec<Period>,
    /// The field a row's time is read from, and its place in every layout.
    time_field: Option<(String, usize)>,
}

/// The serde form of a [`Timeline`], checked by [`Timeline::new`] (and
/// [`Timeline::with_time_field`]) when loaded.
#[cfg(feature = "serde")]
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TimelineConfig {
    periods: Vec<Period>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    time_field: Option<String>,
}

#[cfg(feature = "serde")]
impl TryFrom<TimelineConfig> for Timeline {
    type Error = TimelineError;

    #[cfg_attr(debug_assertions, inline)]
    fn try_from(config: TimelineConfig) -> Result<Self, TimelineError> {
        let timeline = Self::new(config.periods)?;
        match config.time_field {
            Some(field) => timeline.with_time_field(field),
            None => Ok(timeline),
        }
    }
}

#[cfg(feature = "serde")]
impl From<Timeline> for TimelineConfig {
    #[cfg_attr(debug_assertions, inline)]
    fn from(timeline: Timeline) -> Self {
        Self {
            periods: timeline.periods,
            time_field: timeline.time_field.map(|(name, _)| name),
        }
    }
}

/// Whether two layouts' fields agree on what a merge compares: names, kinds, orders and
/// optionality; `Err` says the first difference.
#[cfg_attr(debug_assertions, inline)]
fn same_fields(first: &Layout, other: &Layout) -> Result<(), String> {
    let (a, b) = (first.fields(), other.fields());
    if a.len() != b.len() {
        return Err(format!("{} fields against {}", b.len(), a.len()));
    }
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let (sx, sy) = (x.spec(), y.spec());
        if x.name() != y.name() {
            return Err(format!(
                "field {i} is named {:?}, not {:?}",
                y.name(),
                x.name()
            ));
        }
        if sx.kind() != sy.kind() {
            return Err(format!(
                "field {:?} is a {:?}, not a {:?}",
                y.name(),
                sy.kind(),
                sx.kind()
            ));
        }
        if sx.order() != sy.order() || sx.is_optional() != sy.is_optional() {
            return Err(format!(
                "field {:?} differs in order or optionality",
                y.name()
            ));
        }
    }
    Ok(())
}

/// The one rule on a key prefix: printable ASCII (so the first text after every key behind it
/// is found by raising its last byte, and it reads plainly in a store's console).
#[cfg_attr(debug_assertions, inline)]
fn check_key_prefix(prefix: &str) -> Result<(), String> {
    match prefix.bytes().position(|b| !(0x20..0x7f).contains(&b)) {
        None => Ok(()),
        Some(at) => Err(format!(
            "key prefix {prefix:?} has a byte at {at} outside printable ASCII (0x20 to 0x7e)"
        )),
    }
}

impl Timeline {
    /// A timeline of `periods`, in start order, checked.
    ///
    /// The rules, each refused with its own [`TimelineError`]:
    /// - at least one period ([`TimelineError::Empty`]); starts strictly increasing
    ///   ([`TimelineError::Unordered`]);
    /// - a period given an end ends after its start ([`TimelineError::EmptyPeriod`]) and exactly
    ///   where the next starts ([`TimelineError::Gap`], [`TimelineError::Overlap`]);
    /// - a table name is not empty, a key prefix is printable ASCII ([`TimelineError::BadSpace`]);
    /// - every layout has period 0's fields: names, kinds, orders, optionality
    ///   ([`TimelineError::FieldsDiffer`]); widths, delimiters and prefixes may change;
    /// - **no collision** ([`TimelineError::Collision`]): two periods in one table either share
    ///   their key space whole (the same key prefix and the same layout: they are one space, read
    ///   once), or neither's key prefix is a prefix of the other's (so their keys differ within
    ///   the prefixes, whatever the layouts write after them). This is conservative: two
    ///   different layouts in one table are always told apart by their key prefixes, never by
    ///   reasoning about what each layout can write.
    ///
    /// # Errors
    ///
    /// The first rule broken, naming the period(s).
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{Layout, timeline::{Period, Timeline, TimelineError}};
    ///
    /// let a: Layout = "ts: u64 width=13; buckets=16:mod(ts):sep".parse()?;
    /// let b: Layout = "ts: u64 width=13; buckets=64:mod(ts):sep".parse()?;
    /// // Two layouts in one table with no key prefix to tell them apart: refused.
    /// let err = Timeline::new(vec![Period::new(0, "t", a.clone()), Period::new(100, "t", b.clone())]).unwrap_err();
    /// assert!(matches!(err, TimelineError::Collision { first: 0, second: 1, .. }));
    /// // Behind prefixes that tell them apart: accepted.
    /// Timeline::new(vec![Period::new(0, "t", a.clone()).key_prefix("v1/"), Period::new(100, "t", b).key_prefix("v2/")])?;
    /// // An end that leaves a gap before the next period: refused.
    /// let err = Timeline::new(vec![Period::new(0, "t0", a.clone()).until(50), Period::new(100, "t1", a)]).unwrap_err();
    /// assert!(matches!(err, TimelineError::Gap { index: 0, end_ms: 50, next_start_ms: 100 }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg_attr(debug_assertions, inline)]
    pub fn new(periods: Vec<Period>) -> Result<Self, TimelineError> {
        let Some(first) = periods.first() else {
            return Err(TimelineError::Empty);
        };
        if let Some((index, start_ms, previous_ms)) = unordered(periods.iter().map(|p| p.start_ms))
        {
            return Err(TimelineError::Unordered {
                index,
                start_ms,
                previous_ms,
            });
        }
        for (index, p) in periods.iter().enumerate() {
            if let Some(end_ms) = p.end_ms {
                if end_ms <= p.start_ms {
                    return Err(TimelineError::EmptyPeriod {
                        index,
                        start_ms: p.start_ms,
                        end_ms,
                    });
                }
                if let Some(next) = periods.get(index + 1) {
                    let next_start_ms = next.start_ms;
                    match end_ms.cmp(&next_start_ms) {
                        Ordering::Less => {
                            return Err(TimelineError::Gap {
                                index,
                                end_ms,
                                next_start_ms,
                            });
                        }
                        Ordering::Greater => {
                            return Err(TimelineError::Overlap {
                                index,
                                end_ms,
                                next_start_ms,
                            });
                        }
                        Ordering::Equal => {}
                    }
                }
            }
            if p.table.is_empty() {
                return Err(TimelineError::BadSpace {
                    index,
                    reason: "the table name is empty".into(),
                });
            }
            check_key_prefix(&p.key_prefix)
                .map_err(|reason| TimelineError::BadSpace { index, reason })?;
            same_fields(&first.layout, &p.layout)
                .map_err(|reason| TimelineError::FieldsDiffer { index, reason })?;
        }
        for (second, b) in periods.iter().enumerate() {
            for (first, a) in periods[..second].iter().enumerate() {
                if a.table != b.table {
                    continue;
                }
                let shared = a.key_prefix == b.key_prefix;
                if shared && a.layout == b.layout {
                    continue;
                }
                let reason = if shared {
                    format!(
                        "both write different layouts behind the key prefix {:?}; give each period its own key \
                         prefix (neither a prefix of the other) or its own table",
                        a.key_prefix
                    )
                } else if b.key_prefix.starts_with(&a.key_prefix) {
                    format!(
                        "key prefix {:?} starts with key prefix {:?}, so a key of one could be a key of the other",
                        b.key_prefix, a.key_prefix
                    )
                } else if a.key_prefix.starts_with(&b.key_prefix) {
                    format!(
                        "key prefix {:?} starts with key prefix {:?}, so a key of one could be a key of the other",
                        a.key_prefix, b.key_prefix
                    )
                } else {
                    continue;
                };
                return Err(TimelineError::Collision {
                    first,
                    second,
                    table: a.table.clone(),
                    reason,
                });
            }
        }
        Ok(Self {
            periods,
            time_field: None,
        })
    }

    /// The same timeline, each row's period read from its field `field` (the same field in
    /// every layout): an integer field holds ms since the epoch, a timestamp field an instant.
    /// [`Timeline::place`] then places a row by that field alone, and [`Timeline::encode`]
    /// refuses a time that picks another period than the field does
    /// ([`TimelineError::TimeDisagrees`]): a row's key always lives in the period of its own
    /// time, where a read by that time looks.
    ///
    /// # Errors
    ///
    /// [`TimelineError::TimeField`] for a field the layouts do not have, or one that is not an
    /// integer or a timestamp.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{Layout, Value, timeline::{Period, Timeline, TimelineError}};
    ///
    /// let l: Layout = "card: u32; ts: u64".parse()?;
    /// let t = Timeline::new(vec![Period::new(0, "a", l.clone()), Period::new(100, "b", l)])?.with_time_field("ts")?;
    /// let row = [Value::from(7u32), Value::from(150u64)];
    /// assert_eq!(t.place(&row)?.table, "b");
    /// assert_eq!(t.encode(120, &row)?.table, "b"); // the same period: accepted
    /// let err = t.encode(50, &row).unwrap_err(); // period 0 against the field's period 1
    /// assert!(matches!(err, TimelineError::TimeDisagrees { period: 0, field_period: 1, .. }), "{err}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg_attr(debug_assertions, inline)]
    pub fn with_time_field(mut self, field: impl Into<String>) -> Result<Self, TimelineError> {
        let field = field.into();
        let fields = self.periods[0].layout.fields();
        let Some(index) = fields.iter().position(|f| f.name() == field) else {
            let names: Vec<&str> = fields.iter().map(|f| f.name()).collect();
            return Err(TimelineError::TimeField {
                reason: format!(
                    "the layouts have no such field (their fields: {})",
                    names.join(", ")
                ),
                field,
            });
        };
        let kind = fields[index].spec().kind();
        if !kind.is_integer() && kind != crate::kinds::Kind::Timestamp {
            return Err(TimelineError::TimeField {
                reason: format!(
                    "a {} field holds no time: a time field is an integer (ms since the epoch) or a timestamp",
                    kind.name()
                ),
                field,
            });
        }
        self.time_field = Some((field, index));
        Ok(self)
    }

    /// The field rows are placed by ([`Timeline::with_time_field`]), if any.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn time_field(&self) -> Option<&str> {
        self.time_field.as_ref().map(|(name, _)| name.as_str())
    }

    /// The time of a row by its time field, in ms (a timestamp rounded down to its
    /// millisecond); `None` without a time field.
    #[cfg_attr(debug_assertions, inline)]
    fn row_time(&self, values: &[Value]) -> Result<Option<i64>, TimelineError> {
        let Some((field, index)) = &self.time_field else {
            return Ok(None);
        };
        let no_time = |reason: String| TimelineError::NoRowTime {
            field: field.clone(),
            reason,
        };
        let ms = match values.get(*index) {
            None => return Err(no_time(format!("the row has {} values", values.len()))),
            Some(Value::Uint(v)) => i64::try_from(*v).ok(),
            Some(Value::Int(v)) => i64::try_from(*v).ok(),
            Some(Value::Timestamp(ns)) => i64::try_from(ns.div_euclid(1_000_000)).ok(),
            Some(Value::Null) => return Err(no_time("it is null".to_owned())),
            Some(other) => {
                return Err(no_time(format!("{other:?} is not a time")));
            }
        };
        ms.map(Some)
            .ok_or_else(|| no_time("it lies beyond the ms an i64 counts".to_owned()))
    }

    /// The key of a row placed by its own time field ([`Timeline::with_time_field`]): as
    /// [`Timeline::encode`] at the time the field holds.
    ///
    /// # Errors
    ///
    /// [`TimelineError::NoTimeField`] without a time field; [`TimelineError::NoRowTime`] for a
    /// row whose field holds no time; as [`Timeline::encode`].
    #[cfg_attr(debug_assertions, inline)]
    pub fn place(&self, values: &[Value]) -> Result<Placed<'_>, TimelineError> {
        let time_ms = self.row_time(values)?.ok_or(TimelineError::NoTimeField)?;
        self.encode(time_ms, values)
    }

    /// A timeline of `schedule`'s periods (a table a month or a day, [`Schedule::calendar`]),
    /// each in its own table under `layout`: a calendar of tables for any store.
    ///
    /// # Errors
    ///
    /// As [`Timeline::new`].
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{Layout, Value, schedule::{Every, Schedule}, timeline::Timeline};
    ///
    /// let layout: Layout = "card: u32; ts: u64; form=binary".parse()?;
    /// let months = Schedule::calendar(Every::Month, "purchases", (2026, 1, 1), 12)?;
    /// let timeline = Timeline::from_schedule(&months, &layout)?.with_time_field("ts")?;
    /// let feb = 1_769_904_000_000u64; // 2026-02-01
    /// let placed = timeline.place(&[Value::from(7u32), Value::from(feb + 5)])?;
    /// assert_eq!(placed.table, "purchases_2026_02");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg_attr(debug_assertions, inline)]
    pub fn from_schedule(schedule: &Schedule, layout: &Layout) -> Result<Self, TimelineError> {
        Self::new(
            schedule
                .periods()
                .iter()
                .map(|(table, start)| Period::new(*start, table.clone(), layout.clone()))
                .collect(),
        )
    }

    /// The periods, in time order.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn periods(&self) -> &[Period] {
        &self.periods
    }

    /// The period `index`.
    ///
    /// # Errors
    ///
    /// [`TimelineError::NoSuchPeriod`] when there is none.
    #[cfg_attr(debug_assertions, inline)]
    pub fn period(&self, index: usize) -> Result<&Period, TimelineError> {
        self.periods.get(index).ok_or(TimelineError::NoSuchPeriod {
            index,
            periods: self.periods.len(),
        })
    }

    /// Where period `index` ends (exclusive): its own end, the next period's start, or `None`
    /// for a last period without an end.
    #[cfg_attr(debug_assertions, inline)]
    fn end_of(&self, index: usize) -> Option<i64> {
        self.periods[index]
            .end_ms
            .or_else(|| self.periods.get(index + 1).map(|p| p.start_ms))
    }

    /// The number of the period in force at `time_ms`.
    ///
    /// # Errors
    ///
    /// [`TimelineError::NoPeriod`] before the first period's start or from the last period's end.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{Layout, timeline::{Period, Timeline}};
    ///
    /// let l: Layout = "ts: u64".parse()?;
    /// let t = Timeline::new(vec![Period::new(0, "a", l.clone()), Period::new(100, "b", l).until(200)])?;
    /// assert_eq!((t.period_at(99)?, t.period_at(100)?), (0, 1));
    /// assert!(t.period_at(-1).is_err() && t.period_at(200).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg_attr(debug_assertions, inline)]
    pub fn period_at(&self, time_ms: i64) -> Result<usize, TimelineError> {
        let Some(index) = period_at(&self.periods, |p| p.start_ms, time_ms) else {
            return Err(TimelineError::NoPeriod {
                time_ms,
                reason: format!("the first period starts at {} ms", self.periods[0].start_ms),
            });
        };
        match self.end_of(index) {
            Some(end) if time_ms >= end => Err(TimelineError::NoPeriod {
                time_ms,
                reason: format!("the last period ends at {end} ms"),
            }),
            _ => Ok(index),
        }
    }

    /// The key of a row at `time_ms` with `values`: the period in force then, its table, and
    /// the key its layout writes behind its key prefix, in the layout's form
    /// ([`Layout::encode_bytes`]). With a time field ([`Timeline::with_time_field`]), the row's
    /// field must pick the same period.
    ///
    /// # Errors
    ///
    /// [`TimelineError::NoPeriod`] for a time no period covers; [`TimelineError::TimeDisagrees`]
    /// for a time whose period is not the row's time field's; [`TimelineError::NoRowTime`];
    /// [`TimelineError::Key`] with the layout's error for values it refuses.
    #[cfg_attr(debug_assertions, inline)]
    pub fn encode(&self, time_ms: i64, values: &[Value]) -> Result<Placed<'_>, TimelineError> {
        let period = self.period_at(time_ms)?;
        if let Some(field_ms) = self.row_time(values)? {
            let field_period = self.period_at(field_ms)?;
            if field_period != period {
                return Err(TimelineError::TimeDisagrees {
                    field: self.time_field().unwrap_or_default().to_owned(),
                    time_ms,
                    period,
                    field_ms,
                    field_period,
                });
            }
        }
        let p = &self.periods[period];
        let mut key = p.key_prefix.as_bytes().to_vec();
        p.layout
            .encode_bytes_into(values, &mut key)
            .map_err(|error| TimelineError::Key { period, error })?;
        Ok(Placed {
            period,
            table: &p.table,
            key,
        })
    }

    /// The values of `key`, a store key (key prefix included) of period `period`, in its
    /// layout's form: bytes, or a text key as `&str` (anything that is bytes).
    ///
    /// # Errors
    ///
    /// [`TimelineError::NoSuchPeriod`]; [`TimelineError::Key`] for a key without the period's key
    /// prefix ([`Error::PrefixMismatch`]) or one its layout does not decode.
    #[cfg_attr(debug_assertions, inline)]
    pub fn decode(
        &self,
        period: usize,
        key: impl AsRef<[u8]>,
    ) -> Result<Vec<Value>, TimelineError> {
        let p = self.period(period)?;
        let key = key.as_ref();
        let Some(rest) = key.strip_prefix(p.key_prefix.as_bytes()) else {
            let position = key
                .iter()
                .zip(p.key_prefix.bytes())
                .take_while(|(a, b)| **a == *b)
                .count();
            let found = &key[..key.len().min(p.key_prefix.len())];
            return Err(TimelineError::Key {
                period,
                error: Error::PrefixMismatch {
                    position,
                    found: String::from_utf8_lossy(found).into_owned(),
                    expected: p.key_prefix.clone(),
                },
            });
        };
        p.layout
            .decode_bytes(rest)
            .map_err(|error| TimelineError::Key { period, error })
    }

    /// Compares two rows' values in the typed order every period shares: field by field,
    /// descending fields reversed (the order a single table of any of the layouts keeps).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::cmp::Ordering;
    /// use pk_codec::{Layout, Value, timeline::{Period, Timeline}};
    ///
    /// let t = Timeline::new(vec![Period::new(0, "t", "a: u32; b: u32 desc".parse::<Layout>()?)])?;
    /// let cmp = t.compare(&[Value::Uint(1), Value::Uint(5)], &[Value::Uint(1), Value::Uint(9)]);
    /// assert_eq!(cmp, Ordering::Greater);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn compare(&self, a: &[Value], b: &[Value]) -> Ordering {
        let fields = self.periods[0].layout.fields();
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            let o = x.cmp(y);
            let o = match fields.get(i).map(|f| f.spec().order()) {
                Some(Order::Desc) => o.reverse(),
                _ => o,
            };
            if o != Ordering::Equal {
                return o;
            }
        }
        a.len().cmp(&b.len())
    }

    /// The key spaces a read over `span` (ms, `[start, end)`) must visit, with their key ranges:
    /// the keys whose leading fields equal `prefix` and whose next field lies within `lower` and
    /// `upper` (as [`Layout::byte_ranges`], in each layout's form), in each period the span
    /// touches. Periods the span does
    /// not touch are skipped; periods that share a key space (same table, key prefix and
    /// layout) are one visit. An empty span visits nothing.
    ///
    /// The span picks the periods to read; it does not filter rows by time (bound a time field
    /// of the key for that).
    ///
    /// # Errors
    ///
    /// [`TimelineError::Key`] with the layout's error ([`Layout::byte_ranges`]) for a period whose
    /// layout cannot answer the read (a hash prefix over the whole key) or values it refuses.
    #[cfg_attr(debug_assertions, inline)]
    pub fn ranges(
        &self,
        span: Range<i64>,
        prefix: &[Value],
        lower: Bound<&Value>,
        upper: Bound<&Value>,
    ) -> Result<Vec<Visit>, TimelineError> {
        let mut visits: Vec<Visit> = Vec::new();
        if span.is_empty() {
            return Ok(visits);
        }
        for (period, p) in self.periods.iter().enumerate() {
            let touched =
                p.start_ms < span.end && self.end_of(period).is_none_or(|e| span.start < e);
            if !touched {
                continue;
            }
            if let Some(v) = visits
                .iter_mut()
                .find(|v| v.table == p.table && v.key_prefix == p.key_prefix)
            {
                v.periods.push(period);
                continue;
            }
            let space_ranges = p
                .layout
                .byte_ranges(prefix, lower, upper)
                .map_err(|error| TimelineError::Key { period, error })?;
            let key_prefix = p.key_prefix.as_bytes();
            let ranges = space_ranges
                .iter()
                .map(|r| ByteRange {
                    start: [key_prefix, &r.start].concat(),
                    end: match &r.end {
                        Some(e) => Some([key_prefix, e].concat()),
                        None => after_all_bytes_starting_with(key_prefix),
                    },
                })
                .collect();
            visits.push(Visit {
                periods: vec![period],
                table: p.table.clone(),
                key_prefix: p.key_prefix.clone(),
                space_ranges,
                ranges,
            });
        }
        Ok(visits)
    }
}
