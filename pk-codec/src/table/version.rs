//! Versions, TTL, max versions, clocks and the read filters over versions.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use super::error::TableError;
use super::options::TableOptions;
use super::row::CellRef;
use super::schema::{
    Attribute, AttributeValue, Cell, MAX_ATTRIBUTE_BYTES, cell_size, check_column_name,
};

/// The time source of a table, in milliseconds since the Unix epoch.
///
/// Inject a [`ManualClock`] to make tests and replays exact.
pub trait Clock: Send + Sync {
    /// The current time in ms since the epoch.
    fn now_ms(&self) -> i64;
}

/// The system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    #[inline]
    fn now_ms(&self) -> i64 {
        // Seconds and milliseconds apart: `as_millis` works in u128, a cost on every write.
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| {
            i64::try_from(d.as_secs())
                .unwrap_or(i64::MAX / 1000)
                .saturating_mul(1000)
                .saturating_add(i64::from(d.subsec_millis()))
        })
    }
}

/// A clock that moves only when told; clones share the same time.
///
/// # Examples
///
/// ```
/// use pk_codec::table::{Clock, ManualClock};
///
/// let clock = ManualClock::new(1_000);
/// let shared = clock.clone();
/// clock.advance(500);
/// assert_eq!(shared.now_ms(), 1_500);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ManualClock(Arc<AtomicI64>);

impl ManualClock {
    /// A clock showing `now_ms`.
    #[must_use]
    pub fn new(now_ms: i64) -> Self {
        Self(Arc::new(AtomicI64::new(now_ms)))
    }

    /// Sets the time.
    pub fn set(&self, now_ms: i64) {
        self.0.store(now_ms, Ordering::Relaxed);
    }

    /// Moves the time by `ms` (may be negative), stopping at the ends of time (`i64::MIN`,
    /// `i64::MAX`) rather than wrapping round to the other end.
    pub fn advance(&self, ms: i64) {
        let _ = self
            .0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |t| {
                Some(t.saturating_add(ms))
            });
    }
}

impl Clock for ManualClock {
    #[inline]
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::Relaxed)
    }
}

impl<F: Fn() -> i64 + Send + Sync> Clock for F {
    fn now_ms(&self) -> i64 {
        self()
    }
}

/// A half-open range of versions `[start_ms, end_ms)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeRange {
    /// First version included, ms.
    pub start_ms: i64,
    /// First version excluded, ms.
    pub end_ms: i64,
}

/// What a read returns of each row: which columns, and which versions.
///
/// By default: all columns, newest version only. `max_versions` and `time_range` exclude each
/// other.
///
/// # Examples
///
/// ```
/// use pk_codec::table::ReadOptions;
///
/// let opts = ReadOptions::default().columns(["amount"]).max_versions(3);
/// assert_eq!(opts.max_versions, Some(3));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Only these columns (`None`, or no names: all, as Tablestore reads every column when
    /// `columns_to_get` is empty).
    pub columns: Option<Vec<String>>,
    /// At most this many versions per column, newest first.
    pub max_versions: Option<u32>,
    /// Only versions in this range (all of them).
    pub time_range: Option<TimeRange>,
}

impl ReadOptions {
    /// Reads only the named columns; no names reads every column (as Tablestore does).
    #[must_use]
    pub fn columns<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.columns = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Reads up to `n` versions per column.
    #[must_use]
    pub fn max_versions(mut self, n: u32) -> Self {
        self.max_versions = Some(n);
        self
    }

    /// Reads every version in `[start_ms, end_ms)`.
    #[must_use]
    pub fn time_range(mut self, start_ms: i64, end_ms: i64) -> Self {
        self.time_range = Some(TimeRange { start_ms, end_ms });
        self
    }

    pub(crate) fn check(&self) -> Result<(), TableError> {
        match (self.max_versions, self.time_range) {
            (Some(_), Some(_)) => Err(TableError::ConflictingReadOptions),
            (Some(0), None) => Err(TableError::InvalidMaxVersions { max_versions: 0 }),
            (None, Some(r)) if r.start_ms >= r.end_ms => Err(TableError::InvalidTimeRange {
                start: r.start_ms,
                end: r.end_ms,
            }),
            _ => Ok(()),
        }
    }
}

/// The version rules of a table, fixed at creation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct VersionPolicy {
    pub(crate) max_versions: usize,
    /// Seconds, or -1 for never.
    pub(crate) ttl_seconds: i64,
    pub(crate) max_version_offset_seconds: i64,
}

impl VersionPolicy {
    /// The version rules of a table created with `options`.
    pub(crate) fn of(options: &TableOptions) -> Self {
        Self {
            max_versions: options.max_versions as usize,
            ttl_seconds: options.ttl_seconds,
            max_version_offset_seconds: options.max_version_offset_seconds,
        }
    }

    /// The cells a put of `attributes` at `now_ms` stores: checked, their versions filled in
    /// from `now_ms`, as written when they are in the stored order already, else ordered by
    /// (name, newest first) with the last write of a repeated (name, version) kept and at most
    /// `max_versions` per column. What the table stores and what the judge counts.
    pub(crate) fn stored_cells<'a>(
        &self,
        attributes: Cow<'a, [Attribute]>,
        now_ms: i64,
    ) -> Result<StoredCells<'a>, TableError> {
        self.check_attributes(&attributes, now_ms)?;
        Ok(if self.stored_as_written(&attributes, now_ms) {
            StoredCells::AsWritten { attributes, now_ms }
        } else {
            StoredCells::Normalized(self.cells_of_checked(attributes.into_owned(), now_ms))
        })
    }

    /// The lowest live second at `now_ms`: versions with `v / 1000` below it are expired.
    #[inline]
    pub(crate) fn live_from_seconds(&self, now_ms: i64) -> i64 {
        if self.ttl_seconds < 0 {
            i64::MIN
        } else {
            now_ms.div_euclid(1000).saturating_sub(self.ttl_seconds)
        }
    }

    /// Whether a cell of `version` ms is live at `now_ms`.
    #[inline]
    pub(crate) fn is_live(version: i64, live_from: i64) -> bool {
        version.div_euclid(1000) >= live_from
    }

    /// Checks written attributes: names, sizes, and the version window at `now_ms`.
    pub(crate) fn check_attributes(
        &self,
        attrs: &[Attribute],
        now_ms: i64,
    ) -> Result<(), TableError> {
        let now_s = now_ms.div_euclid(1000);
        let min_s = now_s
            .saturating_sub(self.max_version_offset_seconds)
            .max(self.live_from_seconds(now_ms));
        let max_s = now_s.saturating_add(self.max_version_offset_seconds);
        for a in attrs {
            check_column_name(&a.name)?;
            let len = a.value.size();
            if len > MAX_ATTRIBUTE_BYTES {
                return Err(TableError::AttributeTooLarge {
                    column: a.name.clone(),
                    len,
                    max: MAX_ATTRIBUTE_BYTES,
                });
            }
            if let Some(v) = a.version {
                let s = v.div_euclid(1000);
                if s < min_s || s >= max_s {
                    return Err(TableError::VersionOutOfRange {
                        column: a.name.clone(),
                        version: v,
                        min_seconds: min_s,
                        max_seconds: max_s,
                    });
                }
            }
        }
        Ok(())
    }

    /// Whether checked attributes, versions filled in from `now_ms`, are stored as they are:
    /// ordered by (name, newest first), no (name, version) twice, at most `max_versions` per
    /// column (`max_versions` is at least 1: a single attribute is stored as it is).
    pub(crate) fn stored_as_written(&self, attrs: &[Attribute], now_ms: i64) -> bool {
        let mut count = 1usize;
        attrs.windows(2).all(|w| {
            let (a, b) = (&w[0], &w[1]);
            match a.name.cmp(&b.name) {
                std::cmp::Ordering::Less => {
                    count = 1;
                    true
                }
                std::cmp::Ordering::Equal => {
                    count += 1;
                    a.version.unwrap_or(now_ms) > b.version.unwrap_or(now_ms)
                        && count <= self.max_versions
                }
                std::cmp::Ordering::Greater => false,
            }
        })
    }

    /// Turns written attributes into stored cells: checks names and sizes, fills in versions
    /// from `now_ms`, checks the version window, orders by (name, newest first), keeps the last
    /// write of a repeated (name, version) and at most `max_versions` per column.
    pub(crate) fn cells_from_attributes(
        &self,
        attrs: Vec<Attribute>,
        now_ms: i64,
    ) -> Result<Vec<Cell>, TableError> {
        // Check everything first, then convert in place (the allocation is reused).
        self.check_attributes(&attrs, now_ms)?;
        Ok(self.cells_of_checked(attrs, now_ms))
    }

    /// [`VersionPolicy::cells_from_attributes`] of checked attributes.
    fn cells_of_checked(&self, attrs: Vec<Attribute>, now_ms: i64) -> Vec<Cell> {
        let mut cells: Vec<Cell> = attrs
            .into_iter()
            .map(|a| Cell {
                name: a.name,
                version: a.version.unwrap_or(now_ms),
                value: a.value,
            })
            .collect();
        if cells.len() > 1 {
            normalize(&mut cells, self.max_versions);
        }
        cells
    }
}

/// The cells one put stores ([`VersionPolicy::stored_cells`]), in the stored order.
pub(crate) enum StoredCells<'a> {
    /// The attributes as written, their missing versions `now_ms`.
    AsWritten {
        attributes: Cow<'a, [Attribute]>,
        now_ms: i64,
    },
    /// The attributes ordered, deduplicated and trimmed.
    Normalized(Vec<Cell>),
}

impl StoredCells<'_> {
    /// Each cell's name, version and value, in the stored order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, i64, &AttributeValue)> + Clone {
        // One of the two is empty: a chain of both needs no boxed or enum iterator.
        let (written, now_ms, cells): (&[Attribute], i64, &[Cell]) = match self {
            Self::AsWritten { attributes, now_ms } => (attributes, *now_ms, &[]),
            Self::Normalized(cells) => (&[], 0, cells),
        };
        written
            .iter()
            .map(move |a| (a.name.as_str(), a.version.unwrap_or(now_ms), &a.value))
            .chain(cells.iter().map(|c| (c.name.as_str(), c.version, &c.value)))
    }

    /// Bytes the cells take in the size accounting ([`cell_size`] each).
    pub(crate) fn bytes(&self) -> usize {
        self.iter()
            .map(|(name, _, value)| cell_size(name, value))
            .sum()
    }
}

/// Orders cells by name, newest first; a repeated (name, version) keeps its last write;
/// each column keeps at most `max_versions` cells.
pub(crate) fn normalize(cells: &mut Vec<Cell>, max_versions: usize) {
    // Stable sort, then reverse runs so that the last write of a (name, version) comes first.
    let mut idx: Vec<usize> = (0..cells.len()).collect();
    idx.sort_by(|&a, &b| {
        cells[a]
            .name
            .cmp(&cells[b].name)
            .then(cells[b].version.cmp(&cells[a].version))
            .then(b.cmp(&a))
    });
    let mut taken: Vec<Option<Cell>> = std::mem::take(cells).into_iter().map(Some).collect();
    let mut count = 0usize;
    for i in idx {
        let Some(c) = taken[i].take() else { continue };
        if let Some(last) = cells.last() {
            if last.name == c.name {
                if last.version == c.version || count >= max_versions {
                    continue;
                }
                count += 1;
            } else {
                count = 1;
            }
        } else {
            count = 1;
        }
        cells.push(c);
    }
}

/// Applies read options to a row's stored cells (already ordered), skipping expired ones.
pub(crate) fn select_cells<'a>(
    cells: impl Iterator<Item = CellRef<'a>>,
    opts: &ReadOptions,
    live_from: i64,
    out: &mut Vec<Cell>,
) {
    select_cells_with(cells, opts, live_from, |c| out.push(c.to_cell()));
}

/// [`select_cells`], handing each selected cell to `f`.
#[inline]
pub(crate) fn select_cells_with<'a>(
    cells: impl Iterator<Item = CellRef<'a>>,
    opts: &ReadOptions,
    live_from: i64,
    mut f: impl FnMut(CellRef<'a>),
) {
    let per_column = match (opts.time_range, opts.max_versions) {
        (Some(_), _) => usize::MAX,
        (None, Some(n)) => n as usize,
        (None, None) => 1,
    };
    let mut current: Option<&[u8]> = None;
    let mut count = 0usize;
    for c in cells {
        if !VersionPolicy::is_live(c.version, live_from) {
            continue;
        }
        if let Some(cols) = &opts.columns
            && !cols.is_empty()
            && !cols.iter().any(|n| n.as_bytes() == c.name)
        {
            continue;
        }
        if let Some(r) = opts.time_range
            && (c.version < r.start_ms || c.version >= r.end_ms)
        {
            continue;
        }
        if current == Some(c.name) {
            count += 1;
        } else {
            current = Some(c.name);
            count = 1;
        }
        if count <= per_column {
            f(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(name: &str, version: i64, v: i64) -> Cell {
        Cell {
            name: name.into(),
            version,
            value: v.into(),
        }
    }

    #[test]
    fn normalize_orders_dedups_and_caps() {
        let mut cells = vec![
            cell("b", 1, 0),
            cell("a", 1, 1),
            cell("a", 3, 2),
            cell("a", 1, 3),
            cell("a", 2, 4),
        ];
        normalize(&mut cells, 2);
        assert_eq!(
            cells,
            vec![cell("a", 3, 2), cell("a", 2, 4), cell("b", 1, 0)]
        );
    }

    #[test]
    fn live_window_uses_seconds() {
        let p = VersionPolicy {
            max_versions: 1,
            ttl_seconds: 86_400,
            max_version_offset_seconds: 86_400,
        };
        let now = 200_000_000;
        let from = p.live_from_seconds(now);
        assert_eq!(from, 200_000 - 86_400);
        assert!(VersionPolicy::is_live(from * 1000, from));
        assert!(!VersionPolicy::is_live(from * 1000 - 1, from));
    }
}
