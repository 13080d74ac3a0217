//! Named key spaces in one redb file: `RedbDatabase::table` hands out tables, each a
//! `RangeStore` independent of the others; they persist in the file; the single-table
//! `RedbStore::create` reads and writes the same default table as before; a name that cannot be
//! a pk-codec table is refused with an error that says why.

use std::collections::BTreeMap;
use std::sync::{Arc, Barrier};

use pk_codec::store::{
    BulkOptions, BulkWriter, RangeQuery, RangeStore, RedbDatabase, RedbStore, StoreErrorKind,
    WriteOp,
};
use proptest::prelude::*;

use crate::support;

/// A directory of its own for one test's files, removed when it ends.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("pk-codec-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn everything(store: &dyn RangeStore) -> Vec<(String, Vec<u8>)> {
    text_rows(
        store
            .range(&RangeQuery::new("", None).limit(usize::MAX))
            .unwrap()
            .rows,
    )
}

/// Rows of text keys, as text.
fn text_rows(rows: Vec<(Vec<u8>, Vec<u8>)>) -> Vec<(String, Vec<u8>)> {
    rows.into_iter()
        .map(|(k, v)| (String::from_utf8(k).unwrap(), v))
        .collect()
}

#[derive(Debug, Clone)]
enum Op {
    Put(usize, String, u8),
    Delete(usize, String),
    Batch(usize, Vec<(String, Option<u8>)>),
}

fn op(tables: usize) -> impl Strategy<Value = Op> {
    let key = "[ab]{0,3}";
    prop_oneof![
        (0..tables, key, any::<u8>()).prop_map(|(t, k, v)| Op::Put(t, k, v)),
        (0..tables, key).prop_map(|(t, k)| Op::Delete(t, k)),
        (
            0..tables,
            prop::collection::vec((key, prop::option::of(any::<u8>())), 0..5)
        )
            .prop_map(|(t, ops)| Op::Batch(t, ops)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(64), ..ProptestConfig::default() })]

    /// Tables of one file are independent key spaces: any puts, deletes and batches on any of
    /// four tables (the same keys in each), and every table holds exactly what a map of its own
    /// would, read whole, point by point and page by page, through either of two handles.
    #[test]
    fn tables_in_one_file_are_independent_key_spaces(
        ops in prop::collection::vec(op(4), 0..40),
        page in 1usize..4,
    ) {
        let db = RedbDatabase::in_memory().unwrap();
        let names = ["readings", "readings_newest_first", "by_sensor", RedbStore::DEFAULT_TABLE];
        let tables: Vec<RedbStore> = names.iter().map(|n| db.table(n).unwrap()).collect();
        let mut models: Vec<BTreeMap<String, Vec<u8>>> = vec![BTreeMap::new(); names.len()];
        for op in ops {
            match op {
                Op::Put(t, k, v) => {
                    tables[t].put(k.as_bytes(), &[v]).unwrap();
                    models[t].insert(k, vec![v]);
                }
                Op::Delete(t, k) => {
                    prop_assert_eq!(tables[t].delete(k.as_bytes()).unwrap(), models[t].remove(&k).is_some());
                }
                Op::Batch(t, writes) => {
                    let batch: Vec<WriteOp> = writes
                        .iter()
                        .map(|(key, v)| match v {
                            Some(v) => WriteOp::put(key.as_str(), vec![*v]),
                            None => WriteOp::delete(key.as_str()),
                        })
                        .collect();
                    prop_assert!(tables[t].batch_write(&batch).unwrap().iter().all(Result::is_ok));
                    for (key, v) in writes {
                        match v {
                            Some(v) => models[t].insert(key, vec![v]),
                            None => models[t].remove(&key),
                        };
                    }
                }
            }
        }
        for (t, name) in names.iter().enumerate() {
            let want: Vec<(String, Vec<u8>)> = models[t].clone().into_iter().collect();
            prop_assert_eq!(&everything(&tables[t]), &want, "table {}", name);
            // A second handle on the same name is the same table.
            let again = db.table(name).unwrap();
            prop_assert_eq!(again.table_name(), *name);
            let mut paged = Vec::new();
            let mut resume: Option<Vec<u8>> = None;
            loop {
                let p = again.range(&RangeQuery::new("", None).limit(page).resume(resume.as_deref())).unwrap();
                paged.extend(text_rows(p.rows));
                match p.next {
                    Some(next) => resume = Some(next),
                    None => break,
                }
            }
            prop_assert_eq!(&paged, &want);
            for key in ["", "a", "ab", "b", "bba"] {
                prop_assert_eq!(tables[t].get(key.as_bytes()).unwrap(), models[t].get(key).cloned());
            }
        }
        let mut listed = names.map(str::to_owned).to_vec();
        listed.sort();
        prop_assert_eq!(db.table_names().unwrap(), listed);
    }
}

#[test]
fn tables_persist_in_the_file_beside_the_default_table() {
    let dir = TempDir::new("redb-tables-persist");
    let path = dir.0.join("iot.redb");
    {
        let single = RedbStore::create(&path).unwrap();
        single.put(b"k", b"default").unwrap();
        let index = single.database().table("index").unwrap();
        index.put(b"k", b"index").unwrap();
    }
    let db = RedbDatabase::create(&path).unwrap();
    assert_eq!(
        db.table_names().unwrap(),
        ["index", RedbStore::DEFAULT_TABLE]
    );
    assert_eq!(
        db.table(RedbStore::DEFAULT_TABLE)
            .unwrap()
            .get(b"k")
            .unwrap()
            .as_deref(),
        Some(&b"default"[..])
    );
    assert_eq!(
        db.table("index").unwrap().get(b"k").unwrap().as_deref(),
        Some(&b"index"[..])
    );
    drop(db);
    // The single-table API opens the same default table, and leaves the others alone.
    let single = RedbStore::create(&path).unwrap();
    assert_eq!(single.table_name(), RedbStore::DEFAULT_TABLE);
    assert_eq!(everything(&single), [("k".to_owned(), b"default".to_vec())]);
}

#[test]
fn an_empty_table_name_is_refused_as_invalid() {
    let db = RedbDatabase::in_memory().unwrap();
    let err = db.table("").unwrap_err();
    assert_eq!(err.kind(), StoreErrorKind::Invalid);
    assert_eq!(
        err.message(),
        "redb: a table needs a name (an empty name is no table)"
    );
    assert!(db.table_names().unwrap().is_empty());
}

#[test]
fn a_name_the_file_uses_for_another_kind_of_table_is_refused_as_invalid() {
    let dir = TempDir::new("redb-tables-foreign");
    let path = dir.0.join("shared.redb");
    {
        // Another program's tables in the same file: numbers to numbers, and a multimap; and a
        // table of text keys, as pk-codec wrote before its keys were bytes.
        let db = redb::Database::create(&path).unwrap();
        let tx = db.begin_write().unwrap();
        tx.open_table(redb::TableDefinition::<&str, &[u8]>::new("text_keys"))
            .unwrap();
        tx.open_table(redb::TableDefinition::<u64, u64>::new("counters"))
            .unwrap();
        tx.open_multimap_table(redb::MultimapTableDefinition::<&str, &str>::new("tags"))
            .unwrap();
        tx.commit().unwrap();
    }
    let db = RedbDatabase::create(&path).unwrap();
    for name in ["counters", "tags", "text_keys"] {
        let err = db.table(name).unwrap_err();
        assert_eq!(err.kind(), StoreErrorKind::Invalid, "{err}");
        assert!(
            err.message().starts_with(&format!(
                "redb: the file's table {name:?} is not a pk-codec table of byte keys and byte values"
            )),
            "{err}"
        );
        assert!(err.message().ends_with("choose another name"), "{err}");
    }
    // The file's other names are free.
    db.table("readings").unwrap().put(b"a", b"1").unwrap();
}

/// Writers to two tables of one file take turns (redb runs one write transaction at a time):
/// both finish, each table with its own rows, whichever goes first.
#[test]
fn bulk_writers_into_two_tables_of_one_file_both_finish() {
    let db = RedbDatabase::in_memory().unwrap();
    let start = Arc::new(Barrier::new(2));
    let handles: Vec<_> = ["readings", "readings_newest_first"]
        .into_iter()
        .map(|name| {
            let table = Arc::new(db.table(name).unwrap());
            let start = Arc::clone(&start);
            std::thread::spawn(move || {
                let writer = BulkWriter::new(
                    Arc::clone(&table),
                    BulkOptions {
                        max_batch_rows: Some(100),
                        ..BulkOptions::default()
                    },
                )
                .unwrap();
                start.wait();
                for i in 0..1_000u32 {
                    writer
                        .add(format!("{name}:{i:04}"), name.as_bytes().to_vec())
                        .unwrap();
                }
                let stats = writer.close();
                assert_eq!((stats.rows_written, stats.rows_lost()), (1_000, 0));
                table
            })
        })
        .collect();
    for (h, name) in handles
        .into_iter()
        .zip(["readings", "readings_newest_first"])
    {
        let table = h.join().unwrap();
        let rows = everything(&*table);
        assert_eq!(rows.len(), 1_000);
        assert!(
            rows.iter()
                .all(|(k, v)| k.starts_with(name) && v == name.as_bytes())
        );
    }
}
