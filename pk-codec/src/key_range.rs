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

/// The `[start, end)` byte range a store's range read takes: what a binary layout's typed
/// ranges answer ([`Layout::byte_ranges`](crate::Layout::byte_ranges)), and a text layout's as
/// their UTF-8 bytes. `end: None` reads to the end of the key space.
///
/// # Examples
///
/// ```
/// use pk_codec::{ByteRange, Form, Layout, Value};
/// use std::ops::Bound::{Excluded, Included};
///
/// let layout = "device_id: u32; ts: u64".parse::<Layout>()?.with_form(Form::Binary);
/// let ranges = layout.byte_ranges(&[Value::from(54u32)], Included(&Value::from(10u64)), Excluded(&Value::from(20u64)))?;
/// assert_eq!(ranges.len(), 1);
/// let key = |ts: u64| layout.encode_bytes(&[Value::from(54u32), Value::from(ts)]).unwrap();
/// assert!(ranges[0].contains(&key(10)) && ranges[0].contains(&key(19)));
/// assert!(!ranges[0].contains(&key(20)) && !ranges[0].contains(&key(9)));
/// # Ok::<(), pk_codec::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct ByteRange {
    /// The first key of the range (included).
    pub start: Vec<u8>,
    /// The key after the last one (excluded), or `None` for the end of the key space.
    pub end: Option<Vec<u8>>,
}

impl ByteRange {
    /// Whether `key` lies in the range.
    #[must_use]
    pub fn contains(&self, key: &[u8]) -> bool {
        key >= self.start.as_slice() && self.end.as_deref().is_none_or(|end| key < end)
    }

    /// Whether the range holds no key.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.end
            .as_deref()
            .is_some_and(|end| end <= self.start.as_slice())
    }
}

impl From<KeyRange> for ByteRange {
    /// The text range's bytes: a text key's UTF-8 bytes sort as the text does.
    fn from(r: KeyRange) -> Self {
        Self {
            start: r.start.into_bytes(),
            end: r.end.map(String::into_bytes),
        }
    }
}

/// The first byte string after every one that starts with `b`: `b` without its trailing `0xff`
/// bytes, its last byte incremented; `None` when there is none (`b` empty or all `0xff`).
pub(crate) fn after_all_bytes_starting_with(b: &[u8]) -> Option<Vec<u8>> {
    let keep = b.iter().rposition(|&x| x != 0xff)?;
    let mut out = b[..=keep].to_vec();
    out[keep] += 1;
    Some(out)
}
