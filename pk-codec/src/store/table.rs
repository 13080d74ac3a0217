//! [`RangeStore`] for the in-memory table model: codec keys as a table's one primary-key column
//! (Binary: the key's bytes as they are; String: a text key, UTF-8), values in one Binary
//! attribute, the store's limits and throttling as they are.

use std::sync::Mutex;

use super::{
    CondWrite, Direction, RangePage, RangeQuery, RangeStore, StoreError, StoreErrorKind, WriteOp,
};
use crate::table::{
    Attribute, AttributeValue, PkType, PkValue, PrimaryKey, RangeRequest, ReadOptions, RowWrite,
    Table, TableError,
};

/// The attribute column that holds a row's value.
pub const VALUE_COLUMN: &str = "v";

fn store_error(e: TableError) -> StoreError {
    let kind = if e.is_retryable() {
        StoreErrorKind::Busy
    } else {
        StoreErrorKind::Invalid
    };
    StoreError::new(kind, e.to_string())
}

/// A row's key as the store's bytes: a Binary key's bytes, a String key's UTF-8 bytes.
fn key_bytes(key: &PrimaryKey) -> Result<Vec<u8>, StoreError> {
    match key.partition_value() {
        PkValue::String(s) => Ok(s.as_bytes().to_vec()),
        PkValue::Binary(b) => Ok(b.clone()),
        other => Err(StoreError::new(
            StoreErrorKind::Invalid,
            format!(
                "a range store's table has one Binary or String key column, not {}",
                other.type_name()
            ),
        )),
    }
}

/// The table's primary key for the store key `key`: the bytes as they are in a table whose key
/// column is Binary; in a String column, the key must be UTF-8 text (a text layout's keys are).
fn primary_key(table: &Table, key: &[u8]) -> Result<PrimaryKey, StoreError> {
    match table.schema().partition_key().ty {
        PkType::Binary => Ok(PrimaryKey::from(key)),
        PkType::String => match std::str::from_utf8(key) {
            Ok(text) => Ok(PrimaryKey::from(text)),
            Err(e) => Err(StoreError::new(
                StoreErrorKind::Invalid,
                format!(
                    "the key {} is not UTF-8 text (at byte {}), and the table's key column {:?} \
                     is a String: binary keys need a Binary key column",
                    super::show_key(key),
                    e.valid_up_to(),
                    table.schema().partition_key().name
                ),
            )),
        },
        PkType::Integer => Err(StoreError::new(
            StoreErrorKind::Invalid,
            format!(
                "the table's key column {:?} is an Integer: a range store's table has one Binary \
                 or String key column",
                table.schema().partition_key().name
            ),
        )),
    }
}

/// A store's writes as the table's: a put writes the value into [`VALUE_COLUMN`].
fn row_writes(table: &Table, ops: &[WriteOp]) -> Result<Vec<RowWrite>, StoreError> {
    ops.iter()
        .map(|op| {
            Ok(match op {
                WriteOp::Put { key, value } => RowWrite::Put {
                    key: primary_key(table, key)?,
                    attributes: vec![Attribute::new(
                        VALUE_COLUMN,
                        AttributeValue::Binary(value.clone()),
                    )],
                },
                WriteOp::Delete { key } => RowWrite::Delete {
                    key: primary_key(table, key)?,
                },
            })
        })
        .collect()
}

/// Held by every conditional write into a table model: the model has no lock over several
/// rows, so its conditional writes are atomic against each other (one at a time, in this
/// process), not against its plain writes.
static CONDITIONAL: Mutex<()> = Mutex::new(());

fn value_of(cells: &crate::table::Row) -> Vec<u8> {
    match cells.value(VALUE_COLUMN) {
        Some(AttributeValue::Binary(b)) => b.clone(),
        _ => Vec::new(),
    }
}

/// The model of a store is a store: a table with one primary-key column, each value in the
/// Binary attribute [`VALUE_COLUMN`]. A Binary key column (Tablestore's binary primary-key
/// columns) takes every key, binary or text, as its bytes; a String one (for example
/// [`Schema::single_string`](crate::table::Schema::single_string)) takes text keys, and refuses
/// a key that is not UTF-8 as [`StoreErrorKind::Invalid`]. Both sort bytewise. Pages stop at the
/// table's 5,000 rows; batches hold at most 200 rows; a throttled partition's refusal is
/// [`StoreErrorKind::Busy`].
///
/// # Examples
///
/// ```
/// use pk_codec::store::{RangeQuery, RangeStore};
/// use pk_codec::table::{PkColumn, PkType, Schema, Table, TableOptions};
///
/// let table = Table::single_string_key("pk", TableOptions::default())?;
/// RangeStore::put(&table, b"000054,a100", b"card")?;
/// assert_eq!(RangeStore::get(&table, b"000054,a100")?, Some(b"card".to_vec()));
/// let page = table.range(&RangeQuery::new("000054", Some("000055")))?;
/// assert_eq!(page.rows.len(), 1);
/// // Binary keys need a Binary key column.
/// assert!(RangeStore::put(&table, &[0xff], b"binary").is_err());
/// let binary = Table::new(Schema::new(vec![PkColumn::new("pk", PkType::Binary)])?, TableOptions::default())?;
/// RangeStore::put(&binary, &[0xff], b"binary")?;
/// assert_eq!(binary.range(&RangeQuery::new(&[0xf0][..], None))?.rows[0].0, [0xff]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl RangeStore for Table {
    /// The model lives in this process: a read is CPU work, done by the merging thread.
    fn reads_wait_on_io(&self) -> bool {
        false
    }

    fn max_page(&self) -> usize {
        crate::table::MAX_RANGE_ROWS
    }

    fn max_batch(&self) -> usize {
        crate::table::MAX_BATCH_ROWS
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        Self::put(
            self,
            primary_key(self, key)?,
            vec![Attribute::new(
                VALUE_COLUMN,
                AttributeValue::Binary(value.to_vec()),
            )],
        )
        .map_err(store_error)
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let key = primary_key(self, key)?;
        let row = Self::get(self, &key, &ReadOptions::default()).map_err(store_error)?;
        Ok(row.as_ref().map(value_of))
    }

    fn delete(&self, key: &[u8]) -> Result<bool, StoreError> {
        let key = primary_key(self, key)?;
        let existed = Self::get(self, &key, &ReadOptions::default())
            .map_err(store_error)?
            .is_some();
        Self::delete(self, &key).map_err(store_error)?;
        Ok(existed)
    }

    fn batch_write(&self, ops: &[WriteOp]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        let results = match Self::batch_write(self, row_writes(self, ops)?) {
            // The table, as Tablestore, refuses a batch that names a row twice (having checked
            // the batch's limits first); a store's batch applies its writes in order. So the
            // runs of writes without a repeated key go to the table one after another.
            Err(TableError::DuplicateRowInBatch { .. }) => {
                let mut results = Vec::with_capacity(ops.len());
                let mut start = 0;
                while start < ops.len() {
                    let mut seen = std::collections::HashSet::new();
                    let end = ops[start..]
                        .iter()
                        .position(|op| !seen.insert(op.key()))
                        .map_or(ops.len(), |n| start + n);
                    let run = Self::batch_write(self, row_writes(self, &ops[start..end])?);
                    results.extend(run.map_err(store_error)?);
                    start = end;
                }
                results
            }
            other => other.map_err(store_error)?,
        };
        Ok(results
            .into_iter()
            .map(|r| r.map_err(store_error))
            .collect())
    }

    /// One conditional write at a time (atomic against the other conditional writes, not
    /// against plain writes): the keys checked, then the ops applied one by one; if one is
    /// refused (a throttled partition), those applied before it are put back as they were and
    /// the refusal is returned.
    fn write_if(&self, write: &CondWrite) -> Result<bool, StoreError> {
        let _one_at_a_time = CONDITIONAL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for e in &write.expect {
            if !e.holds(RangeStore::get(self, &e.key)?.as_deref()) {
                return Ok(false);
            }
        }
        let mut before = Vec::with_capacity(write.ops.len());
        for op in &write.ops {
            before.push((op.key(), RangeStore::get(self, op.key())?));
        }
        for (done, op) in write.ops.iter().enumerate() {
            let applied = match op {
                WriteOp::Put { key, value } => RangeStore::put(self, key, value),
                WriteOp::Delete { key } => RangeStore::delete(self, key).map(drop),
            };
            if let Err(e) = applied {
                // Undone newest first, so a key written twice ends as it was.
                for (key, value) in before[..done].iter().rev() {
                    let _ = match value {
                        Some(v) => RangeStore::put(self, key, v),
                        None => RangeStore::delete(self, key).map(drop),
                    };
                }
                return Err(e);
            }
        }
        Ok(true)
    }

    fn range(&self, query: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
        if query.limit == 0 {
            return Err(StoreError::new(
                StoreErrorKind::Invalid,
                "a range read needs a limit of at least 1",
            ));
        }
        let (from, to, to_inclusive) = query.remaining();
        let want = query.limit.min(self.max_page());
        match query.direction {
            Direction::Forward => {
                if to.is_some_and(|t| t <= from) {
                    return Ok(RangePage::default());
                }
                let hi = match to {
                    Some(t) => primary_key(self, t)?,
                    None => PrimaryKey::inf_max(1),
                };
                let lo = primary_key(self, from)?;
                let result = Self::get_range(self, &RangeRequest::forward(lo, hi).limit(want))
                    .map_err(store_error)?;
                let rows = result
                    .rows
                    .iter()
                    .map(|r| Ok((key_bytes(&r.key)?, value_of(r))))
                    .collect::<Result<Vec<_>, StoreError>>()?;
                let next = result.next_start.as_ref().map(key_bytes).transpose()?;
                Ok(RangePage {
                    rows,
                    next: next.filter(|k| to.is_none_or(|t| k.as_slice() < t)),
                })
            }
            Direction::Backward => {
                // The table reads backward from an inclusive top to an exclusive bottom; the
                // range's bottom `from` is inclusive and its top may be exclusive, so read from
                // the top down to INF_MIN one row more than needed and cut at both ends.
                let skip_top = if to_inclusive { None } else { to };
                let top = match to {
                    Some(t) => primary_key(self, t)?,
                    None => PrimaryKey::inf_max(1),
                };
                let ask = (want + 1 + usize::from(skip_top.is_some())).min(self.max_page());
                let result = Self::get_range(
                    self,
                    &RangeRequest::backward(top, PrimaryKey::inf_min(1)).limit(ask),
                )
                .map_err(store_error)?;
                let mut rows = Vec::with_capacity(want);
                let mut next = None;
                let mut exhausted = false;
                for r in &result.rows {
                    let k = key_bytes(&r.key)?;
                    if Some(k.as_slice()) == skip_top {
                        continue;
                    }
                    if k.as_slice() < from {
                        exhausted = true;
                        break;
                    }
                    if rows.len() == want {
                        next = Some(k);
                        break;
                    }
                    rows.push((k, value_of(r)));
                }
                if next.is_none() && !exhausted {
                    next = result
                        .next_start
                        .as_ref()
                        .map(key_bytes)
                        .transpose()?
                        .filter(|k| k.as_slice() >= from);
                }
                Ok(RangePage { rows, next })
            }
        }
    }
}
