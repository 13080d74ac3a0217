//! The second adversarial pass over the store bridges, the bucket merge, `BulkWriter` and the
//! `pk` command line: each test failed before the fix its comment names (CHANGELOG, "Fixed").

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::time::Duration;

use pk_codec::store::{
    BulkOptions, BulkWriter, MemoryStore, RangePage, RangeQuery, RangeStore, StoreError, WriteOp,
};

// ---- BulkWriter -------------------------------------------------------------------------------

/// A memory store whose batches hold at most `max_batch` rows and whose batch writes wait while
/// `closed` is set.
struct Gated {
    inner: MemoryStore,
    max_batch: usize,
    closed: AtomicBool,
}

impl RangeStore for Gated {
    fn max_batch(&self) -> usize {
        self.max_batch
    }
    fn put(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.inner.put(key, value)
    }
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.get(key)
    }
    fn delete(&self, key: &str) -> Result<bool, StoreError> {
        self.inner.delete(key)
    }
    fn batch_write(&self, ops: &[WriteOp]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        while self.closed.load(SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
        self.inner.batch_write(ops)
    }
    fn range(&self, query: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
        self.inner.range(query)
    }
}

/// A worker gathered rows until its queue held `BulkOptions::max_batch_rows`, where the batch it
/// writes is the smaller of that and the store's `max_batch()`: with options asking for more
/// rows than the store takes (`usize::MAX`: "as many as the store allows"), the worker drained
/// its channel into its own queue as fast as the producer filled it and wrote nothing until the
/// producer paused for a flush interval. `add` never waited: the back-pressure of `queue_rows`
/// was gone, and the whole import sat in memory. Now the worker writes as soon as it holds a
/// store-sized batch, and a producer ahead of a stuck store waits after a few batches.
#[test]
fn bulk_writer_backpressure_holds_when_the_store_takes_smaller_batches() {
    for max_batch_rows in [64, usize::MAX] {
        let store = Arc::new(Gated {
            inner: MemoryStore::default(),
            max_batch: 2,
            closed: AtomicBool::new(true),
        });
        let writer = BulkWriter::new(
            Arc::clone(&store),
            BulkOptions {
                workers: 1,
                max_batch_rows,
                queue_rows: 2,
                flush_interval: Duration::from_millis(200),
                ..BulkOptions::default()
            },
        )
        .unwrap();
        let added = std::thread::scope(|s| {
            s.spawn(|| {
                for i in 0..1_000u32 {
                    writer.add(format!("{i:04}"), Vec::new()).unwrap();
                }
            });
            std::thread::sleep(Duration::from_millis(400));
            let added = writer.stats().rows_added;
            store.closed.store(false, SeqCst);
            added
        });
        let stats = writer.close();
        assert_eq!((stats.rows_written, stats.rows_lost()), (1_000, 0));
        // One batch in the worker's hands, one queued, one being staged (and the row of the
        // `add` that waits): 2 rows each.
        assert!(
            added <= 8,
            "max_batch_rows {max_batch_rows}: {added} rows were taken while the store wrote none"
        );
    }
}
