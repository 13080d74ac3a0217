//! The table's order-preserving key encoding (`PrimaryKey::to_sortable_bytes`, the form rows
//! are stored and searched under): encoded keys sort bytewise exactly as `PrimaryKey`s do, and
//! decode back, for keys of 1 to 4 columns of any value.
//!
//! Also table keys of every type against a `BTreeMap`, and four-column keys of all-zero and
//! all-`ff` bytes.

use std::collections::BTreeMap;

use pk_codec::table::{
    Attribute, AttributeValue, ManualClock, PkColumn, PkType, PkValue, PrimaryKey, RangeRequest,
    ReadOptions, Row, Schema, Table, TableError, TableOptions,
};
use proptest::prelude::*;

use crate::support;

/// Any value, weighted towards the edges: the bounds, extreme integers, empty strings and
/// binaries, and `00` / `FF` bytes (in a String, `00` and the UTF-8 of U+00FF and U+10FFFF).
/// Few symbols, so that two values often share a prefix.
fn value() -> impl Strategy<Value = PkValue> {
    prop_oneof![
        1 => Just(PkValue::InfMin),
        1 => Just(PkValue::InfMax),
        3 => prop_oneof![
            Just(i64::MIN),
            Just(i64::MAX),
            Just(0),
            Just(-1),
            Just(1),
            any::<i64>(),
        ]
        .prop_map(PkValue::Integer),
        4 => "[\\x00\\x01a\u{ff}\u{10FFFF}]{0,6}".prop_map(PkValue::String),
        3 => proptest::collection::vec(
            prop_oneof![Just(0u8), Just(1), Just(0xFF), any::<u8>()],
            0..6
        )
        .prop_map(PkValue::Binary),
        // Longer than the 24 bytes a stored row keeps inline.
        1 => "a{20,30}\\x00?".prop_map(PkValue::String),
    ]
}

/// Two keys of 1 to 4 columns sharing their first 0 to 3 columns (so that later columns, and
/// the shorter-key-first rule, decide often).
fn key_pair() -> impl Strategy<Value = (PrimaryKey, PrimaryKey)> {
    (0usize..4).prop_flat_map(|shared| {
        let tail =
            move || proptest::collection::vec(value(), usize::from(shared == 0)..=4 - shared);
        (proptest::collection::vec(value(), shared), tail(), tail()).prop_map(|(prefix, a, b)| {
            let key =
                |tail: Vec<PkValue>| PrimaryKey::new(prefix.iter().cloned().chain(tail).collect());
            (key(a), key(b))
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(2_000)))]

    #[test]
    fn encoded_keys_sort_as_keys_do((a, b) in key_pair()) {
        let (ea, eb) = (a.to_sortable_bytes(), b.to_sortable_bytes());
        prop_assert_eq!(ea.cmp(&eb), a.cmp(&b), "{:?} {:?} -> {:02x?} {:02x?}", a, b, ea, eb);
    }

    #[test]
    fn encoded_keys_decode_back((a, _) in key_pair()) {
        prop_assert_eq!(PrimaryKey::from_sortable_bytes(&a.to_sortable_bytes()), Some(a));
    }

    /// Exactly the encoded keys decode: any bytes, damaged keys included, either decode to a key
    /// that encodes to those very bytes, or are refused (never a panic).
    #[test]
    fn only_encoded_keys_decode(
        (a, _) in key_pair(),
        noise in prop::collection::vec(prop::sample::select(vec![0x00u8, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x80, 0xC3, 0xFF, b'a']), 0..24),
        edits in prop::collection::vec((any::<prop::sample::Index>(), prop::sample::select(vec![0x00u8, 0x01, 0x03, 0xFF, 0xC3]), 0u8..3), 0..3),
    ) {
        for mut bytes in [a.to_sortable_bytes(), noise.clone()] {
            support::damage(&mut bytes, &edits);
            if let Some(key) = PrimaryKey::from_sortable_bytes(&bytes) {
                prop_assert_eq!(key.to_sortable_bytes(), bytes.clone(), "{:02x?} decoded to {:?}", bytes, key);
            }
        }
    }
}

#[test]
fn edge_keys_in_order() {
    let keys = [
        vec![PkValue::InfMin],
        vec![PkValue::Integer(i64::MIN)],
        vec![PkValue::Integer(i64::MAX), PkValue::InfMin],
        vec![PkValue::from("")],
        vec![PkValue::from(""), PkValue::InfMin],
        vec![PkValue::from(""), PkValue::from("")],
        vec![PkValue::from("\0")],
        vec![PkValue::from("\0"), PkValue::InfMax],
        vec![PkValue::from("\0\0")],
        vec![PkValue::from("\u{1}")],
        vec![PkValue::Binary(vec![])],
        vec![PkValue::Binary(vec![0xFF])],
        vec![PkValue::Binary(vec![0xFF, 0])],
        vec![PkValue::InfMax],
    ];
    for w in keys.windows(2) {
        let (a, b) = (PrimaryKey::new(w[0].clone()), PrimaryKey::new(w[1].clone()));
        assert!(a < b, "{a:?} {b:?}");
        assert!(a.to_sortable_bytes() < b.to_sortable_bytes(), "{a:?} {b:?}");
    }
    assert_eq!(PrimaryKey::from_sortable_bytes(&[0x03, b'a']), None);
    assert_eq!(PrimaryKey::from_sortable_bytes(&[0x07]), None);
}

/// A value of column type `ty` from a draw: edges of each type (i64::MIN/MAX, `00`/`FF`
/// bytes, empty, 1 KB) and small values that collide often.
fn value_of(ty: PkType, (pick, n): (u8, u16)) -> PkValue {
    let bytes = |pick: u8, n: u16| -> Vec<u8> {
        match pick % 6 {
            0 => Vec::new(),
            1 => vec![0u8; usize::from(n % 3) + 1],
            2 => vec![0xFF; usize::from(n % 3) + 1],
            3 => vec![b'a' + (n % 3) as u8; if n.is_multiple_of(7) { 1024 } else { 2 }],
            4 => vec![0, (n % 2) as u8 * 0xFF, 0],
            _ => vec![b'a', (n % 4) as u8],
        }
    };
    match ty {
        PkType::Integer => PkValue::Integer(match pick % 6 {
            0 => i64::MIN,
            1 => i64::MAX,
            2 => -1,
            3 => 0,
            4 => i64::MIN + 1,
            _ => i64::from(n % 5) - 2,
        }),
        PkType::Binary => PkValue::Binary(bytes(pick, n)),
        PkType::String => {
            let b = bytes(pick, n);
            PkValue::String(String::from_utf8(b).unwrap_or_else(|_| "\u{10FFFF}".to_owned()))
        }
    }
}

fn bound_of(ty: PkType, (pick, n): (u8, u16)) -> PkValue {
    match pick % 9 {
        7 => PkValue::InfMin,
        8 => PkValue::InfMax,
        _ => value_of(ty, (pick, n)),
    }
}

#[derive(Debug, Clone)]
enum KOp {
    Put(Vec<(u8, u16)>, usize),
    Delete(Vec<(u8, u16)>),
    Get(Vec<(u8, u16)>),
    Range(Vec<(u8, u16)>, Vec<(u8, u16)>, bool, usize),
}

fn kop() -> impl Strategy<Value = KOp> {
    let k = || proptest::collection::vec((any::<u8>(), any::<u16>()), 4);
    prop_oneof![
        6 => (k(), prop_oneof![3 => 0usize..64, 1 => 3_000usize..9_000]).prop_map(|(k, l)| KOp::Put(k, l)),
        2 => k().prop_map(KOp::Delete),
        2 => k().prop_map(KOp::Get),
        2 => (k(), k(), any::<bool>(), 1usize..9).prop_map(|(a, b, back, l)| KOp::Range(a, b, back, l)),
    ]
}

fn pk_type() -> impl Strategy<Value = PkType> {
    prop_oneof![
        Just(PkType::String),
        Just(PkType::Integer),
        Just(PkType::Binary)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(48)))]

    /// Keys of every type and arity, at their edges, rows larger than a leaf, small split and
    /// merge thresholds: the table holds and reads what a `BTreeMap` of `PrimaryKey`s does.
    #[test]
    fn keys_of_every_type_match_a_btreemap(
        types in proptest::collection::vec(pk_type(), 1..=4),
        ops in proptest::collection::vec(kop(), 1..80),
    ) {
        let schema = Schema::new(
            types.iter().enumerate().map(|(i, ty)| PkColumn::new(format!("c{i}"), *ty)).collect(),
        )
        .unwrap();
        let clock = ManualClock::new(1_700_000_000_000);
        let options = TableOptions::default()
            .split_size_bytes(12_000)
            .split_load_ops(5)
            .merge_below(3_000, 1)
            .load_window_ms(50)
            .load_sample_every(1);
        let t = Table::with_clock(schema, options, clock.clone()).unwrap();
        let mut m: BTreeMap<PrimaryKey, usize> = BTreeMap::new();
        let make = |k: &[(u8, u16)]| {
            PrimaryKey::new(types.iter().zip(k).map(|(ty, d)| value_of(*ty, *d)).collect())
        };
        let make_bound = |k: &[(u8, u16)]| {
            PrimaryKey::new(types.iter().zip(k).map(|(ty, d)| bound_of(*ty, *d)).collect())
        };
        let len_of = |r: &Row| match r.value("v") {
            Some(AttributeValue::Binary(b)) => b.len(),
            other => panic!("{other:?}"),
        };
        for op in &ops {
            clock.advance(20);
            match op {
                KOp::Put(k, len) => {
                    let key = make(k);
                    t.put(&key, vec![Attribute::new("v", vec![0xABu8; *len])]).unwrap();
                    m.insert(key, *len);
                }
                KOp::Delete(k) => {
                    let key = make(k);
                    t.delete(&key).unwrap();
                    m.remove(&key);
                }
                KOp::Get(k) => {
                    let key = make(k);
                    let got = t.get(&key, &ReadOptions::default()).unwrap();
                    prop_assert_eq!(got.map(|r| len_of(&r)), m.get(&key).copied());
                }
                KOp::Range(a, b, back, limit) => {
                    let (a, b) = (make_bound(a), make_bound(b));
                    let valid = if *back { a > b } else { a < b };
                    let req = |s: PrimaryKey| {
                        let r = if *back {
                            RangeRequest::backward(s, b.clone())
                        } else {
                            RangeRequest::forward(s, b.clone())
                        };
                        r.limit(*limit)
                    };
                    let first = t.get_range(&req(a.clone()));
                    if !valid {
                        prop_assert!(matches!(first, Err(TableError::InvalidRange { .. })), "{:?}", first);
                        continue;
                    }
                    let mut want: Vec<(PrimaryKey, usize)> = m
                        .iter()
                        .filter(|(k, _)| if *back { **k <= a && **k > b } else { **k >= a && **k < b })
                        .map(|(k, l)| (k.clone(), *l))
                        .collect();
                    if *back {
                        want.reverse();
                    }
                    let mut got = Vec::new();
                    let mut r = first.unwrap();
                    loop {
                        prop_assert!(r.rows.len() <= *limit);
                        got.extend(r.rows.iter().map(|row| (row.key.clone(), len_of(row))));
                        match r.next_start.take() {
                            Some(next) => r = t.get_range(&req(next)).unwrap(),
                            None => break,
                        }
                    }
                    prop_assert_eq!(got, want);
                }
            }
        }
        let all = t
            .get_range(&RangeRequest::forward(PrimaryKey::inf_min(types.len()), PrimaryKey::inf_max(types.len())))
            .unwrap();
        let keys: Vec<PrimaryKey> = all.rows.iter().map(|r| r.key.clone()).collect();
        prop_assert_eq!(keys, m.keys().cloned().collect::<Vec<_>>());
        let bytes: u64 = m.iter().map(|(k, l)| (k.size() + 1 + l + 8) as u64).sum();
        prop_assert_eq!(t.report().bytes, bytes);
    }
}

#[test]
fn four_column_keys_of_all_zero_and_all_ff_bytes() {
    let schema = Schema::new(vec![
        PkColumn::new("a", PkType::Binary),
        PkColumn::new("b", PkType::Binary),
        PkColumn::new("c", PkType::Integer),
        PkColumn::new("d", PkType::String),
    ])
    .unwrap();
    let options = TableOptions::default().split_size_bytes(10_000);
    let t = Table::with_clock(schema, options, ManualClock::new(0)).unwrap();
    let key = |a: Vec<u8>, b: Vec<u8>, c: i64| {
        PrimaryKey::new(vec![a.into(), b.into(), c.into(), "x".repeat(1024).into()])
    };
    for (a, b) in [
        (vec![0u8; 1024], vec![0xffu8; 1024]),
        (vec![0xff; 1024], vec![0; 1024]),
        (vec![], vec![]),
    ] {
        for c in [i64::MIN, 0, i64::MAX] {
            t.put(key(a.clone(), b.clone(), c), vec![Attribute::new("v", 1)])
                .unwrap();
        }
    }
    let e = t.put(key(vec![0; 1025], vec![], 0), vec![]).unwrap_err();
    assert!(matches!(e, TableError::KeyValueTooLarge { .. }), "{e:?}");
    let all = RangeRequest::backward(PrimaryKey::inf_max(4), PrimaryKey::inf_min(4));
    let rows = t.get_range(&all).unwrap().rows;
    assert_eq!(rows.len(), 9);
    assert!(rows.windows(2).all(|w| w[0].key > w[1].key));
}
