//! What a store met on the way to an answer (moves to another endpoint, timeouts: `Faults`,
//! reported by `RangeStore::batch_write_with_faults`) shows in a `BulkWriter`'s stats and in
//! each row's outcome, over all the row's tries, also when the store answered in the end and
//! nothing was retried. Before, a request that failed over inside the store (etcd's leader
//! lost) left no trace in `RowOutcome::retries` or `BulkStats`.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use pk_codec::store::{
    Backoff, BulkOptions, BulkWriter, Faults, MemoryStore, RangePage, RangeQuery, RangeStore,
    RowOutcome, StoreError, StoreErrorKind, WriteOp,
};

/// A store of several endpoints, as the writer sees it: every request moves past one endpoint
/// (a failover); the first request also times out at the next one and fails as a whole
/// (`Unavailable`), to be retried; rows whose key ends in `9` are refused for good.
#[derive(Default)]
struct FailsOver {
    inner: MemoryStore,
    requests: AtomicU32,
}

impl RangeStore for FailsOver {
    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.inner.put(key, value)
    }
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.get(key)
    }
    fn delete(&self, key: &[u8]) -> Result<bool, StoreError> {
        self.inner.delete(key)
    }
    fn range(&self, query: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
        self.inner.range(query)
    }
    fn batch_write(&self, ops: &[WriteOp]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        self.batch_write_with_faults(ops, &mut Faults::default())
    }
    fn batch_write_with_faults(
        &self,
        ops: &[WriteOp],
        faults: &mut Faults,
    ) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        faults.failovers += 1;
        if self.requests.fetch_add(1, Relaxed) == 0 {
            faults.timeouts += 1;
            return Err(StoreError::new(StoreErrorKind::Unavailable, "timed out"));
        }
        Ok(ops
            .iter()
            .map(|op| {
                if op.key().ends_with(b"9") {
                    Err(StoreError::new(StoreErrorKind::Invalid, "a bad row"))
                } else {
                    self.inner.batch_write(std::slice::from_ref(op))?.remove(0)
                }
            })
            .collect())
    }
}

#[test]
fn a_writer_shows_each_request_s_failovers_and_timeouts_in_its_stats_and_rows() {
    let store = Arc::new(FailsOver::default());
    let outcomes: Arc<Mutex<Vec<RowOutcome>>> = Arc::default();
    let sink = Arc::clone(&outcomes);
    let options = BulkOptions {
        workers: Some(1),
        max_batch_rows: Some(10),
        backoff: Backoff::None,
        ..BulkOptions::default()
    };
    let writer = BulkWriter::with_callback(Arc::clone(&store), options, move |o| {
        sink.lock().unwrap().push(o);
    })
    .unwrap();
    for i in 0..10u32 {
        writer.add(format!("k{i}"), b"v".to_vec()).unwrap();
    }
    let stats = writer.close();
    // The first request failed over and timed out, then failed; its retry failed over and was
    // answered: 2 requests, 2 failovers, 1 timeout.
    assert_eq!(
        (
            stats.requests,
            stats.failovers,
            stats.timeouts,
            stats.retries
        ),
        (2, 2, 1, 10),
        "{stats:?}"
    );
    assert_eq!((stats.rows_written, stats.rows_failed), (9, 1));
    let outcomes = outcomes.lock().unwrap();
    assert_eq!(outcomes.len(), 10);
    for o in outcomes.iter() {
        // Every row rode both requests: it met both failovers and the timeout, written or not.
        assert_eq!(
            (o.faults.failovers, o.faults.timeouts, o.retries),
            (2, 1, 1),
            "{o:?}"
        );
        assert_eq!(o.result.is_err(), o.key.ends_with(b"9"), "{o:?}");
    }
}

/// A store that reports nothing (the default `batch_write_with_faults`) shows no fault.
#[test]
fn a_store_without_endpoints_reports_no_fault() {
    let store = Arc::new(MemoryStore::default());
    let faulty = Arc::new(AtomicU32::new(0));
    let seen = Arc::clone(&faulty);
    let writer = BulkWriter::with_callback(store, BulkOptions::default(), move |o| {
        if o.faults.any() {
            seen.fetch_add(1, Relaxed);
        }
    })
    .unwrap();
    for i in 0..1_000u32 {
        writer.add(format!("{i:06}"), b"v".to_vec()).unwrap();
    }
    let stats = writer.close();
    assert_eq!(
        (stats.rows_written, stats.failovers, stats.timeouts),
        (1_000, 0, 0)
    );
    assert_eq!(faulty.load(Relaxed), 0);
}
