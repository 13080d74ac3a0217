//! Requests and responses: range reads, updates, batch writes.

use serde::Serialize;

use super::schema::{Attribute, PrimaryKey, Row};
use super::version::ReadOptions;

/// Most rows one range-read response carries.
pub const MAX_RANGE_ROWS: usize = 5000;
/// Most bytes one range-read response carries (cut at a row boundary).
pub const MAX_RANGE_BYTES: usize = 4 * 1024 * 1024;
/// Most rows in one batch write.
pub const MAX_BATCH_ROWS: usize = 200;
/// Most bytes in one batch write.
pub const MAX_BATCH_BYTES: usize = 4 * 1024 * 1024;

/// The direction of a range read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Direction {
    /// Ascending keys: `start < end`.
    Forward,
    /// Descending keys: `start > end`.
    Backward,
}

/// A range read: rows from `start` (inclusive) towards `end` (exclusive).
///
/// # Examples
///
/// ```
/// use pk_codec::table::{PrimaryKey, RangeRequest};
///
/// let all = RangeRequest::forward(PrimaryKey::inf_min(1), PrimaryKey::inf_max(1)).limit(100);
/// assert_eq!(all.limit, Some(100));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeRequest {
    /// First key, inclusive (`INF_MIN` / `INF_MAX` allowed in any column).
    pub start: PrimaryKey,
    /// Last key, exclusive.
    pub end: PrimaryKey,
    /// Ascending or descending.
    pub direction: Direction,
    /// Most rows to return (above 0), `None` for the response caps only.
    pub limit: Option<usize>,
    /// Which columns and versions.
    pub options: ReadOptions,
}

impl RangeRequest {
    /// An ascending read of `[start, end)`.
    #[must_use]
    pub fn forward(start: impl Into<PrimaryKey>, end: impl Into<PrimaryKey>) -> Self {
        Self {
            start: start.into(),
            end: end.into(),
            direction: Direction::Forward,
            limit: None,
            options: ReadOptions::default(),
        }
    }

    /// A descending read from `start` (inclusive) down to `end` (exclusive).
    #[must_use]
    pub fn backward(start: impl Into<PrimaryKey>, end: impl Into<PrimaryKey>) -> Self {
        Self {
            direction: Direction::Backward,
            ..Self::forward(start, end)
        }
    }

    /// Returns at most `n` rows.
    #[must_use]
    pub fn limit(mut self, n: usize) -> Self {
        self.limit = Some(n);
        self
    }

    /// Reads with these options.
    #[must_use]
    pub fn options(mut self, options: ReadOptions) -> Self {
        self.options = options;
        self
    }
}

/// The answer to a range read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RangeResult {
    /// Rows in the read's direction.
    pub rows: Vec<Row>,
    /// Where to start the next read when this one stopped early (limit or response caps).
    pub next_start: Option<PrimaryKey>,
}

/// One change of an update.
#[derive(Debug, Clone, PartialEq)]
pub enum UpdateOp {
    /// Writes a version of a column (other versions stay, up to `max_versions`).
    Put(Attribute),
    /// Deletes every version of a column.
    DeleteColumn(String),
    /// Deletes one version of a column.
    DeleteVersion {
        /// The column.
        name: String,
        /// The version, ms.
        version: i64,
    },
}

/// One row of a batch write.
#[derive(Debug, Clone, PartialEq)]
pub enum RowWrite {
    /// Replaces the row.
    Put {
        /// The row's key.
        key: PrimaryKey,
        /// Its attributes.
        attributes: Vec<Attribute>,
    },
    /// Changes some columns of the row (creating it if needed).
    Update {
        /// The row's key.
        key: PrimaryKey,
        /// The changes.
        ops: Vec<UpdateOp>,
    },
    /// Deletes the row.
    Delete {
        /// The row's key.
        key: PrimaryKey,
    },
}

impl RowWrite {
    /// The row's key.
    #[must_use]
    pub fn key(&self) -> &PrimaryKey {
        match self {
            Self::Put { key, .. } | Self::Update { key, .. } | Self::Delete { key } => key,
        }
    }

    /// Bytes the write carries (key + names + values + 8 per version), for the batch limit.
    #[must_use]
    pub fn size(&self) -> usize {
        let attr = |a: &Attribute| a.name.len() + a.value.size() + 8;
        self.key().size()
            + match self {
                Self::Put { attributes, .. } => attributes.iter().map(attr).sum(),
                Self::Update { ops, .. } => ops
                    .iter()
                    .map(|o| match o {
                        UpdateOp::Put(a) => attr(a),
                        UpdateOp::DeleteColumn(n) => n.len(),
                        UpdateOp::DeleteVersion { name, .. } => name.len() + 8,
                    })
                    .sum(),
                Self::Delete { .. } => 0,
            }
    }
}

/// What [`Table::replay`](super::Table::replay) wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ReplayStats {
    /// Events written.
    pub events: u64,
    /// Bytes written (keys + cells).
    pub bytes: u64,
}
