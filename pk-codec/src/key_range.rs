//! [`KeyRange`]: the `[start, end)` string range a store's range read takes. Plain data, below
//! the prefixes (a bucket prefix's per-bucket ranges) and [`RangeBuilder`](crate::RangeBuilder),
//! which both answer it.

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

/// A range of keys: `start` inclusive, `end` exclusive, `end == None` for no upper bound (a
/// store's `INF_MAX`). Both are plain strings, ready for a store's range read.
///
/// # Examples
///
/// ```
/// use pk_codec::{Layout, Value};
/// use std::ops::Bound;
///
/// let layout: Layout = "device_id: u32 width=6; seller_id: str; card_id: u64 width=6".parse()?;
/// // All keys with a DeviceID in [15, 100):
/// let range = layout.range(&[], Bound::Included(&Value::from(15u32)), Bound::Excluded(&Value::from(100u32)))?;
/// assert_eq!(range.start, "000015");
/// assert_eq!(range.end.as_deref(), Some("000100"));
/// assert!(range.contains("000054,a100,006777"));
/// assert!(!range.contains("000167,a101,283408"));
/// # Ok::<(), pk_codec::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct KeyRange {
    /// The first key in the range (inclusive).
    pub start: String,
    /// The first key after the range (exclusive), or `None` for no upper bound.
    pub end: Option<String>,
}

impl KeyRange {
    /// Whether `key` lies in the range.
    #[must_use]
    pub fn contains(&self, key: &str) -> bool {
        key >= self.start.as_str() && self.end.as_deref().is_none_or(|end| key < end)
    }

    /// Whether the range holds no key at all.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.end
            .as_deref()
            .is_some_and(|end| end <= self.start.as_str())
    }
}

/// The smallest string above every string that starts with `s`, or `None` for `""`.
/// Only used on text whose last byte is ASCII below 0x7F (a digit, or a delimiter, which the
/// rulebook keeps below 0x7F: `rules::check_delimiter`), so the increment stays ASCII and never
/// overflows (the mistake of incrementing a 0xFF byte cannot happen here).
pub(crate) fn after_all_starting_with(s: &str) -> Option<String> {
    let last = *s.as_bytes().last()?;
    debug_assert!(last < 0x7f);
    let mut out = s[..s.len() - 1].to_owned();
    out.push(char::from(last + 1));
    Some(out)
}
