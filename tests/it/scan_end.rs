//! A scan says when it is done: `scan_ranges` and `Typed::scan` answer `None` once no range has a
//! row left, also when the visitor stopped on the very last row, and a cursor while rows are
//! left, in every store and however the ranges are paged.

use pk_codec::Layout;
use pk_codec::store::{MemoryStore, RangeStore, ReaderThreads, RedbStore, ScanCursor, Typed};
use pk_codec::table::{Table, TableOptions};
use proptest::prelude::*;

use crate::support;
use crate::support::{Reading, stop_after};

/// The stores a scan reads: the reference map, the same through reader threads, redb and the
/// table model.
fn stores() -> Vec<Box<dyn RangeStore>> {
    vec![
        Box::new(MemoryStore::default()),
        Box::new(RedbStore::in_memory().unwrap()),
        Box::new(Table::single_string_key("pk", TableOptions::default()).unwrap()),
    ]
}

#[test]
fn a_scan_stopped_on_the_last_row_is_done_and_one_stopped_before_it_is_not() {
    let layout: Layout = "ts: u64 width=4; buckets=4:mod(ts):sep".parse().unwrap();
    for store in stores() {
        for ts in 0..10u64 {
            store
                .put(&layout.encode_bytes(&[ts.into()]).unwrap(), b"v")
                .unwrap();
        }
        let ranges = layout.prefix_ranges(&[]).unwrap();
        for reader in [&*store, &ReaderThreads(&*store) as &dyn RangeStore] {
            // Stopped on the tenth and last row: done.
            let (seen, next) = support::scan_keys(reader, &layout, &ranges, 3, None, 10);
            assert_eq!((seen.len(), next), (10, None));
            // Stopped on the ninth: a cursor, which reads the last row and is then done.
            let (seen, next) = support::scan_keys(reader, &layout, &ranges, 3, None, 9);
            assert_eq!(seen.len(), 9);
            let cursor = next.expect("a row is left");
            assert!(cursor.positions.iter().any(Option::is_some));
            let (rest, end) = support::scan_keys(reader, &layout, &ranges, 3, Some(&cursor), 1);
            assert_eq!(rest, [layout.encode(&[9u64.into()]).unwrap()]);
            assert_eq!(end, None);
        }
    }
}

#[test]
fn a_typed_scan_stopped_on_the_last_row_is_done() {
    let store = RedbStore::in_memory().unwrap();
    let typed = Typed::new(&store);
    for ts in 0..5u64 {
        typed.put(&Reading { device_id: 54, ts }, &ts).unwrap();
    }
    let ranges = Reading::ranges_ts(54, ..).unwrap();
    let scan = |stop: usize, cursor: Option<&ScanCursor>| {
        let mut seen = Vec::new();
        let next = typed
            .scan(&ranges, 2, cursor, |k: Reading, v: u64| {
                assert_eq!(k.ts, v);
                seen.push(v);
                stop_after(seen.len(), stop)
            })
            .unwrap();
        (seen, next)
    };
    assert_eq!(scan(5, None), (vec![0, 1, 2, 3, 4], None));
    let (seen, next) = scan(4, None);
    assert_eq!(seen, [0, 1, 2, 3]);
    assert_eq!(scan(1, next.as_ref()), (vec![4], None));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(64), ..ProptestConfig::default() })]

    /// Any rows over 1 to 5 buckets, any page size, a visitor that stops after any number of
    /// rows, in every store, inline or on reader threads: the scan answers `None` exactly when
    /// the visitor saw every row (it stopped on the last one, or was never stopped), and a
    /// cursor with a position to resume otherwise, from which the rest of the rows follow.
    #[test]
    fn a_scan_is_done_exactly_when_no_row_is_left(
        rows in prop::collection::btree_set(0u64..60, 0..40),
        buckets in 1u32..6,
        page in 1usize..6,
        stop in 1usize..45,
        threads in any::<bool>(),
    ) {
        let layout: Layout = format!("ts: u64 width=4; buckets={buckets}:mod(ts):sep").parse().unwrap();
        let ranges = layout.prefix_ranges(&[]).unwrap();
        let want: Vec<String> = rows.iter().map(|&ts| layout.encode(&[ts.into()]).unwrap()).collect();
        for store in stores() {
            for key in &want {
                store.put(key.as_bytes(), b"").unwrap();
            }
            let threaded = ReaderThreads(&*store);
            let reader: &dyn RangeStore = if threads { &threaded } else { &*store };
            let (mut seen, next) = support::scan_keys(reader, &layout, &ranges, page, None, stop);
            prop_assert_eq!(next.is_none(), seen.len() == want.len(), "visited {} of {}", seen.len(), want.len());
            if let Some(cursor) = next {
                prop_assert!(cursor.positions.iter().any(Option::is_some));
                let (rest, end) = support::scan_keys(reader, &layout, &ranges, page, Some(&cursor), usize::MAX);
                prop_assert_eq!(end, None);
                seen.extend(rest);
            }
            let mut natural_order = want.clone();
            natural_order.sort_by(|a, b| a[2..].cmp(&b[2..]));
            prop_assert_eq!(seen, natural_order);
        }
    }
}
