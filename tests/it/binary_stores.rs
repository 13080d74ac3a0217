//! Binary keys (issue 31) through the stores: a binary layout's rows imported with
//! `BulkWriter::add_values` into the in-memory store, the table model (a Binary key column) and
//! redb, read back in typed order by `scan_ranges` and `Typed::scan_values`, got and put by
//! `Typed`; the stored keys' order is the typed order; the same rows through a text layout read
//! back the same.

use std::cmp::Reverse;
use std::ops::ControlFlow;
use std::sync::Arc;

use pk_codec::store::{
    BulkOptions, BulkWriter, MemoryStore, RangeQuery, RangeStore, RedbStore, StoreErrorKind, Typed,
    scan_ranges,
};
use pk_codec::table::{PkColumn, PkType, Schema, Table, TableOptions};
use pk_codec::{Form, Layout, PartitionKey, Value};
use proptest::prelude::*;

use crate::support;

/// A row: a device, a time (descending), a note (any text, `\0` included).
type Row = (u32, i64, String);

fn values(&(device, ts, ref note): &Row) -> Vec<Value> {
    vec![device.into(), ts.into(), note.as_str().into()]
}

/// The rows in the layout's typed order: device ascending, time descending, note ascending
/// (bytewise, as `String` orders).
fn typed_order(rows: &[Row]) -> Vec<Row> {
    let mut sorted = rows.to_vec();
    sorted.sort_by_key(|(d, t, n)| (*d, Reverse(*t), n.clone()));
    sorted
}

/// The two layouts: natural keys only, and 16 buckets by a hash of the device.
fn layouts(form: Form) -> [Layout; 2] {
    [
        "device_id: u32 width=10; ts: i64 width=20 desc; note: str",
        "device_id: u32 width=10; ts: i64 width=20 desc; note: str; buckets=16:hash(device_id):sep",
    ]
    .map(|spec| spec.parse::<Layout>().unwrap().with_form(form))
}

/// The stores under test, fresh: the reference, the table model with a Binary key column, redb.
fn stores() -> Vec<(&'static str, Arc<dyn RangeStore>)> {
    let schema = Schema::new(vec![PkColumn::new("pk", PkType::Binary)]).unwrap();
    vec![
        ("memory", Arc::new(MemoryStore::default())),
        (
            "table",
            Arc::new(Table::new(schema, TableOptions::default()).unwrap()),
        ),
        ("redb", Arc::new(RedbStore::in_memory().unwrap())),
    ]
}

/// Every stored key, in the store's order.
fn stored_keys(store: &dyn RangeStore) -> Vec<Vec<u8>> {
    let mut keys = Vec::new();
    let mut resume: Option<Vec<u8>> = None;
    loop {
        let page = store
            .range(&RangeQuery::new(&b""[..], None).resume(resume.as_deref()))
            .unwrap();
        keys.extend(page.rows.into_iter().map(|(k, _)| k));
        match page.next {
            Some(n) => resume = Some(n),
            None => return keys,
        }
    }
}

fn row_gen() -> impl Strategy<Value = Vec<Row>> {
    prop::collection::vec(
        (
            // Devices that differ in every byte, so that a merge comparing past the wrong
            // number of prefix bytes puts them out of order.
            prop::sample::select(vec![0u32, 1, 0x100, 0x1_0000, 0x100_0000, u32::MAX]),
            any::<i64>(),
            "[a\\x00\\u{e9}\\u{10348}]{0,3}",
        ),
        0..50,
    )
    .prop_map(|mut rows| {
        // One value per key: the last row of a key is the one that stands.
        let mut seen = std::collections::HashSet::new();
        rows.reverse();
        rows.retain(|r| seen.insert(r.clone()));
        rows.reverse();
        rows
    })
}

/// Imports `rows` (row `i` holding the value `i`) into `store` through a `BulkWriter`.
fn import<S: RangeStore + 'static>(store: &Arc<S>, layout: &Layout, rows: &[Row]) {
    let writer = BulkWriter::new(Arc::clone(store), BulkOptions::default()).unwrap();
    for (i, row) in rows.iter().enumerate() {
        writer.add_values(layout, &values(row), &i).unwrap();
    }
    let stats = writer.close();
    assert_eq!(
        (stats.rows_written, stats.rows_lost()),
        (rows.len() as u64, 0)
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(24), ..ProptestConfig::default() })]

    /// Any rows, through every store, in both forms: a scatter-gather read and a typed scan give
    /// them in typed order, with their values; each is got by its values; with no prefix the
    /// stored keys themselves are in typed order.
    #[test]
    fn binary_rows_read_back_in_typed_order_from_every_store(
        rows in row_gen(),
        page in 1usize..9,
    ) {
        for form in [Form::Binary, Form::Text] {
            // The text form has no place for a NUL in a string (below the delimiter): its rows
            // are those without one.
            let rows: Vec<Row> = rows
                .iter()
                .filter(|r| form == Form::Binary || !r.2.contains('\0'))
                .cloned()
                .collect();
            let want = typed_order(&rows);
            let index = |row: &Row| rows.iter().position(|r| r == row).unwrap();
            for (bucketed, layout) in layouts(form).iter().enumerate() {
                let ranges = match form {
                    Form::Binary => support::binary_bucket_ranges(layout),
                    Form::Text => layout
                        .prefix_ranges(&[])
                        .unwrap()
                        .into_iter()
                        .map(pk_codec::ByteRange::from)
                        .collect(),
                };
                let schema = Schema::new(vec![PkColumn::new("pk", PkType::Binary)]).unwrap();
                let memory = Arc::new(MemoryStore::default());
                let table = Arc::new(Table::new(schema, TableOptions::default()).unwrap());
                let redb = Arc::new(RedbStore::in_memory().unwrap());
                import(&memory, layout, &rows);
                import(&table, layout, &rows);
                import(&redb, layout, &rows);
                let stores: [(&str, &dyn RangeStore); 3] =
                    [("memory", &*memory), ("table", &*table), ("redb", &*redb)];
                for (name, store) in stores {
                    let at = format!("{name}, {form:?}, bucketed: {bucketed}, pages of {page}");
                    let keys = stored_keys(store);
                    prop_assert_eq!(keys.len(), rows.len(), "{}", at);
                    if bucketed == 0 {
                        let decoded: Vec<Vec<Value>> =
                            keys.iter().map(|k| layout.decode_bytes(k).unwrap()).collect();
                        let typed: Vec<Vec<Value>> = want.iter().map(values).collect();
                        prop_assert_eq!(decoded, typed, "stored keys, {}", at);
                    }
                    let mut merged = Vec::new();
                    let done = scan_ranges(store, layout, &ranges, page, None, |k, _| {
                        merged.push(layout.decode_bytes(k).unwrap());
                        ControlFlow::Continue(())
                    })
                    .unwrap();
                    prop_assert_eq!(done, None);
                    let typed: Vec<Vec<Value>> = want.iter().map(values).collect();
                    prop_assert_eq!(&merged, &typed, "scan_ranges, {}", at);
                    let mut scanned = Vec::new();
                    Typed::new(store)
                        .scan_values(layout, &ranges, page, None, |key, value: usize| {
                            scanned.push((key, value));
                            ControlFlow::Continue(())
                        })
                        .unwrap();
                    let typed_rows: Vec<(Vec<Value>, usize)> =
                        want.iter().map(|r| (values(r), index(r))).collect();
                    prop_assert_eq!(scanned, typed_rows, "Typed::scan_values, {}", at);
                    let typed = Typed::new(store);
                    for row in &rows {
                        let got: Option<usize> = typed.get_values(layout, &values(row)).unwrap();
                        prop_assert_eq!(got, Some(index(row)), "{}", at);
                    }
                }
            }
        }
    }
}

/// The keys a binary layout writes go into every store as bytes: they are not UTF-8 (a negative
/// time is a sign-flipped big-endian integer, `0x7f...`; a large one `0x80...` and up), and
/// shorter than the text form's.
#[test]
fn binary_keys_are_bytes_and_shorter_than_text() {
    let [binary, _] = layouts(Form::Binary);
    let [text, _] = layouts(Form::Text);
    let row = values(&(54, 1_700_000_000_000, "a".into()));
    let key = binary.encode_bytes(&row).unwrap();
    assert!(std::str::from_utf8(&key).is_err(), "{key:02x?}");
    assert!(key.len() < text.encode_bytes(&row).unwrap().len());
    for (name, store) in stores() {
        Typed::new(&*store).put_values(&binary, &row, "x").unwrap();
        assert_eq!(stored_keys(&*store), std::slice::from_ref(&key), "{name}");
        let got: Option<String> = Typed::new(&*store).get_values(&binary, &row).unwrap();
        assert_eq!(got.as_deref(), Some("x"), "{name}");
        assert!(
            Typed::new(&*store).delete_values(&binary, &row).unwrap(),
            "{name}"
        );
        assert!(stored_keys(&*store).is_empty(), "{name}");
    }
}

/// A table model whose key column is a String takes text keys only: a binary key is refused as
/// invalid, naming the column and saying what it needs, and nothing is written.
#[test]
fn a_string_key_column_refuses_binary_keys_as_invalid() {
    let table = Table::single_string_key("pk", TableOptions::default()).unwrap();
    let err = RangeStore::put(&table, &[0x80, 0x00], b"v").unwrap_err();
    assert_eq!(err.kind(), StoreErrorKind::Invalid);
    assert_eq!(
        err.message(),
        "the key 0x8000 is not UTF-8 text (at byte 0), and the table's key column \"pk\" is a \
         String: binary keys need a Binary key column"
    );
    assert_eq!(
        RangeStore::range(&table, &RangeQuery::new("", None))
            .unwrap()
            .rows,
        []
    );
    // Text keys go in as their bytes, and come back as them.
    RangeStore::put(&table, b"000054,a", b"v").unwrap();
    assert_eq!(
        RangeStore::get(&table, b"000054,a").unwrap(),
        Some(b"v".to_vec())
    );
}

/// Re-keying moves a table to binary keys and on: text keys to binary keys of the same fields
/// (under `v2/`), then those to binary keys with more buckets (under `v3/`), in every store;
/// each time every row ends under its new key with its value, and no old key is left.
#[test]
fn rekeying_moves_text_keys_to_binary_keys_and_binary_keys_to_more_buckets() {
    let schema = Schema::new(vec![PkColumn::new("pk", PkType::Binary)]).unwrap();
    rekey_to_binary("memory", Arc::new(MemoryStore::default()));
    rekey_to_binary(
        "table",
        Arc::new(Table::new(schema, TableOptions::default()).unwrap()),
    );
    rekey_to_binary("redb", Arc::new(RedbStore::in_memory().unwrap()));
}

fn rekey_to_binary<S: RangeStore + 'static>(name: &str, store: Arc<S>) {
    use pk_codec::store::{KeySpace, Rekey, RekeyJob, RekeyOptions};
    let text: Layout = "card: u32 width=10; seq: u16 width=5; buckets=4:mod(card):sep"
        .parse()
        .unwrap();
    let binary = text.clone().with_form(Form::Binary);
    let wider = "card: u32 width=10; seq: u16 width=5; buckets=300:mod(card):sep"
        .parse::<Layout>()
        .unwrap()
        .with_form(Form::Binary);
    let rows: Vec<[Value; 2]> = (0..40u32)
        .flat_map(|card| (0..3u16).map(move |seq| [(card * 0x0101_0101).into(), seq.into()]))
        .collect();
    for (i, row) in rows.iter().enumerate() {
        store
            .put(&text.encode_bytes(row).unwrap(), &[i as u8])
            .unwrap();
    }
    let steps = [
        (
            "to-binary",
            KeySpace::new(text.clone()),
            KeySpace::new(binary.clone()).under("v2/"),
        ),
        (
            "more-buckets",
            KeySpace::new(binary).under("v2/"),
            KeySpace::new(wider).under("v3/"),
        ),
    ];
    for (job, from, to) in steps {
        let space = to.clone();
        let options = RekeyOptions {
            step_rows: 7,
            ..RekeyOptions::default()
        };
        RekeyJob::start(Arc::clone(&store), Rekey::new(job, from, to), options)
            .unwrap()
            .run()
            .unwrap();
        let mut want: Vec<Vec<u8>> = rows.iter().map(|r| space.key(r).unwrap()).collect();
        want.sort();
        // Every key but the job's state: the rows' new keys, and no old one.
        let left: Vec<Vec<u8>> = stored_keys(&*store)
            .into_iter()
            .filter(|k| k.as_slice() != Rekey::DEFAULT_STATE_KEY.as_bytes())
            .collect();
        assert_eq!(left, want, "{name}, {job}");
        for (i, row) in rows.iter().enumerate() {
            assert_eq!(
                store.get(&space.key(row).unwrap()).unwrap(),
                Some(vec![i as u8]),
                "{name}, {job}"
            );
        }
    }
}

/// A derived key declared `#[pk(form = binary)]` is stored in its binary form by `Typed` (and
/// `BulkWriter::add_typed`, through the same `stored_bytes`), and read back by `Typed::get` and
/// `Typed::scan` over its layout's byte ranges, in key order.
#[test]
fn a_binary_derived_key_goes_through_typed_in_its_form() {
    #[derive(pk_codec::PartitionKey, Debug, Clone, PartialEq)]
    #[pk(form = binary, buckets(count = 4, hash(device)))]
    struct Reading {
        #[pk(width = 6)]
        device: u32,
        #[pk(desc)]
        ts: u64,
    }
    let store = MemoryStore::default();
    let typed = Typed::new(&store);
    let first = Reading { device: 54, ts: 10 };
    typed.put(&first, "a").unwrap();
    for ts in [5u64, 20, 15] {
        typed
            .put(&Reading { device: 54, ts }, &format!("t{ts}"))
            .unwrap();
    }
    typed.put(&Reading { device: 7, ts: 1 }, "other").unwrap();
    // Stored under the binary key, which is not UTF-8 text of the text key.
    assert_eq!(
        store.get(&first.encode_binary().unwrap()).unwrap(),
        Some(pk_codec::store::value::to_bytes("a").unwrap())
    );
    assert_eq!(store.get(first.encode().unwrap().as_bytes()).unwrap(), None);
    assert_eq!(
        typed.get::<Reading, String>(&first).unwrap().as_deref(),
        Some("a")
    );
    // Device 54's readings, newest first (ts descending), from its bucket's byte range.
    let ranges = Reading::layout()
        .byte_ranges(
            &[Value::from(54u32)],
            std::ops::Bound::Unbounded,
            std::ops::Bound::Unbounded,
        )
        .unwrap();
    assert_eq!(ranges.len(), 1);
    let mut seen = Vec::new();
    typed
        .scan::<Reading, String, _>(&ranges, 2, None, |k, v| {
            seen.push((k.ts, v));
            ControlFlow::Continue(())
        })
        .unwrap();
    assert_eq!(
        seen,
        [
            (20, "t20".into()),
            (15, "t15".into()),
            (10, "a".into()),
            (5, "t5".into())
        ]
    );
}

/// A binary derived key's typed range constructors answer byte ranges of its binary keys
/// (`Vec<ByteRange>`), which `Typed::scan` reads: no refusal, no text ranges its keys do not lie
/// in (`derive_binary_ranges.rs` holds the property over random keys).
#[test]
fn a_binary_derived_keys_range_constructors_answer_byte_ranges_typed_scan_reads() {
    #[derive(pk_codec::PartitionKey, Debug, Clone, PartialEq)]
    #[pk(form = binary, buckets(count = 4, hash(device)))]
    struct Reading {
        #[pk(width = 6)]
        device: u32,
        ts: u64,
    }
    let store = MemoryStore::default();
    let typed = Typed::new(&store);
    for (device, ts) in [(54, 9), (54, 10), (54, 15), (54, 20), (7, 12)] {
        typed.put(&Reading { device, ts }, &ts).unwrap();
    }
    let ranges: Vec<pk_codec::ByteRange> = Reading::ranges_ts(54, 10..20).unwrap();
    assert_eq!(ranges.len(), 1);
    let mut seen = Vec::new();
    typed
        .scan::<Reading, u64, _>(&ranges, 1, None, |k, v| {
            seen.push((k.device, k.ts, v));
            ControlFlow::Continue(())
        })
        .unwrap();
    assert_eq!(seen, [(54, 10, 10), (54, 15, 15)]);
    assert_eq!(Reading::ranges_device(..).unwrap().len(), 4);
}
