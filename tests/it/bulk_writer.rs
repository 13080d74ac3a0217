//! The bulk writer fits its store: `BulkOptions` left unset take the store's write profile
//! (workers, batch rows, batch bytes), options set win, the table model and etcd keep the
//! network profile the writer always used, redb gets one worker and large batches, and the
//! writer runs by what it resolved: as many lanes, batches no larger, a batch full of bytes
//! written without waiting for the flush interval.

use std::collections::{HashMap, HashSet};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::Duration;

use pk_codec::store::{
    BulkOptions, BulkWriter, MemoryStore, RangeQuery, RangeStore, RedbStore, StoreError,
    StoreErrorKind, WriteOp, WriteProfile, simulate_import,
};
use pk_codec::table::{Table, TableOptions};

use crate::support::forward_to;

/// Long enough that no test waits for it: a wait this long is a hang.
const HANG: Duration = Duration::from_secs(120);

/// A batch as the store saw it: the thread that sent it, its rows and its bytes.
#[derive(Debug, Clone, Copy)]
struct Seen {
    thread: ThreadId,
    rows: usize,
    bytes: usize,
}

/// The reference store with a write profile of its own, recording every batch it is sent (and
/// telling `batches`, when set, as each is written).
struct Profiled {
    inner: MemoryStore,
    profile: WriteProfile,
    seen: Mutex<Vec<Seen>>,
    batches: Mutex<Option<Sender<Seen>>>,
}

impl Profiled {
    fn new(profile: WriteProfile) -> Self {
        Self {
            inner: MemoryStore::default(),
            profile,
            seen: Mutex::new(Vec::new()),
            batches: Mutex::new(None),
        }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl RangeStore for Profiled {
    fn write_profile(&self) -> WriteProfile {
        self.profile
    }

    forward_to!(inner, range);

    fn batch_write(&self, ops: &[WriteOp]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        let bytes = ops
            .iter()
            .map(|op| match op {
                WriteOp::Put { key, value } => key.len() + value.len(),
                WriteOp::Delete { key } => key.len(),
            })
            .sum();
        let seen = Seen {
            thread: std::thread::current().id(),
            rows: ops.len(),
            bytes,
        };
        let results = self.inner.batch_write(ops);
        self.seen.lock().unwrap().push(seen);
        if let Some(tx) = &*self.batches.lock().unwrap() {
            let _ = tx.send(seen);
        }
        results
    }
}

fn network() -> WriteProfile {
    WriteProfile::default()
}

#[test]
fn the_network_profile_is_what_the_writer_always_used() {
    let p = network();
    assert_eq!(
        (p.workers, p.max_batch_rows, p.max_batch_bytes),
        (4, 200, 4 << 20)
    );
}

#[test]
fn the_defaults_follow_each_store_s_write_profile() {
    let defaults = BulkOptions::default();
    // The table model, as Tablestore: the network profile, as before.
    let table = Table::single_string_key("pk", TableOptions::default()).unwrap();
    assert_eq!(defaults.profile_for(&table), network());
    assert_eq!(defaults.profile_for(&MemoryStore::default()), network());
    // redb: one writer at a time, each commit a sync: one worker, large batches.
    let redb = RedbStore::in_memory().unwrap();
    assert_eq!(redb.write_profile().workers, 1);
    assert_eq!(defaults.profile_for(&redb), redb.write_profile());
    assert_eq!(
        defaults.profile_for(&redb),
        WriteProfile::default()
            .workers(1)
            .max_batch_rows(200_000)
            .max_batch_bytes(32 << 20)
    );
}

/// etcd keeps the network profile, its batches capped at its 128 operations a transaction, as
/// before. (Building the store opens no connection.)
#[cfg(feature = "etcd")]
#[test]
fn the_defaults_into_etcd_stay_as_they_were() {
    let etcd = pk_codec::store::EtcdStore::new(["http://127.0.0.1:9"]).unwrap();
    assert_eq!(
        BulkOptions::default().profile_for(&etcd),
        network().max_batch_rows(128)
    );
}

#[test]
fn options_set_win_over_the_store_s_profile() {
    let redb = RedbStore::in_memory().unwrap();
    let liked = redb.write_profile();
    let set = |options: BulkOptions| options.profile_for(&redb);
    let workers = set(BulkOptions {
        workers: Some(3),
        ..BulkOptions::default()
    });
    assert_eq!(workers, liked.workers(3));
    let rows = set(BulkOptions {
        max_batch_rows: Some(200),
        ..BulkOptions::default()
    });
    assert_eq!(rows, liked.max_batch_rows(200));
    let bytes = set(BulkOptions {
        max_batch_bytes: Some(1 << 10),
        ..BulkOptions::default()
    });
    assert_eq!(bytes, liked.max_batch_bytes(1 << 10));
    // A store's hard limit still caps the rows set: the table takes 200 rows a batch.
    let table = Table::single_string_key("pk", TableOptions::default()).unwrap();
    let big = BulkOptions {
        max_batch_rows: Some(5_000),
        ..BulkOptions::default()
    };
    assert_eq!(big.profile_for(&table).max_batch_rows, 200);
}

/// The writer runs by the profile it resolved: as many worker threads as it says (rows by key
/// hash reach every lane), no batch over its rows or bytes; options set win.
#[test]
fn a_writer_runs_with_the_workers_and_batches_its_store_likes() {
    let profile = WriteProfile::default()
        .workers(3)
        .max_batch_rows(7)
        .max_batch_bytes(200);
    for (options, workers, rows, bytes) in [
        (BulkOptions::default(), 3, 7, 200),
        (
            BulkOptions {
                workers: Some(1),
                max_batch_rows: Some(20),
                max_batch_bytes: Some(10_000),
                ..BulkOptions::default()
            },
            1,
            20,
            10_000,
        ),
    ] {
        let store = Arc::new(Profiled::new(profile));
        let writer = BulkWriter::new(Arc::clone(&store), options).unwrap();
        // 16-byte keys and values of 0 to 63 bytes: rows of 16 to 79 bytes.
        for i in 0..600u32 {
            writer
                .add(format!("{i:016}"), vec![1; (i % 64) as usize])
                .unwrap();
        }
        let stats = writer.close();
        assert_eq!((stats.rows_written, stats.rows_lost()), (600, 0));
        assert_eq!(store.inner.len(), 600);
        let seen = store.seen();
        let threads: HashSet<ThreadId> = seen.iter().map(|s| s.thread).collect();
        assert_eq!(threads.len(), workers);
        for s in &seen {
            assert!(s.rows >= 1 && s.rows <= rows, "{s:?}");
            assert!(s.bytes <= bytes || s.rows == 1, "{s:?}");
        }
        assert_eq!(seen.iter().map(|s| s.rows).sum::<usize>(), 600);
    }
}

/// A batch full of bytes goes to its worker as it fills, as one full of rows does: neither
/// waits for the flush interval (an hour here) nor for `flush`.
#[test]
fn a_full_batch_is_written_without_waiting_for_the_flush_interval() {
    let store = Arc::new(Profiled::new(
        WriteProfile::default()
            .workers(1)
            .max_batch_rows(3)
            .max_batch_bytes(100),
    ));
    let (tx, batches) = channel();
    *store.batches.lock().unwrap() = Some(tx);
    let writer = BulkWriter::new(
        Arc::clone(&store),
        BulkOptions {
            flush_interval: Duration::from_secs(3_600),
            ..BulkOptions::default()
        },
    )
    .unwrap();
    // Two rows of 60 bytes: the second would take the batch past 100 bytes, so the first goes.
    writer.add("a".repeat(10), vec![0; 50]).unwrap();
    writer.add("b".repeat(10), vec![0; 50]).unwrap();
    let first = batches
        .recv_timeout(HANG)
        .expect("the byte-full batch is written");
    assert_eq!((first.rows, first.bytes), (1, 60));
    // Two more small rows fill the batch's 3 rows: it goes too.
    writer.add("c", vec![]).unwrap();
    writer.add("d", vec![]).unwrap();
    let second = batches
        .recv_timeout(HANG)
        .expect("the row-full batch is written");
    assert_eq!((second.rows, second.bytes), (3, 62));
    let stats = writer.close();
    assert_eq!((stats.rows_written, stats.requests), (4, 2));
}

#[test]
fn a_profile_that_cannot_work_is_refused_and_says_whose_it_is() {
    let broken = Arc::new(Profiled::new(WriteProfile::default().workers(0)));
    let err = BulkWriter::new(Arc::clone(&broken), BulkOptions::default()).unwrap_err();
    assert_eq!(err.kind(), StoreErrorKind::Invalid);
    assert_eq!(
        err.message(),
        "a bulk writer takes 1 to 1024 workers, not 0 (from the store's write profile)"
    );
    // The options can mend it.
    let mended = BulkOptions {
        workers: Some(2),
        ..BulkOptions::default()
    };
    let writer = BulkWriter::new(Arc::clone(&broken), mended).unwrap();
    writer.add("k", b"v".to_vec()).unwrap();
    assert_eq!(writer.close().rows_written, 1);
    let store = Arc::new(MemoryStore::default());
    for (options, message) in [
        (
            BulkOptions {
                workers: Some(0),
                ..BulkOptions::default()
            },
            "a bulk writer takes 1 to 1024 workers, not 0 (from the options)",
        ),
        (
            BulkOptions {
                max_batch_rows: Some(0),
                ..BulkOptions::default()
            },
            "a batch needs room for at least one row, not 0 (from the options)",
        ),
        (
            BulkOptions {
                max_batch_bytes: Some(0),
                ..BulkOptions::default()
            },
            "a batch needs room for at least one byte, not 0 (from the options)",
        ),
    ] {
        let err = BulkWriter::new(Arc::clone(&store), options).unwrap_err();
        assert_eq!(
            (err.kind(), err.message()),
            (StoreErrorKind::Invalid, message)
        );
    }
}

/// `simulate_import` resolves the options against the store as the writer does: one worker and
/// 50-row batches make 20 requests, one after the other.
#[test]
fn simulate_import_follows_the_store_s_profile() {
    let store = Profiled::new(WriteProfile::default().workers(1).max_batch_rows(50));
    let rows = (0..1_000u32).map(|i| (format!("{i:06}"), vec![1u8]));
    let sim = simulate_import(
        &store,
        rows,
        &BulkOptions::default(),
        Duration::from_millis(1),
        |_| {},
    )
    .unwrap();
    assert_eq!((sim.stats.rows_written, sim.stats.requests), (1_000, 20));
    assert_eq!(sim.elapsed, Duration::from_millis(20));
    let per_thread: HashMap<ThreadId, usize> =
        store.seen().iter().fold(HashMap::new(), |mut m, s| {
            *m.entry(s.thread).or_default() += s.rows;
            m
        });
    assert_eq!(per_thread.len(), 1);
}

/// Into redb with its defaults: every row written, once, readable.
#[test]
fn the_defaults_write_every_row_into_redb() {
    let store = Arc::new(RedbStore::in_memory().unwrap());
    let writer = BulkWriter::new(Arc::clone(&store), BulkOptions::default()).unwrap();
    for i in 0..120_000u32 {
        writer
            .add(format!("{:02},{i:08}", i % 16), i.to_be_bytes().to_vec())
            .unwrap();
    }
    let stats = writer.close();
    assert_eq!((stats.rows_written, stats.rows_lost()), (120_000, 0));
    let all = store
        .range(&RangeQuery::new("", None).limit(usize::MAX))
        .unwrap()
        .rows;
    assert_eq!(all.len(), 120_000);
}
