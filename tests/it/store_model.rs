//! The table model and redb as `RangeStore`s behave as the reference `MemoryStore`: the same
//! random writes, then the same paged range reads, forward and backward, with any bounds, limits
//! and resume keys, give the same rows.
//!
//! Also every store (memory, redb, table) pages as the reference over wide keys.

use pk_codec::store::{Direction, MemoryStore, RangeQuery, RangeStore, RedbStore, WriteOp};
use pk_codec::table::{Table, TableOptions};
use proptest::prelude::*;

use crate::support;

fn key() -> impl Strategy<Value = String> {
    "[a-c]{0,3}"
}

/// Every row of `query`, following resume keys page by page.
fn read_all(store: &dyn RangeStore, query: &RangeQuery<'_>) -> Vec<(String, Vec<u8>)> {
    let mut rows = Vec::new();
    let mut resume: Option<Vec<u8>> = None;
    for _ in 0..1_000 {
        let page = store
            .range(&query.clone().resume(resume.as_deref()))
            .unwrap();
        assert!(page.rows.len() <= query.limit);
        rows.extend(
            page.rows
                .into_iter()
                .map(|(k, v)| (String::from_utf8(k).unwrap(), v)),
        );
        match page.next {
            Some(n) => resume = Some(n),
            None => return rows,
        }
    }
    panic!("a range read did not end");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(128), ..ProptestConfig::default() })]

    #[test]
    fn the_table_store_reads_what_the_reference_reads(
        writes in prop::collection::vec((key(), any::<u8>(), any::<bool>()), 0..60),
        start in key(),
        end in prop::option::of(key()),
        limit in 1usize..5,
        backward in any::<bool>(),
    ) {
        let table = Table::single_string_key("pk", TableOptions::default().split_size_bytes(64)).unwrap();
        let memory = MemoryStore::default();
        let redb = RedbStore::in_memory().unwrap();
        let ops: Vec<WriteOp> = writes
            .iter()
            .map(|(k, v, del)| if *del {
                WriteOp::delete(k.as_str())
            } else {
                WriteOp::put(k.as_str(), vec![*v])
            })
            .collect();
        for chunk in ops.chunks(7) {
            // A batch holds each key once; write repeated keys one by one.
            let mut keys: Vec<&[u8]> = chunk.iter().map(WriteOp::key).collect();
            keys.sort_unstable();
            keys.dedup();
            if keys.len() == chunk.len() {
                let a = RangeStore::batch_write(&table, chunk).unwrap();
                let b = memory.batch_write(chunk).unwrap();
                prop_assert_eq!(redb.batch_write(chunk).unwrap(), b.clone());
                prop_assert_eq!(a, b);
            } else {
                for op in chunk {
                    match op {
                        WriteOp::Put { key, value } => {
                            RangeStore::put(&table, key, value).unwrap();
                            redb.put(key, value).unwrap();
                            memory.put(key, value).unwrap();
                        }
                        WriteOp::Delete { key } => {
                            let existed = memory.delete(key).unwrap();
                            prop_assert_eq!(RangeStore::delete(&table, key).unwrap(), existed);
                            prop_assert_eq!(redb.delete(key).unwrap(), existed);
                        }
                    }
                }
            }
        }
        for (k, _, _) in &writes {
            prop_assert_eq!(RangeStore::get(&table, k.as_bytes()).unwrap(), memory.get(k.as_bytes()).unwrap());
            prop_assert_eq!(redb.get(k.as_bytes()).unwrap(), memory.get(k.as_bytes()).unwrap());
        }
        let direction = if backward { Direction::Backward } else { Direction::Forward };
        let query = RangeQuery::new(start.as_str(), end.as_deref()).direction(direction).limit(limit);
        let want = read_all(&memory, &query);
        prop_assert_eq!(read_all(&table, &query), want.clone());
        prop_assert_eq!(read_all(&redb, &query), want.clone());
        // The reference itself: exactly the keys in [start, end), in order.
        let mut keys: Vec<&String> = want.iter().map(|(k, _)| k).collect();
        if backward {
            keys.reverse();
        }
        prop_assert!(keys.windows(2).all(|w| w[0] < w[1]));
        prop_assert!(keys.iter().all(|k| k.as_str() >= start.as_str() && end.as_deref().is_none_or(|e| k.as_str() < e)));
    }
}

/// Keys over an alphabet that makes prefixes, NUL bytes, DEL and multi-byte characters, which
/// sort bytewise in a way that differs from a character-wise order.
fn wide_key() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec!["\0", "a", "b", "\u{7f}", "\u{e9}", "\u{10ffff}", ","]),
        0..4,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(64), ..ProptestConfig::default() })]

    /// The table model and redb answer each page of a range read as `MemoryStore` does, with
    /// keys that are prefixes of each other, NUL and non-ASCII bytes, the empty key, any
    /// bounds (empty and inverted ranges too), any resume key a caller may pass (not only one
    /// a page gave), limits of 1 to 4 and `usize::MAX`, forward and backward.
    #[test]
    fn every_store_pages_as_the_reference_over_wide_keys(
        keys in prop::collection::btree_set(wide_key(), 0..24),
        start in wide_key(),
        end in prop::option::of(wide_key()),
        resume in prop::option::of(wide_key()),
        limit in prop::sample::select(vec![1usize, 2, 3, 4, usize::MAX]),
        backward in any::<bool>(),
    ) {
        use pk_codec::store::{Direction, RedbStore};
        use pk_codec::table::{Table, TableOptions};
        let table = Table::single_string_key("pk", TableOptions::default().split_size_bytes(64)).unwrap();
        let redb = RedbStore::in_memory().unwrap();
        let memory = MemoryStore::default();
        for (i, k) in keys.iter().enumerate() {
            let value = if i % 3 == 0 { Vec::new() } else { k.as_bytes().to_vec() };
            memory.put(k.as_bytes(), &value).unwrap();
            redb.put(k.as_bytes(), &value).unwrap();
            RangeStore::put(&table, k.as_bytes(), &value).unwrap();
        }
        let direction = if backward { Direction::Backward } else { Direction::Forward };
        let base = RangeQuery::new(start.as_str(), end.as_deref()).direction(direction).limit(limit);
        // Page by page from the given resume key, each page as the reference's.
        let mut at = resume.clone().map(String::into_bytes);
        for _ in 0..40 {
            let query = base.clone().resume(at.as_deref());
            let want = memory.range(&query).unwrap();
            prop_assert_eq!(&redb.range(&query).unwrap(), &want, "redb {:?}", query);
            prop_assert_eq!(&table.range(&query).unwrap(), &want, "table {:?}", query);
            at = want.next;
            if at.is_none() {
                break;
            }
        }
    }
}
