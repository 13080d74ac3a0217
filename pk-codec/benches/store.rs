//! A 16-bucket range read through the parallel merge (`scan_ranges`) against one plain range read
//! of the same 100,000 rows, both in redb.
//!
//! `cargo bench -p pk-codec --features redb --bench store`

#![allow(missing_docs)] // criterion_group! generates undocumented functions.

use std::hint::black_box;
use std::ops::ControlFlow;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pk_codec::Layout;
use pk_codec::store::{RangeQuery, RangeStore, RedbStore, WriteOp, scan_ranges};

const ROWS: u64 = 100_000;
const PAGE: usize = 1_000;

fn fill(store: &RedbStore, layout: &Layout) -> Vec<pk_codec::KeyRange> {
    let keys: Vec<String> = (0..ROWS)
        .map(|ts| layout.encode(&[ts.into()]).unwrap())
        .collect();
    for chunk in keys.chunks(10_000) {
        let ops: Vec<WriteOp> = chunk
            .iter()
            .map(|k| WriteOp::Put {
                key: k.clone(),
                value: vec![1u8; 16],
            })
            .collect();
        store.batch_write(&ops).unwrap();
    }
    layout.prefix_ranges(&[]).unwrap()
}

/// Every row of `[start, end)`, page by page; returns how many.
fn plain_read(store: &RedbStore, start: &str, end: Option<&str>) -> u64 {
    let mut n = 0;
    let mut resume: Option<String> = None;
    loop {
        let page = store
            .range(
                &RangeQuery::new(start, end)
                    .limit(PAGE)
                    .resume(resume.as_deref()),
            )
            .unwrap();
        n += page.rows.len() as u64;
        black_box(&page.rows);
        match page.next {
            Some(k) => resume = Some(k),
            None => return n,
        }
    }
}

fn bench(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("pk-codec-bench-store-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plain_layout: Layout = "ts: u64 width=8".parse().unwrap();
    let bucket_layout: Layout = "ts: u64 width=8; buckets=16:mod(ts):sep".parse().unwrap();
    let plain = RedbStore::create(dir.join("plain.redb")).unwrap();
    let bucketed = RedbStore::create(dir.join("bucketed.redb")).unwrap();
    let plain_ranges = fill(&plain, &plain_layout);
    let ranges = fill(&bucketed, &bucket_layout);
    assert_eq!((plain_ranges.len(), ranges.len()), (1, 16));

    // Both read the same 100,000 rows, the merge in natural (time) order: checked before timing.
    assert_eq!(
        plain_read(
            &plain,
            &plain_ranges[0].start,
            plain_ranges[0].end.as_deref()
        ),
        ROWS
    );
    let mut expect = 0u64;
    scan_ranges(
        &bucketed,
        bucket_layout.shape().prefix(),
        &ranges,
        PAGE,
        None,
        |k, _| {
            assert_eq!(bucket_layout.decode(k).unwrap()[0].as_u64(), Some(expect));
            expect += 1;
            ControlFlow::Continue(())
        },
    )
    .unwrap();
    assert_eq!(expect, ROWS);

    let mut g = c.benchmark_group("range read of 100,000 rows in redb");
    g.sample_size(10).throughput(Throughput::Elements(ROWS));
    g.bench_function("one unbucketed range, pages of 1,000", |b| {
        b.iter(|| {
            plain_read(
                &plain,
                &plain_ranges[0].start,
                plain_ranges[0].end.as_deref(),
            )
        });
    });
    g.bench_function("16 bucket ranges in parallel, merged", |b| {
        b.iter(|| {
            let mut n = 0u64;
            scan_ranges(
                &bucketed,
                bucket_layout.shape().prefix(),
                &ranges,
                PAGE,
                None,
                |k, v| {
                    black_box((k, v));
                    n += 1;
                    ControlFlow::Continue(())
                },
            )
            .unwrap();
            n
        });
    });
    g.finish();
    drop((plain, bucketed));
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
