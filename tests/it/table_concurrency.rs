//! Several threads write disjoint and overlapping keys while partitions split (and merge);
//! afterwards every row is there exactly once, in order, and reads match a `BTreeMap` model.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

use pk_codec::table::{
    Attribute, AttributeValue, PrimaryKey, RangeRequest, ReadOptions, Table, TableOptions,
};

const THREADS: i64 = 4;
const PER_THREAD: i64 = 3_000;
const SHARED: i64 = 500;

fn scan(t: &Table, forward: bool, limit: usize) -> Vec<(String, i64)> {
    let (mut start, end) = if forward {
        (PrimaryKey::inf_min(1), PrimaryKey::inf_max(1))
    } else {
        (PrimaryKey::inf_max(1), PrimaryKey::inf_min(1))
    };
    let mut out = Vec::new();
    loop {
        let req = if forward {
            RangeRequest::forward(start, end.clone())
        } else {
            RangeRequest::backward(start, end.clone())
        };
        let r = t.get_range(&req.limit(limit)).unwrap();
        for row in r.rows {
            let Some(AttributeValue::Integer(v)) = row.value("v") else {
                panic!("row without v: {row:?}")
            };
            out.push((row.key.to_string(), *v));
        }
        match r.next_start {
            Some(k) => start = k,
            None => return out,
        }
    }
}

#[test]
fn concurrent_writers_and_splits_lose_nothing() {
    let t = Table::single_string_key(
        "pk",
        TableOptions::default()
            .split_size_bytes(4_000)
            .split_load_ops(400)
            .load_window_ms(1)
            .load_sample_every(2)
            .merge_below(2_000, 20),
    )
    .unwrap();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let writers: Vec<_> = (0..THREADS)
            .map(|w| {
                let t = &t;
                s.spawn(move || {
                    for i in 0..PER_THREAD {
                        // Disjoint keys, interleaved over the key space by thread.
                        let key = format!("d{:05}-{w}", i * 7 % PER_THREAD);
                        t.put(key, vec![Attribute::new("v", w * PER_THREAD + i)])
                            .unwrap();
                        // Overlapping keys: every thread writes them.
                        if i % 6 == 0 {
                            let key = format!("s{:04}", i % SHARED);
                            t.put(key, vec![Attribute::new("v", w)]).unwrap();
                        }
                        if i % 500 == 0 {
                            t.get("s0000", &ReadOptions::default()).unwrap();
                        }
                    }
                })
            })
            .collect();
        // A churner fills a key range and empties it again, so that its partitions merge.
        s.spawn(|| {
            for round in 0..3 {
                for i in 0..1_500 {
                    t.put(format!("c{i:05}"), vec![Attribute::new("v", round)])
                        .unwrap();
                }
                for i in 0..1_500 {
                    t.delete(format!("c{i:05}")).unwrap();
                }
                std::thread::sleep(std::time::Duration::from_millis(3));
                t.get("c", &ReadOptions::default()).unwrap();
            }
        });
        // A reader checks order and uniqueness while splits happen.
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                for forward in [true, false] {
                    let rows = scan(&t, forward, 700);
                    for w in rows.windows(2) {
                        if forward {
                            assert!(w[0].0 < w[1].0, "out of order: {w:?}");
                        } else {
                            assert!(w[0].0 > w[1].0, "out of order: {w:?}");
                        }
                    }
                }
            }
        });
        for w in writers {
            w.join().unwrap();
        }
        done.store(true, Ordering::Relaxed);
    });

    assert!(t.report().splits > 10, "{:?}", t.report().splits);
    assert!(t.report().merges > 0, "{:?}", t.report().merges);
    let mut model: BTreeMap<String, i64> = BTreeMap::new();
    for w in 0..THREADS {
        for i in 0..PER_THREAD {
            model.insert(
                format!("d{:05}-{w}", i * 7 % PER_THREAD),
                w * PER_THREAD + i,
            );
        }
    }
    let forward = scan(&t, true, 5_000);
    let (disjoint, shared): (Vec<_>, Vec<_>) =
        forward.iter().partition(|(k, _)| k.starts_with('d'));
    let want: Vec<(String, i64)> = model.into_iter().collect();
    assert_eq!(disjoint.into_iter().cloned().collect::<Vec<_>>(), want);
    // Each shared key once, holding one writer's value.
    let shared_keys: Vec<&String> = shared.iter().map(|(k, _)| k).collect();
    let mut expected: Vec<String> = (0..PER_THREAD)
        .filter(|i| i % 6 == 0)
        .map(|i| format!("s{:04}", i % SHARED))
        .collect();
    expected.sort();
    expected.dedup();
    assert_eq!(shared_keys, expected.iter().collect::<Vec<_>>());
    assert!(shared.iter().all(|(_, v)| (0..THREADS).contains(v)));
    // Backward is the exact reverse; point reads agree with the scan.
    let mut backward = scan(&t, false, 333);
    backward.reverse();
    assert_eq!(backward, forward);
    for (k, v) in forward.iter().step_by(97) {
        let row = t.get(k.as_str(), &ReadOptions::default()).unwrap().unwrap();
        assert_eq!(row.value("v"), Some(&AttributeValue::Integer(*v)));
    }
    let report = t.report();
    assert_eq!(report.rows as usize, forward.len());
    assert_eq!(t.stored_rows(), forward.len());
}
