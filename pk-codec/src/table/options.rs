//! Table options: versions, TTL, split and merge thresholds, load windows, pre-split points.

use super::error::TableError;
use super::schema::PkValue;

/// Default split size: 64 MiB.
pub const DEFAULT_SPLIT_SIZE_BYTES: u64 = 64 * 1024 * 1024;

/// How a table keeps versions and when it splits and merges partitions.
///
/// # Examples
///
/// ```
/// use pk_codec::table::TableOptions;
///
/// let opts = TableOptions::default()
///     .max_versions(3)
///     .ttl_seconds(7 * 86_400)
///     .split_size_bytes(1 << 20)
///     .split_load_ops(10_000)
///     .pre_split(vec!["4".into(), "8".into(), "c".into()]);
/// assert_eq!(opts.max_versions, 3);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableOptions {
    /// Versions kept per attribute column (at least 1; default 1).
    pub max_versions: u32,
    /// Seconds a version lives, at least 86400, or -1 for ever (default -1).
    pub ttl_seconds: i64,
    /// How far (seconds) a written version may be from now (at least 1; default 86400).
    pub max_version_offset_seconds: i64,
    /// Split a partition when it holds more bytes than this (`None`: never by size).
    pub split_size_bytes: Option<u64>,
    /// Split a partition when it serves more operations than this in one load window
    /// (`None`: never by load), at the value that balances the window's sampled operations
    /// once two are sampled (`load_sample_every`).
    pub split_load_ops: Option<u64>,
    /// Merge two neighbours when together they hold at most this many bytes and each served
    /// at most `merge_load_ops` operations in the last window. `None`: a quarter of the split
    /// size. Must be at most half the split size (hysteresis).
    pub merge_size_bytes: Option<u64>,
    /// See `merge_size_bytes`. `None`: a quarter of `split_load_ops`, or 0 without load splits.
    pub merge_load_ops: Option<u64>,
    /// Whether neighbours merge at all (default true). Pre-split points are never merged away.
    pub merge: bool,
    /// Length of a load window in ms (default 1000).
    pub load_window_ms: i64,
    /// Sample one operation in this many for load-split decisions (default 8; 1 samples all).
    pub load_sample_every: u32,
    /// Partition-key values at which the table starts split, strictly increasing.
    pub pre_split: Vec<PkValue>,
    /// The most operations (reads and writes) one partition serves per load window, its
    /// reserved throughput; past it an operation fails with the retryable
    /// [`TableError::PartitionBusy`](super::TableError::PartitionBusy). `None` (the default):
    /// no limit.
    pub partition_capacity_ops: Option<u64>,
}

impl Default for TableOptions {
    fn default() -> Self {
        Self {
            max_versions: 1,
            ttl_seconds: -1,
            max_version_offset_seconds: 86_400,
            split_size_bytes: Some(DEFAULT_SPLIT_SIZE_BYTES),
            split_load_ops: None,
            merge_size_bytes: None,
            merge_load_ops: None,
            merge: true,
            load_window_ms: 1000,
            load_sample_every: 8,
            pre_split: Vec::new(),
            partition_capacity_ops: None,
        }
    }
}

impl TableOptions {
    /// Sets `max_versions`.
    #[must_use]
    pub fn max_versions(mut self, n: u32) -> Self {
        self.max_versions = n;
        self
    }
    /// Sets `ttl_seconds` (-1: never expire).
    #[must_use]
    pub fn ttl_seconds(mut self, s: i64) -> Self {
        self.ttl_seconds = s;
        self
    }
    /// Sets `max_version_offset_seconds`.
    #[must_use]
    pub fn max_version_offset_seconds(mut self, s: i64) -> Self {
        self.max_version_offset_seconds = s;
        self
    }
    /// Splits partitions above `bytes`.
    #[must_use]
    pub fn split_size_bytes(mut self, bytes: u64) -> Self {
        self.split_size_bytes = Some(bytes);
        self
    }
    /// Splits partitions serving more than `ops` operations in one window.
    #[must_use]
    pub fn split_load_ops(mut self, ops: u64) -> Self {
        self.split_load_ops = Some(ops);
        self
    }
    /// Merges neighbours holding at most `bytes` together, each with at most `ops` operations
    /// in the last window.
    #[must_use]
    pub fn merge_below(mut self, bytes: u64, ops: u64) -> Self {
        self.merge_size_bytes = Some(bytes);
        self.merge_load_ops = Some(ops);
        self
    }
    /// Turns merges off.
    #[must_use]
    pub fn no_merge(mut self) -> Self {
        self.merge = false;
        self
    }
    /// Sets the load window length in ms.
    #[must_use]
    pub fn load_window_ms(mut self, ms: i64) -> Self {
        self.load_window_ms = ms;
        self
    }
    /// Samples one operation in `n` for load splits.
    #[must_use]
    pub fn load_sample_every(mut self, n: u32) -> Self {
        self.load_sample_every = n;
        self
    }
    /// Throttles each partition to `ops` operations (reads and writes) per load window, as a
    /// store's reserved throughput does: past it, operations fail with the retryable
    /// [`TableError::PartitionBusy`](super::TableError::PartitionBusy), counted in
    /// [`LoadReport::busy_rejections`](super::LoadReport::busy_rejections).
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::table::{Attribute, ManualClock, Table, TableError, TableOptions, Schema};
    ///
    /// let clock = ManualClock::new(1_700_000_000_000);
    /// let options = TableOptions::default().throttle_ops_per_window(2);
    /// let table = Table::with_clock(Schema::single_string("pk")?, options, clock.clone())?;
    /// table.put("a", vec![Attribute::new("n", 1)])?;
    /// table.put("b", vec![Attribute::new("n", 1)])?;
    /// let busy = table.put("c", vec![Attribute::new("n", 1)]).unwrap_err();
    /// assert!(matches!(busy, TableError::PartitionBusy { capacity: 2, .. }) && busy.is_retryable());
    /// clock.advance(1_000); // the next load window
    /// table.put("c", vec![Attribute::new("n", 1)])?;
    /// assert_eq!(table.report().busy_rejections, 1);
    /// # Ok::<(), TableError>(())
    /// ```
    #[must_use]
    pub const fn throttle_ops_per_window(mut self, ops: u64) -> Self {
        self.partition_capacity_ops = Some(ops);
        self
    }

    /// Starts the table split at these partition-key values (strictly increasing).
    #[must_use]
    pub fn pre_split(mut self, points: Vec<PkValue>) -> Self {
        self.pre_split = points;
        self
    }

    /// The merge size in force.
    pub(crate) fn effective_merge_size(&self) -> Option<u64> {
        if !self.merge {
            return None;
        }
        self.merge_size_bytes
            .or_else(|| self.split_size_bytes.map(|s| s / 4))
    }

    /// The merge load in force.
    pub(crate) fn effective_merge_ops(&self) -> u64 {
        self.merge_load_ops
            .unwrap_or_else(|| self.split_load_ops.map_or(0, |o| o / 4))
    }

    /// Checks the options (pre-split points are checked against the schema by the table).
    pub(crate) fn check(&self) -> Result<(), TableError> {
        let bad = |option, value: i128, reason| {
            Err(TableError::InvalidOption {
                option,
                value,
                reason,
            })
        };
        if self.max_versions == 0 {
            return bad("max_versions", 0, "must be at least 1");
        }
        if self.ttl_seconds != -1 && self.ttl_seconds < 86_400 {
            return bad(
                "ttl_seconds",
                i128::from(self.ttl_seconds),
                "must be -1 (never) or at least 86400",
            );
        }
        if self.max_version_offset_seconds < 1 {
            return bad(
                "max_version_offset_seconds",
                i128::from(self.max_version_offset_seconds),
                "must be at least 1",
            );
        }
        if self.split_size_bytes == Some(0) {
            return bad("split_size_bytes", 0, "must be above 0");
        }
        if self.split_load_ops == Some(0) {
            return bad("split_load_ops", 0, "must be above 0");
        }
        if let (Some(m), Some(s)) = (self.merge_size_bytes, self.split_size_bytes)
            && self.merge
            && m > s / 2
        {
            return bad(
                "merge_size_bytes",
                i128::from(m),
                "must be at most half of split_size_bytes",
            );
        }
        if let (Some(m), Some(s)) = (self.merge_load_ops, self.split_load_ops)
            && self.merge
            && m > s / 2
        {
            return bad(
                "merge_load_ops",
                i128::from(m),
                "must be at most half of split_load_ops",
            );
        }
        if self.load_window_ms < 1 {
            return bad(
                "load_window_ms",
                i128::from(self.load_window_ms),
                "must be at least 1",
            );
        }
        if self.partition_capacity_ops == Some(0) {
            return bad(
                "partition_capacity_ops",
                0,
                "must be at least 1 (or unset for no throttling)",
            );
        }
        if self.load_sample_every == 0 {
            return bad("load_sample_every", 0, "must be at least 1");
        }
        Ok(())
    }
}
