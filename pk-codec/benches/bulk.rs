//! The bulk writer's overhead: rows per second through `BulkWriter` into the (unthrottled) table
//! model, against a plain loop of 200-row `batch_write` calls writing the same rows; and 2 workers
//! against 1 on a pre-split table.
//!
//! `cargo bench -p pk-codec --features store,table --bench bulk` (criterion, one case after the
//! other), or `... --bench bulk -- --ratios` (every case once per round in a rotating order, the
//! ratios taken within each round; `PK_BENCH_ROUNDS`, default 15).

#![allow(missing_docs)] // criterion_group! generates undocumented functions.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, Throughput, criterion_group};
use pk_codec::store::{BulkOptions, BulkWriter, Dispatch, RangeStore, WriteOp};
use pk_codec::table::{Table, TableOptions};

mod harness;

use harness::{env_usize, median};

const ROWS: usize = 50_000;

fn rows() -> Vec<(String, Vec<u8>)> {
    // Spread keys (a hash-like prefix), as an import into a well-designed table would write.
    (0..ROWS as u64)
        .map(|i| {
            let h = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 48;
            (format!("{h:04x},{i:08}"), vec![7u8; 16])
        })
        .collect()
}

fn table(pre_split: bool) -> Arc<Table> {
    let mut options = TableOptions::default();
    if pre_split {
        options = options.pre_split(vec!["8000".into()]);
    }
    Arc::new(Table::single_string_key("pk", options).expect("a valid table"))
}

fn options(workers: usize) -> BulkOptions {
    BulkOptions {
        workers: Some(workers),
        dispatch: Dispatch::HashOfKey,
        flush_interval: Duration::from_millis(1),
        ..BulkOptions::default()
    }
}

/// The plain path: 200-row `batch_write` calls, in order.
fn plain_import(t: &Table, rows: Vec<(String, Vec<u8>)>) {
    let mut rows = rows.into_iter();
    loop {
        let ops: Vec<WriteOp> = rows
            .by_ref()
            .take(200)
            .map(|(key, value)| WriteOp::put(key, value))
            .collect();
        if ops.is_empty() {
            break;
        }
        black_box(RangeStore::batch_write(t, &ops).unwrap());
    }
}

/// The same rows through a `BulkWriter` with `workers` workers.
fn writer_import(t: &Arc<Table>, rows: Vec<(String, Vec<u8>)>, workers: usize) {
    let writer = BulkWriter::new(Arc::clone(t), options(workers)).unwrap();
    for (k, v) in rows {
        writer.add(k, v).unwrap();
    }
    assert_eq!(black_box(writer.close()).rows_written, ROWS as u64);
}

/// `--ratios`: every case once per round, in a rotating order, setup and drop untimed; the
/// ratios are taken within each round and their medians printed, so that the cases meet the
/// same neighbours (criterion runs one case after the other).
fn ratios(input: &[(String, Vec<u8>)]) {
    let rounds = env_usize("PK_BENCH_ROUNDS", 15);
    let names = [
        "plain batch_write loop, 200 rows a call",
        "BulkWriter, 1 worker",
        "BulkWriter, 1 worker, pre-split table",
        "BulkWriter, 2 workers, pre-split table",
    ];
    let mut ms: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    let (mut overhead, mut scaling) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let mut this = [0f64; 4];
        for k in 0..names.len() {
            let case = (round + k) % names.len();
            let t = table(case >= 2);
            let rows = input.to_vec();
            let start = Instant::now();
            match case {
                0 => plain_import(&t, rows),
                1 | 2 => writer_import(&t, rows, 1),
                _ => writer_import(&t, rows, 2),
            }
            this[case] = start.elapsed().as_secs_f64() * 1e3;
            drop(t);
        }
        for (all, v) in ms.iter_mut().zip(this) {
            all.push(v);
        }
        overhead.push(this[1] / this[0]);
        scaling.push(this[3] / this[2]);
    }
    println!(
        "bulk import of {ROWS} rows into the table model, {rounds} interleaved rounds, medians:"
    );
    for (name, all) in names.iter().zip(&ms) {
        println!("{name:<42} {:7.1} ms", median(all));
    }
    println!(
        "BulkWriter 1 worker / plain loop           {:7.2}x  (target at most 1.2x)",
        median(&overhead)
    );
    println!(
        "2 workers / 1 worker, pre-split table      {:7.2}x  (target below 1.0x)",
        median(&scaling)
    );
}

/// The rows, after checking that both paths write them all, identically.
fn checked_input() -> Vec<(String, Vec<u8>)> {
    let input = rows();
    // Both paths write the same rows: checked before timing.
    let plain = table(false);
    for chunk in input.chunks(200) {
        let ops: Vec<WriteOp> = chunk
            .iter()
            .map(|(k, v)| WriteOp::put(k.as_str(), v.clone()))
            .collect();
        assert!(
            RangeStore::batch_write(&*plain, &ops)
                .unwrap()
                .iter()
                .all(Result::is_ok)
        );
    }
    let via_writer = table(false);
    let writer = BulkWriter::new(Arc::clone(&via_writer), options(1)).unwrap();
    for (k, v) in input.clone() {
        writer.add(k, v).unwrap();
    }
    assert_eq!(writer.close().rows_written, ROWS as u64);
    for (k, v) in input.iter().step_by(997) {
        assert_eq!(
            RangeStore::get(&*via_writer, k.as_bytes())
                .unwrap()
                .as_ref(),
            Some(v)
        );
        assert_eq!(
            RangeStore::get(&*plain, k.as_bytes()).unwrap().as_ref(),
            Some(v)
        );
    }
    assert_eq!(via_writer.report().rows, plain.report().rows);
    input
}

fn bench(c: &mut Criterion) {
    let input = checked_input();

    let mut g = c.benchmark_group("bulk import of 50,000 rows into the table model");
    g.sample_size(10)
        .throughput(Throughput::Elements(ROWS as u64));
    g.bench_function("plain batch_write loop, 200 rows a call", |b| {
        b.iter_batched(
            || (table(false), input.clone()),
            |(t, rows)| {
                plain_import(&t, rows);
                t
            },
            BatchSize::PerIteration,
        );
    });
    for (name, workers, pre_split) in [
        ("BulkWriter, 1 worker", 1, false),
        ("BulkWriter, 1 worker, pre-split table", 1, true),
        ("BulkWriter, 2 workers, pre-split table", 2, true),
    ] {
        g.bench_function(name, |b| {
            b.iter_batched(
                || (table(pre_split), input.clone()),
                |(t, rows)| {
                    writer_import(&t, rows, workers);
                    t
                },
                BatchSize::PerIteration,
            );
        });
    }
    g.finish();
}

criterion_group!(benches, bench);

fn main() {
    if std::env::args().any(|a| a == "--ratios") {
        ratios(&checked_input());
    } else {
        benches();
        Criterion::default().configure_from_args().final_summary();
    }
}
