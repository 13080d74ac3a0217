//! Typed range reads in a real embedded store: random layouts (every kind, descending fields,
//! bucket prefixes, hashes over leading fields) written into redb, then every range read returns
//! exactly the matching rows, in typed order, across pages of any size, and resumes where it
//! stopped. `etcd_store.rs` runs the same reads against an etcd cluster.

use std::cmp::Ordering;
use std::ops::{Bound, ControlFlow};

use pk_codec::KeyRange;
use pk_codec::store::{MemoryStore, RangeStore, ReaderThreads, RedbStore, Typed, scan_ranges};
use pk_codec::{Layout, Value};
use proptest::prelude::*;

use crate::support;

/// Layouts with the forms that matter for ranges, and a prefix: none, buckets by modulo or hash,
/// or a hash over the leading field.
fn layout() -> impl Strategy<Value = Layout> {
    let field = prop::sample::select(vec![
        "u16 width=3",
        "i32 desc",
        "str",
        "str desc",
        "bytes",
        "f64",
        "timestamp precision=s",
        "bool",
    ]);
    let prefix = prop::sample::select(vec![
        "",
        "; buckets=4:mod(a):sep",
        "; buckets=7:hash",
        "; buckets=16:hash(a,b)",
        "; hash=md5(a):4:sep",
    ]);
    (field.clone(), field, prefix)
        .prop_map(|(b, c, prefix)| format!("a: u8; b: {b}; c: {c}{prefix}").parse().unwrap())
}

fn value(spec: &str) -> BoxedStrategy<Value> {
    match spec.split_whitespace().next().unwrap() {
        "u16" => (0u16..1000).prop_map(Value::from).boxed(),
        "i32" => (-50i32..50).prop_map(Value::from).boxed(),
        "str" => "[a-d]{0,3}".prop_map(Value::from).boxed(),
        "bytes" => prop::collection::vec(0u8..4, 0..3)
            .prop_map(Value::from)
            .boxed(),
        "f64" => prop::sample::select(vec![-1.5, -0.0, 0.0, 2.5, f64::INFINITY])
            .prop_map(Value::F64)
            .boxed(),
        "timestamp" => (0i128..5)
            .prop_map(|s| Value::Timestamp(s * 1_000_000_000))
            .boxed(),
        _ => any::<bool>().prop_map(Value::from).boxed(),
    }
}

fn rows(layout: &Layout) -> BoxedStrategy<Vec<Vec<Value>>> {
    let spec = layout.to_string();
    let parts: Vec<String> = spec
        .split("; ")
        .take(3)
        .map(|p| p.split(": ").nth(1).unwrap().to_owned())
        .collect();
    let row = (
        (0u8..3).prop_map(Value::from),
        value(&parts[1]),
        value(&parts[2]),
    )
        .prop_map(|(a, b, c)| vec![a, b, c]);
    prop::collection::vec(row, 0..60).boxed()
}

fn typed_cmp(layout: &Layout, a: &[Value], b: &[Value]) -> Ordering {
    for ((def, x), y) in layout.fields().iter().zip(a).zip(b) {
        let o = x.cmp(y);
        let o = if def.spec().is_descending() {
            o.reverse()
        } else {
            o
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(64), ..ProptestConfig::default() })]

    #[test]
    fn range_reads_in_redb_return_exactly_the_matching_rows_in_typed_order(
        (layout, rows) in layout().prop_flat_map(|l| { let r = rows(&l); (Just(l), r) }),
        a in 0u8..3,
        page in 1usize..6,
        stop_after in 0usize..10,
    ) {
        let store = RedbStore::in_memory().unwrap();
        let typed = Typed::new(&store);
        let mut stored: Vec<Vec<Value>> = Vec::new();
        for row in &rows {
            typed.put_values(&layout, row, &()).unwrap();
            if !stored.contains(row) {
                stored.push(row.clone());
            }
        }
        // Fixing `a` (the hashed field of the hash prefix), then the whole key space.
        for prefix in [vec![Value::from(a)], vec![]] {
            let Ok(ranges) = layout.prefix_ranges(&prefix) else {
                // A hash over leading fields has no range until they are fixed.
                prop_assert!(prefix.is_empty());
                continue;
            };
            let mut want: Vec<Vec<Value>> = stored.iter().filter(|r| r[..prefix.len()] == prefix[..]).cloned().collect();
            want.sort_by(|x, y| typed_cmp(&layout, x, y));
            // Read in two parts: stop after `stop_after` rows, then resume; by the merging
            // thread (redb as it is) and by reader threads (redb declared as waiting on I/O).
            let threaded = ReaderThreads(&store);
            let on_threads = Typed::new(&threaded);
            for reader_threads in [false, true] {
                let mut got = Vec::new();
                let scan = |cursor: Option<&pk_codec::store::ScanCursor>, got: &mut Vec<Vec<Value>>| {
                    let visit = |k, ()| {
                        got.push(k);
                        if cursor.is_none() && got.len() == stop_after {
                            ControlFlow::Break(())
                        } else {
                            ControlFlow::Continue(())
                        }
                    };
                    if reader_threads {
                        on_threads.scan_values(&layout, &ranges, page, cursor, visit)
                    } else {
                        typed.scan_values(&layout, &ranges, page, cursor, visit)
                    }
                    .unwrap()
                };
                if let Some(c) = scan(None, &mut got) {
                    prop_assert_eq!(scan(Some(&c), &mut got), None);
                }
                prop_assert_eq!(&got, &want, "layout `{}`, reader threads {}", layout, reader_threads);
            }
        }
        // Point reads find every row.
        for row in &stored {
            prop_assert_eq!(typed.get_values::<()>(&layout, row).unwrap(), Some(()));
        }
        let _ = store.range(&pk_codec::store::RangeQuery::new("", None)).unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(256), ..ProptestConfig::default() })]

    /// `scan_ranges` on raw keys: any natural keys (shorter and longer than the 8 bytes the merge
    /// compares first, sharing those 8 bytes, equal across ranges) come out sorted by natural
    /// key, equal ones in range order, over any page size, stopped and resumed anywhere, read
    /// by the merging thread or by reader threads.
    #[test]
    fn scan_ranges_merges_any_keys_stably(
        keys in prop::collection::vec((0usize..4, "[ab]{0,3}|aaaaaaa[ab]{0,4}"), 0..40),
        page in 1usize..5,
        stop_after in 0usize..45,
    ) {
        let layout: Layout = "x: str; buckets=4:hash:sep".parse().unwrap();
        let prefix = layout.shape().prefix();
        let store = MemoryStore::default();
        let mut want: Vec<(String, usize)> = Vec::new();
        for (b, natural) in &keys {
            store.put(&format!("{b},{natural}"), b"").unwrap();
            if !want.contains(&(natural.clone(), *b)) {
                want.push((natural.clone(), *b));
            }
        }
        // Stable by range: sorting by (natural key, range) is the order the merge promises.
        want.sort();
        let ranges: Vec<KeyRange> = (0..4)
            .map(|b| KeyRange { start: format!("{b},"), end: Some(format!("{b}-")) })
            .collect();
        let threaded = ReaderThreads(&store);
        let stores: [&dyn RangeStore; 2] = [&store, &threaded];
        for s in stores {
            let mut got: Vec<(String, usize)> = Vec::new();
            let mut visit = |key: &str, _: &[u8], stop: bool| {
                let b = usize::from(key.as_bytes()[0] - b'0');
                got.push((key[2..].to_owned(), b));
                if stop && got.len() == stop_after { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
            };
            let cursor = scan_ranges(s, prefix, &ranges, page, None, |k, v| visit(k, v, true)).unwrap();
            if let Some(c) = cursor {
                let rest = scan_ranges(s, prefix, &ranges, page, Some(&c), |k, v| visit(k, v, false)).unwrap();
                prop_assert_eq!(rest, None);
            }
            prop_assert_eq!(&got, &want, "reader threads: {}", s.reads_wait_on_io());
        }
    }
}

#[test]
fn a_bounded_range_over_buckets_in_redb_is_exact() {
    let layout: Layout = "ts: u64 width=6; v: u8; buckets=16:mod(ts):sep"
        .parse()
        .unwrap();
    let store = RedbStore::in_memory().unwrap();
    let typed = Typed::new(&store);
    for ts in 0..1000u64 {
        typed
            .put_values(&layout, &[ts.into(), 1u8.into()], &ts)
            .unwrap();
    }
    let ranges = layout
        .ranges(
            &[],
            Bound::Included(&Value::from(250u64)),
            Bound::Excluded(&Value::from(750u64)),
        )
        .unwrap();
    assert_eq!(ranges.len(), 16);
    let mut seen = Vec::new();
    typed
        .scan_values(&layout, &ranges, 9, None, |_, ts: u64| {
            seen.push(ts);
            ControlFlow::Continue(())
        })
        .unwrap();
    assert_eq!(seen, (250..750).collect::<Vec<_>>());
}
