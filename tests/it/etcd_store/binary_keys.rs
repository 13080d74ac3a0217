//! Binary keys (issue 31) through `EtcdStore`, against the model of etcd's JSON gateway: keys
//! that are not UTF-8 go to etcd as base64 and come back as the bytes they were, range reads of
//! byte bounds answer as the in-memory store's, and a binary layout's rows imported through a
//! `BulkWriter` read back in typed order through `scan_ranges` and `Typed`.

use std::ops::ControlFlow;
use std::sync::Arc;

use pk_codec::store::{
    BulkOptions, BulkWriter, Direction, EtcdStore, MemoryStore, RangeQuery, RangeStore, Typed,
    scan_ranges,
};
use pk_codec::{Form, Layout, Value};

use crate::support;

/// Keys that are not UTF-8 (a lone continuation byte, `0xff`, a truncated sequence), around
/// and between UTF-8 ones, NUL included.
const KEYS: [&[u8]; 9] = [
    b"\x00",
    b"\x00\xff",
    b"a",
    b"a\x80",
    b"a\xc3",
    b"a\xc3\xa9",
    b"\x80",
    b"\xfe\xff",
    b"\xff\xff\xff",
];

#[test]
fn etcd_takes_keys_that_are_not_utf8_and_reads_them_as_memory_does() {
    let store = EtcdStore::new([super::etcd_model::start()]).unwrap();
    let memory = MemoryStore::default();
    for (i, k) in KEYS.iter().enumerate() {
        store.put(k, &[i as u8]).unwrap();
        memory.put(k, &[i as u8]).unwrap();
    }
    for (i, k) in KEYS.iter().enumerate() {
        assert_eq!(store.get(k).unwrap(), Some(vec![i as u8]), "{k:02x?}");
    }
    assert_eq!(store.get(b"\xff").unwrap(), None);
    let bounds: Vec<&[u8]> = [
        &b""[..],
        b"\x00",
        b"a\xc3",
        b"\x80",
        b"\xff",
        b"\xff\xff\xff\xff",
    ]
    .into_iter()
    .collect();
    for &start in &bounds {
        for end in bounds.iter().map(|e| Some(*e)).chain([None]) {
            for direction in [Direction::Forward, Direction::Backward] {
                for resume in bounds.iter().map(|r| Some(*r)).chain([None]) {
                    for limit in [1, 3, usize::MAX] {
                        let q = RangeQuery::new(start, end)
                            .direction(direction)
                            .resume(resume)
                            .limit(limit);
                        assert_eq!(store.range(&q).unwrap(), memory.range(&q).unwrap(), "{q:?}");
                    }
                }
            }
        }
    }
}

#[test]
fn a_binary_layouts_rows_import_into_etcd_and_read_back_in_typed_order() {
    let layout = "device_id: u32 width=10; ts: i64 width=20 desc; buckets=16:hash(device_id):sep"
        .parse::<Layout>()
        .unwrap()
        .with_form(Form::Binary);
    let store = Arc::new(EtcdStore::new([super::etcd_model::start()]).unwrap());
    let writer = BulkWriter::new(Arc::clone(&store), BulkOptions::default()).unwrap();
    let mut rows: Vec<(u32, i64)> = Vec::new();
    for device in [0u32, 1, 0x100, 0x1_0000, 0x100_0000, u32::MAX] {
        for ts in [i64::MIN, -1, 0, 1, 1_700_000_000_000, i64::MAX] {
            rows.push((device, ts));
        }
    }
    for (i, &(device, ts)) in rows.iter().enumerate() {
        writer
            .add_values(&layout, &[device.into(), ts.into()], &i)
            .unwrap();
    }
    let stats = writer.close();
    assert_eq!(
        (stats.rows_written, stats.rows_lost()),
        (rows.len() as u64, 0)
    );
    let everything = store
        .range(&RangeQuery::new(&b""[..], None).limit(usize::MAX))
        .unwrap()
        .rows;
    assert!(
        everything
            .iter()
            .any(|(k, _)| std::str::from_utf8(k).is_err()),
        "the binary keys are bytes, not text"
    );
    // Typed order: device ascending, time descending.
    let mut want = rows.clone();
    want.sort_by_key(|&(d, t)| (d, std::cmp::Reverse(t)));
    let want_values: Vec<Vec<Value>> = want
        .iter()
        .map(|&(d, t)| vec![d.into(), t.into()])
        .collect();
    let ranges = support::binary_bucket_ranges(&layout);
    for page in [1, 5, 1000] {
        let mut merged = Vec::new();
        scan_ranges(&*store, &layout, &ranges, page, None, |k, _| {
            merged.push(layout.decode_bytes(k).unwrap());
            ControlFlow::Continue(())
        })
        .unwrap();
        assert_eq!(merged, want_values, "scan_ranges, pages of {page}");
        let mut scanned = Vec::new();
        Typed::new(&*store)
            .scan_values(&layout, &ranges, page, None, |key, i: usize| {
                assert_eq!(key, [rows[i].0.into(), rows[i].1.into()]);
                scanned.push(key);
                ControlFlow::Continue(())
            })
            .unwrap();
        assert_eq!(scanned, want_values, "Typed::scan_values, pages of {page}");
    }
    let got: Option<usize> = Typed::new(&*store)
        .get_values(&layout, &[0x100u32.into(), (-1i64).into()])
        .unwrap();
    assert_eq!(got, rows.iter().position(|&r| r == (0x100, -1)));
}
