//! Schema, primary keys and attribute values, with the store's limits.

use std::cmp::Ordering;
use std::fmt;

use serde::Serialize;

use super::error::TableError;
pub use super::pk_type::PkType;

/// Longest String or Binary primary-key value, in bytes (1 KB).
pub const MAX_KEY_VALUE_BYTES: usize = 1024;
/// Longest attribute value, in bytes (2 MB).
pub const MAX_ATTRIBUTE_BYTES: usize = 2 * 1024 * 1024;
/// Most primary-key columns a table may have.
pub const MAX_KEY_COLUMNS: usize = 4;

/// One primary-key column: a name and a type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PkColumn {
    /// The column's name.
    pub name: String,
    /// The column's type.
    pub ty: PkType,
}

impl PkColumn {
    /// A column named `name` of type `ty` (the name is checked by [`Schema::new`]).
    #[must_use]
    pub fn new(name: impl Into<String>, ty: PkType) -> Self {
        Self {
            name: name.into(),
            ty,
        }
    }
}

/// The primary-key columns of a table; the first is the partition key.
///
/// # Examples
///
/// ```
/// use pk_codec::table::{PkColumn, PkType, Schema};
///
/// let schema = Schema::new(vec![
///     PkColumn::new("card_id", PkType::String),
///     PkColumn::new("ts", PkType::Integer),
/// ])?;
/// assert_eq!(schema.partition_key().name, "card_id");
/// # Ok::<(), pk_codec::table::TableError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Schema {
    columns: Vec<PkColumn>,
}

impl Schema {
    /// Checks and builds a schema.
    ///
    /// # Errors
    ///
    /// [`TableError::KeyColumnCount`] unless there are 1 to 4 columns,
    /// [`TableError::InvalidColumnName`] for a name that breaks the store's rules,
    /// [`TableError::DuplicateKeyColumn`] for a repeated name.
    pub fn new(columns: Vec<PkColumn>) -> Result<Self, TableError> {
        if columns.is_empty() || columns.len() > MAX_KEY_COLUMNS {
            return Err(TableError::KeyColumnCount {
                count: columns.len(),
            });
        }
        for (i, c) in columns.iter().enumerate() {
            check_column_name(&c.name)?;
            if columns[..i].iter().any(|p| p.name == c.name) {
                return Err(TableError::DuplicateKeyColumn {
                    name: c.name.clone(),
                });
            }
        }
        Ok(Self { columns })
    }

    /// A schema with one String primary-key column (the shape of a codec-made key).
    ///
    /// # Errors
    ///
    /// [`TableError::InvalidColumnName`] for a bad name.
    pub fn single_string(name: &str) -> Result<Self, TableError> {
        Self::new(vec![PkColumn::new(name, PkType::String)])
    }

    /// The columns, partition key first.
    #[must_use]
    pub fn columns(&self) -> &[PkColumn] {
        &self.columns
    }

    /// The partition key column.
    #[must_use]
    pub fn partition_key(&self) -> &PkColumn {
        &self.columns[0]
    }

    /// Checks a key for a write or a point read: right arity, right types, no INF, sizes.
    #[inline]
    pub(crate) fn check_row_key(&self, key: &PrimaryKey) -> Result<(), TableError> {
        let values = key.values();
        if values.len() != self.columns.len() {
            return Err(arity(self.columns.len(), values.len()));
        }
        for (v, c) in values.iter().zip(&self.columns) {
            check_value(v, c, false)?;
        }
        Ok(())
    }

    /// Checks a range bound: like a row key, but INF_MIN / INF_MAX are allowed.
    pub(crate) fn check_bound(&self, key: &PrimaryKey) -> Result<(), TableError> {
        let values = key.values();
        if values.len() != self.columns.len() {
            return Err(arity(self.columns.len(), values.len()));
        }
        for (v, c) in values.iter().zip(&self.columns) {
            check_value(v, c, true)?;
        }
        Ok(())
    }

    /// Checks a partition-key value (split points): right type, not INF, size.
    pub(crate) fn check_partition_value(&self, v: &PkValue) -> Result<(), TableError> {
        check_value(v, &self.columns[0], false)
    }
}

#[cold]
fn arity(expected: usize, found: usize) -> TableError {
    TableError::KeyArity { expected, found }
}

#[inline]
fn check_value(v: &PkValue, c: &PkColumn, inf_ok: bool) -> Result<(), TableError> {
    let len = match (v, c.ty) {
        (PkValue::String(s), PkType::String) => s.len(),
        (PkValue::Binary(b), PkType::Binary) => b.len(),
        (PkValue::Integer(_), PkType::Integer) => 0,
        (PkValue::InfMin | PkValue::InfMax, _) if inf_ok => 0,
        (PkValue::InfMin | PkValue::InfMax, _) => {
            return Err(TableError::InfiniteKeyValue {
                column: c.name.clone(),
            });
        }
        _ => {
            return Err(TableError::KeyTypeMismatch {
                column: c.name.clone(),
                expected: c.ty,
                found: v.type_name(),
            });
        }
    };
    if len > MAX_KEY_VALUE_BYTES {
        return Err(TableError::KeyValueTooLarge {
            column: c.name.clone(),
            len,
            max: MAX_KEY_VALUE_BYTES,
        });
    }
    Ok(())
}

/// Checks a column name against the store's rules: 1 to 255 characters of `A-Z a-z 0-9 _`,
/// not starting with a digit.
///
/// # Errors
///
/// [`TableError::InvalidColumnName`] saying which rule is broken.
///
/// # Examples
///
/// ```
/// use pk_codec::table::check_column_name;
///
/// assert!(check_column_name("_amount_2").is_ok());
/// assert!(check_column_name("2nd").is_err());
/// assert!(check_column_name("a-b").is_err());
/// ```
#[inline]
pub fn check_column_name(name: &str) -> Result<(), TableError> {
    /// Which bytes a name may hold (ASCII letters, digits and `_`): one load per byte on
    /// every put, instead of three range tests.
    const NAME_BYTES: [bool; 256] = {
        let mut table = [false; 256];
        let mut b = 0;
        while b < 256 {
            let c = b as u8;
            table[b] = c.is_ascii_alphanumeric() || c == b'_';
            b += 1;
        }
        table
    };
    let bytes = name.as_bytes();
    let reason = if bytes.is_empty() {
        "a name needs at least 1 character"
    } else if bytes.len() > 255 {
        "a name has at most 255 characters"
    } else if bytes[0].is_ascii_digit() {
        "the first character must be a letter or '_'"
    } else if !bytes.iter().all(|&b| NAME_BYTES[usize::from(b)]) {
        "only letters, digits and '_' are allowed"
    } else {
        return Ok(());
    };
    Err(TableError::InvalidColumnName {
        name: name.to_owned(),
        reason,
    })
}

/// One primary-key value, or one of the two infinite bounds for range reads.
///
/// Ordering follows the store: `InfMin` below everything, `InfMax` above everything,
/// integers numerically, strings and binaries bytewise.
/// (Within one column all real values have the column's type.)
///
/// # Examples
///
/// ```
/// use pk_codec::table::PkValue;
///
/// assert!(PkValue::from("a") < PkValue::from("b"));
/// assert!(PkValue::from(-5) < PkValue::from(3));
/// assert!(PkValue::InfMin < PkValue::from(i64::MIN));
/// assert!(PkValue::from("\u{10FFFF}") < PkValue::InfMax);
/// ```
#[derive(Debug, PartialEq, Eq, Hash, Serialize)]
pub enum PkValue {
    /// Lower than any value (range bounds only).
    InfMin,
    /// A 64-bit signed integer.
    Integer(i64),
    /// UTF-8 text.
    String(String),
    /// Bytes.
    Binary(Vec<u8>),
    /// Higher than any value (range bounds only).
    InfMax,
}

impl Clone for PkValue {
    fn clone(&self) -> Self {
        match self {
            Self::InfMin => Self::InfMin,
            Self::Integer(i) => Self::Integer(*i),
            Self::String(s) => Self::String(s.clone()),
            Self::Binary(b) => Self::Binary(b.clone()),
            Self::InfMax => Self::InfMax,
        }
    }

    /// Reuses the buffer of a String or Binary when `source` is of the same type.
    fn clone_from(&mut self, source: &Self) {
        match (self, source) {
            (Self::String(a), Self::String(b)) => a.clone_from(b),
            (Self::Binary(a), Self::Binary(b)) => a.clone_from(b),
            (me, _) => *me = source.clone(),
        }
    }
}

impl Ord for PkValue {
    /// Written out (rather than derived) so that it inlines into the row map's searches.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Self::String(a), Self::String(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Self::Integer(a), Self::Integer(b)) => a.cmp(b),
            (Self::Binary(a), Self::Binary(b)) => a.as_slice().cmp(b.as_slice()),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PkValue {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PkValue {
    /// Order of the variants: INF_MIN, integers, strings, binaries, INF_MAX.
    #[inline]
    fn rank(&self) -> u8 {
        match self {
            Self::InfMin => 0,
            Self::Integer(_) => 1,
            Self::String(_) => 2,
            Self::Binary(_) => 3,
            Self::InfMax => 4,
        }
    }

    /// The name of the value's type, for messages.
    #[must_use]
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::InfMin => "INF_MIN",
            Self::Integer(_) => "integer",
            Self::String(_) => "string",
            Self::Binary(_) => "binary",
            Self::InfMax => "INF_MAX",
        }
    }

    /// The first 8 bytes of the value's order, as a big-endian word: its variant's rank, then
    /// the first 7 bytes of its payload (an integer's with the sign bit flipped, a String's or
    /// Binary's zero-padded). Two heads that differ order their values as the values do;
    /// equal heads say nothing. So a search among many values compares words, and the values
    /// only on a tie.
    #[inline]
    pub(crate) fn head(&self) -> u64 {
        let payload = |b: &[u8]| {
            let mut w = [0u8; 8];
            let n = b.len().min(7);
            w[1..=n].copy_from_slice(&b[..n]);
            u64::from_be_bytes(w)
        };
        let rest = match self {
            Self::Integer(i) => (i.cast_unsigned() ^ (1 << 63)) >> 8,
            Self::String(s) => payload(s.as_bytes()),
            Self::Binary(b) => payload(b),
            Self::InfMin | Self::InfMax => 0,
        };
        (u64::from(self.rank()) << 56) | rest
    }

    /// Bytes the value takes in the size accounting (8 for an integer).
    #[must_use]
    #[inline]
    pub fn size(&self) -> usize {
        match self {
            Self::Integer(_) => 8,
            Self::String(s) => s.len(),
            Self::Binary(b) => b.len(),
            Self::InfMin | Self::InfMax => 0,
        }
    }
}

impl fmt::Display for PkValue {
    /// Strings as they are, integers in decimal, binaries in hex, bounds as `INF_MIN` / `INF_MAX`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InfMin => f.write_str("INF_MIN"),
            Self::InfMax => f.write_str("INF_MAX"),
            Self::Integer(i) => write!(f, "{i}"),
            Self::String(s) => f.write_str(s),
            Self::Binary(b) => {
                for x in b {
                    write!(f, "{x:02x}")?;
                }
                Ok(())
            }
        }
    }
}

impl From<&str> for PkValue {
    fn from(s: &str) -> Self {
        Self::String(s.to_owned())
    }
}
impl From<String> for PkValue {
    fn from(s: String) -> Self {
        Self::String(s)
    }
}
impl From<i64> for PkValue {
    fn from(i: i64) -> Self {
        Self::Integer(i)
    }
}
impl From<Vec<u8>> for PkValue {
    fn from(b: Vec<u8>) -> Self {
        Self::Binary(b)
    }
}
impl From<&[u8]> for PkValue {
    fn from(b: &[u8]) -> Self {
        Self::Binary(b.to_vec())
    }
}

/// A whole primary key: one value per schema column, partition key first.
///
/// Keys order column by column (the store's row order). A one-column key keeps its value
/// inline, so that the row map compares it with one pointer hop, as a map of strings would.
///
/// # Examples
///
/// ```
/// use pk_codec::table::{PkValue, PrimaryKey};
///
/// let a = PrimaryKey::new(vec!["dev1".into(), 7.into()]);
/// let b = PrimaryKey::from("dev1");
/// assert_eq!(a.partition_value(), b.partition_value());
/// assert_eq!(a.values().len(), 2);
/// assert!(PrimaryKey::new(vec![PkValue::InfMin]) < b);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PrimaryKey(Repr);

/// The storage of a key. Invariant: `Many` never holds exactly one value (so that derived
/// equality and hashing agree with the values).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Repr {
    One(PkValue),
    Many(Vec<PkValue>),
}

impl Ord for PrimaryKey {
    /// Column by column, then by length (lexicographic); written out so that it inlines.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        match (&self.0, &other.0) {
            (Repr::One(a), Repr::One(b)) => a.cmp(b),
            _ => cmp_columns(self.values(), other.values()),
        }
    }
}

/// Lexicographic order of several columns (kept out of line so that `cmp` stays small).
fn cmp_columns(a: &[PkValue], b: &[PkValue]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        match x.cmp(y) {
            Ordering::Equal => {}
            o => return o,
        }
    }
    a.len().cmp(&b.len())
}

impl PartialOrd for PrimaryKey {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Serialize for PrimaryKey {
    /// As the sequence of its values.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.values().serialize(serializer)
    }
}

impl PrimaryKey {
    /// A key from its column values.
    #[must_use]
    pub fn new(mut values: Vec<PkValue>) -> Self {
        if values.len() == 1
            && let Some(v) = values.pop()
        {
            return Self(Repr::One(v));
        }
        Self(Repr::Many(values))
    }

    /// The column values.
    #[must_use]
    #[inline]
    pub fn values(&self) -> &[PkValue] {
        match &self.0 {
            Repr::One(v) => std::slice::from_ref(v),
            Repr::Many(v) => v,
        }
    }

    /// `n` values to refill in place (a decoder's reuse of a key): the values already there
    /// keep their buffers, new ones are INF_MIN.
    pub(crate) fn values_mut(&mut self, n: usize) -> &mut [PkValue] {
        match (&mut self.0, n) {
            (Repr::One(_), 1) => {}
            (Repr::Many(v), n) if n != 1 => v.resize(n, PkValue::InfMin),
            (repr, 1) => *repr = Repr::One(PkValue::InfMin),
            (repr, n) => *repr = Repr::Many(vec![PkValue::InfMin; n]),
        }
        match &mut self.0 {
            Repr::One(v) => std::slice::from_mut(v),
            Repr::Many(v) => v,
        }
    }

    /// The column values, owned.
    #[must_use]
    pub fn into_values(self) -> Vec<PkValue> {
        match self.0 {
            Repr::One(v) => vec![v],
            Repr::Many(v) => v,
        }
    }

    /// The partition-key value (the first column), `InfMin` for an empty key.
    #[must_use]
    #[inline]
    pub fn partition_value(&self) -> &PkValue {
        self.values().first().unwrap_or(&PkValue::InfMin)
    }

    /// A key of `columns` columns all `INF_MIN` (the lowest key).
    ///
    /// A key has at most [`MAX_KEY_COLUMNS`] columns: a larger `columns` gives a key of
    /// [`MAX_KEY_COLUMNS`] columns (which sorts as the longer one would against every key a
    /// table holds), not an allocation of `columns` values.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::table::{MAX_KEY_COLUMNS, PkValue, PrimaryKey};
    ///
    /// assert_eq!(PrimaryKey::inf_min(2).values(), [PkValue::InfMin, PkValue::InfMin]);
    /// assert_eq!(PrimaryKey::inf_min(usize::MAX).values().len(), MAX_KEY_COLUMNS);
    /// ```
    #[must_use]
    pub fn inf_min(columns: usize) -> Self {
        Self::new(vec![PkValue::InfMin; columns.min(MAX_KEY_COLUMNS)])
    }

    /// A key of `columns` columns all `INF_MAX` (the highest key).
    ///
    /// As [`PrimaryKey::inf_min`], `columns` is capped at [`MAX_KEY_COLUMNS`].
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::table::{MAX_KEY_COLUMNS, PkValue, PrimaryKey};
    ///
    /// assert_eq!(PrimaryKey::inf_max(1).values(), [PkValue::InfMax]);
    /// assert_eq!(PrimaryKey::inf_max(usize::MAX).values().len(), MAX_KEY_COLUMNS);
    /// ```
    #[must_use]
    pub fn inf_max(columns: usize) -> Self {
        Self::new(vec![PkValue::InfMax; columns.min(MAX_KEY_COLUMNS)])
    }

    /// Bytes the key takes in the size accounting.
    #[must_use]
    #[inline]
    pub fn size(&self) -> usize {
        self.values().iter().map(PkValue::size).sum()
    }
}

impl fmt::Display for PrimaryKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, v) in self.values().iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            write!(f, "{v}")?;
        }
        Ok(())
    }
}

impl From<&str> for PrimaryKey {
    fn from(s: &str) -> Self {
        Self(Repr::One(PkValue::from(s)))
    }
}
impl From<String> for PrimaryKey {
    fn from(s: String) -> Self {
        Self(Repr::One(PkValue::String(s)))
    }
}
impl From<i64> for PrimaryKey {
    fn from(i: i64) -> Self {
        Self(Repr::One(PkValue::Integer(i)))
    }
}
impl From<&[u8]> for PrimaryKey {
    fn from(b: &[u8]) -> Self {
        Self(Repr::One(PkValue::Binary(b.to_vec())))
    }
}
impl From<PkValue> for PrimaryKey {
    fn from(v: PkValue) -> Self {
        Self(Repr::One(v))
    }
}
impl From<&Self> for PrimaryKey {
    fn from(key: &Self) -> Self {
        key.clone()
    }
}
impl From<Vec<PkValue>> for PrimaryKey {
    fn from(v: Vec<PkValue>) -> Self {
        Self::new(v)
    }
}

/// An attribute value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum AttributeValue {
    /// UTF-8 text.
    String(String),
    /// A 64-bit signed integer.
    Integer(i64),
    /// A 64-bit float.
    Double(f64),
    /// A boolean.
    Boolean(bool),
    /// Bytes.
    Binary(Vec<u8>),
}

impl AttributeValue {
    /// Bytes the value takes in the size accounting (8 for numbers, 1 for a boolean).
    #[must_use]
    #[inline]
    pub fn size(&self) -> usize {
        match self {
            Self::String(s) => s.len(),
            Self::Binary(b) => b.len(),
            Self::Integer(_) | Self::Double(_) => 8,
            Self::Boolean(_) => 1,
        }
    }
}

impl From<&str> for AttributeValue {
    fn from(s: &str) -> Self {
        Self::String(s.to_owned())
    }
}
impl From<String> for AttributeValue {
    fn from(s: String) -> Self {
        Self::String(s)
    }
}
impl From<i64> for AttributeValue {
    fn from(i: i64) -> Self {
        Self::Integer(i)
    }
}
impl From<f64> for AttributeValue {
    fn from(x: f64) -> Self {
        Self::Double(x)
    }
}
impl From<bool> for AttributeValue {
    fn from(b: bool) -> Self {
        Self::Boolean(b)
    }
}
impl From<Vec<u8>> for AttributeValue {
    fn from(b: Vec<u8>) -> Self {
        Self::Binary(b)
    }
}

/// An attribute to write: a column name, a value and an optional version (ms since the epoch;
/// `None` takes the table clock's time).
///
/// # Examples
///
/// ```
/// use pk_codec::table::Attribute;
///
/// let a = Attribute::new("amount_cents", 532).with_version(1_700_000_000_000);
/// assert_eq!(a.version, Some(1_700_000_000_000));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Attribute {
    /// The column's name.
    pub name: String,
    /// The value.
    pub value: AttributeValue,
    /// The version in ms since the epoch, or `None` for the table clock's time.
    pub version: Option<i64>,
}

impl Attribute {
    /// An attribute without an explicit version.
    #[must_use]
    pub fn new(name: impl Into<String>, value: impl Into<AttributeValue>) -> Self {
        Self {
            name: name.into(),
            value: value.into(),
            version: None,
        }
    }

    /// The same attribute with an explicit version (ms since the epoch).
    #[must_use]
    pub fn with_version(mut self, version: i64) -> Self {
        self.version = Some(version);
        self
    }
}

/// One stored version of one attribute column.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    /// The column's name.
    pub name: String,
    /// The version, ms since the epoch.
    pub version: i64,
    /// The value.
    pub value: AttributeValue,
}

impl Cell {
    /// Bytes the cell takes in the size accounting (name + value + 8 for the version).
    #[must_use]
    #[inline]
    pub fn size(&self) -> usize {
        cell_size(&self.name, &self.value)
    }
}

/// Bytes a cell of `name` holding `value` takes in the size accounting: its name, its value and
/// 8 for its version.
#[inline]
pub(crate) fn cell_size(name: &str, value: &AttributeValue) -> usize {
    cell_bytes(name, value.size())
}

/// Bytes a cell named `name` with a value of `value_bytes` bytes takes in the size accounting:
/// its name, its value and 8 bytes of version, as the table counts it.
///
/// # Examples
///
/// ```
/// assert_eq!(pk_codec::table::cell_bytes("price", 4), 17);
/// ```
#[must_use]
#[inline]
pub const fn cell_bytes(name: &str, value_bytes: usize) -> usize {
    name.len() + value_bytes + 8
}

/// A row as read: its key and its cells, ordered by column name, newest version first.
///
/// # Examples
///
/// ```
/// use pk_codec::table::{Attribute, Table, TableOptions, AttributeValue};
///
/// let table = Table::single_string_key("pk", TableOptions::default())?;
/// table.put("k1", vec![Attribute::new("n", 1)])?;
/// let row = table.get("k1", &Default::default())?.expect("row");
/// assert_eq!(row.value("n"), Some(&AttributeValue::Integer(1)));
/// # Ok::<(), pk_codec::table::TableError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The primary key.
    pub key: PrimaryKey,
    /// The cells, by column name, newest version first within a column.
    pub cells: Vec<Cell>,
}

impl Row {
    /// The newest value of a column, if the read returned one.
    #[must_use]
    pub fn value(&self, name: &str) -> Option<&AttributeValue> {
        self.cells.iter().find(|c| c.name == name).map(|c| &c.value)
    }

    /// All returned versions of a column, newest first.
    pub fn versions<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Cell> + 'a {
        self.cells.iter().filter(move |c| c.name == name)
    }

    /// Bytes the row takes in the size accounting (key + cells).
    #[must_use]
    pub fn size(&self) -> usize {
        self.key.size() + self.cells.iter().map(Cell::size).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Heads never contradict the values' order: for values of every variant, with zeros,
    /// prefixes of each other and lengths around the 7 bytes a head holds, a head that is
    /// lower belongs to the lower value.
    #[test]
    fn heads_order_as_values() {
        let mut next = crate::table::test_lcg(11);
        let mut values = vec![PkValue::InfMin, PkValue::InfMax];
        for i in [i64::MIN, -257, -256, -1, 0, 1, 255, 256, 1 << 40, i64::MAX] {
            values.push(i.into());
        }
        for _ in 0..300 {
            let len = [0, 1, 6, 7, 8, 9, 20][(next() % 7) as usize];
            let bytes: Vec<u8> = (0..len)
                .map(|_| [0u8, 1, b'a', 0x7f][(next() % 4) as usize])
                .collect();
            values.push(PkValue::Binary(bytes.clone()));
            values.push(PkValue::String(String::from_utf8(bytes).unwrap()));
            values.push((((next() << 33) | (next() << 2)).cast_signed() >> (next() % 64)).into());
        }
        let mut ties = 0;
        for a in &values {
            for b in &values {
                match a.head().cmp(&b.head()) {
                    Ordering::Equal => ties += usize::from(a != b),
                    order => assert_eq!(order, a.cmp(b), "{a:?} {b:?}"),
                }
            }
        }
        // Heads tell most values apart.
        assert!(ties < values.len() * values.len() / 10, "{ties}");
    }

    #[test]
    fn column_name_boundaries() {
        assert!(check_column_name("a").is_ok());
        assert!(check_column_name("_").is_ok());
        assert!(check_column_name(&"a".repeat(255)).is_ok());
        assert_eq!(
            check_column_name(&"a".repeat(256)),
            Err(TableError::InvalidColumnName {
                name: "a".repeat(256),
                reason: "a name has at most 255 characters"
            })
        );
        assert!(check_column_name("é").is_err());
        assert!(check_column_name("").is_err());
        // Every character after a first letter: letters, digits and '_' only.
        for c in (0..=0x2ffu32).filter_map(char::from_u32) {
            let allowed = c.is_ascii_alphanumeric() || c == '_';
            assert_eq!(
                check_column_name(&format!("a{c}b")).is_ok(),
                allowed,
                "{c:?}"
            );
        }
    }

    #[test]
    fn one_column_keys_are_the_same_however_built() {
        use std::collections::hash_map::DefaultHasher;
        use std::hash::{Hash, Hasher};
        let hash = |k: &PrimaryKey| {
            let mut h = DefaultHasher::new();
            k.hash(&mut h);
            h.finish()
        };
        let a = PrimaryKey::new(vec!["k".into()]);
        let b = PrimaryKey::from("k");
        assert_eq!(a, b);
        assert_eq!(hash(&a), hash(&b));
        assert_eq!(a.cmp(&b), Ordering::Equal);
        assert_eq!(b.clone().into_values(), vec![PkValue::from("k")]);
        let two = PrimaryKey::new(vec!["k".into(), 1.into()]);
        assert!(a < two);
        assert!(PrimaryKey::new(vec![]) < a);
    }

    #[test]
    fn value_order_is_bytewise_and_numeric() {
        assert!(PkValue::from("Z") < PkValue::from("a"));
        assert!(PkValue::from("é") > PkValue::from("z"));
        assert!(PkValue::from(vec![0u8]) > PkValue::from(Vec::new()));
        assert!(PkValue::from(-1) < PkValue::from(0));
        assert!(PkValue::from(i64::MAX) < PkValue::InfMax);
    }
}
