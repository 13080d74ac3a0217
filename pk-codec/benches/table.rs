//! Table benchmarks: the in-memory table model (`pk_codec::table::Table`) against a plain
//! `BTreeMap<String, Row>` doing the same work: puts, point gets, 100-row range reads, and a
//! bulk load with one and two writer threads into a pre-split table.
//!
//! Keys are seeded random strings of 16 to 24 bytes (`[0-9a-z]`), rows hold one Integer
//! attribute. Every table runs on a fixed `ManualClock`, so no case pays for the system clock
//! and no load window closes while measuring (no rotation, no merge; the default 64 MiB split
//! size is never reached). Each group declares its elements per iteration as throughput:
//! `cargo run --example bench_report` divides the medians by them and writes BENCHMARKS.md.
//!
//! Criterion runs its groups one after another; the ratios against the map come from two
//! interleaved harnesses in this file (every case once per round, the order rotating from round
//! to round, one process; a ratio is the median over the rounds of the ratio within a round):
//!
//! ```text
//! cargo bench -p pk-codec --features table --bench table -- --ratios   # put, get, range 100 (about a minute)
//! cargo bench -p pk-codec --features table --bench table -- --growth   # load of 1M and 5M rows (several minutes)
//! ```
//!
//! `PK_BENCH_ROUNDS` sets the rounds (default 21 for `--ratios`, 5 for `--growth`);
//! `PK_BENCH_ONLY=<part of a case name>` runs only the matching cases, untimed, for a profiler.

#![allow(missing_docs)] // criterion_group! generates undocumented functions.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::ops::Bound::{Included, Unbounded};

use criterion::{BatchSize, Criterion, SamplingMode, Throughput, criterion_group};
use pk_codec::table::{
    Attribute, AttributeValue, Cell, ManualClock, PkValue, PrimaryKey, RangeRequest, ReadOptions,
    Row, Schema, Table, TableOptions, split_points_even,
};

/// The fixed time of every table's clock, ms (also the version the baseline stores).
const NOW_MS: i64 = 1_700_000_000_000;
/// The attribute column of every row.
const COLUMN: &str = "n";
/// Rows put per iteration of "table put".
const PUT_ROWS: usize = 10_000;
/// Rows of the data set read by "table get" and "table range 100".
const READ_ROWS: usize = 1_000_000;
/// Point gets per iteration.
const GETS: usize = 1_000;
/// Rows per range read, and range reads per iteration.
const RANGE_ROWS: usize = 100;
const RANGE_READS: usize = 100;
/// Rows per iteration of "table bulk load", and the partitions its table starts with.
const LOAD_ROWS: usize = 200_000;
const LOAD_PARTITIONS: usize = 16;

/// Rows to write: a key and the value of the one attribute.
type Rows = Vec<(String, i64)>;

/// A small linear congruential generator keeps the bench free of a rand dependency.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 17
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// `n` seeded rows: a 16-24 byte key of `[0-9a-z]` and an integer, in generation (random)
/// order. 36^16 keys: a repeat is practically impossible, and `distinct` checks it.
fn rows(seed: u64, n: usize) -> Rows {
    const ALPHABET: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut rng = Lcg(seed);
    (0..n)
        .map(|_| {
            let len = 16 + rng.below(9);
            let key: String = (0..len)
                .map(|_| char::from(ALPHABET[rng.below(ALPHABET.len())]))
                .collect();
            (key, (rng.next() % 1_000_000) as i64)
        })
        .collect()
}

fn distinct(rows: &[(String, i64)]) -> bool {
    let mut keys: Vec<&str> = rows.iter().map(|(k, _)| k.as_str()).collect();
    keys.sort_unstable();
    keys.windows(2).all(|w| w[0] != w[1])
}

/// A table with one String key column on a fixed clock.
fn table(options: TableOptions) -> Table {
    Table::with_clock(
        Schema::single_string("pk").unwrap(),
        options,
        ManualClock::new(NOW_MS),
    )
    .unwrap()
}

/// Split points cutting `rows` (a sample of every 16th key) into `ranges` ranges.
fn split_points(rows: &[(String, i64)], ranges: usize) -> Vec<PkValue> {
    let sample = rows
        .iter()
        .step_by(16)
        .map(|(k, _)| PkValue::from(k.as_str()));
    split_points_even(sample, ranges).unwrap()
}

fn put_table(t: &Table, (key, n): (String, i64)) {
    t.put(key, vec![Attribute::new(COLUMN, n)]).unwrap();
}

/// What the table stores for a put, as the `Row` a read returns. The map needs the key twice
/// (map key and `Row::key`): one more allocation per row than the table, inherent to a
/// `BTreeMap<String, Row>`.
fn put_map(m: &mut BTreeMap<String, Row>, (key, n): (String, i64)) {
    let row = Row {
        key: PrimaryKey::from(key.clone()),
        cells: vec![Cell {
            name: COLUMN.to_owned(),
            version: NOW_MS,
            value: AttributeValue::Integer(n),
        }],
    };
    m.insert(key, row);
}

/// 10,000 rows into an empty table (default options: one partition, no split reached) and
/// into an empty map. Setup (a fresh table or map, and a copy of the rows, whose keys the
/// routine moves in) and the drop of the result are not timed.
fn put(c: &mut Criterion) {
    let input = rows(0x5eed, PUT_ROWS);
    assert!(distinct(&input));
    let mut g = c.benchmark_group("table put");
    g.throughput(Throughput::Elements(PUT_ROWS as u64));
    g.bench_function("Table put", |b| {
        b.iter_batched(
            || (table(TableOptions::default()), input.clone()),
            |(t, input)| {
                for row in input {
                    put_table(&t, row);
                }
                t
            },
            BatchSize::LargeInput,
        );
    });
    g.bench_function("BTreeMap insert", |b| {
        b.iter_batched(
            || (BTreeMap::new(), input.clone()),
            |(mut m, input)| {
                for row in input {
                    put_map(&mut m, row);
                }
                m
            },
            BatchSize::LargeInput,
        );
    });
    g.finish();
}

/// The data every read case reads: 1,000,000 rows loaded once (in random order) into a table
/// pre-split into 16 partitions and into a map, the keys of the point gets, and the starts of the
/// 100-row range reads with their requests (built outside any timed loop, as the map's bounds
/// are).
struct ReadData {
    t: Table,
    m: BTreeMap<String, Row>,
    get_keys: Vec<String>,
    get_pks: Vec<PrimaryKey>,
    starts: Vec<String>,
    requests: Vec<RangeRequest>,
}

fn read_data() -> ReadData {
    let data = rows(0xda7a, READ_ROWS);
    assert!(distinct(&data));
    let t = table(TableOptions::default().pre_split(split_points(&data, LOAD_PARTITIONS)));
    let mut m = BTreeMap::new();
    for row in &data {
        put_table(&t, row.clone());
        put_map(&mut m, row.clone());
    }
    assert_eq!(t.stored_rows(), READ_ROWS);
    assert_eq!(m.len(), READ_ROWS);

    let mut rng = Lcg(0x6e7);
    let get_keys: Vec<String> = (0..GETS)
        .map(|_| data[rng.below(READ_ROWS)].0.clone())
        .collect();
    let get_pks: Vec<PrimaryKey> = get_keys
        .iter()
        .map(|k| PrimaryKey::from(k.as_str()))
        .collect();
    // Range starts: existing keys with at least 100 rows from them to the end, so that every
    // read returns 100 rows.
    let last_start = m.keys().nth_back(RANGE_ROWS - 1).unwrap().clone();
    let mut starts: Vec<String> = Vec::with_capacity(RANGE_READS);
    while starts.len() < RANGE_READS {
        let k = &data[rng.below(READ_ROWS)].0;
        if *k <= last_start {
            starts.push(k.clone());
        }
    }
    let requests: Vec<RangeRequest> = starts
        .iter()
        .map(|k| RangeRequest::forward(k.as_str(), PrimaryKey::inf_max(1)).limit(RANGE_ROWS))
        .collect();
    ReadData {
        t,
        m,
        get_keys,
        get_pks,
        starts,
        requests,
    }
}

/// The map's 100-row range read from `start`: owned rows, as the table returns them.
fn map_range(m: &BTreeMap<String, Row>, start: &str) -> Vec<Row> {
    m.range::<str, _>((Included(start), Unbounded))
        .take(RANGE_ROWS)
        .map(|(_, r)| r.clone())
        .collect()
}

/// Point gets and range reads over the same 1,000,000 rows ([`read_data`]).
fn reads(c: &mut Criterion) {
    let ReadData {
        t,
        m,
        get_keys,
        get_pks,
        starts,
        requests,
    } = read_data();

    let mut g = c.benchmark_group("table get");
    g.throughput(Throughput::Elements(GETS as u64));
    let options = ReadOptions::default();
    g.bench_function("Table get", |b| {
        b.iter(|| {
            for k in &get_pks {
                black_box(t.get(k, &options).unwrap());
            }
        });
    });
    // The table returns an owned `Row`, so the map's get clones the row too.
    g.bench_function("BTreeMap get", |b| {
        b.iter(|| {
            for k in &get_keys {
                black_box(m.get(k.as_str()).cloned());
            }
        });
    });
    g.finish();

    let mut g = c.benchmark_group("table range 100");
    g.throughput(Throughput::Elements((RANGE_ROWS * RANGE_READS) as u64));
    g.bench_function("Table get_range", |b| {
        b.iter(|| {
            for req in &requests {
                let r = t.get_range(req).unwrap();
                debug_assert_eq!(r.rows.len(), RANGE_ROWS);
                black_box(r);
            }
        });
    });
    // Owned rows again: the map's range clones each row into a Vec.
    g.bench_function("BTreeMap range", |b| {
        b.iter(|| {
            for k in &starts {
                let rows = map_range(&m, k);
                debug_assert_eq!(rows.len(), RANGE_ROWS);
                black_box(rows);
            }
        });
    });
    g.finish();

    // Dropping 1,000,000 rows twice takes a moment; do it before the next group, untimed.
    drop((t, m));
}

/// 200,000 rows into a fresh table pre-split into 16 partitions (split points from a sample
/// of the keys): by one thread in generation order, and by two threads, each writing the rows
/// of its half of the key space (the 8 lower partitions, the 8 upper ones). Setup and drop are
/// not timed; the threads' spawn and join are.
fn bulk_load(c: &mut Criterion) {
    let input = rows(0x10ad, LOAD_ROWS);
    assert!(distinct(&input));
    let points = split_points(&input, LOAD_PARTITIONS);
    assert_eq!(points.len(), LOAD_PARTITIONS - 1);
    let options = TableOptions::default().pre_split(points.clone());
    // The middle split point cuts the key space in two; the sample makes the halves near equal.
    let middle = &points[LOAD_PARTITIONS / 2 - 1];
    let (low, high): (Rows, Rows) = input
        .iter()
        .cloned()
        .partition(|(k, _)| PkValue::from(k.as_str()) < *middle);
    assert!(low.len().abs_diff(high.len()) < LOAD_ROWS / 20);

    let mut g = c.benchmark_group("table bulk load");
    g.sample_size(10);
    g.sampling_mode(SamplingMode::Flat);
    g.throughput(Throughput::Elements(LOAD_ROWS as u64));
    g.bench_function("1 writer thread", |b| {
        b.iter_batched(
            || (table(options.clone()), input.clone()),
            |(t, input)| {
                for row in input {
                    put_table(&t, row);
                }
                t
            },
            BatchSize::PerIteration,
        );
    });
    g.bench_function("2 writer threads", |b| {
        b.iter_batched(
            || (table(options.clone()), low.clone(), high.clone()),
            |(t, low, high)| {
                std::thread::scope(|s| {
                    for half in [low, high] {
                        let t = &t;
                        s.spawn(move || {
                            for row in half {
                                put_table(t, row);
                            }
                        });
                    }
                });
                t
            },
            BatchSize::PerIteration,
        );
    });
    g.finish();
}

criterion_group!(benches, put, reads, bulk_load);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--ratios") {
        interleaved::ratios();
    } else if args.iter().any(|a| a == "--growth") {
        interleaved::growth();
    } else {
        benches();
        Criterion::default().configure_from_args().final_summary();
    }
}

mod harness;

/// The interleaved harnesses: the table and the map side by side, in one process.
mod interleaved {
    use std::time::Instant;

    use super::harness::{cpu_model, env_usize, median};
    use super::*;

    fn only() -> Option<String> {
        std::env::var("PK_BENCH_ONLY").ok()
    }

    fn machine() -> String {
        let cpu = cpu_model().unwrap_or_default();
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        let load = load.split(' ').take(3).collect::<Vec<_>>().join(" ");
        format!(
            "{cpu}, {} cores, load average {load} at the end",
            std::thread::available_parallelism().map_or(0, usize::from)
        )
    }

    /// Checks that `t` and `m` hold the same rows (count, and every key's row).
    fn same_rows(t: &Table, m: &BTreeMap<String, Row>) {
        assert_eq!(t.stored_rows(), m.len());
        let all = ReadOptions::default();
        for (k, row) in m {
            assert_eq!(t.get(k.as_str(), &all).unwrap().as_ref(), Some(row));
        }
    }

    /// One case of a round: `run` returns ns of timed work and the elements it handled.
    type Run<'a> = Box<dyn FnMut() -> (f64, usize) + 'a>;

    /// Runs `cases` interleaved for `rounds` rounds (after one warm-up round); ns per element,
    /// `[case][round]`.
    fn interleave(cases: &mut [(&str, Run<'_>)], rounds: usize) -> Vec<Vec<f64>> {
        if let Some(only) = only() {
            for _ in 0..rounds {
                for (name, run) in cases.iter_mut() {
                    if name.contains(only.as_str()) {
                        black_box(run());
                    }
                }
            }
            std::process::exit(0);
        }
        for (_, run) in cases.iter_mut() {
            black_box(run());
        }
        let mut times = vec![Vec::with_capacity(rounds); cases.len()];
        for round in 0..rounds {
            for k in 0..cases.len() {
                let c = (round + k) % cases.len();
                let (ns, n) = (cases[c].1)();
                times[c].push(ns / n as f64);
            }
        }
        times
    }

    fn ratio_row(name: &str, t: &[f64], m: &[f64], target: Option<f64>) -> String {
        let per_round: Vec<f64> = t.iter().zip(m).map(|(a, b)| a / b).collect();
        let r = median(&per_round);
        let (tgt, met) = match target {
            Some(x) => (format!("<= {x:.2}x"), if r <= x { "yes" } else { "no" }),
            None => ("-".to_owned(), "-"),
        };
        format!(
            "| {name} | {:.1} | {:.1} | {r:.2}x | {tgt} | {met} |",
            median(t),
            median(m)
        )
    }

    /// Put, get and 100-row range reads, the table against the map.
    pub(super) fn ratios() {
        let rounds = env_usize("PK_BENCH_ROUNDS", 21);
        // Put: PUT_BATCHES fresh tables (maps) of PUT_ROWS rows each per pass; setup and drop
        // are not timed.
        const PUT_BATCHES: usize = 10;
        let input = rows(0x5eed, PUT_ROWS);
        assert!(distinct(&input));
        {
            let t = table(TableOptions::default());
            let mut m = BTreeMap::new();
            for row in input.iter().cloned() {
                put_table(&t, row.clone());
                put_map(&mut m, row);
            }
            same_rows(&t, &m);
        }
        let put_cases = |map: bool| -> Run<'_> {
            let input = &input;
            Box::new(move || {
                let mut ns = 0.0;
                for _ in 0..PUT_BATCHES {
                    let rows = input.clone();
                    if map {
                        let mut m = BTreeMap::new();
                        let start = Instant::now();
                        for row in rows {
                            put_map(&mut m, row);
                        }
                        ns += start.elapsed().as_nanos() as f64;
                        black_box(&m);
                    } else {
                        let t = table(TableOptions::default());
                        let start = Instant::now();
                        for row in rows {
                            put_table(&t, row);
                        }
                        ns += start.elapsed().as_nanos() as f64;
                        black_box(&t);
                    }
                }
                (ns, PUT_BATCHES * PUT_ROWS)
            })
        };

        // Put by `Table::put_ref` of rows the caller keeps (built before timing, dropped after
        // it, as the map's input rows are moved in and dropped with the map): the table copies
        // each row into its own encoding and frees nothing while timed.
        let borrowed: Vec<(PrimaryKey, [Attribute; 1])> = input
            .iter()
            .map(|(k, n)| (PrimaryKey::from(k.as_str()), [Attribute::new(COLUMN, *n)]))
            .collect();
        {
            let t = table(TableOptions::default());
            let mut m = BTreeMap::new();
            for ((key, attributes), row) in borrowed.iter().zip(input.iter().cloned()) {
                t.put_ref(key, attributes).unwrap();
                put_map(&mut m, row);
            }
            same_rows(&t, &m);
        }
        let put_ref_case: Run<'_> = {
            let borrowed = &borrowed;
            Box::new(move || {
                let mut ns = 0.0;
                for _ in 0..PUT_BATCHES {
                    let t = table(TableOptions::default());
                    let start = Instant::now();
                    for (key, attributes) in borrowed {
                        t.put_ref(key, attributes).unwrap();
                    }
                    ns += start.elapsed().as_nanos() as f64;
                    black_box(&t);
                }
                (ns, PUT_BATCHES * PUT_ROWS)
            })
        };

        // Reads: 1,000,000 rows in a table pre-split into 16 partitions and in a map.
        let ReadData {
            t,
            m,
            get_keys,
            get_pks,
            starts,
            requests,
        } = read_data();
        let options = ReadOptions::default();
        // Same work: every get and every range read returns the map's rows.
        for (pk, k) in get_pks.iter().zip(&get_keys) {
            assert_eq!(t.get(pk, &options).unwrap().as_ref(), m.get(k.as_str()));
        }
        for (req, k) in requests.iter().zip(&starts) {
            assert_eq!(t.get_range(req).unwrap().rows, map_range(&m, k));
        }
        const READ_REPEAT: usize = 10;
        let (t, m) = (&t, &m);
        let mut cases: Vec<(&str, Run<'_>)> = vec![
            ("Table put", put_cases(false)),
            ("BTreeMap insert", put_cases(true)),
            (
                "Table get",
                Box::new(|| {
                    let start = Instant::now();
                    for _ in 0..READ_REPEAT {
                        for k in &get_pks {
                            black_box(t.get(k, &options).unwrap());
                        }
                    }
                    (start.elapsed().as_nanos() as f64, READ_REPEAT * GETS)
                }),
            ),
            (
                "BTreeMap get",
                Box::new(|| {
                    let start = Instant::now();
                    for _ in 0..READ_REPEAT {
                        for k in &get_keys {
                            black_box(m.get(k.as_str()).cloned());
                        }
                    }
                    (start.elapsed().as_nanos() as f64, READ_REPEAT * GETS)
                }),
            ),
            (
                "Table range 100",
                Box::new(|| {
                    let start = Instant::now();
                    for _ in 0..READ_REPEAT {
                        for req in &requests {
                            black_box(t.get_range(req).unwrap());
                        }
                    }
                    let n = READ_REPEAT * RANGE_READS * RANGE_ROWS;
                    (start.elapsed().as_nanos() as f64, n)
                }),
            ),
            (
                "BTreeMap range 100",
                Box::new(|| {
                    let start = Instant::now();
                    for _ in 0..READ_REPEAT {
                        for k in &starts {
                            black_box(map_range(m, k));
                        }
                    }
                    let n = READ_REPEAT * RANGE_READS * RANGE_ROWS;
                    (start.elapsed().as_nanos() as f64, n)
                }),
            ),
            ("Table put_ref", put_ref_case),
        ];
        let times = interleave(&mut cases, rounds);
        println!(
            "Table vs BTreeMap<String, Row>, interleaved: {rounds} rounds, every case once per \
             round in a rotating order; medians over the rounds. Same rows checked before timing.\n\
             Machine: {}\n",
            machine()
        );
        println!(
            "| case | table ns/row (median) | map ns/row (median) | table / map (median of per-round ratios) | target | met |"
        );
        println!("|---|---:|---:|---:|---:|---|");
        println!(
            "{}",
            ratio_row(
                "put (10,000 rows into an empty table / map)",
                &times[0],
                &times[1],
                Some(1.1)
            )
        );
        println!(
            "{}",
            ratio_row(
                "put_ref of rows the caller keeps (10,000 rows into an empty table / map)",
                &times[6],
                &times[1],
                None
            )
        );
        println!(
            "{}",
            ratio_row(
                "get (1,000,000 rows, 16 partitions)",
                &times[2],
                &times[3],
                None
            )
        );
        println!(
            "{}",
            ratio_row(
                "range read of 100 rows (1,000,000 rows, 16 partitions)",
                &times[4],
                &times[5],
                Some(1.1)
            )
        );
    }

    /// Load of 1,000,000 and 5,000,000 rows (random order, default options) into a fresh table
    /// and a fresh map: per-row time at each size, and its growth from the smallest size to the
    /// largest.
    pub(super) fn growth() {
        let rounds = env_usize("PK_BENCH_ROUNDS", 5);
        let sizes: Vec<usize> = std::env::var("PK_BENCH_SIZES")
            .ok()
            .map(|s| s.split(',').map(|x| x.trim().parse().unwrap()).collect())
            .unwrap_or_else(|| vec![1_000_000, 5_000_000]);
        let inputs: Vec<Rows> = sizes.iter().map(|&n| rows(0x9a0f + n as u64, n)).collect();
        for input in &inputs {
            assert!(distinct(input));
        }
        // Same work: the smallest load gives the same rows in both.
        {
            let small = &inputs[0][..inputs[0].len().min(200_000)];
            let t = table(TableOptions::default());
            let mut m = BTreeMap::new();
            for row in small {
                put_table(&t, row.clone());
                put_map(&mut m, row.clone());
            }
            same_rows(&t, &m);
        }
        let mut cases: Vec<(String, Run<'_>)> = Vec::new();
        for input in &inputs {
            let n = input.len();
            cases.push((
                format!("Table load {n}"),
                Box::new(move || {
                    let rows = input.clone();
                    let t = table(TableOptions::default());
                    let start = Instant::now();
                    for row in rows {
                        put_table(&t, row);
                    }
                    let ns = start.elapsed().as_nanos() as f64;
                    assert_eq!(t.stored_rows(), n);
                    (ns, n)
                }),
            ));
            cases.push((
                format!("BTreeMap load {n}"),
                Box::new(move || {
                    let rows = input.clone();
                    let mut m = BTreeMap::new();
                    let start = Instant::now();
                    for row in rows {
                        put_map(&mut m, row);
                    }
                    let ns = start.elapsed().as_nanos() as f64;
                    assert_eq!(m.len(), n);
                    (ns, n)
                }),
            ));
        }
        let mut named: Vec<(&str, Run<'_>)> = cases
            .iter_mut()
            .map(|(n, r)| (n.as_str(), std::mem::replace(r, Box::new(|| (0.0, 1)))))
            .collect();
        let times = interleave(&mut named, rounds);
        println!(
            "Load of a fresh table / map (default options, rows in random order), interleaved: \
             {rounds} rounds, every case once per round in a rotating order; medians over the \
             rounds.\nMachine: {}\n",
            machine()
        );
        println!("| rows | table ns/row | map ns/row | table / map (median of per-round ratios) |");
        println!("|---:|---:|---:|---:|");
        for (i, n) in sizes.iter().enumerate() {
            let (t, m) = (&times[2 * i], &times[2 * i + 1]);
            let r: Vec<f64> = t.iter().zip(m.iter()).map(|(a, b)| a / b).collect();
            println!(
                "| {n} | {:.1} | {:.1} | {:.2}x |",
                median(t),
                median(m),
                median(&r)
            );
        }
        let last = sizes.len() - 1;
        let growth = |c: usize| {
            let per_round: Vec<f64> = times[2 * last + c]
                .iter()
                .zip(&times[c])
                .map(|(a, b)| a / b)
                .collect();
            median(&per_round)
        };
        let (tg, mg) = (growth(0), growth(1));
        println!(
            "\nper-row time growth {} -> {} rows (median of per-round ratios): table {tg:.2}x, \
             map {mg:.2}x; table growth / map growth {:.2} (target <= 1.00: {})",
            sizes[0],
            sizes[last],
            tg / mg,
            if tg <= mg { "met" } else { "missed" }
        );
    }
}
