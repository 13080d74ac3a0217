//! The one error type of the table model.

use std::fmt;

use super::pk_type::PkType;

/// Everything the table model refuses, with what, where and why.
///
/// Messages are lowercase and name the column, row or option at fault.
///
/// # Examples
///
/// ```
/// use pk_codec::table::{PkColumn, PkType, Schema, TableError};
///
/// let err = Schema::new(vec![PkColumn::new("1st", PkType::String)]).unwrap_err();
/// assert!(matches!(err, TableError::InvalidColumnName { .. }));
/// assert_eq!(
///     err.to_string(),
///     "invalid column name \"1st\": the first character must be a letter or '_'"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TableError {
    /// A column name breaks the store's naming rules.
    InvalidColumnName {
        /// The offending name.
        name: String,
        /// Which rule it breaks.
        reason: &'static str,
    },
    /// The schema has no primary-key column or more than four.
    KeyColumnCount {
        /// How many columns were given.
        count: usize,
    },
    /// Two primary-key columns share a name.
    DuplicateKeyColumn {
        /// The repeated name.
        name: String,
    },
    /// A table option is out of its allowed range.
    InvalidOption {
        /// The option's name.
        option: &'static str,
        /// The value given (wide enough for every `u64` and `i64` option).
        value: i128,
        /// The allowed range.
        reason: &'static str,
    },
    /// The partition already served its reserved throughput in this load window
    /// ([`TableOptions::throttle_ops_per_window`](super::TableOptions::throttle_ops_per_window)):
    /// retry later, with backoff.
    PartitionBusy {
        /// The partition's operations per window.
        capacity: u64,
        /// The load window (time in ms divided by the window length).
        window: i64,
    },
    /// A primary key has the wrong number of columns.
    KeyArity {
        /// Columns in the schema.
        expected: usize,
        /// Columns in the key.
        found: usize,
    },
    /// A primary-key value has the wrong type for its column.
    KeyTypeMismatch {
        /// The column's name.
        column: String,
        /// The column's type.
        expected: PkType,
        /// The value's type.
        found: &'static str,
    },
    /// `INF_MIN` or `INF_MAX` was given where a real value is needed (a write or a get).
    InfiniteKeyValue {
        /// The column's name.
        column: String,
    },
    /// A String or Binary primary-key value is over 1 KB.
    KeyValueTooLarge {
        /// The column's name.
        column: String,
        /// The value's length in bytes.
        len: usize,
        /// The limit in bytes.
        max: usize,
    },
    /// An attribute value is over 2 MB.
    AttributeTooLarge {
        /// The column's name.
        column: String,
        /// The value's length in bytes.
        len: usize,
        /// The limit in bytes.
        max: usize,
    },
    /// A written version lies outside `[max(now - offset, now - ttl), now + offset)` (seconds).
    VersionOutOfRange {
        /// The column's name.
        column: String,
        /// The version in milliseconds.
        version: i64,
        /// The lowest allowed second (inclusive).
        min_seconds: i64,
        /// The highest allowed second (exclusive).
        max_seconds: i64,
    },
    /// A read asked for both a number of versions and a time range.
    ConflictingReadOptions,
    /// A read asked for zero versions.
    InvalidMaxVersions {
        /// The number asked for.
        max_versions: u32,
    },
    /// A time range with `start >= end`.
    InvalidTimeRange {
        /// Start, inclusive, ms.
        start: i64,
        /// End, exclusive, ms.
        end: i64,
    },
    /// A range read's row limit is zero.
    InvalidLimit,
    /// A range read's start and end do not match its direction.
    InvalidRange {
        /// Why the range is refused.
        reason: &'static str,
    },
    /// A batch holds more than 200 rows.
    BatchTooManyRows {
        /// Rows in the batch.
        rows: usize,
        /// The limit.
        max: usize,
    },
    /// A batch holds more than 4 MB.
    BatchTooLarge {
        /// Bytes in the batch.
        bytes: usize,
        /// The limit.
        max: usize,
    },
    /// The same primary key appears twice in a batch.
    DuplicateRowInBatch {
        /// Index of the later row.
        index: usize,
        /// Index of the first row with that key.
        first: usize,
    },
    /// A pre-split or sample split point is unusable.
    InvalidSplitPoint {
        /// Position of the point in the list given.
        index: usize,
        /// Why it is refused.
        reason: &'static str,
    },
    /// Drawing a heatmap failed.
    Render {
        /// What the plotting library reported.
        reason: String,
    },
    /// [`Table::replay`](super::Table::replay) was given a clock that is not the table's: set
    /// to an event's time, the table's clock did not follow.
    ForeignClock {
        /// The event's time the clock was set to, in ms.
        set_ms: i64,
        /// The table's time after that, in ms.
        table_ms: i64,
    },
    /// One event of a replayed stream failed.
    Replay {
        /// Position of the event in the stream.
        event: usize,
        /// The error of that event.
        source: Box<Self>,
    },
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidColumnName { name, reason } => {
                write!(f, "invalid column name {name:?}: {reason}")
            }
            Self::KeyColumnCount { count } => write!(
                f,
                "a primary key has 1 to 4 columns, the schema gives {count}"
            ),
            Self::DuplicateKeyColumn { name } => {
                write!(f, "primary-key column {name:?} appears twice in the schema")
            }
            Self::InvalidOption {
                option,
                value,
                reason,
            } => write!(f, "invalid table option {option} = {value}: {reason}"),
            Self::PartitionBusy { capacity, window } => write!(
                f,
                "partition busy: it served its {capacity} operations of load window {window}; retry later"
            ),
            Self::KeyArity { expected, found } => write!(
                f,
                "primary key has {found} columns, the schema has {expected}"
            ),
            Self::KeyTypeMismatch {
                column,
                expected,
                found,
            } => write!(
                f,
                "primary-key column {column:?} is {expected}, the value given is {found}"
            ),
            Self::InfiniteKeyValue { column } => write!(
                f,
                "primary-key column {column:?} holds INF_MIN or INF_MAX, which only range bounds may use"
            ),
            Self::KeyValueTooLarge { column, len, max } => write!(
                f,
                "primary-key column {column:?} value is {len} bytes, over the limit of {max}"
            ),
            Self::AttributeTooLarge { column, len, max } => write!(
                f,
                "attribute column {column:?} value is {len} bytes, over the limit of {max}"
            ),
            Self::VersionOutOfRange {
                column,
                version,
                min_seconds,
                max_seconds,
            } => write!(
                f,
                "version {version} ms of column {column:?} is outside the allowed window \
                 [{min_seconds}, {max_seconds}) seconds (ttl and max version offset)"
            ),
            Self::ConflictingReadOptions => {
                f.write_str("a read takes either a number of versions or a time range, not both")
            }
            Self::InvalidMaxVersions { max_versions } => write!(
                f,
                "a read must ask for at least 1 version, it asks for {max_versions}"
            ),
            Self::InvalidTimeRange { start, end } => write!(
                f,
                "time range [{start}, {end}) is empty: start must be below end"
            ),
            Self::InvalidLimit => f.write_str("a range read's row limit must be above 0"),
            Self::InvalidRange { reason } => write!(f, "invalid range: {reason}"),
            Self::BatchTooManyRows { rows, max } => {
                write!(f, "batch holds {rows} rows, over the limit of {max}")
            }
            Self::BatchTooLarge { bytes, max } => {
                write!(f, "batch holds {bytes} bytes, over the limit of {max}")
            }
            Self::DuplicateRowInBatch { index, first } => write!(
                f,
                "batch row {index} has the same primary key as row {first}"
            ),
            Self::InvalidSplitPoint { index, reason } => {
                write!(f, "split point {index} is refused: {reason}")
            }
            Self::Render { reason } => write!(f, "heatmap drawing failed: {reason}"),
            Self::ForeignClock { set_ms, table_ms } => write!(
                f,
                "the clock given to replay is not the table's: set to {set_ms} ms, the table reads {table_ms} ms (pass the clock the table was made with)"
            ),
            Self::Replay { event, source } => write!(f, "event {event} failed: {source}"),
        }
    }
}

impl TableError {
    /// Whether retrying the same operation later can succeed: only
    /// [`TableError::PartitionBusy`].
    #[must_use]
    pub const fn is_retryable(&self) -> bool {
        matches!(self, Self::PartitionBusy { .. })
    }
}

impl std::error::Error for TableError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Replay { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}
