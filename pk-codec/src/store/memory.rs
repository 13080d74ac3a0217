//! [`MemoryStore`]: a `BTreeMap` behind a lock, the reference [`RangeStore`].

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::RwLock;

use super::{
    CondWrite, Direction, RangePage, RangeQuery, RangeStore, StoreError, StoreErrorKind, WriteOp,
};

/// A [`RangeStore`] in memory: a sorted map behind a read-write lock. The reference the adapters
/// are tested against, and a store for tests and examples.
#[derive(Debug, Default)]
pub struct MemoryStore {
    rows: RwLock<BTreeMap<Vec<u8>, Vec<u8>>>,
}

impl MemoryStore {
    /// How many keys the store holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// Whether the store holds no key.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<Vec<u8>, Vec<u8>>> {
        // A writer that panicked left the map as it was before or after its one operation.
        self.rows
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<Vec<u8>, Vec<u8>>> {
        self.rows
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl RangeStore for MemoryStore {
    /// A map in this process: a read is CPU work, done by the merging thread.
    fn reads_wait_on_io(&self) -> bool {
        false
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.write().insert(key.to_vec(), value.to_vec());
        Ok(())
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.read().get(key).cloned())
    }

    fn delete(&self, key: &[u8]) -> Result<bool, StoreError> {
        Ok(self.write().remove(key).is_some())
    }

    /// Checked and applied under the map's write lock.
    fn write_if(&self, write: &CondWrite) -> Result<bool, StoreError> {
        let mut rows = self.write();
        if !write
            .expect
            .iter()
            .all(|e| e.holds(rows.get(&e.key).map(Vec::as_slice)))
        {
            return Ok(false);
        }
        for op in &write.ops {
            match op {
                WriteOp::Put { key, value } => {
                    rows.insert(key.clone(), value.clone());
                }
                WriteOp::Delete { key } => {
                    rows.remove(key);
                }
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
        let upper = match to {
            Some(t) if to_inclusive => Bound::Included(t),
            Some(t) => Bound::Excluded(t),
            None => Bound::Unbounded,
        };
        // An empty or inverted range reads nothing (BTreeMap::range would panic on it).
        let empty = match upper {
            Bound::Included(t) => t < from,
            Bound::Excluded(t) => t <= from,
            Bound::Unbounded => false,
        };
        if empty {
            return Ok(RangePage::default());
        }
        let rows = self.read();
        let range = rows.range::<[u8], _>((Bound::Included(from), upper));
        let take = |it: &mut dyn Iterator<Item = (&Vec<u8>, &Vec<u8>)>| {
            let mut page: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
            let mut next = None;
            for (k, v) in it {
                if page.len() == query.limit {
                    next = Some(k.clone());
                    break;
                }
                page.push((k.clone(), v.clone()));
            }
            RangePage { rows: page, next }
        };
        Ok(match query.direction {
            Direction::Forward => take(&mut range.into_iter()),
            Direction::Backward => take(&mut range.rev()),
        })
    }
}
