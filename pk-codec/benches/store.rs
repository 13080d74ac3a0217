//! A 16-bucket range read through the parallel merge (`scan_ranges`) against one plain range read
//! of the same 100,000 rows, both in redb.
//!
//! `cargo bench -p pk-codec --features redb --bench store` (`PK_BENCH_ROUNDS`, default 31, sets
//! the rounds). Criterion runs one case after the other; here every round reads every way, in a
//! rotating order, and a ratio is the median of the per-round ratios, so the reads meet the same
//! neighbours. The merge runs twice: as redb declares itself (an in-process store, read by the
//! merging thread) and through `ReaderThreads` (a reader thread per range, as for a network
//! store).

use std::hint::black_box;
use std::ops::ControlFlow;
use std::time::Instant;

use pk_codec::Layout;
use pk_codec::store::{RangeQuery, RangeStore, ReaderThreads, RedbStore, WriteOp, scan_ranges};

mod harness;

use harness::{env_usize, median};

const ROWS: u64 = 100_000;
const PAGE: usize = 1_000;

fn fill(store: &RedbStore, layout: &Layout) -> Vec<pk_codec::KeyRange> {
    let keys: Vec<String> = (0..ROWS)
        .map(|ts| layout.encode(&[ts.into()]).unwrap())
        .collect();
    for chunk in keys.chunks(10_000) {
        let ops: Vec<WriteOp> = chunk
            .iter()
            .map(|k| WriteOp::put(k.as_str(), vec![1u8; 16]))
            .collect();
        store.batch_write(&ops).unwrap();
    }
    layout.prefix_ranges(&[]).unwrap()
}

/// Every row of `[start, end)`, page by page; returns how many.
fn plain_read(store: &RedbStore, start: &str, end: Option<&str>) -> u64 {
    let mut n = 0;
    let mut resume: Option<Vec<u8>> = None;
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

fn main() {
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
    scan_ranges(&bucketed, &bucket_layout, &ranges, PAGE, None, |k, _| {
        assert_eq!(
            bucket_layout.decode_bytes(k).unwrap()[0].as_u64(),
            Some(expect)
        );
        expect += 1;
        ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(expect, ROWS);

    let merge_from = |store: &dyn RangeStore| {
        let mut n = 0u64;
        scan_ranges(
            store,
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
    };
    let merged_read = || merge_from(&bucketed);
    let threaded = ReaderThreads(&bucketed);
    let threaded_read = || merge_from(&threaded);
    let plain_once = || {
        plain_read(
            &plain,
            &plain_ranges[0].start,
            plain_ranges[0].end.as_deref(),
        )
    };

    // Interleaved: every round times every read, in a rotating order, and the ratios are taken
    // within the round, so a neighbour's load moves both sides of them alike.
    let rounds = env_usize("PK_BENCH_ROUNDS", 31);
    let (mut plains, mut mergeds, mut threadeds) = (Vec::new(), Vec::new(), Vec::new());
    let (mut ratios, mut thread_ratios) = (Vec::new(), Vec::new());
    let reads: [&dyn Fn() -> u64; 3] = [&plain_once, &merged_read, &threaded_read];
    for round in 0..rounds {
        let mut ms = [0f64; 3];
        // The order rotates: each read goes first, second and third equally often.
        for k in 0..3 {
            let which = (round + k) % 3;
            let start = Instant::now();
            assert_eq!(reads[which](), ROWS);
            ms[which] = start.elapsed().as_secs_f64() * 1e3;
        }
        plains.push(ms[0]);
        mergeds.push(ms[1]);
        threadeds.push(ms[2]);
        ratios.push(ms[1] / ms[0]);
        thread_ratios.push(ms[2] / ms[0]);
    }
    println!(
        "range read of {ROWS} rows in redb, pages of {PAGE}, {rounds} interleaved rounds, medians:\n\
         one unbucketed range                          {:7.1} ms\n\
         16 bucket ranges merged (redb: merging thread) {:6.1} ms   {:.2}x the plain read (target at most 1.5x)\n\
         16 bucket ranges merged, a reader thread each {:7.1} ms   {:.2}x the plain read",
        median(&plains),
        median(&mergeds),
        median(&ratios),
        median(&threadeds),
        median(&thread_ratios),
    );
    drop((plain, bucketed));
    let _ = std::fs::remove_dir_all(&dir);
}
