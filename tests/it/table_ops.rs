//! Put, get, update, delete, batch writes and range reads.
//!
//! A batch that writes a key twice ends as it does in memory, in order.

use pk_codec::store::{MemoryStore, RangeQuery, RangeStore, WriteOp};
use pk_codec::table::{
    Attribute, AttributeValue, MAX_RANGE_ROWS, PkColumn, PkType, PkValue, PrimaryKey, RangeRequest,
    ReadOptions, RowWrite, Schema, Table, TableError, TableOptions, UpdateOp,
};

use crate::support;
use crate::support::batches_writing_keys_twice;

fn strings() -> Table {
    Table::single_string_key("pk", TableOptions::default()).unwrap()
}

fn keys(rows: &[pk_codec::table::Row]) -> Vec<String> {
    rows.iter().map(|r| r.key.to_string()).collect()
}

fn all() -> RangeRequest {
    RangeRequest::forward(PrimaryKey::inf_min(1), PrimaryKey::inf_max(1))
}

#[test]
fn put_replaces_the_whole_row() {
    let t = strings();
    t.put("k", vec![Attribute::new("a", 1), Attribute::new("b", 2)])
        .unwrap();
    t.put("k", vec![Attribute::new("c", 3)]).unwrap();
    let row = t.get("k", &ReadOptions::default()).unwrap().unwrap();
    assert_eq!(row.cells.len(), 1);
    assert_eq!(row.value("c"), Some(&AttributeValue::Integer(3)));
    assert_eq!(row.value("a"), None);
}

#[test]
fn get_reads_some_columns() {
    let t = strings();
    t.put(
        "k",
        vec![
            Attribute::new("a", 1),
            Attribute::new("b", 2),
            Attribute::new("c", 3),
        ],
    )
    .unwrap();
    let row = t
        .get("k", &ReadOptions::default().columns(["c", "a", "zz"]))
        .unwrap()
        .unwrap();
    let names: Vec<&str> = row.cells.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["a", "c"]);
    assert_eq!(t.get("missing", &ReadOptions::default()), Ok(None));
}

#[test]
fn an_empty_column_list_reads_every_column() {
    // As Tablestore's `columns_to_get`: no names asked for means every column, for a get and a
    // range read alike, not rows without cells.
    let t = strings();
    t.put("k", vec![Attribute::new("a", 1), Attribute::new("b", 2)])
        .unwrap();
    let none: [&str; 0] = [];
    let all = t.get("k", &ReadOptions::default()).unwrap().unwrap();
    let empty = t
        .get("k", &ReadOptions::default().columns(none))
        .unwrap()
        .unwrap();
    assert_eq!(empty.cells.len(), 2);
    assert_eq!(empty, all);
    let rows = t
        .get_range(
            &RangeRequest::forward(PrimaryKey::inf_min(1), PrimaryKey::inf_max(1))
                .options(ReadOptions::default().columns(none)),
        )
        .unwrap()
        .rows;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].cells.len(), 2);
}

#[test]
fn update_puts_and_deletes_columns() {
    let t = strings();
    // On a missing row, an update creates it...
    t.update("k", vec![UpdateOp::Put(Attribute::new("a", 1))])
        .unwrap();
    assert!(t.get("k", &ReadOptions::default()).unwrap().is_some());
    // ...unless it only deletes.
    t.update("none", vec![UpdateOp::DeleteColumn("a".into())])
        .unwrap();
    assert_eq!(t.get("none", &ReadOptions::default()), Ok(None));
    t.update(
        "k",
        vec![
            UpdateOp::Put(Attribute::new("b", 2)),
            UpdateOp::DeleteColumn("a".into()),
        ],
    )
    .unwrap();
    let row = t.get("k", &ReadOptions::default()).unwrap().unwrap();
    assert_eq!(row.value("a"), None);
    assert_eq!(row.value("b"), Some(&AttributeValue::Integer(2)));
    // Deleting the last column leaves a key-only row.
    t.update("k", vec![UpdateOp::DeleteColumn("b".into())])
        .unwrap();
    let row = t.get("k", &ReadOptions::default()).unwrap().unwrap();
    assert!(row.cells.is_empty());
    assert_eq!(
        t.update("k", vec![UpdateOp::DeleteColumn("no way".into())]),
        Err(TableError::InvalidColumnName {
            name: "no way".into(),
            reason: "only letters, digits and '_' are allowed"
        })
    );
}

#[test]
fn delete_removes_a_row() {
    let t = strings();
    t.put("k", vec![Attribute::new("a", 1)]).unwrap();
    t.delete("k").unwrap();
    t.delete("never").unwrap();
    assert_eq!(t.get("k", &ReadOptions::default()), Ok(None));
    assert_eq!(t.stored_rows(), 0);
    assert_eq!(t.report().bytes, 0);
}

#[test]
fn batch_rows_succeed_or_fail_on_their_own() {
    let t = strings();
    t.put("gone", vec![]).unwrap();
    let results = t
        .batch_write(vec![
            RowWrite::Put {
                key: "a".into(),
                attributes: vec![Attribute::new("n", 1)],
            },
            RowWrite::Put {
                key: 5.into(),
                attributes: vec![],
            },
            RowWrite::Update {
                key: "b".into(),
                ops: vec![UpdateOp::Put(Attribute::new("n", 2))],
            },
            RowWrite::Delete { key: "gone".into() },
        ])
        .unwrap();
    assert_eq!(
        results,
        vec![
            Ok(()),
            Err(TableError::KeyTypeMismatch {
                column: "pk".into(),
                expected: PkType::String,
                found: "integer"
            }),
            Ok(()),
            Ok(()),
        ]
    );
    assert_eq!(keys(&t.get_range(&all()).unwrap().rows), ["a", "b"]);
}

#[test]
fn batch_limits_fail_the_whole_batch() {
    let t = strings();
    let put = |k: String, bytes: usize| RowWrite::Put {
        key: k.into(),
        attributes: vec![Attribute::new("v", "x".repeat(bytes))],
    };
    let rows: Vec<RowWrite> = (0..201).map(|i| put(format!("k{i}"), 1)).collect();
    assert_eq!(
        t.batch_write(rows),
        Err(TableError::BatchTooManyRows {
            rows: 201,
            max: 200
        })
    );
    let rows: Vec<RowWrite> = (0..200).map(|i| put(format!("k{i:03}"), 1)).collect();
    assert_eq!(t.batch_write(rows).unwrap().len(), 200);
    // Two rows of 2 MB and a small one: over 4 MB.
    let rows = vec![
        put("a".into(), 2 << 20),
        put("b".into(), 2 << 20),
        put("c".into(), 0),
    ];
    let bytes = 3 + 3 * (1 + 8) + (4 << 20);
    assert_eq!(
        t.batch_write(rows),
        Err(TableError::BatchTooLarge {
            bytes,
            max: 4 << 20
        })
    );
    let rows = vec![
        put("a".into(), 1),
        put("b".into(), 1),
        RowWrite::Delete { key: "a".into() },
    ];
    assert_eq!(
        t.batch_write(rows),
        Err(TableError::DuplicateRowInBatch { index: 2, first: 0 })
    );
    assert_eq!(t.get("a", &ReadOptions::default()), Ok(None));
}

#[test]
fn rows_order_by_the_whole_key_with_the_store_rules() {
    let t = Table::new(
        Schema::new(vec![
            PkColumn::new("s", PkType::String),
            PkColumn::new("i", PkType::Integer),
            PkColumn::new("b", PkType::Binary),
        ])
        .unwrap(),
        TableOptions::default(),
    )
    .unwrap();
    let k = |s: &str, i: i64, b: &[u8]| PrimaryKey::new(vec![s.into(), i.into(), b.into()]);
    let input = [
        k("2", 0, b""),
        k("10", 10, b"\x01"),
        k("10", -1, b"\xff"),
        k("10", 2, b""),
        k("10", 2, b"\x00"),
        k("Z", 0, b""),
        k("a", 0, b""),
        k("\u{e9}", 0, b""),
    ];
    for key in &input {
        t.put(key.clone(), vec![]).unwrap();
    }
    let got: Vec<PrimaryKey> = t
        .get_range(&RangeRequest::forward(
            PrimaryKey::inf_min(3),
            PrimaryKey::inf_max(3),
        ))
        .unwrap()
        .rows
        .into_iter()
        .map(|r| r.key)
        .collect();
    let want = vec![
        k("10", -1, b"\xff"),
        k("10", 2, b""),
        k("10", 2, b"\x00"),
        k("10", 10, b"\x01"),
        k("2", 0, b""),
        k("Z", 0, b""),
        k("a", 0, b""),
        k("\u{e9}", 0, b""),
    ];
    assert_eq!(got, want);
    // INF_MIN / INF_MAX in later columns select within one partition-key value.
    let r = t
        .get_range(&RangeRequest::forward(
            PrimaryKey::new(vec!["10".into(), 2.into(), PkValue::InfMin]),
            PrimaryKey::new(vec!["10".into(), PkValue::InfMax, PkValue::InfMax]),
        ))
        .unwrap();
    assert_eq!(r.rows.len(), 3);
    let r = t
        .get_range(&RangeRequest::backward(
            PrimaryKey::new(vec!["10".into(), PkValue::InfMax, PkValue::InfMax]),
            PrimaryKey::new(vec!["10".into(), PkValue::InfMin, PkValue::InfMin]),
        ))
        .unwrap();
    let got: Vec<PrimaryKey> = r.rows.into_iter().map(|r| r.key).collect();
    assert_eq!(got, want[..4].iter().rev().cloned().collect::<Vec<_>>());
}

#[test]
fn range_bounds_and_direction_are_checked() {
    let t = strings();
    assert_eq!(
        t.get_range(&RangeRequest::forward("b", "a")),
        Err(TableError::InvalidRange {
            reason: "a forward read needs start below end"
        })
    );
    assert_eq!(
        t.get_range(&RangeRequest::forward("a", "a")),
        Err(TableError::InvalidRange {
            reason: "a forward read needs start below end"
        })
    );
    assert_eq!(
        t.get_range(&RangeRequest::backward("a", "b")),
        Err(TableError::InvalidRange {
            reason: "a backward read needs start above end"
        })
    );
    assert_eq!(t.get_range(&all().limit(0)), Err(TableError::InvalidLimit));
    assert_eq!(
        t.get_range(&RangeRequest::forward(1, "b")),
        Err(TableError::KeyTypeMismatch {
            column: "pk".into(),
            expected: PkType::String,
            found: "integer"
        })
    );
    assert_eq!(
        t.get_range(&RangeRequest::forward(
            PrimaryKey::inf_min(2),
            PrimaryKey::inf_max(1)
        )),
        Err(TableError::KeyArity {
            expected: 1,
            found: 2
        })
    );
}

#[test]
fn range_reads_resume_from_next_start_across_partitions() {
    let points: Vec<PkValue> = ["c", "f", "m"].iter().map(|s| (*s).into()).collect();
    let t = Table::single_string_key("pk", TableOptions::default().pre_split(points)).unwrap();
    let letters: Vec<String> = ('a'..='p').map(String::from).collect();
    for k in &letters {
        t.put(k.as_str(), vec![Attribute::new("n", 1)]).unwrap();
    }
    assert_eq!(t.partition_count(), 4);
    // Forward, 3 rows at a time.
    let mut got = Vec::new();
    let mut start = PrimaryKey::inf_min(1);
    loop {
        let r = t
            .get_range(&RangeRequest::forward(start, PrimaryKey::inf_max(1)).limit(3))
            .unwrap();
        assert!(r.rows.len() <= 3);
        got.extend(keys(&r.rows));
        match r.next_start {
            Some(k) => start = k,
            None => break,
        }
    }
    assert_eq!(got, letters);
    // Backward, 5 rows at a time, from "n" down to "b" (excluded).
    let mut got = Vec::new();
    let mut start: PrimaryKey = "n".into();
    loop {
        let r = t
            .get_range(&RangeRequest::backward(start, "b").limit(5))
            .unwrap();
        got.extend(keys(&r.rows));
        match r.next_start {
            Some(k) => start = k,
            None => break,
        }
    }
    let want: Vec<String> = ('c'..='n').rev().map(String::from).collect();
    assert_eq!(got, want);
    // A limit that ends exactly at the last row gives no next start.
    let r = t
        .get_range(&RangeRequest::forward("n", "z").limit(3))
        .unwrap();
    assert_eq!(
        (keys(&r.rows), r.next_start),
        (vec!["n".into(), "o".into(), "p".into()], None)
    );
}

#[test]
fn a_response_holds_at_most_5000_rows() {
    let t = strings();
    for i in 0..5003 {
        t.put(format!("k{i:05}"), vec![]).unwrap();
    }
    let r = t.get_range(&all()).unwrap();
    assert_eq!(r.rows.len(), MAX_RANGE_ROWS);
    assert_eq!(r.next_start, Some("k05000".into()));
    let r = t.get_range(&all().limit(6000)).unwrap();
    assert_eq!(r.rows.len(), MAX_RANGE_ROWS);
    let r = t
        .get_range(&RangeRequest::backward(
            PrimaryKey::inf_max(1),
            PrimaryKey::inf_min(1),
        ))
        .unwrap();
    assert_eq!(r.next_start, Some("k00002".into()));
}

#[test]
fn a_response_holds_at_most_4_mb_cut_at_a_row() {
    let t = strings();
    for k in ["a", "b", "c"] {
        t.put(k, vec![Attribute::new("v", "x".repeat(1_500_000))])
            .unwrap();
    }
    let r = t.get_range(&all()).unwrap();
    assert_eq!(keys(&r.rows), ["a", "b"]);
    assert_eq!(r.next_start, Some("c".into()));
    // A single row over 4 MB still comes back alone.
    t.put(
        "big",
        vec![
            Attribute::new("v1", "x".repeat(2 << 20)),
            Attribute::new("v2", "x".repeat(2 << 20)),
        ],
    )
    .unwrap();
    let r = t.get_range(&RangeRequest::forward("b", "c")).unwrap();
    assert_eq!(keys(&r.rows), ["b"]);
    assert_eq!(r.next_start, Some("big".into()));
    let r = t.get_range(&RangeRequest::forward("big", "c")).unwrap();
    assert_eq!(keys(&r.rows), ["big"]);
    assert_eq!(r.next_start, None);
}

/// A store's batch applies its writes in order, so a key written twice ends as its last write
/// left it. The table model refuses a batch naming a row twice (as Tablestore does), so through
/// its `RangeStore` bridge such a batch failed as a whole, for good (`Invalid`): a bulk import
/// updating a key twice within one batch lost the batch. Now the runs without a repeated key go
/// one after another: the same results and end state as the in-memory store.
#[test]
fn a_table_batch_that_writes_a_key_twice_ends_as_in_memory() {
    let table = Table::single_string_key("pk", TableOptions::default()).unwrap();
    let memory = MemoryStore::default();
    let mut batches = batches_writing_keys_twice("");
    // And a batch without a repeated key, the usual one.
    batches.push(vec![
        WriteOp::Put {
            key: "f".into(),
            value: b"1".to_vec(),
        },
        WriteOp::Put {
            key: "g".into(),
            value: b"1".to_vec(),
        },
    ]);
    for batch in &batches {
        let t = RangeStore::batch_write(&table, batch).expect("a batch writing a key twice");
        let m = memory.batch_write(batch).unwrap();
        assert_eq!(t.len(), batch.len());
        assert_eq!(
            t.iter().map(Result::is_ok).collect::<Vec<_>>(),
            m.iter().map(Result::is_ok).collect::<Vec<_>>()
        );
    }
    let all = RangeQuery::new("", None);
    assert_eq!(
        table.range(&all).unwrap().rows,
        memory.range(&all).unwrap().rows
    );
    let keys: Vec<String> = memory
        .range(&all)
        .unwrap()
        .rows
        .into_iter()
        .map(|(k, _)| String::from_utf8(k).unwrap())
        .collect();
    assert_eq!(keys, ["c", "d", "e", "f", "g"]);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: support::cases(128),
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// Any batches of puts and deletes over a few keys (so that keys repeat within a batch, or
    /// not), up to the table's batch size: through the table model's `RangeStore` bridge, each
    /// batch answers as the in-memory store does and leaves the same rows.
    #[test]
    fn table_batches_apply_in_order_as_in_memory(
        batches in proptest::collection::vec(
            proptest::collection::vec((0u8..6, proptest::option::of(0u8..4)), 1..=200),
            1..6,
        ),
    ) {
        let table = Table::single_string_key("pk", TableOptions::default()).unwrap();
        let memory = MemoryStore::default();
        for batch in &batches {
            let ops: Vec<WriteOp> = batch
                .iter()
                .map(|&(k, v)| match v {
                    Some(v) => WriteOp::put(format!("k{k}"), vec![v]),
                    None => WriteOp::delete(format!("k{k}")),
                })
                .collect();
            let t = RangeStore::batch_write(&table, &ops);
            let m = memory.batch_write(&ops).unwrap();
            proptest::prop_assert!(t.is_ok(), "{ops:?}: {t:?}");
            let t = t.unwrap();
            proptest::prop_assert_eq!(
                t.iter().map(Result::is_ok).collect::<Vec<_>>(),
                m.iter().map(Result::is_ok).collect::<Vec<_>>()
            );
        }
        let all = RangeQuery::new("", None);
        proptest::prop_assert_eq!(table.range(&all).unwrap().rows, memory.range(&all).unwrap().rows);
    }
}
