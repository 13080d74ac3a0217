//! Typed range reads in a real embedded store: random layouts (every kind, descending fields,
//! bucket prefixes, hashes over leading fields) written into redb, then every range read returns
//! exactly the matching rows, in typed order, across pages of any size, and resumes where it
//! stopped. `etcd_store.rs` runs the same reads against an etcd cluster.
//!
//! Also: `scan_ranges` stopped by its visitor returns its cursor, a store with a `max_page` of 0
//! is an error, a backward read resumed above its end stays in its range, typed scans read
//! exactly the range in key order across pages and name the key of a value they cannot read.

use std::ops::{Bound, ControlFlow};
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::SeqCst;

use pk_codec::store::{
    Direction, MemoryStore, RangePage, RangeQuery, RangeStore, ReaderThreads, RedbStore,
    StoreError, StoreErrorKind, Typed, scan_ranges,
};
use pk_codec::table::{Table, TableOptions};
use pk_codec::{KeyRange, Layout, PartitionKey, Prefix, Value};
use proptest::prelude::*;

use crate::support;
use crate::support::forward_to;
use crate::support::mix;
use crate::support::typed_cmp;

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
            store.put(format!("{b},{natural}").as_bytes(), b"").unwrap();
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
            let mut visit = |key: &[u8], _: &[u8], stop: bool| {
                let key = std::str::from_utf8(key).unwrap();
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

// ---- Typed range reads --------------------------------------------------------------------------

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 5, modulo = ts, separator))]
struct Reading {
    #[pk(width = 2)]
    device: u8,
    #[pk(desc, width = 4)]
    ts: u16,
    tag: Option<String>,
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(64), ..ProptestConfig::default() })]

    #[test]
    fn typed_scans_read_exactly_the_range_in_key_order_across_pages(
        rows in prop::collection::vec((0u8..3, 0u16..40, prop::option::of("[a-c]{0,2}")), 0..40),
        device in 0u8..3, lo in 0u16..45, hi in 0u16..45, page in 1usize..7, stop in 1usize..9,
    ) {
        use pk_codec::store::{MemoryStore, Typed};
        use std::ops::ControlFlow;
        let store = MemoryStore::default();
        let typed = Typed::new(&store);
        let mut all = Vec::new();
        for (d, ts, tag) in &rows {
            let key = Reading { device: *d, ts: *ts, tag: tag.clone() };
            typed.put(&key, &u32::from(*ts)).unwrap();
            all.push(key);
        }
        let mut expected: Vec<Reading> = all.into_iter().filter(|r| r.device == device && (lo..hi).contains(&r.ts)).collect();
        expected.sort_by_key(|r| r.encode().unwrap()[2..].to_owned());
        expected.dedup();
        let ranges = Reading::ranges_ts(device, lo..hi).unwrap();
        let mut seen = Vec::new();
        let mut cursor = None;
        loop {
            let mut n = 0;
            let next = typed.scan(&ranges, page, cursor.as_ref(), |k: Reading, v: u32| {
                assert_eq!(v, u32::from(k.ts));
                seen.push(k);
                n += 1;
                if n == stop { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
            }).unwrap();
            match next {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        prop_assert_eq!(seen, expected);
    }
}

/// A backward read resumed at or above its end (exclusive) returned keys outside `[start, end)`:
/// `RangeQuery::remaining` turned the resume key into an inclusive top without bounding it by
/// the end, so `[a, c)` backward resumed at `c` gave `c, b, a` and resumed at `z` gave `d, c, b,
/// a` from every store (the forward read bounds its resume key by the start). Now the range's
/// end bounds the resumed read too, in every store.
#[test]
fn a_backward_read_resumed_above_its_end_stays_in_its_range() {
    let mem = MemoryStore::default();
    let redb = RedbStore::in_memory().unwrap();
    let table = Table::single_string_key("pk", TableOptions::default()).unwrap();
    let stores: [(&str, &dyn RangeStore); 3] =
        [("memory", &mem), ("redb", &redb), ("table", &table)];
    for (name, store) in stores {
        for k in ["a", "b", "c", "d"] {
            store.put(k.as_bytes(), b"v").unwrap();
        }
        for (resume, want) in [
            ("z", &["b", "a"][..]),
            ("d", &["b", "a"]),
            ("c", &["b", "a"]),
            ("bb", &["b", "a"]),
            ("b", &["b", "a"]),
            ("a", &["a"]),
            ("0", &[]),
        ] {
            let query = RangeQuery::new("a", Some("c"))
                .direction(Direction::Backward)
                .resume(Some(resume.as_bytes()));
            assert!(
                query
                    .remaining()
                    .1
                    .is_some_and(|top| top <= b"c".as_slice()),
                "{resume}: {:?}",
                query.remaining()
            );
            let page = store.range(&query).unwrap();
            let keys: Vec<&str> = page
                .rows
                .iter()
                .map(|(k, _)| std::str::from_utf8(k).unwrap())
                .collect();
            assert_eq!(keys, want, "{name}: [a, c) backward, resumed at {resume:?}");
            assert_eq!(page.next, None, "{name}: {resume:?}");
        }
        // Paged backward read of the whole range, one row a page: each key of [a, c) once.
        let mut keys = Vec::new();
        let mut resume: Option<Vec<u8>> = None;
        loop {
            let query = RangeQuery::new("a", Some("c"))
                .direction(Direction::Backward)
                .limit(1)
                .resume(resume.as_deref());
            let page = store.range(&query).unwrap();
            keys.extend(
                page.rows
                    .into_iter()
                    .map(|(k, _)| String::from_utf8(k).unwrap()),
            );
            match page.next {
                Some(n) => resume = Some(n),
                None => break,
            }
        }
        assert_eq!(keys, ["b", "a"], "{name}");
    }
}

/// A memory store whose range reads fail as busy on a seeded schedule (`fail_pct` in 100).
struct Flaky {
    inner: MemoryStore,
    draws: AtomicU64,
    fail_pct: u64,
}

impl RangeStore for Flaky {
    fn reads_wait_on_io(&self) -> bool {
        false
    }
    forward_to!(inner);
    fn range(&self, query: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
        if mix(self.draws.fetch_add(1, SeqCst)) % 100 < self.fail_pct {
            return Err(StoreError::new(StoreErrorKind::Busy, "flaky"));
        }
        self.inner.range(query)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(96), ..ProptestConfig::default() })]

    /// `scan_ranges` documents that a `visit` returning `Break` makes the read return a cursor
    /// resuming right after the last row visited. It read the next page of the range whose row
    /// was just visited before looking at the `Break`: when that row ended its page and the
    /// read failed, the scan answered the store's error instead, the rows it had visited could
    /// only be read again, and a caller resuming from its last cursor saw them twice. Now a
    /// `Break` reads nothing more. The property: buckets holding the same natural keys (rows
    /// that tie across buckets), any page size, a visitor that stops every `stop` rows, reads
    /// that fail at random, inline or on reader threads; a caller that resumes from each
    /// cursor and restarts a failed call from its last cursor sees every row once, in order,
    /// and never an error after it stopped the read.
    #[test]
    fn a_scan_stopped_by_its_visitor_returns_its_cursor(
        rows in prop::collection::btree_set((0u8..4, 0u16..40), 0..60),
        buckets in 1u8..5,
        page in 1usize..6,
        stop in 1usize..8,
        fail_pct in 0u64..40,
        seed in any::<u64>(),
        threads in any::<bool>(),
    ) {
        let store = Flaky { inner: MemoryStore::default(), draws: AtomicU64::new(seed), fail_pct };
        let mut want: Vec<(u16, u8)> = Vec::new();
        for &(b, n) in &rows {
            if b < buckets {
                store.inner.put(format!("{b},{n:03}").as_bytes(), &[b]).unwrap();
                want.push((n, b));
            }
        }
        // Natural key first, ties in range order.
        want.sort_unstable();
        let ranges: Vec<KeyRange> = (0..buckets)
            .map(|b| KeyRange { start: format!("{b},"), end: Some(format!("{b}-")) })
            .collect();
        let layout: Layout = "n: u16 width=3; buckets=4:mod(n):sep".parse().unwrap();
        let prefix = layout.shape().prefix();
        prop_assert_eq!(prefix.len(), 2);
        let threaded = ReaderThreads(&store);
        let mut seen: Vec<(u16, u8)> = Vec::new();
        let mut cursor = None;
        let mut finished = false;
        for _ in 0..10_000 {
            let mut call = Vec::new();
            let mut stopped = false;
            let visit = |key: &[u8], value: &[u8]| {
                let key = std::str::from_utf8(key).unwrap();
                call.push((key[2..].parse::<u16>().unwrap(), value[0]));
                if call.len() == stop {
                    stopped = true;
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            };
            let result = if threads {
                scan_ranges(&threaded, prefix, &ranges, page, cursor.as_ref(), visit)
            } else {
                scan_ranges(&store, prefix, &ranges, page, cursor.as_ref(), visit)
            };
            match result {
                Err(e) => prop_assert!(!stopped, "the visitor stopped the read, which answered {e}"),
                Ok(next) => {
                    seen.extend(call);
                    match next {
                        Some(c) => cursor = Some(c),
                        None => {
                            finished = true;
                            break;
                        }
                    }
                }
            }
        }
        prop_assert!(finished);
        prop_assert_eq!(seen, want);
    }
}

/// `Typed::scan` and `scan_values` reported a stored value that does not deserialize as
/// `TypedError::Value` with serde's message only ("expected value at line 1 column 1"), not
/// the key of the row that holds it, though a scan reads many rows across buckets (a stored
/// key that does not decode names its key: `TypedError::StoredKey`). Now such a value is
/// `TypedError::StoredValue { key, error }`.
#[test]
fn a_typed_scan_names_the_key_of_a_value_it_cannot_read() {
    use pk_codec::store::{Typed, TypedError};
    let layout: Layout = "n: u16 width=3; buckets=4:mod(n):sep".parse().unwrap();
    let store = MemoryStore::default();
    let typed = Typed::new(&store);
    for n in 0..20u16 {
        typed
            .put_values(&layout, &[n.into()], &format!("row {n}"))
            .unwrap();
    }
    let bad = layout.encode(&[13u16.into()]).unwrap();
    store.put(bad.as_bytes(), b"not json").unwrap();
    let ranges = layout.prefix_ranges(&[]).unwrap();
    let e = typed
        .scan_values(&layout, &ranges, 5, None, |_, _: String| {
            ControlFlow::Continue(())
        })
        .unwrap_err();
    match &e {
        TypedError::StoredValue { key, .. } => assert_eq!(key, bad.as_bytes()),
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains(&bad), "{e}");
}

struct ZeroPage(MemoryStore);

impl RangeStore for ZeroPage {
    fn max_page(&self) -> usize {
        0
    }
    fn reads_wait_on_io(&self) -> bool {
        false
    }
    forward_to!(0, range);
}

#[test]
fn scan_ranges_on_a_store_with_max_page_zero_is_an_error() {
    // A `StoreError` of kind `Invalid` naming the store's max_page of 0.
    let s = ZeroPage(MemoryStore::default());
    let r = scan_ranges(
        &s,
        Prefix::None,
        &[KeyRange {
            start: String::new(),
            end: None,
        }],
        10,
        None,
        |_, _| ControlFlow::Continue(()),
    );
    let e = r.unwrap_err();
    assert_eq!(e.kind(), StoreErrorKind::Invalid);
    assert!(e.to_string().contains("max_page() is 0"), "{e}");
}
