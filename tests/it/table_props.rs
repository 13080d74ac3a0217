//! Random operation sequences against a `BTreeMap` model: same reads, whatever splits and
//! merges happened on the way.

use std::collections::BTreeMap;

use pk_codec::table::{
    Attribute, AttributeValue, ManualClock, PkColumn, PkType, PkValue, PrimaryKey, RangeRequest,
    ReadOptions, RowWrite, Schema, Table, TableOptions, UpdateOp,
};
use proptest::prelude::*;

use crate::support;

/// A bound column value, ordered like the store's: INF_MIN < values < INF_MAX.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Ext<T> {
    Min,
    Val(T),
    Max,
}

pub(super) type Key = (String, i64);
pub(super) type ModelKey = (Ext<String>, Ext<i64>);
type Model = BTreeMap<Key, BTreeMap<String, i64>>;
type ModelRow = (Key, BTreeMap<String, i64>);

#[derive(Debug, Clone)]
enum Op {
    Put(Key, Option<i64>),
    /// `put_ref` of columns v and w (each maybe), w first when the flag is set.
    PutRef(Key, Option<i64>, Option<i64>, bool),
    SetW(Key, i64),
    DeleteV(Key),
    Delete(Key),
    Get(Key),
    Range(ModelKey, ModelKey, bool, usize),
    Batch(Vec<(Key, Option<i64>)>),
    Tick(i64),
}

fn key() -> impl Strategy<Value = Key> {
    ("[a-e]{1,2}", -3i64..4)
}

fn bound() -> impl Strategy<Value = ModelKey> {
    let s = prop_oneof![
        1 => Just(Ext::Min),
        6 => "[a-e]{0,2}".prop_map(Ext::Val),
        1 => Just(Ext::Max),
    ];
    let i = prop_oneof![
        1 => Just(Ext::Min),
        4 => (-4i64..5).prop_map(Ext::Val),
        1 => Just(Ext::Max),
    ];
    (s, i)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (key(), proptest::option::of(0i64..100)).prop_map(|(k, v)| Op::Put(k, v)),
        3 => (key(), proptest::option::of(0i64..100), proptest::option::of(0i64..100), any::<bool>())
            .prop_map(|(k, v, w, w_first)| Op::PutRef(k, v, w, w_first)),
        2 => (key(), 0i64..100).prop_map(|(k, v)| Op::SetW(k, v)),
        1 => key().prop_map(Op::DeleteV),
        2 => key().prop_map(Op::Delete),
        2 => key().prop_map(Op::Get),
        2 => (bound(), bound(), any::<bool>(), 1usize..8)
            .prop_map(|(a, b, back, limit)| Op::Range(a, b, back, limit)),
        1 => proptest::collection::vec((key(), proptest::option::of(0i64..100)), 1..6)
            .prop_map(Op::Batch),
        2 => (0i64..900).prop_map(Op::Tick),
    ]
}

pub(super) fn pk(k: &Key) -> PrimaryKey {
    PrimaryKey::new(vec![k.0.as_str().into(), k.1.into()])
}

pub(super) fn pk_bound(k: &ModelKey) -> PrimaryKey {
    let a = match &k.0 {
        Ext::Min => PkValue::InfMin,
        Ext::Val(s) => s.as_str().into(),
        Ext::Max => PkValue::InfMax,
    };
    let b = match k.1 {
        Ext::Min => PkValue::InfMin,
        Ext::Val(i) => i.into(),
        Ext::Max => PkValue::InfMax,
    };
    PrimaryKey::new(vec![a, b])
}

fn mk(k: &Key) -> ModelKey {
    (Ext::Val(k.0.clone()), Ext::Val(k.1))
}

fn columns(row: &pk_codec::table::Row) -> BTreeMap<String, i64> {
    row.cells
        .iter()
        .map(|c| match c.value {
            AttributeValue::Integer(i) => (c.name.clone(), i),
            _ => panic!("unexpected value"),
        })
        .collect()
}

fn model_range(
    m: &Model,
    start: &ModelKey,
    end: &ModelKey,
    back: bool,
    limit: usize,
) -> (Vec<ModelRow>, Option<Key>) {
    let mut rows: Vec<ModelRow> = m
        .iter()
        .filter(|(k, _)| {
            let k = mk(k);
            if back {
                k <= *start && k > *end
            } else {
                k >= *start && k < *end
            }
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if back {
        rows.reverse();
    }
    let next = rows.get(limit).map(|r| r.0.clone());
    rows.truncate(limit);
    (rows, next)
}

fn table_rows(rows: Vec<pk_codec::table::Row>) -> Vec<ModelRow> {
    rows.into_iter()
        .map(|r| {
            let k = match r.key.values() {
                [PkValue::String(s), PkValue::Integer(i)] => (s.clone(), *i),
                other => panic!("bad key {other:?}"),
            };
            (k, columns(&r))
        })
        .collect()
}

fn put_model(m: &mut Model, k: &Key, v: Option<i64>) {
    let mut cols = BTreeMap::new();
    if let Some(v) = v {
        cols.insert("v".to_owned(), v);
    }
    m.insert(k.clone(), cols);
}

fn attrs(v: Option<i64>) -> Vec<Attribute> {
    v.map(|v| vec![Attribute::new("v", v)]).unwrap_or_default()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(48)))]

    #[test]
    fn table_matches_a_btreemap_model(ops in proptest::collection::vec(op(), 1..150)) {
        let clock = ManualClock::new(1_700_000_000_000);
        let schema = Schema::new(vec![
            PkColumn::new("s", PkType::String),
            PkColumn::new("i", PkType::Integer),
        ]).unwrap();
        let t = Table::with_clock(
            schema,
            TableOptions::default()
                .split_size_bytes(120)
                .split_load_ops(12)
                .load_sample_every(1)
                .merge_below(60, 2),
            clock.clone(),
        ).unwrap();
        let mut m = Model::new();
        for op in &ops {
            match op {
                Op::Put(k, v) => {
                    t.put(pk(k), attrs(*v)).unwrap();
                    put_model(&mut m, k, *v);
                }
                Op::PutRef(k, v, w, w_first) => {
                    let mut a: Vec<Attribute> = v.map(|v| Attribute::new("v", v)).into_iter().collect();
                    a.extend(w.map(|w| Attribute::new("w", w)));
                    if *w_first {
                        a.reverse();
                    }
                    t.put_ref(&pk(k), &a).unwrap();
                    let cols: BTreeMap<String, i64> =
                        a.iter().map(|a| match a.value {
                            AttributeValue::Integer(i) => (a.name.clone(), i),
                            _ => unreachable!(),
                        }).collect();
                    m.insert(k.clone(), cols);
                }
                Op::SetW(k, v) => {
                    t.update(pk(k), vec![UpdateOp::Put(Attribute::new("w", *v))]).unwrap();
                    m.entry(k.clone()).or_default().insert("w".into(), *v);
                }
                Op::DeleteV(k) => {
                    t.update(pk(k), vec![UpdateOp::DeleteColumn("v".into())]).unwrap();
                    if let Some(cols) = m.get_mut(k) {
                        cols.remove("v");
                    }
                }
                Op::Delete(k) => {
                    t.delete(pk(k)).unwrap();
                    m.remove(k);
                }
                Op::Get(k) => {
                    let got = t.get(pk(k), &ReadOptions::default()).unwrap();
                    prop_assert_eq!(got.map(|r| columns(&r)), m.get(k).cloned());
                }
                Op::Range(a, b, back, limit) => {
                    let valid = if *back { a > b } else { a < b };
                    let req = if *back {
                        RangeRequest::backward(pk_bound(a), pk_bound(b))
                    } else {
                        RangeRequest::forward(pk_bound(a), pk_bound(b))
                    };
                    let req = req.limit(*limit);
                    let got = t.get_range(&req);
                    // The same read, the rows lent one by one.
                    let mut lent = Vec::new();
                    let lent_next = t.for_each_in_range(&req, |r| lent.push(r.clone()));
                    if !valid {
                        prop_assert!(got.is_err());
                        prop_assert!(lent_next.is_err());
                        continue;
                    }
                    let got = got.unwrap();
                    let (rows, next) = model_range(&m, a, b, *back, *limit);
                    prop_assert_eq!(&lent, &got.rows);
                    prop_assert_eq!(lent_next.unwrap(), got.next_start.clone());
                    prop_assert_eq!(table_rows(got.rows), rows);
                    prop_assert_eq!(got.next_start, next.as_ref().map(pk));
                }
                Op::Batch(rows) => {
                    let mut keys: Vec<&Key> = rows.iter().map(|r| &r.0).collect();
                    keys.sort();
                    keys.dedup();
                    let duplicate = keys.len() < rows.len();
                    let writes = rows
                        .iter()
                        .map(|(k, v)| RowWrite::Put { key: pk(k), attributes: attrs(*v) })
                        .collect();
                    let got = t.batch_write(writes);
                    prop_assert_eq!(got.is_err(), duplicate);
                    if !duplicate {
                        for (k, v) in rows {
                            put_model(&mut m, k, *v);
                        }
                    }
                }
                Op::Tick(ms) => clock.advance(*ms),
            }
        }
        // Full scans both ways agree with the model; partitions tile the key space.
        let all = (Ext::Min, Ext::Min);
        let top = (Ext::Max, Ext::Max);
        let r = t.get_range(&RangeRequest::forward(pk_bound(&all), pk_bound(&top))).unwrap();
        prop_assert_eq!(table_rows(r.rows), model_range(&m, &all, &top, false, usize::MAX).0);
        let r = t.get_range(&RangeRequest::backward(pk_bound(&top), pk_bound(&all))).unwrap();
        prop_assert_eq!(table_rows(r.rows), model_range(&m, &top, &all, true, usize::MAX).0);
        let bounds = t.partition_bounds();
        prop_assert_eq!(&bounds[0].0, &PkValue::InfMin);
        prop_assert_eq!(&bounds[bounds.len() - 1].1, &PkValue::InfMax);
        for w in bounds.windows(2) {
            prop_assert_eq!(&w[0].1, &w[1].0);
            prop_assert!(w[0].0 < w[0].1);
        }
        prop_assert_eq!(t.report().rows as usize, m.len());
    }
}

/// A value of each type, from `n` (strings and binaries of several lengths, some with `00`).
fn value(kind: u8, n: i64) -> AttributeValue {
    let len = usize::try_from(n.rem_euclid(7)).unwrap_or(0);
    match kind % 5 {
        0 => AttributeValue::Integer(n),
        1 => AttributeValue::String("s\0x".repeat(len)),
        2 => AttributeValue::Binary([0, 1, 0xff].repeat(len)),
        3 => AttributeValue::Double(n as f64 / 3.0),
        _ => AttributeValue::Boolean(n % 2 == 0),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(48)))]

    /// `for_each_in_range` lends exactly the rows `get_range` returns, page by page, whatever
    /// the read options, versions, TTL and value types (the lent row's buffers are refilled
    /// from rows of other shapes), with keys of one, two or zero-byte-holding strings.
    #[test]
    fn lent_rows_are_the_rows_get_range_returns(
        rows in proptest::collection::vec(
            (("[ab\0]{0,3}", -2i64..3), proptest::collection::vec(("[xyz]", 0u8..5, -9i64..9, 0i64..4), 0..5), 0i64..3_000),
            1..60,
        ),
        columns in proptest::option::of(proptest::collection::vec("[xyz]", 0..3)),
        max_versions in proptest::option::of(1u32..4),
        time_range in proptest::option::of((0i64..3, 1i64..4)),
        limit in 1usize..9,
        back in any::<bool>(),
    ) {
        let start = 1_700_000_000_000;
        let clock = ManualClock::new(start);
        let schema = Schema::new(vec![
            PkColumn::new("s", PkType::String),
            PkColumn::new("i", PkType::Integer),
        ]).unwrap();
        // A day's TTL (the least there is); a version is written up to 0.9 days old, the rows over
        // 1.2 days, and the read is at their end: some cells expired.
        const UNIT: i64 = 30_000;
        let options = TableOptions::default()
            .split_size_bytes(300)
            .max_versions(3)
            .ttl_seconds(86_400);
        let t = Table::with_clock(schema, options, clock.clone()).unwrap();
        for ((s, i), cells, at) in &rows {
            clock.set(start + at * UNIT);
            let a: Vec<Attribute> = cells
                .iter()
                .map(|(name, kind, n, age)| {
                    Attribute::new(name.as_str(), value(*kind, *n)).with_version(start + at * UNIT - age * 900 * UNIT)
                })
                .collect();
            t.put_ref(&PrimaryKey::new(vec![s.as_str().into(), (*i).into()]), &a).unwrap();
        }
        clock.set(start + 3_500 * UNIT);
        let mut read = ReadOptions {
            columns,
            max_versions,
            ..ReadOptions::default()
        };
        if let Some((from, len)) = time_range {
            // A time range goes without a version count.
            read.max_versions = None;
            let at = |k: i64| start + k * 1_000 * UNIT;
            read = read.time_range(at(from), at(from + len));
        }
        let (lo, hi) = (PrimaryKey::inf_min(2), PrimaryKey::inf_max(2));
        let mut next = Some(if back { hi.clone() } else { lo.clone() });
        while let Some(from) = next {
            let mut req = if back {
                RangeRequest::backward(from, lo.clone())
            } else {
                RangeRequest::forward(from, hi.clone())
            };
            req.options = read.clone();
            let req = req.limit(limit);
            let page = t.get_range(&req).unwrap();
            let mut lent = Vec::new();
            let lent_next = t.for_each_in_range(&req, |r| lent.push(r.clone())).unwrap();
            prop_assert_eq!(&lent, &page.rows);
            prop_assert_eq!(&lent_next, &page.next_start);
            next = page.next_start;
        }
    }
}
