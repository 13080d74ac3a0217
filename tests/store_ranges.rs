//! Typed range reads in a real embedded store: random layouts (every kind, descending fields,
//! bucket prefixes, hashes over leading fields) written into redb, then every range read returns
//! exactly the matching rows, in typed order, across pages of any size, and resumes where it
//! stopped. `tests/etcd_store.rs` runs the same reads against an etcd cluster.

use std::cmp::Ordering;
use std::ops::{Bound, ControlFlow};

use pk_codec::store::{RangeStore, RedbStore, Typed};
use pk_codec::{Layout, Value};
use proptest::prelude::*;

mod support;

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
            // Read in two parts: stop after `stop_after` rows, then resume.
            let mut got = Vec::new();
            let cursor = typed.scan_values(&layout, &ranges, page, None, |k, ()| {
                got.push(k);
                if got.len() == stop_after { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
            }).unwrap();
            if let Some(c) = cursor {
                typed.scan_values(&layout, &ranges, page, Some(&c), |k, ()| {
                    got.push(k);
                    ControlFlow::Continue(())
                }).unwrap();
            }
            prop_assert_eq!(&got, &want, "layout `{}`", layout);
        }
        // Point reads find every row.
        for row in &stored {
            prop_assert_eq!(typed.get_values::<()>(&layout, row).unwrap(), Some(()));
        }
        let _ = store.range(&pk_codec::store::RangeQuery::new("", None)).unwrap();
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
