//! The split and merge rules of the table model, written once: the [`Table`](super::Table)
//! applies them to its rows, and the bounded [`Judge`](super::Judge) to its sketches of them.
//!
//! - A partition splits **by load** when it served more than
//!   [`split_load_ops`](super::TableOptions::split_load_ops) operations in the current load
//!   window and at least [`MIN_LOAD_SAMPLES`] of them were sampled (a split past the threshold
//!   waits for the window's second sample), tried once per partition and window. The cut is
//!   the sampled partition-key value that balances the window's samples ([`load_split_point`]);
//!   when one value holds more than half of them, no split can help and that value is reported
//!   hot. A load split cuts at its samples only, never at the bytes: the bounded judge keeps
//!   the samples as the table does, but not the rows (its byte balance is a sketch's).
//! - A partition splits **by size** when it holds more than
//!   [`split_size_bytes`](super::TableOptions::split_size_bytes) and more than one
//!   partition-key value; the cut balances the bytes, never inside one value.
//! - Neighbours **merge** at a window's close when merging is on, both served at most the merge
//!   load in the window that closed, their bytes together are at most the merge size, and the
//!   boundary between them is not a pre-split point.
//! - Every `load_sample_every`-th write of a partition in a window is sampled.

use super::options::TableOptions;
use super::partition::{Samples, load_split_point};
use super::schema::PkValue;

/// Why a split is tried.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum SplitKind {
    /// The partition holds too many bytes.
    Size,
    /// The partition served too many operations in this window.
    Load,
}

/// Samples a load split needs to cut: with fewer, no value can be told to balance the load (or
/// to hold most of it), so the split waits for the window's next sample.
pub(crate) const MIN_LOAD_SAMPLES: usize = 2;

/// Whether a partition that served `window_ops` operations in a window, and was `tried` for a
/// load split in it already, is due one now: the operations pass the load-split threshold and
/// `samples` (the window's samples kept, asked only then) are at least [`MIN_LOAD_SAMPLES`].
/// The caller marks the partition tried when this holds: a load split is tried once per
/// partition and window.
#[inline]
pub(crate) fn load_split_needed(
    options: &TableOptions,
    window_ops: u64,
    tried: bool,
    samples: impl FnOnce() -> usize,
) -> bool {
    !tried
        && options.split_load_ops.is_some_and(|t| window_ops > t)
        && samples() >= MIN_LOAD_SAMPLES
}

/// Whether a partition of `bytes` bytes is due a size split (`single_value`: whether every row
/// shares one partition-key value, which no split can cut; asked only past the split size).
#[inline]
pub(crate) fn size_split_needed(
    options: &TableOptions,
    bytes: u64,
    single_value: impl FnOnce() -> bool,
) -> bool {
    size_over(options, bytes) && !single_value()
}

/// Whether `bytes` is over the split size (an oversized key value, when one value holds them).
#[inline]
pub(crate) fn size_over(options: &TableOptions, bytes: u64) -> bool {
    options.split_size_bytes.is_some_and(|s| bytes > s)
}

/// Whether the `n`-th write of a partition in a window is sampled.
#[inline]
pub(crate) fn sampled(sample_every: u64, n: u64) -> bool {
    if sample_every.is_power_of_two() {
        n & (sample_every - 1) == 0
    } else {
        n.is_multiple_of(sample_every)
    }
}

/// Where a split of `kind` cuts a partition of `bytes` bytes whose window samples are
/// `samples`, `size_point` giving the point that balances its bytes (a size split's cut; a load
/// split cuts at its samples only); and the value that holds most of the load, with its share,
/// when that is why there is no cut.
pub(crate) fn split_point(
    kind: SplitKind,
    options: &TableOptions,
    bytes: u64,
    samples: &Samples,
    size_point: impl FnOnce() -> Option<PkValue>,
) -> (Option<PkValue>, Option<(PkValue, f64)>) {
    match kind {
        SplitKind::Size => (size_over(options, bytes).then(size_point).flatten(), None),
        SplitKind::Load => load_split_point(samples),
    }
}

/// Whether neighbours that served `ops` operations in the window that closed may merge, with
/// the merge load `max_ops` ([`TableOptions`]' effective merge load), `pinned` telling whether
/// the boundary between them is a pre-split point. They then merge if [`merge_fits`].
#[inline]
pub(crate) fn merge_cold_enough(max_ops: u64, ops: (u64, u64), pinned: bool) -> bool {
    ops.0 <= max_ops && ops.1 <= max_ops && !pinned
}

/// Whether neighbours holding `bytes` together fit the merge size `max_bytes`.
#[inline]
pub(crate) const fn merge_fits(max_bytes: u64, bytes: u64) -> bool {
    bytes <= max_bytes
}
