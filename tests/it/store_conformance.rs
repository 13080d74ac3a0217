//! The conformance kit (`pk_codec::store::conformance`) over every store of the crate (the
//! reference `MemoryStore`, the table model, redb, and RocksDB with `--features rocksdb`), and
//! over deliberately broken stores, each of which it must catch with the promise it breaks.
//! etcd runs the same suite against the 3-node cluster (`etcd_store::conformance`).

use pk_codec::store::conformance::{Promise, Report, Suite};
use pk_codec::store::{
    CondWrite, MemoryStore, RangePage, RangeQuery, RangeStore, RedbStore, StoreError,
    StoreErrorKind, WriteOp,
};
use pk_codec::table::{PkColumn, PkType, Schema, Table, TableOptions};

use crate::support;

fn cases() -> usize {
    support::cases(32) as usize
}

#[test]
fn the_memory_store_keeps_every_promise() {
    let report = Suite::new(|| Ok(MemoryStore::default()))
        .cases(cases())
        .run();
    assert!(report.is_ok(), "{report}");
    assert!(report.skipped.is_empty(), "{report}");
    assert_eq!(report.kept, Promise::ALL.to_vec());
}

#[test]
fn the_table_model_keeps_every_promise() {
    // A binary key column (every key, binary or text) and small partitions, so that reads and
    // batches cross partition splits.
    Suite::new(|| {
        let schema = Schema::new(vec![PkColumn::new("pk", PkType::Binary)])
            .map_err(|e| StoreError::new(StoreErrorKind::Invalid, e.to_string()))?;
        Table::new(schema, TableOptions::default().split_size_bytes(256))
            .map_err(|e| StoreError::new(StoreErrorKind::Invalid, e.to_string()))
    })
    .cases(cases())
    .require_conditional_writes(true)
    .assert_conforms();
}

#[test]
fn redb_keeps_every_promise() {
    Suite::new(RedbStore::in_memory)
        .cases(cases())
        .require_conditional_writes(true)
        .assert_conforms();
}

#[cfg(feature = "rocksdb")]
#[test]
fn rocksdb_keeps_every_promise() {
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    Suite::new(|| {
        n += 1;
        pk_codec::store::RocksStore::open(dir.path().join(n.to_string()))
    })
    .cases(cases())
    .require_conditional_writes(true)
    .assert_conforms();
}

/// etcd, against the 3-node cluster of `scripts/distributed-tests.sh` (which sets
/// `PK_ETCD_ENDPOINTS`): each check's store is the cluster emptied first. Fails, never skips,
/// without the cluster.
#[cfg(feature = "etcd")]
#[test]
#[ignore = "needs the etcd cluster of scripts/distributed-tests.sh"]
fn etcd_keeps_every_promise() {
    use pk_codec::store::EtcdStore;

    let endpoints: Vec<String> = std::env::var("PK_ETCD_ENDPOINTS")
        .expect("PK_ETCD_ENDPOINTS is not set: run with scripts/distributed-tests.sh")
        .split(',')
        .map(str::to_owned)
        .collect();
    Suite::new(|| {
        let store = EtcdStore::new(endpoints.clone())?;
        loop {
            let page = store.range(&RangeQuery::new("", None).limit(store.max_batch()))?;
            if page.rows.is_empty() {
                return Ok(store);
            }
            let deletes: Vec<WriteOp> = page
                .rows
                .into_iter()
                .map(|(k, _)| WriteOp::delete(k))
                .collect();
            store.batch_write(&deletes)?;
        }
    })
    .cases(8)
    .require_conditional_writes(true)
    .assert_conforms();
}

/// A store the suite must find broken: `MemoryStore` with one method changed.
struct Broken<F>(MemoryStore, F);

/// Which method a broken store changes, and how.
trait Fault: Send + Sync + 'static {
    fn range(&self, inner: &MemoryStore, q: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
        inner.range(q)
    }
    fn batch_write(
        &self,
        inner: &MemoryStore,
        ops: &[WriteOp],
    ) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        inner.batch_write(ops)
    }
    fn write_if(&self, inner: &MemoryStore, w: &CondWrite) -> Result<bool, StoreError> {
        inner.write_if(w)
    }
}

impl<F: Fault> RangeStore for Broken<F> {
    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.0.put(key, value)
    }
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.0.get(key)
    }
    fn delete(&self, key: &[u8]) -> Result<bool, StoreError> {
        self.0.delete(key)
    }
    fn batch_write(&self, ops: &[WriteOp]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        self.1.batch_write(&self.0, ops)
    }
    fn range(&self, q: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
        self.1.range(&self.0, q)
    }
    fn write_if(&self, w: &CondWrite) -> Result<bool, StoreError> {
        self.1.write_if(&self.0, w)
    }
}

fn run_broken<F: Fault>(fault: impl Fn() -> F) -> Report {
    Suite::new(|| Ok(Broken(MemoryStore::default(), fault())))
        .cases(8)
        .run()
}

/// The violation of `promise` in `report`, which must be there; its message must name the
/// promise and each of `keys`.
fn caught(report: &Report, promise: Promise, keys: &[&str]) {
    let v = report
        .broken(promise)
        .unwrap_or_else(|| panic!("the suite missed a broken {promise}: {report}"));
    let message = v.to_string();
    assert!(
        message.starts_with(&format!("promise broken: {promise};")),
        "{message}"
    );
    for k in keys {
        assert!(message.contains(k), "{message} does not name {k}");
    }
}

/// Sorts each page as if `ff` were the lowest byte (each byte plus one, wrapping).
struct FfBelow00;
impl Fault for FfBelow00 {
    fn range(&self, inner: &MemoryStore, q: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
        let mut page = inner.range(q)?;
        let wrapped = |k: &[u8]| k.iter().map(|b| b.wrapping_add(1)).collect::<Vec<u8>>();
        page.rows.sort_by_key(|(k, _)| wrapped(k));
        if q.direction == pk_codec::store::Direction::Backward {
            page.rows.reverse();
        }
        Ok(page)
    }
}

#[test]
fn a_store_that_orders_ff_below_00_breaks_byte_order() {
    let report = run_broken(|| FfBelow00);
    // The first pair out of order: 0xffffff answered before 0xff00.
    caught(&report, Promise::ByteOrder, &["0xffffff before 0xff00"]);
    // The random property finds it too, on binary keys, and names its case and seed.
    caught(&report, Promise::RandomBinaryKeys, &["of seed 0"]);
}

/// Leaves out the last row of every page that has a next one.
struct DropsLastRow;
impl Fault for DropsLastRow {
    fn range(&self, inner: &MemoryStore, q: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
        let mut page = inner.range(q)?;
        if page.next.is_some() {
            page.rows.pop();
        }
        Ok(page)
    }
}

#[test]
fn a_store_that_drops_a_pages_last_row_breaks_paging() {
    let report = run_broken(|| DropsLastRow);
    // The first read of one row a page loses that row: the lowest key, 0x00.
    caught(
        &report,
        Promise::ForwardPaging,
        &["row 0 key \"\\0\"", "1 a page"],
    );
    caught(&report, Promise::BackwardPaging, &["1 a page"]);
    // Every row fits one page in a read of the whole store: byte order itself holds.
    assert!(report.broken(Promise::ByteOrder).is_none(), "{report}");
}

/// Applies every conditional write, whatever its compares found.
struct IgnoresFailedCompare;
impl Fault for IgnoresFailedCompare {
    fn write_if(&self, inner: &MemoryStore, w: &CondWrite) -> Result<bool, StoreError> {
        inner.write_if(&CondWrite {
            expect: Vec::new(),
            ops: w.ops.clone(),
        })
    }
}

#[test]
fn a_store_that_ignores_a_failed_compare_breaks_write_if() {
    let report = run_broken(|| IgnoresFailedCompare);
    caught(
        &report,
        Promise::WriteIfRefuses,
        &["\"x\"", "expected false"],
    );
    caught(&report, Promise::BatchWriteIf, &["\"a\""]);
    assert!(report.broken(Promise::WriteIfApplies).is_none(), "{report}");
}

/// Reports every row of a batch written, and leaves the last one out.
struct ReportsUnwrittenRow;
impl Fault for ReportsUnwrittenRow {
    fn batch_write(
        &self,
        inner: &MemoryStore,
        ops: &[WriteOp],
    ) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        let written = inner.batch_write(&ops[..ops.len().saturating_sub(1)])?;
        Ok(written
            .into_iter()
            .chain(ops.last().map(|_| Ok(())))
            .collect())
    }
}

#[test]
fn a_store_that_reports_an_unwritten_batch_row_breaks_batch_results() {
    let report = run_broken(|| ReportsUnwrittenRow);
    // The suite's first batch ends with a delete of "e" put earlier in it: "e" is left.
    caught(
        &report,
        Promise::BatchResults,
        &["\"e\"", "nothing after a batch reported written"],
    );
    caught(&report, Promise::BulkWriter, &[]);
}

#[test]
fn a_store_without_conditional_writes_is_skipped_there_unless_they_are_required() {
    struct NoWriteIf(MemoryStore);
    impl RangeStore for NoWriteIf {
        fn put(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
            self.0.put(key, value)
        }
        fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
            self.0.get(key)
        }
        fn delete(&self, key: &[u8]) -> Result<bool, StoreError> {
            self.0.delete(key)
        }
        fn range(&self, q: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
            self.0.range(q)
        }
    }
    let report = Suite::new(|| Ok(NoWriteIf(MemoryStore::default())))
        .cases(4)
        .run();
    assert!(report.is_ok(), "{report}");
    let skipped: Vec<Promise> = report.skipped.iter().map(|(p, _)| *p).collect();
    assert!(skipped.contains(&Promise::Rekey) && skipped.contains(&Promise::WriteIfAtomic));
    let strict = Suite::new(|| Ok(NoWriteIf(MemoryStore::default())))
        .cases(4)
        .require_conditional_writes(true)
        .run();
    caught(&strict, Promise::WriteIfRefuses, &[]);
}
