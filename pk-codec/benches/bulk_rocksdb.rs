//! `BulkWriter` with its defaults into RocksDB (`RocksStore`, the store's `WriteProfile`),
//! against plain batched loops written straight against the `rocksdb` crate's API: the same
//! 200,000 rows (an IoT key with a 16-bucket hash prefix, readings in the order an app receives
//! them) into a fresh database directory, one synced `WriteBatch` per batch, as `RocksStore`
//! writes them.
//!
//! `cargo bench -p pk-codec --features rocksdb --bench bulk_rocksdb` (`PK_BENCH_ROUNDS`, default
//! 21). Every round runs every case once, in a rotating order, each into a new directory
//! (opening and closing the database are not timed); the report gives each case's median and
//! the median over the rounds of the writer's throughput against the best loop's within the
//! round. The loops try batch sizes from 10,000 rows to every row in one batch; writers with other
//! profiles run beside them, to show why the profile is what it is.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use pk_codec::Layout;
use pk_codec::store::{BulkOptions, BulkWriter, RangeQuery, RangeStore, RocksStore};
use rocksdb::{WriteBatchWithTransaction, WriteOptions};

mod harness;

use harness::{cpu_model, env_usize, load_average, median, quartile};

const DEVICES: u64 = 1_000;
const READINGS: u64 = 200;
const ROWS: u64 = DEVICES * READINGS;

/// The batch sizes the plain loops try (the last, every row in one batch; 1,000 rows and
/// 100,000 were slower than 10,000 and 50,000 in a first run, and are left out).
const LOOP_BATCHES: [usize; 3] = [10_000, 50_000, ROWS as usize];

type Rows = Vec<(Vec<u8>, Vec<u8>)>;

/// 1,000 devices, a reading each every second for 200 s, in time order (as they arrive).
fn rows() -> Rows {
    let layout: Layout = "device_id: u32 width=6; ts: u64 width=13; buckets=16:hash(device_id):sep"
        .parse()
        .unwrap();
    let mut rows = Vec::with_capacity(ROWS as usize);
    for t in 0..READINGS {
        for device in 0..DEVICES {
            let ts = 1_700_000_000_000 + t * 1_000;
            let key = layout.encode(&[(device as u32).into(), ts.into()]).unwrap();
            let celsius = 15.0 + ((device * 7 + t) % 200) as f64 / 10.0;
            let value = format!(
                r#"{{"celsius":{celsius:.1},"humidity":{}}}"#,
                (device + t) % 100
            );
            rows.push((key.into_bytes(), value.into_bytes()));
        }
    }
    rows
}

/// The plain loop: `batch` rows a synced `WriteBatch`, straight through the crate's API (into the
/// database `RocksStore::open` opens, as the store's own writes go).
fn plain_loop(path: &Path, rows: Rows, batch: usize) -> u64 {
    let store = RocksStore::open(path).unwrap();
    let db = store.db();
    let mut sync = WriteOptions::default();
    sync.set_sync(true);
    let start = Instant::now();
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let mut b = WriteBatchWithTransaction::<true>::default();
        for (key, value) in rows.by_ref().take(batch) {
            b.put(key, value);
        }
        db.write_opt(b, &sync).unwrap();
    }
    let ns = elapsed_ns(start);
    drop(black_box(store));
    ns
}

/// The same rows through a `BulkWriter` into a `RocksStore`, with `options`.
fn writer(path: &Path, rows: Rows, options: &BulkOptions) -> u64 {
    let store = Arc::new(RocksStore::open(path).unwrap());
    let start = Instant::now();
    let writer = BulkWriter::new(Arc::clone(&store), options.clone()).unwrap();
    for (key, value) in rows {
        writer.add(key, value).unwrap();
    }
    let stats = writer.close();
    let ns = elapsed_ns(start);
    assert_eq!((stats.rows_written, stats.rows_lost()), (ROWS, 0));
    drop(black_box(store));
    ns
}

fn elapsed_ns(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Every row of the database at `path`, in key order.
fn read_back(path: &Path) -> Rows {
    let store = RocksStore::open(path).unwrap();
    let page = store
        .range(&RangeQuery::new("", None).limit(usize::MAX))
        .unwrap();
    assert!(page.next.is_none());
    page.rows
}

/// Writes the rows into a new database at the path; answers the nanoseconds it took.
type Import = Box<dyn Fn(&Path, Rows) -> u64>;

struct Case {
    name: String,
    run: Import,
}

fn main() {
    let dir = std::env::temp_dir().join(format!(
        "pk-codec-bench-bulk-rocksdb-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let fresh = |name: &str| -> PathBuf {
        let path = dir.join(name);
        let _ = std::fs::remove_dir_all(&path);
        path
    };
    let input = rows();
    let profile = {
        let probe = fresh("probe");
        BulkOptions::default().profile_for(&RocksStore::open(&probe).unwrap())
    };

    // Both write the same rows: checked before anything is timed. The keys are distinct, so
    // the database holds every row, sorted.
    let mut want = input.clone();
    want.sort();
    want.dedup_by(|a, b| a.0 == b.0);
    assert_eq!(want.len() as u64, ROWS);
    let loop_dir = fresh("check-loop");
    plain_loop(&loop_dir, input.clone(), LOOP_BATCHES[0]);
    let writer_dir = fresh("check-writer");
    writer(&writer_dir, input.clone(), &BulkOptions::default());
    assert!(
        read_back(&loop_dir) == want,
        "the plain loop wrote other rows"
    );
    assert!(
        read_back(&writer_dir) == want,
        "the writer wrote other rows"
    );

    let mut cases: Vec<Case> = LOOP_BATCHES
        .iter()
        .map(|&batch| Case {
            name: format!("plain loop, {batch} rows a batch"),
            run: Box::new(move |path, rows| plain_loop(path, rows, batch)),
        })
        .collect();
    let loops = cases.len();
    cases.push(Case {
        name: format!(
            "BulkWriter, defaults ({} worker, {} rows)",
            profile.workers, profile.max_batch_rows
        ),
        run: Box::new(|path, rows| writer(path, rows, &BulkOptions::default())),
    });
    let defaults = cases.len() - 1;
    for (workers, batch) in [(1, 50_000), (2, 10_000), (4, 200)] {
        let options = BulkOptions {
            workers: Some(workers),
            max_batch_rows: Some(batch),
            max_batch_bytes: Some(64 << 20),
            ..BulkOptions::default()
        };
        cases.push(Case {
            name: format!("BulkWriter, {workers} workers, {batch} rows"),
            run: Box::new(move |path, rows| writer(path, rows, &options)),
        });
    }

    let rounds = env_usize("PK_BENCH_ROUNDS", 21);
    let load_before = load_average();
    let mut ms: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    let mut per_round: Vec<Vec<f64>> = Vec::with_capacity(rounds);
    for round in 0..rounds {
        let mut this = vec![0f64; cases.len()];
        for k in 0..cases.len() {
            let c = (round + k) % cases.len();
            let path = fresh(&format!("case-{c}"));
            this[c] = (cases[c].run)(&path, input.clone()) as f64 / 1e6;
            let _ = std::fs::remove_dir_all(&path);
        }
        for (all, v) in ms.iter_mut().zip(&this) {
            all.push(*v);
        }
        per_round.push(this);
    }
    let medians: Vec<f64> = ms.iter().map(|m| median(m)).collect();
    let fastest = (0..loops)
        .min_by(|&a, &b| medians[a].total_cmp(&medians[b]))
        .unwrap();
    let against_fastest: Vec<f64> = per_round.iter().map(|r| r[fastest] / r[defaults]).collect();
    let against_best: Vec<f64> = per_round
        .iter()
        .map(|r| r[..loops].iter().copied().fold(f64::INFINITY, f64::min) / r[defaults])
        .collect();
    println!(
        "{ROWS} rows into a new RocksDB directory, synced writes, {rounds} interleaved rounds, \
         medians; machine: {}, {} cores; load average {} before, {} after",
        cpu_model().unwrap_or_else(|| "unknown".into()),
        std::thread::available_parallelism().map_or(0, usize::from),
        load_before,
        load_average(),
    );
    println!("{:<48} {:>9} {:>12}", "case", "ms", "rows/s");
    for (case, m) in cases.iter().zip(&medians) {
        println!(
            "{:<48} {:>9.1} {:>12.0}",
            case.name,
            m,
            ROWS as f64 / (m / 1e3)
        );
    }
    println!(
        "defaults' throughput / fastest loop's ({}): {:.2}x, middle half of the rounds {:.2}x to \
         {:.2}x  (target at least 0.9x)",
        cases[fastest].name,
        median(&against_fastest),
        quartile(&against_fastest, 1),
        quartile(&against_fastest, 3),
    );
    println!(
        "defaults' throughput / each round's best loop: {:.2}x, middle half {:.2}x to {:.2}x",
        median(&against_best),
        quartile(&against_best, 1),
        quartile(&against_best, 3),
    );
    let _ = std::fs::remove_dir_all(&dir);
}
