//! The bulk writer under injected failures: a store wrapper that fails on a seeded schedule with
//! retryable, non-retryable and whole-batch errors. Every row added is reported exactly once,
//! non-retryable errors are not retried, backoff delays stay within base and cap, and written rows
//! are in the store.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pk_codec::store::{
    Backoff, BulkOptions, BulkWriter, Dispatch, MemoryStore, RangePage, RangeQuery, RangeStore,
    RowOutcome, StoreError, StoreErrorKind, WriteOp, simulate_import,
};
use proptest::prelude::*;

mod support;

/// A store that fails on a seeded schedule: per row, busy (retryable) with probability
/// `busy_pct`, refused for good when the key ends in `bad_suffix`; per batch, refused as a whole
/// (not retryable) with probability `batch_pct` when the batch holds more than one row.
struct Flaky {
    inner: MemoryStore,
    state: Mutex<u64>,
    busy_pct: u64,
    batch_pct: u64,
    bad_suffix: &'static str,
    attempts: Mutex<HashMap<String, u32>>,
    requests: AtomicU64,
    /// Batches refused as a whole, and rows refused as busy: what the writer must have seen.
    batches_refused: AtomicU64,
    busy_refused: AtomicU64,
}

impl Flaky {
    fn new(seed: u64, busy_pct: u64, batch_pct: u64) -> Self {
        Self {
            inner: MemoryStore::default(),
            state: Mutex::new(seed),
            busy_pct,
            batch_pct,
            bad_suffix: "13",
            attempts: Mutex::new(HashMap::new()),
            requests: AtomicU64::new(0),
            batches_refused: AtomicU64::new(0),
            busy_refused: AtomicU64::new(0),
        }
    }

    fn roll(&self, pct: u64) -> bool {
        let mut s = self.state.lock().unwrap();
        *s = s
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (*s >> 33) % 100 < pct
    }
}

impl RangeStore for Flaky {
    fn max_batch(&self) -> usize {
        50
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
        self.requests.fetch_add(1, Relaxed);
        assert!(
            ops.len() <= self.max_batch(),
            "a batch over the store's limit"
        );
        if ops.len() > 1 && self.roll(self.batch_pct) {
            self.batches_refused.fetch_add(1, Relaxed);
            return Err(StoreError::new(StoreErrorKind::Invalid, "batch refused"));
        }
        Ok(ops
            .iter()
            .map(|op| {
                *self
                    .attempts
                    .lock()
                    .unwrap()
                    .entry(op.key().to_owned())
                    .or_default() += 1;
                if op.key().ends_with(self.bad_suffix) {
                    Err(StoreError::new(StoreErrorKind::Invalid, "bad row"))
                } else if self.roll(self.busy_pct) {
                    self.busy_refused.fetch_add(1, Relaxed);
                    Err(StoreError::new(StoreErrorKind::Busy, "partition busy"))
                } else {
                    match op {
                        WriteOp::Put { key, value } => self.inner.put(key, value),
                        WriteOp::Delete { key } => self.inner.delete(key).map(drop),
                    }
                }
            })
            .collect())
    }

    fn range(&self, query: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
        self.inner.range(query)
    }
}

fn options(workers: usize, seed: u64) -> BulkOptions {
    BulkOptions {
        workers: Some(workers),
        dispatch: Dispatch::Random,
        max_batch_rows: Some(200),
        flush_interval: Duration::from_millis(2),
        backoff: Backoff::Jittered {
            base: Duration::from_micros(200),
            cap: Duration::from_millis(3),
        },
        deadline: Duration::from_secs(30),
        seed,
        queue_rows: 64,
        ..BulkOptions::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(12), ..ProptestConfig::default() })]

    #[test]
    fn every_row_is_reported_exactly_once_under_injected_failures(
        seed in any::<u64>(),
        rows in 1usize..600,
        workers in 1usize..5,
        threads in 1usize..4,
        busy_pct in 0u64..40,
        batch_pct in 0u64..30,
    ) {
        let store = Arc::new(Flaky::new(seed, busy_pct, batch_pct));
        let outcomes: Arc<Mutex<Vec<RowOutcome>>> = Arc::default();
        let sink = Arc::clone(&outcomes);
        let writer = BulkWriter::with_callback(Arc::clone(&store), options(workers, seed), move |o| {
            sink.lock().unwrap().push(o);
        })
        .unwrap();
        // Rows added from several threads at once.
        std::thread::scope(|s| {
            for t in 0..threads {
                let writer = &writer;
                s.spawn(move || {
                    for i in (t..rows).step_by(threads) {
                        writer.add(format!("k{i:05}"), vec![(i % 251) as u8]).unwrap();
                    }
                });
            }
        });
        let stats = writer.close();
        let outcomes = outcomes.lock().unwrap();
        prop_assert_eq!(stats.rows_added, rows as u64);
        prop_assert_eq!(stats.rows_lost(), 0);
        prop_assert_eq!(outcomes.len(), rows);
        let mut seen = HashMap::new();
        for o in outcomes.iter() {
            prop_assert!(seen.insert(o.key.clone(), ()).is_none(), "{} reported twice", o.key);
            match &o.result {
                Ok(()) => prop_assert!(store.inner.get(&o.key).unwrap().is_some()),
                Err(e) => {
                    // Only the bad rows fail (the deadline is far), and they are never retried.
                    prop_assert!(o.key.ends_with("13"), "{}: {}", o.key, e);
                    prop_assert!(!e.is_retryable());
                    prop_assert_eq!(o.retries, 0);
                    prop_assert_eq!(store.attempts.lock().unwrap()[&o.key], 1);
                }
            }
        }
        let bad = (0..rows).filter(|i| format!("k{i:05}").ends_with("13")).count() as u64;
        prop_assert_eq!((stats.rows_written, stats.rows_failed), (rows as u64 - bad, bad));
        prop_assert_eq!(store.inner.len() as u64, rows as u64 - bad);
        // Backoff delays stay below the cap.
        prop_assert!(stats.max_backoff_us < 3_000, "{}", stats.max_backoff_us);
        if busy_pct == 0 {
            prop_assert_eq!(stats.retries, 0);
        }
        // Every injected failure was seen: each busy refusal counted (and retried), each batch
        // refused as a whole written again row by row.
        prop_assert_eq!(stats.busy, store.busy_refused.load(Relaxed));
        prop_assert_eq!(stats.retries > 0, stats.busy > 0);
        prop_assert_eq!(stats.single_row_fallbacks, store.batches_refused.load(Relaxed));
    }
}

#[test]
fn rows_that_stay_busy_fail_at_their_deadline_with_the_busy_error() {
    struct AlwaysBusy;
    impl RangeStore for AlwaysBusy {
        fn put(&self, _: &str, _: &[u8]) -> Result<(), StoreError> {
            Err(StoreError::new(StoreErrorKind::Busy, "busy"))
        }
        fn get(&self, _: &str) -> Result<Option<Vec<u8>>, StoreError> {
            Ok(None)
        }
        fn delete(&self, _: &str) -> Result<bool, StoreError> {
            Ok(false)
        }
        fn range(&self, _: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
            Ok(RangePage::default())
        }
    }
    let rows = (0..10u32).map(|i| (format!("{i}"), vec![]));
    let options = BulkOptions {
        workers: Some(1),
        deadline: Duration::from_secs(5),
        ..BulkOptions::default()
    };
    let sim = simulate_import(
        &AlwaysBusy,
        rows,
        &options,
        Duration::from_millis(10),
        |_| {},
    )
    .unwrap();
    assert_eq!(
        (
            sim.stats.rows_written,
            sim.stats.rows_failed,
            sim.stats.rows_lost()
        ),
        (0, 10, 0)
    );
    assert!(sim.stats.retries > 0 && sim.stats.busy > sim.stats.retries);
    // Gave up once the deadline passed, not before.
    assert!(sim.elapsed >= Duration::from_secs(5), "{:?}", sim.elapsed);
}

/// A backoff longer than the deadline waits only until the deadline: the rows are tried once
/// more then and fail, instead of keeping the lane asleep for the backoff's length.
#[test]
fn a_backoff_longer_than_the_deadline_waits_until_the_deadline() {
    struct AlwaysBusy;
    impl RangeStore for AlwaysBusy {
        fn put(&self, _: &str, _: &[u8]) -> Result<(), StoreError> {
            Err(StoreError::new(StoreErrorKind::Busy, "busy"))
        }
        fn get(&self, _: &str) -> Result<Option<Vec<u8>>, StoreError> {
            Ok(None)
        }
        fn delete(&self, _: &str) -> Result<bool, StoreError> {
            Ok(false)
        }
        fn range(&self, _: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
            Ok(RangePage::default())
        }
    }
    for (base, cap) in [
        (Duration::from_secs(3_600), Duration::MAX),
        (Duration::from_secs(1), Duration::from_secs(86_400 * 365)),
        (Duration::MAX, Duration::MAX),
    ] {
        let options = BulkOptions {
            workers: Some(2),
            backoff: Backoff::Jittered { base, cap },
            deadline: Duration::from_millis(500),
            seed: 7,
            ..BulkOptions::default()
        };
        let rows = (0..20u32).map(|i| (format!("{i:03}"), vec![1]));
        let sim = simulate_import(
            &AlwaysBusy,
            rows,
            &options,
            Duration::from_millis(1),
            |_| {},
        )
        .unwrap();
        assert_eq!((sim.stats.rows_written, sim.stats.rows_failed), (0, 20));
        assert!(
            sim.elapsed <= options.deadline + Duration::from_millis(50),
            "{base:?}/{cap:?}: {:?}",
            sim.elapsed
        );
        assert!(sim.stats.max_backoff_us <= 500_000, "{:?}", sim.stats);
    }
}

#[test]
fn bad_options_are_refused() {
    let store = Arc::new(MemoryStore::default());
    for bad in [
        BulkOptions {
            workers: Some(0),
            ..BulkOptions::default()
        },
        BulkOptions {
            max_batch_rows: Some(0),
            ..BulkOptions::default()
        },
        BulkOptions {
            backoff: Backoff::Jittered {
                base: Duration::from_millis(10),
                cap: Duration::from_millis(1),
            },
            ..BulkOptions::default()
        },
    ] {
        let err = BulkWriter::new(Arc::clone(&store), bad).unwrap_err();
        assert_eq!(err.kind(), StoreErrorKind::Invalid);
    }
    assert!(
        simulate_import(
            &*store,
            Vec::new(),
            &BulkOptions::default(),
            Duration::ZERO,
            |_| {}
        )
        .is_err()
    );
}
