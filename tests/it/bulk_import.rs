//! The bulk writer under injected failures: a store wrapper that fails on a seeded schedule with
//! retryable, non-retryable and whole-batch errors. Every row added is reported exactly once,
//! non-retryable errors are not retried, backoff delays stay within base and cap, and written rows
//! are in the store.
//!
//! Also: a worker that panicked, a stopped worker, bounded queues whatever the batch size, a
//! flush while rows are added, backpressure from a store that takes smaller batches, the last
//! write of a key kept through retries, and the refused options.

use std::collections::HashMap;
use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pk_codec::store::{
    Backoff, BulkOptions, BulkWriter, Dispatch, MemoryStore, RangePage, RangeQuery, RangeStore,
    RowOutcome, StoreError, StoreErrorKind, WriteOp, simulate_import,
};
use proptest::prelude::*;

use crate::support;
use crate::support::forward_to;
use crate::support::mix;

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

    forward_to!(inner, range);

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
                    .entry(String::from_utf8(op.key().to_vec()).unwrap())
                    .or_default() += 1;
                if op.key().ends_with(self.bad_suffix.as_bytes()) {
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
            let key = String::from_utf8(o.key.clone()).unwrap();
            prop_assert!(seen.insert(key.clone(), ()).is_none(), "{} reported twice", key);
            match &o.result {
                Ok(()) => prop_assert!(store.inner.get(&o.key).unwrap().is_some()),
                Err(e) => {
                    // Only the bad rows fail (the deadline is far), and they are never retried.
                    prop_assert!(key.ends_with("13"), "{}: {}", key, e);
                    prop_assert!(!e.is_retryable());
                    prop_assert_eq!(o.retries, 0);
                    prop_assert_eq!(store.attempts.lock().unwrap()[&key], 1);
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
        fn put(&self, _: &[u8], _: &[u8]) -> Result<(), StoreError> {
            Err(StoreError::new(StoreErrorKind::Busy, "busy"))
        }
        fn get(&self, _: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
            Ok(None)
        }
        fn delete(&self, _: &[u8]) -> Result<bool, StoreError> {
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
        fn put(&self, _: &[u8], _: &[u8]) -> Result<(), StoreError> {
            Err(StoreError::new(StoreErrorKind::Busy, "busy"))
        }
        fn get(&self, _: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
            Ok(None)
        }
        fn delete(&self, _: &[u8]) -> Result<bool, StoreError> {
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
            Vec::<(String, Vec<u8>)>::new(),
            &BulkOptions::default(),
            Duration::ZERO,
            |_| {}
        )
        .is_err()
    );
}

/// A memory store that runs `hook` on each batch before writing it: it may panic, as a buggy
/// adapter or store client might, or take its time.
struct Hooked<H>(MemoryStore, H);

impl<H: Fn(&[WriteOp]) + Send + Sync> RangeStore for Hooked<H> {
    forward_to!(0, range);
    fn batch_write(&self, ops: &[WriteOp]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        (self.1)(ops);
        self.0.batch_write(ops)
    }
}

/// A store that panics on the key `boom`.
fn panics_on_boom() -> Hooked<impl Fn(&[WriteOp]) + Send + Sync> {
    Hooked(MemoryStore::default(), |ops: &[WriteOp]| {
        assert!(
            !ops.iter().any(|op| op.key() == b"boom"),
            "the store panicked (on purpose, in a test)"
        );
    })
}

/// Runs `f` on a thread and waits at most `secs` for its answer: `None` when it hangs.
fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(secs)).ok()
}

/// A worker whose store (or callback) panicked left its rows counted as outstanding, and
/// `flush` waited for them forever: `BulkWriter::flush`, `close` and the writer's drop hung,
/// although `close` documents that a worker that panicked is reported by the rows it left
/// unreported (`rows_lost`). Now `flush` stops waiting for a lane whose worker has stopped: the
/// other lanes' rows are written, the dead lane's counted lost.
#[test]
fn a_bulk_writer_whose_worker_panicked_still_flushes_and_closes() {
    let outcome = within(120, || {
        let store = Arc::new(panics_on_boom());
        let writer = BulkWriter::new(
            Arc::clone(&store),
            BulkOptions {
                workers: Some(2),
                dispatch: Dispatch::RoundRobin,
                max_batch_rows: Some(1),
                flush_interval: Duration::from_millis(5),
                ..BulkOptions::default()
            },
        )
        .unwrap();
        // Lane 0 takes the even rows (its worker dies on `boom`), lane 1 the odd ones.
        let mut added = 0u64;
        for i in 0..40 {
            let key = if i == 0 {
                "boom".to_owned()
            } else {
                format!("k{i:02}")
            };
            if writer.add(key, b"v".to_vec()).is_ok() {
                added += 1;
            }
        }
        writer.flush();
        let stats = writer.close();
        (added, stats, store.0.len())
    });
    let (added, stats, stored) = outcome.expect("the bulk writer hung after its worker panicked");
    assert_eq!(stats.rows_added, added);
    assert_eq!(stats.rows_written, 20, "{stats:?}");
    assert_eq!(stored, 20);
    assert_eq!(stats.rows_failed, 0, "{stats:?}");
    assert_eq!(stats.rows_lost(), added - 20, "{stats:?}");
    assert!(stats.rows_lost() >= 1, "{stats:?}");

    // Dropped without close: the drop flushes, and returns too.
    let dropped = within(120, || {
        let store = Arc::new(panics_on_boom());
        let writer = BulkWriter::new(
            store,
            BulkOptions {
                workers: Some(1),
                max_batch_rows: Some(1),
                ..BulkOptions::default()
            },
        )
        .unwrap();
        let _ = writer.add("boom".to_owned(), Vec::new());
        let _ = writer.add("a".to_owned(), Vec::new());
        drop(writer);
    });
    assert!(dropped.is_some(), "dropping the bulk writer hung");
}

/// `BulkWriter::add` documents an error when the row's worker has stopped (it panicked), but it
/// staged the row and answered `Ok` unless the row filled a batch: rows added to a dead lane
/// were accepted, then lost. Now `add` answers the error for every row of a stopped worker, and
/// the row is not counted as added.
#[test]
fn bulk_writer_add_refuses_rows_for_a_worker_that_stopped() {
    let outcome = within(120, || {
        let store = Arc::new(panics_on_boom());
        let writer = BulkWriter::new(
            store,
            BulkOptions {
                workers: Some(1),
                max_batch_rows: Some(10),
                ..BulkOptions::default()
            },
        )
        .unwrap();
        writer.add("boom".to_owned(), Vec::new()).unwrap();
        writer.flush();
        let after = writer.add("a".to_owned(), Vec::new());
        (after, writer.close())
    });
    let (after, stats) = outcome.expect("the bulk writer hung");
    let e = after.expect_err("a row for a stopped worker was accepted");
    assert_eq!(e.kind(), pk_codec::store::StoreErrorKind::Other, "{e}");
    assert_eq!(stats.rows_added, 1, "{stats:?}");
    assert_eq!(stats.rows_lost(), 1, "{stats:?}");
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Each worker's queue is a channel allocated up front with room for `queue_rows / batch_rows`
/// batches: with one-row batches and `queue_rows` at its documented maximum, 2^20 slots of 32
/// bytes, 32 MiB a worker, committed at once; 64 workers took 2 GiB before a row was added, and
/// `MAX_WORKERS` (1024) workers, options every limit accepts, 32 GiB: an abort. Now a queue holds
/// at most 4,096 batches (with batches of 256 rows or more, still every row of `queue_rows`).
#[test]
fn bulk_writer_queues_are_bounded_whatever_the_batch_size() {
    let before = rss_kib();
    let writer = BulkWriter::new(
        Arc::new(MemoryStore::default()),
        BulkOptions {
            workers: Some(64),
            queue_rows: pk_codec::store::MAX_QUEUE_ROWS,
            max_batch_rows: Some(1),
            ..BulkOptions::default()
        },
    )
    .unwrap();
    let grown = rss_kib().saturating_sub(before);
    for i in 0..1_000u32 {
        writer.add(format!("{i:04}"), Vec::new()).unwrap();
    }
    let stats = writer.close();
    assert_eq!((stats.rows_written, stats.rows_lost()), (1_000, 0));
    if cfg!(target_os = "linux") {
        assert!(grown < 256 * 1024, "starting 64 workers took {grown} KiB");
    }
}

/// A row another thread adds while `flush` waits is staged for its worker, which takes staged
/// rows when its flush interval passes: with an interval of an hour, `flush` waited an hour
/// for it. Now `flush` hands staged rows over each time it wakes, and returns once both rows are
/// written, counted in `stats()` as soon as it returns (a row used to be reported done before it
/// was counted, so `flush(); stats()` could see 1 row written of 2).
///
/// Deterministic: the store holds the write of `slow` at a gate until the second row has been
/// added, so `late` is always added while `flush` waits, whatever the machine's load.
#[test]
fn a_flush_returns_when_rows_are_added_while_it_waits() {
    use std::sync::mpsc::{channel, sync_channel};
    let done = within(60, || {
        let (entered_tx, entered) = sync_channel::<()>(1);
        let (release, gate) = channel::<()>();
        let gate = std::sync::Mutex::new(gate);
        let entered_tx = std::sync::Mutex::new(entered_tx);
        let store = Arc::new(Hooked(MemoryStore::default(), move |ops: &[WriteOp]| {
            if ops.iter().any(|op| op.key() == b"slow") {
                let _ = entered_tx.lock().unwrap().send(());
                let _ = gate.lock().unwrap().recv();
            }
        }));
        let writer = Arc::new(
            BulkWriter::new(
                Arc::clone(&store),
                BulkOptions {
                    workers: Some(1),
                    max_batch_rows: Some(1000),
                    flush_interval: Duration::from_secs(3600),
                    ..BulkOptions::default()
                },
            )
            .unwrap(),
        );
        writer.add("slow".to_owned(), b"v".to_vec()).unwrap();
        // With an hour's interval and a batch of 1,000, the worker writes `slow` only for a
        // flush: once its write has begun, `flush` has been called and is waiting.
        let flusher = {
            let writer = Arc::clone(&writer);
            std::thread::spawn(move || {
                writer.flush();
                writer.stats()
            })
        };
        entered.recv().unwrap();
        writer.add("late".to_owned(), b"v".to_vec()).unwrap();
        release.send(()).unwrap();
        let stats = flusher.join().unwrap();
        (stats, store.0.len())
    });
    let (stats, stored) = done.expect("flush waited for a row added meanwhile");
    assert_eq!(
        (stats.rows_added, stats.rows_written, stored),
        (2, 2, 2),
        "{stats:?}"
    );
}

/// A zero flush interval made every idle worker poll its queue without waiting: a core each,
/// spinning for as long as the writer lived. It is refused, as the other options that cannot
/// work are.
#[test]
fn a_zero_flush_interval_is_refused() {
    let options = BulkOptions {
        flush_interval: Duration::ZERO,
        ..BulkOptions::default()
    };
    let err = BulkWriter::new(Arc::new(MemoryStore::default()), options).unwrap_err();
    assert_eq!(
        err.kind(),
        pk_codec::store::StoreErrorKind::Invalid,
        "{err}"
    );
    assert!(err.to_string().contains("flush interval"), "{err}");
    let ok = BulkOptions {
        flush_interval: Duration::from_nanos(1),
        ..BulkOptions::default()
    };
    assert!(BulkWriter::new(Arc::new(MemoryStore::default()), ok).is_ok());
}

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
    forward_to!(inner, range);
    fn batch_write(&self, ops: &[WriteOp]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        while self.closed.load(SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
        self.inner.batch_write(ops)
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
                workers: Some(1),
                max_batch_rows: Some(max_batch_rows),
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

/// A memory store whose batches fail row by row, as busy, on a seeded schedule (`busy_pct` in
/// 100): a store that reports per-row errors (Tablestore's BatchWriteRow does).
struct BusyRows {
    inner: MemoryStore,
    draws: AtomicU64,
    busy_pct: u64,
}

impl RangeStore for BusyRows {
    forward_to!(inner, range);
    fn batch_write(&self, ops: &[WriteOp]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        Ok(ops
            .iter()
            .map(|op| {
                if mix(self.draws.fetch_add(1, SeqCst)) % 100 < self.busy_pct {
                    Err(StoreError::new(StoreErrorKind::Busy, "busy row"))
                } else {
                    self.inner.batch_write(std::slice::from_ref(op))?.remove(0)
                }
            })
            .collect())
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(48), ..ProptestConfig::default() })]

    /// `BulkWriter` put a row refused as busy back at the end of its lane's queue, behind the
    /// rows of the same key added after it (in the same batch, already written, or queued):
    /// the retry then overwrote the key's later value, so an import that updates a key
    /// (`Dispatch::HashOfKey`, which sends one key's rows to one worker) could end with the
    /// key's older value, the last one lost. Now a retried row goes before its key's later rows
    /// (a later row already written is written again after it). The property: any rows over a
    /// few keys, any batch size and worker count, rows refused at random; once the writer is
    /// closed each key holds the value of its last row, and every row was reported once.
    #[test]
    fn bulk_writer_keeps_the_last_write_of_a_key_through_retries(
        rows in prop::collection::vec(0u8..6, 1..80),
        workers in 1usize..4,
        max_batch_rows in 1usize..9,
        busy_pct in 0u64..50,
        seed in any::<u64>(),
    ) {
        let store = Arc::new(BusyRows { inner: MemoryStore::default(), draws: AtomicU64::new(seed), busy_pct });
        let reported = Arc::new(AtomicU64::new(0));
        let writer = {
            let reported = Arc::clone(&reported);
            BulkWriter::with_callback(
                Arc::clone(&store),
                BulkOptions {
                    workers: Some(workers),
                    max_batch_rows: Some(max_batch_rows),
                    flush_interval: Duration::from_millis(1),
                    backoff: pk_codec::store::Backoff::Jittered {
                        base: Duration::from_micros(1),
                        cap: Duration::from_micros(50),
                    },
                    ..BulkOptions::default()
                },
                move |o| {
                    assert!(o.result.is_ok(), "{o:?}");
                    reported.fetch_add(1, SeqCst);
                },
            )
            .unwrap()
        };
        let mut last = std::collections::BTreeMap::new();
        for (i, &k) in rows.iter().enumerate() {
            let value = (i as u32).to_be_bytes().to_vec();
            writer.add(format!("k{k}"), value.clone()).unwrap();
            last.insert(format!("k{k}"), value);
        }
        let stats = writer.close();
        prop_assert_eq!((stats.rows_written, stats.rows_lost()), (rows.len() as u64, 0));
        prop_assert_eq!(reported.load(SeqCst), rows.len() as u64);
        for (k, v) in &last {
            let stored = store.inner.get(k.as_bytes()).unwrap();
            prop_assert_eq!(stored.as_ref(), Some(v), "key {}", k);
        }
    }
}

#[test]
fn bulk_writer_with_a_huge_max_batch_rows_does_not_panic() {
    // `BulkOptions::check` accepts any `max_batch_rows` above 0, and `RangeStore::max_batch`
    // defaults to usize::MAX (MemoryStore, RedbStore), so `batch_rows` is the user's number and
    // each lane's staging Vec reserves it up front. usize::MAX panics ("capacity overflow");
    // 1 << 28 rows x 1024 workers reserves terabytes (an abort, not a panic, once touched or
    // refused by the allocator). Correct: either `StoreErrorKind::Invalid` from `check` for a
    // `max_batch_rows` above a documented cap (as `workers` and `queue_rows` have), or no
    // up-front reservation beyond a small bound (`Vec::new()`, or `batch_rows.min(1024)`).
    let r = std::panic::catch_unwind(|| {
        BulkWriter::new(
            Arc::new(MemoryStore::default()),
            BulkOptions {
                workers: Some(1),
                max_batch_rows: Some(usize::MAX),
                ..BulkOptions::default()
            },
        )
        .map(BulkWriter::close)
    });
    match r {
        Ok(Ok(stats)) => assert_eq!(stats.rows_written, 0),
        Ok(Err(e)) => assert_eq!(e.kind(), StoreErrorKind::Invalid, "{e}"),
        Err(_) => panic!("BulkWriter::new panicked on max_batch_rows = usize::MAX"),
    }
}
