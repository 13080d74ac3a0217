//! The table's order-preserving key encoding (`PrimaryKey::to_sortable_bytes`, the form rows
//! are stored and searched under): encoded keys sort bytewise exactly as `PrimaryKey`s do, and
//! decode back, for keys of 1 to 4 columns of any value.

use pk_codec::table::{PkValue, PrimaryKey};
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
