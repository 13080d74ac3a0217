//! Table benchmarks: the in-memory table model (`pk_codec::table::Table`) against a plain
//! `BTreeMap<String, Row>` doing the same work: puts, point gets, 100-row range reads, and a
//! bulk load with one and two writer threads into a pre-split table.
//!
//! Keys are seeded random strings of 16 to 24 bytes (`[0-9a-z]`), rows hold one Integer
//! attribute. Every table runs on a fixed `ManualClock`, so no case pays for the system clock
//! and no load window closes while measuring (no rotation, no merge; the default 64 MiB split
//! size is never reached). Each group declares its elements per iteration as throughput:
//! `cargo run --example bench_report` divides the medians by them and writes BENCHMARKS.md.

#![allow(missing_docs)] // criterion_group! generates undocumented functions.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::ops::Bound::{Included, Unbounded};

use criterion::{BatchSize, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
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

/// Point gets and range reads over the same 1,000,000 rows, loaded once (in random order)
/// into a table pre-split into 16 partitions and into a map.
fn reads(c: &mut Criterion) {
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
    // Built outside the timed loop, as the map's bounds are.
    let requests: Vec<RangeRequest> = starts
        .iter()
        .map(|k| RangeRequest::forward(k.as_str(), PrimaryKey::inf_max(1)).limit(RANGE_ROWS))
        .collect();
    drop(data);

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
                let rows: Vec<Row> = m
                    .range::<str, _>((Included(k.as_str()), Unbounded))
                    .take(RANGE_ROWS)
                    .map(|(_, r)| r.clone())
                    .collect();
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
criterion_main!(benches);
