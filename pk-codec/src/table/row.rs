//! How the table stores a row: its key as one order-preserving ("memcomparable") byte string,
//! and key, size and cells together in one run of bytes.
//!
//! # The key encoding
//!
//! Each column value is a type tag, then its payload; a key is its values one after another:
//!
//! | value | bytes |
//! |---|---|
//! | `INF_MIN` | `01` |
//! | Integer | `02`, then the value with its sign bit flipped, 8 bytes big-endian |
//! | String | `03`, then the bytes with `00` written `00 FF`, then `00 01` |
//! | Binary | `04`, then as a String |
//! | `INF_MAX` | `05` |
//!
//! The tags follow the rank of the variants, the payloads compare like the values, and no
//! value's bytes are a prefix of another value's (the terminator `00 01` cannot occur in an
//! escaped payload), so two keys compare bytewise exactly as [`PrimaryKey`]s do: column by
//! column, and a key that is a prefix of another first.
//!
//! # The row layout
//!
//! `[key length: u16 LE][key][size: u64 LE][cells]`, each cell
//! `[name length: u8][name][version: i64 LE][value tag][value]`, the value 8 bytes LE for an
//! Integer or Double, 1 byte for a Boolean, and `[length: u32 LE][bytes]` for a String or
//! Binary. The rows of a partition lie back to back in a few buffers ([`super::rowset`]), and
//! two keys compare with one `memcmp`.

use super::schema::{AttributeValue, Cell, PkValue, PrimaryKey};
use crate::text;

const TAG_INF_MIN: u8 = 0x01;
const TAG_INTEGER: u8 = 0x02;
const TAG_STRING: u8 = 0x03;
const TAG_BINARY: u8 = 0x04;
const TAG_INF_MAX: u8 = 0x05;

/// How a `00` byte of a String or Binary payload is written, and how the payload ends.
const ESCAPED_ZERO: [u8; 2] = [0x00, 0xFF];
const TERMINATOR: [u8; 2] = [0x00, 0x01];

/// Bytes [`encode_value`] writes for `v` when a String or Binary holds no `00` (each `00`
/// takes one more): a buffer's capacity, not a length.
#[inline]
fn encoded_value_len(v: &PkValue) -> usize {
    match v {
        PkValue::InfMin | PkValue::InfMax => 1,
        PkValue::Integer(_) => 9,
        PkValue::String(s) => 3 + s.len(),
        PkValue::Binary(b) => 3 + b.len(),
    }
}

/// [`encoded_value_len`] of a whole key.
#[inline]
fn encoded_key_len(values: &[PkValue]) -> usize {
    values.iter().map(encoded_value_len).sum()
}

/// Appends the order-preserving encoding of `values` to `out`.
pub(crate) fn encode_key(values: &[PkValue], out: &mut Vec<u8>) {
    for v in values {
        encode_value(v, out);
    }
}

/// The order-preserving encoding of a key, in a buffer of its own.
#[must_use]
pub(crate) fn key_bytes(key: &PrimaryKey) -> Vec<u8> {
    let values = key.values();
    let mut out = Vec::with_capacity(encoded_key_len(values));
    encode_key(values, &mut out);
    out
}

/// Appends the order-preserving encoding of one value to `out`.
#[inline]
pub(crate) fn encode_value(v: &PkValue, out: &mut Vec<u8>) {
    match v {
        PkValue::InfMin => out.push(TAG_INF_MIN),
        PkValue::InfMax => out.push(TAG_INF_MAX),
        PkValue::Integer(i) => {
            out.push(TAG_INTEGER);
            out.extend_from_slice(&(i.cast_unsigned() ^ (1 << 63)).to_be_bytes());
        }
        PkValue::String(s) => encode_escaped(TAG_STRING, s.as_bytes(), out),
        PkValue::Binary(b) => encode_escaped(TAG_BINARY, b, out),
    }
}

/// The index of the first `00` byte of `b`: the word-at-a-time scan that finds a plain string's
/// end ([`text::plain_len`] with `00` as the delimiter: the first byte at or below it). Keys'
/// Strings are a few words long, and this finds each value's end in every stored key a range
/// read or a search decodes.
#[inline]
fn first_zero(b: &[u8]) -> Option<usize> {
    let end = text::plain_len(b, 0);
    (end < b.len()).then_some(end)
}

#[inline]
fn encode_escaped(tag: u8, mut b: &[u8], out: &mut Vec<u8>) {
    // Room for a payload without `00` (each `00` takes one byte more).
    out.reserve(b.len() + 3);
    out.push(tag);
    while let Some(i) = first_zero(b) {
        out.extend_from_slice(&b[..i]);
        out.extend_from_slice(&ESCAPED_ZERO);
        b = &b[i + 1..];
    }
    out.extend_from_slice(b);
    out.extend_from_slice(&TERMINATOR);
}

/// Decodes one value at the start of `b`; returns it and the bytes it took. `None` for bytes
/// that [`encode_key`] does not write.
pub(crate) fn decode_value(b: &[u8]) -> Option<(PkValue, usize)> {
    let (&tag, rest) = b.split_first()?;
    Some(match tag {
        TAG_INF_MIN => (PkValue::InfMin, 1),
        TAG_INF_MAX => (PkValue::InfMax, 1),
        TAG_INTEGER => {
            let bytes: [u8; 8] = rest.get(..8)?.try_into().ok()?;
            let i = (u64::from_be_bytes(bytes) ^ (1 << 63)).cast_signed();
            (PkValue::Integer(i), 9)
        }
        TAG_STRING | TAG_BINARY => {
            let (payload, used) = unescape(rest)?;
            let v = if tag == TAG_STRING {
                PkValue::String(String::from_utf8(payload).ok()?)
            } else {
                PkValue::Binary(payload)
            };
            (v, 1 + used)
        }
        _ => return None,
    })
}

/// The payload of an escaped String or Binary at the start of `b`, and the bytes it took
/// (terminator included).
#[inline]
fn unescape(b: &[u8]) -> Option<(Vec<u8>, usize)> {
    let first = first_zero(b)?;
    // Fast path: no `00` in the payload, one copy.
    if b.get(first + 1) == Some(&TERMINATOR[1]) {
        return Some((b[..first].to_vec(), first + 2));
    }
    let mut out = Vec::with_capacity(b.len());
    let mut at = 0;
    loop {
        let i = at + first_zero(&b[at..])?;
        out.extend_from_slice(&b[at..i]);
        match *b.get(i + 1)? {
            0x01 => return Some((out, i + 2)),
            0xFF => out.push(0),
            _ => return None,
        }
        at = i + 2;
    }
}

/// Bytes the first value of an encoded key takes (its partition-key value), without decoding it.
#[inline]
pub(crate) fn first_value_len(b: &[u8]) -> Option<usize> {
    value_extent(b).map(|(used, _)| used)
}

/// Bytes the first value of an encoded key takes, and the escaped `00`s of its payload (0 but
/// for a String or Binary).
#[inline]
fn value_extent(b: &[u8]) -> Option<(usize, usize)> {
    match *b.first()? {
        TAG_INF_MIN | TAG_INF_MAX => Some((1, 0)),
        TAG_INTEGER => (b.len() >= 9).then_some((9, 0)),
        TAG_STRING | TAG_BINARY => {
            let (mut at, mut escaped) = (1, 0);
            loop {
                let i = at + first_zero(&b[at..])?;
                match *b.get(i + 1)? {
                    0x01 => return Some((i + 2, escaped)),
                    0xFF => (at, escaped) = (i + 2, escaped + 1),
                    _ => return None,
                }
            }
        }
        _ => None,
    }
}

/// Decodes a whole key. `None` for bytes that [`encode_key`] does not write.
pub(crate) fn decode_key(b: &[u8]) -> Option<PrimaryKey> {
    if b.is_empty() {
        return Some(PrimaryKey::new(Vec::new()));
    }
    let (first, used) = decode_value(b)?;
    let mut b = &b[used..];
    if b.is_empty() {
        // One column: no vector.
        return Some(PrimaryKey::from(first));
    }
    let mut values = Vec::with_capacity(2);
    values.push(first);
    while !b.is_empty() {
        let (v, used) = decode_value(b)?;
        values.push(v);
        b = &b[used..];
    }
    Some(PrimaryKey::new(values))
}

/// Bytes the key encoded in `b` takes in the size accounting ([`PrimaryKey::size`] of the
/// decoded key), without decoding it; `None` for bytes that [`encode_key`] does not write.
pub(crate) fn encoded_key_size(mut b: &[u8]) -> Option<usize> {
    let mut size = 0;
    while let Some(&tag) = b.first() {
        let (used, escaped) = value_extent(b)?;
        size += match tag {
            TAG_INTEGER => 8,
            // The payload: the bytes between tag and terminator, less one per escaped `00`.
            TAG_STRING | TAG_BINARY => used - 3 - escaped,
            _ => 0,
        };
        b = &b[used..];
    }
    Some(size)
}

/// Decodes the key encoded in `b` into `key`, reusing its values' buffers; `false` (and `key`
/// unspecified) for bytes that [`encode_key`] does not write.
pub(crate) fn decode_key_into(b: &[u8], key: &mut PrimaryKey) -> bool {
    // A key reused for the rows of one table mostly gets as many values as it holds: decode
    // into them in one pass, and count the values first only when the number differs.
    let held = key.values().len();
    let mut rest = b;
    let mut decoded = 0;
    for v in key.values_mut(held) {
        if rest.is_empty() {
            break;
        }
        let Some(used) = decode_value_into(rest, v) else {
            return false;
        };
        rest = &rest[used..];
        decoded += 1;
    }
    if decoded == held && rest.is_empty() {
        return true;
    }
    let mut n = 0;
    let mut at = 0;
    while at < b.len() {
        let Some(used) = first_value_len(&b[at..]) else {
            return false;
        };
        at += used;
        n += 1;
    }
    let mut b = b;
    for v in key.values_mut(n) {
        let Some(used) = decode_value_into(b, v) else {
            return false;
        };
        b = &b[used..];
    }
    true
}

/// [`decode_value`] into `out`, reusing its buffer when it holds a String or Binary and the
/// payload has no escaped `00`.
fn decode_value_into(b: &[u8], out: &mut PkValue) -> Option<usize> {
    let (&tag, rest) = b.split_first()?;
    if tag == TAG_STRING || tag == TAG_BINARY {
        let first = first_zero(rest)?;
        if rest.get(first + 1) == Some(&TERMINATOR[1]) {
            let payload = &rest[..first];
            match (tag, &mut *out) {
                // Rows read in order often repeat a value (their partition key's): then
                // there is nothing to check or copy.
                (TAG_STRING, PkValue::String(s)) => {
                    if s.as_bytes() != payload {
                        s.clear();
                        s.push_str(std::str::from_utf8(payload).ok()?);
                    }
                }
                (TAG_BINARY, PkValue::Binary(v)) => {
                    v.clear();
                    v.extend_from_slice(payload);
                }
                _ => *out = decode_value(b)?.0,
            }
            return Some(1 + first + 2);
        }
    }
    let (v, used) = decode_value(b)?;
    *out = v;
    Some(used)
}

/// Decodes a key that the table encoded itself (a stored row's, a split point's).
fn decode_own_key(b: &[u8]) -> PrimaryKey {
    decode_key(b).unwrap_or_else(|| {
        debug_assert!(false, "a stored key does not decode: {b:02x?}");
        PrimaryKey::new(Vec::new())
    })
}

// ---- Stored rows. ---------------------------------------------------------------------------

const VALUE_STRING: u8 = 0;
const VALUE_INTEGER: u8 = 1;
const VALUE_DOUBLE: u8 = 2;
const VALUE_BOOLEAN: u8 = 3;
const VALUE_BINARY: u8 = 4;

/// An encoded row, borrowed from the leaf that holds it ([`super::rowset::RowSet`]): key,
/// accounted size and cells (ordered by name, newest first) in the layout of the module docs.
#[derive(Clone, Copy)]
pub(crate) struct RowRef<'a>(&'a [u8]);

impl std::fmt::Debug for RowRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowRef")
            .field("key", &self.decode_key())
            .field("size", &self.size())
            .field(
                "cells",
                &self.cells().map(|c| c.to_cell()).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Encodes the row of `key` holding `cells` (ordered), accounted as `size` bytes, into `out`
/// (cleared first).
pub(crate) fn encode_row(key: &PrimaryKey, cells: &[Cell], size: u64, out: &mut Vec<u8>) {
    encode_row_with(
        key,
        cells.iter().map(|c| (c.name.as_str(), c.version, &c.value)),
        size,
        out,
    );
}

/// [`encode_row`] from borrowed cells: `(name, version, value)`, ordered. Returns the bytes
/// the key's first value (the partition-key value) takes, as [`first_value_len`] would find.
pub(crate) fn encode_row_with<'c>(
    key: &PrimaryKey,
    cells: impl Iterator<Item = (&'c str, i64, &'c AttributeValue)> + Clone,
    size: u64,
    out: &mut Vec<u8>,
) -> usize {
    let values = key.values();
    let cells_len: usize = cells.clone().map(|(n, _, v)| encoded_cell_len(n, v)).sum();
    out.clear();
    // Exact unless the key holds `00` bytes.
    out.reserve(2 + encoded_key_len(values) + 8 + cells_len);
    out.extend_from_slice(&[0, 0]);
    let (first, rest) = values
        .split_first()
        .map_or((None, values), |(f, r)| (Some(f), r));
    if let Some(first) = first {
        encode_value(first, out);
    }
    let partition_len = out.len() - 2;
    encode_key(rest, out);
    let key_len = out.len() - 2;
    // Keys are at most 4 values of at most 1 KB (checked before), so 2 bytes hold the length.
    out[..2].copy_from_slice(&u16::try_from(key_len).unwrap_or(u16::MAX).to_le_bytes());
    out.extend_from_slice(&size.to_le_bytes());
    for (name, version, value) in cells {
        encode_cell(name, version, value, out);
    }
    partition_len
}

impl<'a> RowRef<'a> {
    /// The row encoded in `bytes` (as [`encode_row`] writes it).
    #[inline]
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self(bytes)
    }

    /// The whole encoded row.
    #[inline]
    pub(crate) fn bytes(self) -> &'a [u8] {
        self.0
    }

    #[inline]
    fn key_len(self) -> usize {
        usize::from(u16::from_le_bytes([self.0[0], self.0[1]]))
    }

    /// The encoded key.
    #[inline]
    pub(crate) fn key(self) -> &'a [u8] {
        &self.0[2..2 + self.key_len()]
    }

    /// The encoded partition-key value (the key's first value).
    pub(crate) fn partition_bytes(self) -> &'a [u8] {
        let k = self.key();
        &k[..first_value_len(k).unwrap_or(k.len())]
    }

    /// The partition-key value, decoded.
    pub(crate) fn partition_value(self) -> PkValue {
        decode_partition_value(self.partition_bytes())
    }

    /// The key, decoded.
    pub(crate) fn decode_key(self) -> PrimaryKey {
        decode_own_key(self.key())
    }

    /// Key + cells, in bytes (the size accounting).
    #[inline]
    pub(crate) fn size(self) -> u64 {
        let at = 2 + self.key_len();
        self.0
            .get(at..at + 8)
            .and_then(|s| s.try_into().ok())
            .map_or(0, u64::from_le_bytes)
    }

    /// Where the cells start: after the key's length, the key and the accounted size.
    #[inline]
    fn cells_start(self) -> usize {
        2 + self.key_len() + 8
    }

    /// The cells, in order, borrowed.
    #[inline]
    pub(crate) fn cells(self) -> Cells<'a> {
        Cells(&self.0[self.cells_start()..])
    }

    /// The row without its cells: key and accounted size, to which encoded cells are appended
    /// (each as [`RowRef::cell_bytes`] gives it) to make a row of some of its cells.
    #[inline]
    pub(crate) fn head(self) -> &'a [u8] {
        &self.0[..self.cells_start()]
    }

    /// The encoded bytes of `cell`, one of this row's [`RowRef::cells`]: from its name's length
    /// byte to the end of its value.
    #[inline]
    pub(crate) fn cell_bytes(self, cell: CellRef<'a>) -> &'a [u8] {
        // Both of the cell's slices lie in this row's bytes: their offsets are address
        // differences (no pointer is dereferenced).
        let base = self.0.as_ptr() as usize;
        let start = (cell.name.as_ptr() as usize - base).saturating_sub(1);
        let end = cell.value.as_ptr() as usize - base + cell.value.len();
        &self.0[start..end]
    }

    /// Whether the row has no cells (a key-only row).
    #[inline]
    pub(crate) fn has_no_cells(self) -> bool {
        self.0.len() == self.cells_start()
    }
}

/// The order-preserving encoding of one value, in a buffer of its own.
pub(crate) fn value_bytes(v: &PkValue) -> Vec<u8> {
    let mut out = Vec::with_capacity(encoded_value_len(v));
    encode_value(v, &mut out);
    out
}

/// Decodes an encoded partition-key value that the table encoded itself.
pub(crate) fn decode_partition_value(b: &[u8]) -> PkValue {
    decode_value(b).map_or_else(
        || {
            debug_assert!(false, "a stored value does not decode: {b:02x?}");
            PkValue::InfMin
        },
        |(v, _)| v,
    )
}

fn encoded_cell_len(name: &str, value: &AttributeValue) -> usize {
    1 + name.len()
        + 8
        + 1
        + match value {
            AttributeValue::String(s) => 4 + s.len(),
            AttributeValue::Binary(b) => 4 + b.len(),
            AttributeValue::Integer(_) | AttributeValue::Double(_) => 8,
            AttributeValue::Boolean(_) => 1,
        }
}

fn encode_cell(name: &str, version: i64, value: &AttributeValue, out: &mut Vec<u8>) {
    // Column names are checked: 1 to 255 bytes.
    out.push(u8::try_from(name.len()).unwrap_or(u8::MAX));
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(&version.to_le_bytes());
    let bytes = |tag: u8, b: &[u8], out: &mut Vec<u8>| {
        out.push(tag);
        // Attribute values are checked: at most 2 MB.
        out.extend_from_slice(&u32::try_from(b.len()).unwrap_or(u32::MAX).to_le_bytes());
        out.extend_from_slice(b);
    };
    match value {
        AttributeValue::String(s) => bytes(VALUE_STRING, s.as_bytes(), out),
        AttributeValue::Binary(b) => bytes(VALUE_BINARY, b, out),
        AttributeValue::Integer(i) => {
            out.push(VALUE_INTEGER);
            out.extend_from_slice(&i.to_le_bytes());
        }
        AttributeValue::Double(x) => {
            out.push(VALUE_DOUBLE);
            out.extend_from_slice(&x.to_bits().to_le_bytes());
        }
        AttributeValue::Boolean(x) => {
            out.push(VALUE_BOOLEAN);
            out.push(u8::from(*x));
        }
    }
}

/// One stored cell, borrowed from its row.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CellRef<'a> {
    pub(crate) name: &'a [u8],
    pub(crate) version: i64,
    tag: u8,
    value: &'a [u8],
}

impl CellRef<'_> {
    /// Bytes the cell takes in the size accounting ([`Cell::size`]): a Boolean's value is one
    /// byte, an Integer's or Double's eight, a String's or Binary's its length, as stored.
    #[inline]
    pub(crate) fn size(self) -> usize {
        self.name.len() + self.value.len() + 8
    }

    /// The owned cell, written into `cell` (reusing its name's and value's buffers).
    pub(crate) fn write_to(self, cell: &mut Cell) {
        refill_own_str(&mut cell.name, self.name);
        cell.version = self.version;
        match (self.tag, &mut cell.value) {
            (VALUE_STRING, AttributeValue::String(s)) => refill_own_str(s, self.value),
            (VALUE_BINARY, AttributeValue::Binary(b)) => {
                b.clear();
                b.extend_from_slice(self.value);
            }
            // Only the value: the name was written above (no owned name to build and drop).
            (_, value) => *value = self.to_value(),
        }
    }

    /// The owned value.
    fn to_value(self) -> AttributeValue {
        let eight = || {
            let b: [u8; 8] = self.value.try_into().unwrap_or_default();
            b
        };
        match self.tag {
            VALUE_INTEGER => AttributeValue::Integer(i64::from_le_bytes(eight())),
            VALUE_DOUBLE => AttributeValue::Double(f64::from_bits(u64::from_le_bytes(eight()))),
            VALUE_BOOLEAN => AttributeValue::Boolean(self.value.first() == Some(&1)),
            VALUE_BINARY => AttributeValue::Binary(self.value.to_vec()),
            _ => AttributeValue::String(own_str(self.value)),
        }
    }

    /// The owned cell.
    pub(crate) fn to_cell(self) -> Cell {
        Cell {
            name: own_str(self.name),
            version: self.version,
            value: self.to_value(),
        }
    }
}

/// Text the table wrote from a `String`, borrowed.
fn own_str_ref(b: &[u8]) -> std::borrow::Cow<'_, str> {
    std::str::from_utf8(b).map_or_else(
        |_| {
            debug_assert!(false, "stored text is not UTF-8");
            String::from_utf8_lossy(b)
        },
        std::borrow::Cow::Borrowed,
    )
}

/// Sets `s` to text the table wrote from a `String`, reusing its buffer; checked and copied
/// only when `s` does not hold it already (a read's rows repeat their column names).
#[inline]
fn refill_own_str(s: &mut String, b: &[u8]) {
    if s.as_bytes() != b {
        s.clear();
        s.push_str(&own_str_ref(b));
    }
}

/// Text the table wrote from a `String`, owned again.
fn own_str(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap_or_else(|e| {
        debug_assert!(false, "stored text is not UTF-8");
        String::from_utf8_lossy(e.as_bytes()).into_owned()
    })
}

/// The cells of a stored row, in order.
#[derive(Clone)]
pub(crate) struct Cells<'a>(&'a [u8]);

impl<'a> Iterator for Cells<'a> {
    type Item = CellRef<'a>;

    #[inline]
    fn next(&mut self) -> Option<CellRef<'a>> {
        let b = self.0;
        let (&name_len, rest) = b.split_first()?;
        let name_len = usize::from(name_len);
        let name = rest.get(..name_len)?;
        let rest = &rest[name_len..];
        let version = i64::from_le_bytes(rest.get(..8)?.try_into().ok()?);
        let (&tag, rest) = rest[8..].split_first()?;
        let (value, rest) = match tag {
            VALUE_STRING | VALUE_BINARY => {
                let len = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?) as usize;
                let v = rest.get(4..4 + len)?;
                (v, &rest[4 + len..])
            }
            VALUE_BOOLEAN => rest.split_at_checked(1)?,
            _ => rest.split_at_checked(8)?,
        };
        self.0 = rest;
        Some(CellRef {
            name,
            version,
            tag,
            value,
        })
    }
}

/// The key's sortable bytes, written by this module's encoding (the type lives in `schema.rs`,
/// which stays below the encoding).
impl PrimaryKey {
    /// The key as one byte string that sorts bytewise as the keys sort (the form the table
    /// stores rows under): per value a type tag (INF_MIN, Integer, String, Binary, INF_MAX in
    /// rank order), then an Integer as 8 big-endian bytes with the sign bit flipped, a String or
    /// Binary with each `00` byte written `00 FF` and ended by `00 01`.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::table::{PkValue, PrimaryKey};
    ///
    /// let a = PrimaryKey::new(vec!["dev\0".into(), (-5).into()]);
    /// let b = PrimaryKey::new(vec!["dev\0".into(), PkValue::InfMax]);
    /// assert!(a < b && a.to_sortable_bytes() < b.to_sortable_bytes());
    /// assert_eq!(PrimaryKey::from_sortable_bytes(&a.to_sortable_bytes()), Some(a));
    /// ```
    #[must_use]
    pub fn to_sortable_bytes(&self) -> Vec<u8> {
        key_bytes(self)
    }

    /// The key of bytes made by [`PrimaryKey::to_sortable_bytes`]; `None` for any other bytes.
    #[must_use]
    pub fn from_sortable_bytes(bytes: &[u8]) -> Option<Self> {
        decode_key(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(values: Vec<PkValue>) -> Vec<u8> {
        key_bytes(&PrimaryKey::new(values))
    }

    #[test]
    fn strings_escape_zero_and_end_with_the_terminator() {
        assert_eq!(enc(vec!["a\0b".into()]), [3, b'a', 0, 0xFF, b'b', 0, 1]);
        assert_eq!(enc(vec![PkValue::from(Vec::new())]), [4, 0, 1]);
        assert_eq!(enc(vec![0.into()]), [2, 0x80, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(enc(vec![PkValue::InfMin, PkValue::InfMax]), [1, 5]);
    }

    #[test]
    fn order_and_round_trip_of_edge_values() {
        let values: Vec<PkValue> = vec![
            PkValue::InfMin,
            i64::MIN.into(),
            (-1).into(),
            0.into(),
            i64::MAX.into(),
            "".into(),
            "\0".into(),
            "\0\0".into(),
            "\0\u{1}".into(),
            "\u{1}".into(),
            "a".into(),
            "a\0".into(),
            "\u{7f}".into(),
            // Keys that differ in the last inline bytes (16 to 19) or just after them.
            format!("{}a", "x".repeat(15)).into(),
            format!("{}b", "x".repeat(15)).into(),
            format!("{}a", "x".repeat(18)).into(),
            format!("{}b", "x".repeat(18)).into(),
            format!("{}a", "x".repeat(19)).into(),
            format!("{}b", "x".repeat(19)).into(),
            "x".repeat(30).into(),
            format!("{}\0", "x".repeat(30)).into(),
            format!("{}\0y", "x".repeat(21)).into(),
            format!("{}y", "x".repeat(21)).into(),
            PkValue::Binary(vec![]),
            PkValue::Binary(vec![0]),
            PkValue::Binary(vec![0, 0xFF]),
            PkValue::Binary(vec![0xFF]),
            PkValue::Binary(vec![0xFF, 0]),
            PkValue::InfMax,
        ];
        let keys: Vec<PrimaryKey> = values
            .iter()
            .flat_map(|a| {
                let one = PrimaryKey::new(vec![a.clone()]);
                let two = values
                    .iter()
                    .map(move |b| PrimaryKey::new(vec![a.clone(), b.clone()]));
                std::iter::once(one).chain(two)
            })
            .collect();
        // Decoded into one key after another (reusing its buffers), and sized undecoded.
        let mut reused = PrimaryKey::new(Vec::new());
        for a in &keys {
            let ea = key_bytes(a);
            assert_eq!(decode_key(&ea).as_ref(), Some(a));
            assert!(decode_key_into(&ea, &mut reused));
            assert_eq!(&reused, a);
            assert_eq!(encoded_key_size(&ea), Some(a.size()), "{a:?}");
            let mut ra = Vec::new();
            let partition_len = encode_row_with(a, std::iter::empty(), 0, &mut ra);
            assert_eq!(
                Some(partition_len),
                first_value_len(RowRef::new(&ra).key()),
                "{a:?}"
            );
            for b in &keys {
                assert_eq!(ea.cmp(&key_bytes(b)), a.cmp(b), "{a:?} {b:?}");
                let mut rb = Vec::new();
                encode_row(b, &[], 0, &mut rb);
                let (ka, kb) = (RowRef::new(&ra).key(), RowRef::new(&rb).key());
                assert_eq!(ka.cmp(kb), a.cmp(b), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn a_row_keeps_any_size() {
        let key = PrimaryKey::from("k");
        for size in [
            0,
            1,
            u64::from(u32::MAX) - 1,
            u64::from(u32::MAX),
            5 << 30,
            u64::MAX,
        ] {
            let mut row = Vec::new();
            encode_row(&key, &[], size, &mut row);
            assert_eq!(RowRef::new(&row).size(), size);
        }
    }

    /// One cell of each value kind (string, binary, double, boolean, integer at its minimum),
    /// with these names and versions.
    fn cells_of_every_kind(names: [&str; 5], versions: [i64; 5]) -> Vec<Cell> {
        let values: [AttributeValue; 5] = [
            "x".into(),
            AttributeValue::Binary(vec![0, 1]),
            1.5.into(),
            true.into(),
            i64::MIN.into(),
        ];
        names
            .into_iter()
            .zip(versions)
            .zip(values)
            .map(|((name, version), value)| Cell {
                name: name.into(),
                version,
                value,
            })
            .collect()
    }

    #[test]
    fn a_row_keeps_key_size_and_cells() {
        let key = PrimaryKey::new(vec!["k\0".into(), 7.into()]);
        let cells = cells_of_every_kind(["a", "b", "c", "d", "e"], [5, -1, 2, 2, i64::MAX]);
        let mut bytes = Vec::new();
        encode_row(&key, &cells, 99, &mut bytes);
        let row = RowRef::new(&bytes);
        assert_eq!(row.decode_key(), key);
        assert_eq!(row.size(), 99);
        assert_eq!(row.cells().map(|c| c.to_cell()).collect::<Vec<_>>(), cells);
        assert_eq!(row.partition_value(), PkValue::from("k\0"));
        assert!(!row.has_no_cells());
        encode_row(&key, &[], 0, &mut bytes);
        assert!(RowRef::new(&bytes).has_no_cells());
    }

    /// A row's head and its cells' bytes, each as `cell_bytes` gives them, are the row's bytes;
    /// and a row made of the head and some of the cells holds exactly those cells (of every
    /// kind, values empty or long, names of 1 and 255 bytes).
    #[test]
    fn head_and_cell_bytes_rebuild_the_row_or_any_part_of_it() {
        let key = PrimaryKey::new(vec!["k\0".into(), 7.into()]);
        let mut cells = cells_of_every_kind(["a", "b", "c", "d", "e"], [5, -1, 2, 2, i64::MAX]);
        cells.push(Cell {
            name: "f".repeat(255),
            version: 0,
            value: AttributeValue::String(String::new()),
        });
        cells.push(Cell {
            name: "g".into(),
            version: 1,
            value: AttributeValue::Binary(vec![0xFF; 5000]),
        });
        let mut bytes = Vec::new();
        encode_row(&key, &cells, 99, &mut bytes);
        let row = RowRef::new(&bytes);
        let mut whole = row.head().to_vec();
        for c in row.cells() {
            whole.extend_from_slice(row.cell_bytes(c));
        }
        assert_eq!(whole, bytes);
        for keep in 0..1u32 << cells.len() {
            let mut part = row.head().to_vec();
            let mut want = Vec::new();
            for (i, c) in row.cells().enumerate() {
                if keep & (1 << i) != 0 {
                    part.extend_from_slice(row.cell_bytes(c));
                    want.push(cells[i].clone());
                }
            }
            let part = RowRef::new(&part);
            assert_eq!(part.decode_key(), key);
            assert_eq!(part.size(), 99);
            assert_eq!(part.cells().map(|c| c.to_cell()).collect::<Vec<_>>(), want);
        }
    }

    /// The word-at-a-time zero search agrees with a byte-by-byte one: zeros at every position
    /// of slices of every length up to a few words, after bytes of every kind (`01`, `80`, `FF`
    /// beside a zero are where a word trick can go wrong).
    #[test]
    fn first_zero_finds_the_first_zero_byte() {
        let mut next = crate::table::test_lcg(11);
        for len in 0..40 {
            for _ in 0..200 {
                let b: Vec<u8> = (0..len)
                    .map(|_| [0x00, 0x01, 0x7F, 0x80, 0x81, 0xFF, b'a'][(next() % 7) as usize])
                    .collect();
                assert_eq!(first_zero(&b), b.iter().position(|&x| x == 0), "{b:02x?}");
            }
            let none = vec![0x01; len];
            assert_eq!(first_zero(&none), None);
        }
    }

    /// A cell refilled in place (a range read's lent row) from a stored cell of any kind, over
    /// a cell of any kind, equals the owned cell.
    #[test]
    fn a_cell_written_over_any_cell_equals_the_owned_cell() {
        // Names of different lengths: a refilled cell's name buffer grows and shrinks.
        let cells = cells_of_every_kind(["a", "bb", "c", "ddd", "e"], [5, -1, 2, 3, i64::MAX]);
        let mut bytes = Vec::new();
        encode_row(&"k".into(), &cells, 0, &mut bytes);
        let row = RowRef::new(&bytes);
        for stored in row.cells() {
            for over in &cells {
                let mut cell = over.clone();
                stored.write_to(&mut cell);
                assert_eq!(cell, stored.to_cell(), "{over:?}");
            }
        }
    }

    #[test]
    fn malformed_bytes_do_not_decode() {
        for bad in [
            &[0u8][..],
            &[6],
            &[2, 0],
            &[3, b'a'],
            &[3, 0, 2],
            &[3, 0xFF, 0xFE],
        ] {
            assert_eq!(decode_key(bad), None, "{bad:?}");
            assert!(!decode_key_into(bad, &mut PrimaryKey::from("k")), "{bad:?}");
        }
        assert_eq!(decode_key(&[3, 0xFF, 0, 1]), None); // not UTF-8
        assert_eq!(decode_key(&[]), Some(PrimaryKey::new(vec![])));
    }
}
