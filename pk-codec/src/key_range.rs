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
    #[cfg_attr(debug_assertions, inline)]
    pub fn contains(&self, key: &str) -> bool {
        self.contains_bytes(key.as_bytes())
    }

    /// Whether the range holds no key at all.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn is_empty(&self) -> bool {
        holds_no_key(self)
    }
}

/// The smallest string above every string that starts with `s`, or `None` for `""`.
/// Only used on text whose last byte is ASCII below 0x7F (a digit, or a delimiter, which the
/// rulebook keeps below 0x7F: `rules::check_delimiter`), so the increment stays ASCII and never
/// overflows (the mistake of incrementing a 0xFF byte cannot happen here).
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn after_all_starting_with(s: &str) -> Option<String> {
    let last = *s.as_bytes().last()?;
    debug_assert!(last < 0x7f);
    let mut out = s[..s.len() - 1].to_owned();
    out.push(char::from(last + 1));
    Some(out)
}

/// A range of byte keys: `start` inclusive, `end` exclusive, `end == None` for no upper bound.
/// What a store reads when its keys are bytes (a binary [`Layout`](crate::Layout)'s keys); a
/// text [`KeyRange`] converts into the range of its keys' UTF-8 bytes, which holds the same keys
/// (a text key's bytes sort as the text does).
///
/// # Examples
///
/// ```
/// use pk_codec::{ByteRange, KeyRange};
///
/// let bytes = ByteRange::new(vec![0x00, 0x36], Some(vec![0x00, 0x64]));
/// assert!(bytes.contains(&[0x00, 0x36, 0xff]));
/// assert!(!bytes.contains(&[0x00, 0x64]));
/// // Every key that starts with 0x01 0xff: up to 0x02, the next byte string that does not.
/// assert_eq!(ByteRange::starting_with(&[0x01, 0xff]).end, Some(vec![0x02]));
/// let text = KeyRange { start: "000015".into(), end: Some("000100".into()) };
/// assert_eq!(ByteRange::from(text), ByteRange::new(b"000015".to_vec(), Some(b"000100".to_vec())));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct ByteRange {
    /// The first key in the range (inclusive).
    pub start: Vec<u8>,
    /// The first key after the range (exclusive), or `None` for no upper bound.
    pub end: Option<Vec<u8>>,
}

impl ByteRange {
    /// The range `[start, end)`.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub const fn new(start: Vec<u8>, end: Option<Vec<u8>>) -> Self {
        Self { start, end }
    }

    /// Every key that starts with `prefix` (every key for an empty one).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn starting_with(prefix: &[u8]) -> Self {
        Self {
            start: prefix.to_vec(),
            end: after_all_bytes_starting_with(prefix),
        }
    }

    /// Whether `key` lies in the range.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn contains(&self, key: &[u8]) -> bool {
        self.contains_bytes(key)
    }

    /// Whether the range holds no key at all.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn is_empty(&self) -> bool {
        holds_no_key(self)
    }
}

impl ByteRange {
    /// The same keys, each behind `prefix`: the range a read of these keys visits in a store
    /// where they live under `prefix` (a namespace, a table's prefix). A range without an end
    /// ends after every key that starts with `prefix`.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::ByteRange;
    ///
    /// let r = ByteRange::new(vec![1], None).under(b"v2/");
    /// assert_eq!((r.start.as_slice(), r.end.as_deref()), (&b"v2/\x01"[..], Some(&b"v20"[..])));
    /// ```
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn under(&self, prefix: &[u8]) -> Self {
        let (start, end) = bounds_under(prefix, &self.start, self.end.as_deref());
        Self { start, end }
    }

    /// Whether some key lies in both `self` and `other`.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::ByteRange;
    ///
    /// let a = ByteRange::new(vec![1], Some(vec![3]));
    /// assert!(a.overlaps(&ByteRange::new(vec![2], None)));
    /// assert!(!a.overlaps(&ByteRange::new(vec![3], Some(vec![4]))));
    /// ```
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn overlaps(&self, other: &impl KeyBounds) -> bool {
        let below = |start: &[u8], end: Option<&[u8]>| end.is_none_or(|end| start < end);
        !self.is_empty()
            && !holds_no_key(other)
            && below(&self.start, other.end_bytes())
            && below(other.start_bytes(), self.end.as_deref())
    }
}

/// The bounds `[start, end)` with every key behind `prefix` (an unbounded end: after every key
/// that starts with `prefix`). One rule for [`ByteRange::under`] and the stores that keep keys
/// under a prefix.
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn bounds_under(
    prefix: &[u8],
    start: &[u8],
    end: Option<&[u8]>,
) -> (Vec<u8>, Option<Vec<u8>>) {
    let behind = |k: &[u8]| [prefix, k].concat();
    let end = match end {
        Some(e) => Some(behind(e)),
        None => after_all_bytes_starting_with(prefix),
    };
    (behind(start), end)
}

impl From<KeyRange> for ByteRange {
    /// The range of the text keys' UTF-8 bytes: the same keys, in the same order.
    #[cfg_attr(debug_assertions, inline)]
    fn from(range: KeyRange) -> Self {
        Self {
            start: range.start.into_bytes(),
            end: range.end.map(String::into_bytes),
        }
    }
}

/// The bounds of a range a store reads, as bytes: what
/// [`scan_ranges`](crate::store::scan_ranges) and typed scans take, so that they read text
/// [`KeyRange`]s and [`ByteRange`]s alike.
///
/// # Examples
///
/// ```
/// use pk_codec::{ByteRange, KeyBounds, KeyRange};
///
/// let text = KeyRange { start: "a".into(), end: None };
/// assert_eq!((text.start_bytes(), text.end_bytes()), (&b"a"[..], None));
/// let bytes = ByteRange::new(vec![1], Some(vec![2]));
/// assert_eq!(bytes.end_bytes(), Some(&[2u8][..]));
/// ```
pub trait KeyBounds {
    /// The first key of the range (inclusive).
    fn start_bytes(&self) -> &[u8];
    /// The first key after the range (exclusive), or `None` for no upper bound.
    fn end_bytes(&self) -> Option<&[u8]>;
    /// Whether `key` lies in the range.
    #[cfg_attr(debug_assertions, inline)]
    fn contains_bytes(&self, key: &[u8]) -> bool {
        key >= self.start_bytes() && self.end_bytes().is_none_or(|end| key < end)
    }
}

impl KeyBounds for KeyRange {
    #[cfg_attr(debug_assertions, inline)]
    fn start_bytes(&self) -> &[u8] {
        self.start.as_bytes()
    }

    #[cfg_attr(debug_assertions, inline)]
    fn end_bytes(&self) -> Option<&[u8]> {
        self.end.as_deref().map(str::as_bytes)
    }
}

impl KeyBounds for ByteRange {
    #[cfg_attr(debug_assertions, inline)]
    fn start_bytes(&self) -> &[u8] {
        &self.start
    }

    #[cfg_attr(debug_assertions, inline)]
    fn end_bytes(&self) -> Option<&[u8]> {
        self.end.as_deref()
    }
}

impl<T: KeyBounds + ?Sized> KeyBounds for &T {
    #[cfg_attr(debug_assertions, inline)]
    fn start_bytes(&self) -> &[u8] {
        (**self).start_bytes()
    }

    #[cfg_attr(debug_assertions, inline)]
    fn end_bytes(&self) -> Option<&[u8]> {
        (**self).end_bytes()
    }
}

/// Whether `range` holds no key at all: its end at or below its start (text ranges compare as
/// their bytes do).
#[cfg_attr(debug_assertions, inline)]
fn holds_no_key(range: &impl KeyBounds) -> bool {
    range
        .end_bytes()
        .is_some_and(|end| end <= range.start_bytes())
}

/// The smallest byte string above every byte string that starts with `prefix`: `prefix` with
/// its trailing `0xFF` bytes dropped and its last byte then incremented; `None` when there is no
/// such string (an empty prefix, or one of `0xFF` bytes only: every key above it starts with it).
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn after_all_bytes_starting_with(prefix: &[u8]) -> Option<Vec<u8>> {
    let keep = prefix.iter().rposition(|&b| b != 0xff)?;
    let mut out = prefix[..=keep].to_vec();
    out[keep] += 1;
    Some(out)
}
