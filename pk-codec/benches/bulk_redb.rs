//! `BulkWriter` with its defaults into redb, against plain batched loops written straight against
//! redb's API: the same 200,000 rows (an IoT key with a 16-bucket hash prefix, readings in the
//! order an app receives them) into a fresh database file, one transaction per batch.
//!
//! `cargo bench -p pk-codec --features redb --bench bulk_redb` (`PK_BENCH_ROUNDS`, default 21).
//! Every round runs every case once, in a rotating order, each into a new file (creating the file
//! and dropping the database are not timed); the report gives each case's median and the median
//! over the rounds of the writer's time against the loops' within the round. The plain loops
//! try several batch sizes, taking each row from the vector or inserting by reference, so that
//! the writer is compared with the fastest loop there is; the writer with the profile of a
//! network store (4 workers, 200-row batches, what its defaults were for every store) runs
//! beside them.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use pk_codec::Layout;
use pk_codec::store::{BulkOptions, BulkWriter, RangeQuery, RangeStore, RedbStore, WriteProfile};
use redb::{Database, ReadableTableMetadata, TableDefinition};

mod harness;

use harness::{cpu_model, env_usize, load_average, median, quartile};

const DEVICES: u64 = 1_000;
const READINGS: u64 = 200;
const ROWS: u64 = DEVICES * READINGS;

/// The table `RedbStore::create` writes, as the plain loops write it.
const TABLE: TableDefinition<'_, &[u8], &[u8]> = TableDefinition::new(RedbStore::DEFAULT_TABLE);

/// The batch sizes the plain loops try (the last, every row in one transaction).
const LOOP_BATCHES: [usize; 5] = [10_000, 20_000, 50_000, 100_000, ROWS as usize];

/// The batch sizes the loops that insert by reference try (the fastest sizes of the others).
const BORROWING_BATCHES: [usize; 2] = [100_000, ROWS as usize];

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

/// How a plain loop holds its rows while it writes them.
#[derive(Debug, Clone, Copy)]
enum Held {
    /// Taken from the vector one by one, each dropped once inserted.
    Consumed,
    /// Inserted by reference, chunk by chunk, all dropped at the end (timed too).
    Borrowed,
}

/// One transaction: `fill` inserts its rows, then it commits.
fn transaction(
    db: &Database,
    fill: impl FnOnce(&mut redb::Table<'_, &'static [u8], &'static [u8]>),
) {
    let tx = db.begin_write().unwrap();
    fill(&mut tx.open_table(TABLE).unwrap());
    tx.commit().unwrap();
}

/// The plain loop: `batch` rows a transaction, straight through redb's API.
fn plain_loop(path: &Path, rows: Rows, batch: usize, held: Held) -> u64 {
    let db = Database::create(path).unwrap();
    let start = Instant::now();
    match held {
        Held::Consumed => {
            let mut rows = rows.into_iter().peekable();
            while rows.peek().is_some() {
                transaction(&db, |table| {
                    for (key, value) in rows.by_ref().take(batch) {
                        table.insert(key.as_slice(), value.as_slice()).unwrap();
                    }
                });
            }
        }
        Held::Borrowed => {
            for chunk in rows.chunks(batch) {
                transaction(&db, |table| {
                    for (key, value) in chunk {
                        table.insert(key.as_slice(), value.as_slice()).unwrap();
                    }
                });
            }
            drop(rows);
        }
    }
    let ns = elapsed_ns(start);
    drop(black_box(db));
    ns
}

/// The same rows through a `BulkWriter` into a `RedbStore`, with `options`.
fn writer(path: &Path, rows: Rows, options: &BulkOptions) -> u64 {
    let store = Arc::new(RedbStore::create(path).unwrap());
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

/// Every row of the file at `path`, in key order.
fn read_back(path: &Path) -> Rows {
    let store = RedbStore::create(path).unwrap();
    let page = store
        .range(&RangeQuery::new("", None).limit(usize::MAX))
        .unwrap();
    assert!(page.next.is_none());
    page.rows
}

/// How many rows the file at `path` holds.
fn count(path: &Path) -> u64 {
    let db = Database::create(path).unwrap();
    let tx = db.begin_read().unwrap();
    tx.open_table(TABLE).unwrap().len().unwrap()
}

/// Writes the rows into a new file at the path; answers the nanoseconds it took.
type Import = Box<dyn Fn(&Path, Rows) -> u64>;

struct Case {
    name: String,
    run: Import,
}

fn main() {
    let dir = std::env::temp_dir().join(format!("pk-codec-bench-bulk-redb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fresh = |name: &str| -> PathBuf {
        let path = dir.join(format!("{name}.redb"));
        let _ = std::fs::remove_file(&path);
        path
    };
    let input = rows();
    let store_profile = BulkOptions::default().profile_for(&RedbStore::in_memory().unwrap());
    let network = WriteProfile::default();
    let network_options = BulkOptions {
        workers: Some(network.workers),
        max_batch_rows: Some(network.max_batch_rows),
        max_batch_bytes: Some(network.max_batch_bytes),
        ..BulkOptions::default()
    };

    // Both write the same rows: checked before anything is timed. The keys are distinct, so
    // the file holds every row, sorted.
    let mut want = input.clone();
    want.sort();
    want.dedup_by(|a, b| a.0 == b.0);
    assert_eq!(want.len() as u64, ROWS);
    let loop_file = fresh("check-loop");
    plain_loop(&loop_file, input.clone(), LOOP_BATCHES[2], Held::Consumed);
    let borrowing_file = fresh("check-borrowing");
    plain_loop(
        &borrowing_file,
        input.clone(),
        BORROWING_BATCHES[0],
        Held::Borrowed,
    );
    let writer_file = fresh("check-writer");
    writer(&writer_file, input.clone(), &BulkOptions::default());
    assert!(
        read_back(&loop_file) == want,
        "the plain loop wrote other rows"
    );
    assert!(
        read_back(&borrowing_file) == want,
        "the borrowing loop wrote other rows"
    );
    assert!(
        read_back(&writer_file) == want,
        "the writer wrote other rows"
    );

    let mut cases: Vec<Case> = LOOP_BATCHES
        .iter()
        .map(|&batch| (batch, Held::Consumed))
        .chain(
            BORROWING_BATCHES
                .iter()
                .map(|&batch| (batch, Held::Borrowed)),
        )
        .map(|(batch, held)| Case {
            name: match held {
                Held::Consumed => format!("plain loop, {batch} rows a transaction"),
                Held::Borrowed => format!("plain loop, {batch} rows a transaction, borrowed"),
            },
            run: Box::new(move |path, rows| plain_loop(path, rows, batch, held)),
        })
        .collect();
    let loops = cases.len();
    cases.push(Case {
        name: format!(
            "BulkWriter, defaults ({} worker, {} rows)",
            store_profile.workers, store_profile.max_batch_rows
        ),
        run: Box::new(|path, rows| writer(path, rows, &BulkOptions::default())),
    });
    let defaults = cases.len() - 1;
    cases.push(Case {
        name: format!(
            "BulkWriter, {} workers, {} rows (network)",
            network.workers, network.max_batch_rows
        ),
        run: Box::new(move |path, rows| writer(path, rows, &network_options)),
    });

    let rounds = env_usize("PK_BENCH_ROUNDS", 21);
    let load_before = load_average();
    let mut ms: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    let mut per_round: Vec<Vec<f64>> = Vec::with_capacity(rounds);
    for round in 0..rounds {
        let mut this = vec![0f64; cases.len()];
        for k in 0..cases.len() {
            let c = (round + k) % cases.len();
            let path = fresh(&format!("case-{c}"));
            let rows = input.clone();
            this[c] = (cases[c].run)(&path, rows) as f64 / 1e6;
            assert_eq!(count(&path), ROWS, "{}", cases[c].name);
            let _ = std::fs::remove_file(&path);
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
    // The writer against the fastest loop, and against the best loop of each round (stricter:
    // a round's noise can only favour the loops).
    let against_fastest: Vec<f64> = per_round.iter().map(|r| r[fastest] / r[defaults]).collect();
    let against_best: Vec<f64> = per_round
        .iter()
        .map(|r| r[..loops].iter().copied().fold(f64::INFINITY, f64::min) / r[defaults])
        .collect();
    println!(
        "{ROWS} rows into a new redb file, {rounds} interleaved rounds, medians; machine: {}, {} cores; \
         load average {} before, {} after",
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
