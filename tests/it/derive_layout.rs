//! Derived keys and the runtime `Layout` that `PartitionKey::layout()` returns agree byte for byte,
//! for every field kind, attribute and prefix; plus the student-card vectors of the key-design facts.
//!
//! Also: a nested key's own delimiter does not stop the outer layout (a fault found and fixed
//! with that test), and errors in nested keys name the field as the layout does.

use pk_codec::{DecodeKey, Error, Layout, PartitionKey, Value};
use proptest::prelude::*;

use crate::support;

/// The values of a derived key in `Layout` order (nested keys flattened).
trait Values {
    fn values(&self) -> Vec<Value>;
}

/// Asserts that `key` encodes as its layout does, decodes back, and that the layout decodes the
/// same values; returns the key.
fn agree<K: DecodeKey + Values + std::fmt::Debug + PartialEq>(key: &K) -> String {
    let layout = K::layout();
    let derived = key.encode().expect("derived encode");
    let runtime = layout.encode(&key.values()).expect("layout encode");
    assert_eq!(
        derived, runtime,
        "derived and layout keys differ for {key:?} ({layout})"
    );
    assert_eq!(&K::decode(&derived).expect("derived decode"), key);
    assert_eq!(
        layout.decode(&derived).expect("layout decode"),
        key.values()
    );
    let mut appended = String::from("prefix:");
    key.encode_into(&mut appended).expect("encode_into");
    assert_eq!(appended, format!("prefix:{derived}"));
    derived
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Card {
    #[pk(width = 6)]
    device_id: u32,
    seller_id: String,
    #[pk(width = 4)]
    card_id: u64,
}

impl Values for Card {
    fn values(&self) -> Vec<Value> {
        vec![
            self.device_id.into(),
            self.seller_id.clone().into(),
            self.card_id.into(),
        ]
    }
}

#[test]
fn student_card_key_matches_the_facts() {
    let card = Card {
        device_id: 54,
        seller_id: "a100".into(),
        card_id: 6777,
    };
    assert_eq!(agree(&card), "000054,a100,6777");
    assert_eq!(
        Card::layout().to_string(),
        "device_id: u32 width=6; seller_id: str; card_id: u64 width=4"
    );
    // 66661 does not fit the declared width 4: an error, never a wrong key.
    let wide = Card {
        device_id: 16,
        seller_id: "a100".into(),
        card_id: 66661,
    };
    assert!(
        matches!(wide.encode(), Err(Error::ValueTooWide { ref field, width: 4, .. }) if field == "card_id")
    );
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Card6 {
    #[pk(width = 6)]
    device_id: u32,
    seller_id: String,
    #[pk(width = 6)]
    card_id: u64,
}

#[test]
fn padded_comma_keys_sort_in_value_order() {
    let rows = [
        (16, "a100", 66661),
        (54, "a100", 6777),
        (54, "a1001", 6777),
        (167, "a101", 283408),
    ];
    let mut keys: Vec<String> = rows
        .iter()
        .rev()
        .map(|&(d, s, c)| {
            Card6 {
                device_id: d,
                seller_id: s.into(),
                card_id: c,
            }
            .encode()
            .unwrap()
        })
        .collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "000016,a100,066661",
            "000054,a100,006777",
            "000054,a1001,006777",
            "000167,a101,283408"
        ]
    );
    // A range read of DeviceID in [15, 100) holds exactly the first three.
    let ranges = Card6::ranges_device_id(15..100).unwrap();
    assert_eq!(ranges.len(), 1);
    let inside: Vec<&String> = keys.iter().filter(|k| ranges[0].contains(k)).collect();
    assert_eq!(inside, keys[..3].iter().collect::<Vec<_>>());
    // All keys of one device, and one seller of that device.
    let of_54 = &Card6::ranges_device_id_eq(54).unwrap()[0];
    assert_eq!(keys.iter().filter(|k| of_54.contains(k)).count(), 2);
    let a100 = &Card6::ranges_seller_id_eq(54, "a100").unwrap()[0];
    assert_eq!(
        keys.iter().filter(|k| a100.contains(k)).collect::<Vec<_>>(),
        [&keys[1]]
    );
    let sellers = &Card6::ranges_seller_id(54, "a1001"..).unwrap()[0];
    assert_eq!(
        keys.iter()
            .filter(|k| sellers.contains(k))
            .collect::<Vec<_>>(),
        [&keys[2]]
    );
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Ints {
    a: u8,
    b: u16,
    c: u32,
    d: u64,
    e: u128,
    f: usize,
    g: i8,
    h: i16,
    i: i32,
    j: i64,
    k: i128,
    l: isize,
}

impl Values for Ints {
    fn values(&self) -> Vec<Value> {
        vec![
            self.a.into(),
            self.b.into(),
            self.c.into(),
            self.d.into(),
            self.e.into(),
            self.f.into(),
            self.g.into(),
            self.h.into(),
            self.i.into(),
            self.j.into(),
            self.k.into(),
            self.l.into(),
        ]
    }
}

#[test]
fn every_integer_type_at_its_bounds_agrees() {
    for ints in [
        Ints {
            a: 0,
            b: 0,
            c: 0,
            d: 0,
            e: 0,
            f: 0,
            g: 0,
            h: 0,
            i: 0,
            j: 0,
            k: 0,
            l: 0,
        },
        Ints {
            a: u8::MAX,
            b: u16::MAX,
            c: u32::MAX,
            d: u64::MAX,
            e: u128::MAX,
            f: usize::MAX,
            g: i8::MIN,
            h: i16::MIN,
            i: i32::MIN,
            j: i64::MIN,
            k: i128::MIN,
            l: isize::MIN,
        },
        Ints {
            a: 1,
            b: 1,
            c: 1,
            d: 1,
            e: 1,
            f: 1,
            g: -1,
            h: -1,
            i: -1,
            j: -1,
            k: -1,
            l: -1,
        },
        Ints {
            a: 7,
            b: 7,
            c: 7,
            d: 7,
            e: 7,
            f: 7,
            g: i8::MAX,
            h: i16::MAX,
            i: i32::MAX,
            j: i64::MAX,
            k: i128::MAX,
            l: isize::MAX,
        },
    ] {
        agree(&ints);
    }
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Mixed {
    #[pk(desc)]
    ts: u64,
    #[pk(escaped)]
    name: String,
    data: Vec<u8>,
    flag: bool,
    letter: char,
    opt: Option<u32>,
    opt_name: Option<String>,
    #[pk(desc)]
    down: String,
    #[pk(desc)]
    down_opt: Option<i32>,
    #[pk(width = 3)]
    small: i16,
    #[pk(desc)]
    down_bytes: Vec<u8>,
    #[pk(desc)]
    down_char: char,
    #[pk(desc)]
    down_flag: bool,
    #[pk(escaped, desc)]
    both: String,
    opt_bytes: Option<Vec<u8>>,
    #[pk(width = 2, desc)]
    opt_narrow: Option<u8>,
}

impl Values for Mixed {
    fn values(&self) -> Vec<Value> {
        vec![
            self.ts.into(),
            self.name.clone().into(),
            self.data.clone().into(),
            self.flag.into(),
            self.letter.into(),
            self.opt.into(),
            self.opt_name.clone().into(),
            self.down.clone().into(),
            self.down_opt.into(),
            self.small.into(),
            self.down_bytes.clone().into(),
            self.down_char.into(),
            self.down_flag.into(),
            self.both.clone().into(),
            self.opt_bytes.clone().into(),
            self.opt_narrow.into(),
        ]
    }
}

#[test]
fn every_field_form_agrees() {
    let a = Mixed {
        ts: 1_700_000_000_000,
        name: "a,b c-d".into(),
        data: vec![0, 255, 16],
        flag: true,
        letter: ',',
        opt: Some(5),
        opt_name: Some(String::new()),
        down: "zé".into(),
        down_opt: Some(-3),
        small: -99,
        down_bytes: vec![],
        down_char: 'x',
        down_flag: false,
        both: "".into(),
        opt_bytes: Some(vec![]),
        opt_narrow: Some(99),
    };
    let b = Mixed {
        opt: None,
        opt_name: None,
        down_opt: None,
        opt_bytes: None,
        opt_narrow: None,
        name: String::new(),
        data: vec![],
        ..a.clone()
    };
    agree(&a);
    agree(&b);
    assert_eq!(
        Mixed::layout().to_string(),
        "ts: u64 desc; name: str escaped; data: bytes; flag: bool; letter: char; opt: u32 optional; \
         opt_name: str optional; down: str desc; down_opt: i32 desc optional; small: i16 width=3; \
         down_bytes: bytes desc; down_char: char desc; down_flag: bool desc; both: str desc escaped; \
         opt_bytes: bytes optional; opt_narrow: u8 width=2 desc optional"
    );
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(hash(md5, len = 4))]
struct Order {
    #[pk(width = 6)]
    order_number: u64,
}

impl Values for Order {
    fn values(&self) -> Vec<Value> {
        vec![self.order_number.into()]
    }
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(hash(md5, len = 4, separator), max_len = 64)]
struct OrderSep {
    #[pk(width = 6)]
    order_number: u64,
}

impl Values for OrderSep {
    fn values(&self) -> Vec<Value> {
        vec![self.order_number.into()]
    }
}

#[test]
fn md5_prefixes_match_the_facts() {
    for (n, prefix) in [
        (200_001, "ee8f"),
        (200_002, "7db8"),
        (200_003, "5c74"),
        (200_004, "797e"),
        (200_005, "a210"),
    ] {
        assert_eq!(agree(&Order { order_number: n }), format!("{prefix}{n}"));
        assert_eq!(
            agree(&OrderSep { order_number: n }),
            format!("{prefix},{n}")
        );
    }
    assert_eq!(agree(&OrderSep { order_number: 1 }), "04fc,000001");
    assert!(matches!(
        Order::decode("ee8e200001"),
        Err(Error::PrefixMismatch { .. })
    ));
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(hash(xxh3, len = 16), delimiter = '#')]
struct Xxh3Key {
    host: String,
    #[pk(escaped)]
    path: String,
}

impl Values for Xxh3Key {
    fn values(&self) -> Vec<Value> {
        vec![self.host.clone().into(), self.path.clone().into()]
    }
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(hash(xxh32, len = 8, separator))]
struct Xxh32Key(#[pk(width = 4)] u16, char);

impl Values for Xxh32Key {
    fn values(&self) -> Vec<Value> {
        vec![self.0.into(), self.1.into()]
    }
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(hash(xxh64, len = 3))]
struct Xxh64Key {
    id: i64,
}

impl Values for Xxh64Key {
    fn values(&self) -> Vec<Value> {
        vec![self.id.into()]
    }
}

#[test]
fn every_hash_algorithm_agrees() {
    agree(&Xxh3Key {
        host: "10.10.0.1".into(),
        path: "/a b#c".into(),
    });
    agree(&Xxh32Key(17, '#'));
    agree(&Xxh64Key { id: -5 });
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 16, modulo = ts, separator))]
struct TimeKey {
    #[pk(width = 4)]
    device: u32,
    #[pk(width = 13)]
    ts: u64,
}

impl Values for TimeKey {
    fn values(&self) -> Vec<Value> {
        vec![self.device.into(), self.ts.into()]
    }
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 7, modulo = 1))]
struct SignedBucket(String, i32);

impl Values for SignedBucket {
    fn values(&self) -> Vec<Value> {
        vec![self.0.clone().into(), self.1.into()]
    }
}

#[test]
fn modulo_buckets_agree() {
    let key = TimeKey {
        device: 3,
        ts: 1_700_000_000_017,
    };
    assert_eq!(agree(&key), "01,0003,1700000000017");
    agree(&SignedBucket("x".into(), -1));
    assert!(agree(&SignedBucket("x".into(), -1)).starts_with('6'));
    // All keys of device 3: one range per bucket; with the time too, just its bucket.
    assert_eq!(TimeKey::ranges_device_eq(3).unwrap().len(), 16);
    let one = TimeKey::ranges_ts_eq(3, 1_700_000_000_017).unwrap();
    assert_eq!(one.len(), 1);
    assert!(one[0].contains(&key.encode().unwrap()));
    // A bucket number that is not the value's bucket is refused.
    assert!(matches!(
        TimeKey::decode("02,0003,1700000000017"),
        Err(Error::PrefixMismatch { .. })
    ));
}

#[test]
fn a_failed_modulo_key_leaves_the_output_as_it_was() {
    // The bucket's digits are written before the fields (the value is the key's own field): a
    // field that fails afterwards takes them back with the rest.
    let mut out = String::from("before;");
    let wide = TimeKey {
        device: 3,
        ts: 10_000_000_000_000,
    };
    assert!(matches!(
        wide.encode_into(&mut out),
        Err(Error::ValueTooWide { .. })
    ));
    assert_eq!(out, "before;");
    let key = TimeKey {
        device: 3,
        ts: 1_700_000_000_017,
    };
    key.encode_into(&mut out).unwrap();
    assert_eq!(out, "before;01,0003,1700000000017");
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 8, hash(user, kind)))]
struct HashBucket {
    user: String,
    #[pk(width = 8)]
    seq: u32,
    kind: char,
}

impl Values for HashBucket {
    fn values(&self) -> Vec<Value> {
        vec![self.user.clone().into(), self.seq.into(), self.kind.into()]
    }
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 100, hash, separator))]
struct HashAll {
    user: String,
    seq: u16,
}

impl Values for HashAll {
    fn values(&self) -> Vec<Value> {
        vec![self.user.clone().into(), self.seq.into()]
    }
}

#[test]
fn hash_buckets_agree() {
    for user in ["", "alice", "bob", "ü"] {
        for seq in [0, 1, 99] {
            agree(&HashBucket {
                user: user.into(),
                seq: seq.into(),
                kind: 'k',
            });
            agree(&HashAll {
                user: user.into(),
                seq,
            });
        }
    }
    assert_eq!(HashAll::ranges_user_eq("bob").unwrap().len(), 100);
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 4, hash(card, seq)))]
struct Outer {
    #[pk(width = 3)]
    region: u8,
    card: Card6,
    #[pk(desc)]
    seq: u32,
}

impl Values for Card6 {
    fn values(&self) -> Vec<Value> {
        vec![
            self.device_id.into(),
            self.seller_id.clone().into(),
            self.card_id.into(),
        ]
    }
}

impl Values for Outer {
    fn values(&self) -> Vec<Value> {
        let mut v = vec![self.region.into()];
        v.extend(self.card.values());
        v.push(self.seq.into());
        v
    }
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 4, hash(card)), delimiter = '!')]
struct OuterFirst {
    card: Card6,
    tag: Option<bool>,
}

impl Values for OuterFirst {
    fn values(&self) -> Vec<Value> {
        let mut v = self.card.values();
        v.push(self.tag.into());
        v
    }
}

#[test]
fn nested_keys_splice_inline_and_agree() {
    let card = Card6 {
        device_id: 54,
        seller_id: "a100".into(),
        card_id: 6777,
    };
    let outer = Outer {
        region: 7,
        card: card.clone(),
        seq: 1,
    };
    let key = agree(&outer);
    assert!(key.ends_with("007,000054,a100,006777,9999999998"), "{key}");
    assert_eq!(
        Outer::layout().to_string(),
        "region: u8; card.device_id: u32 width=6; card.seller_id: str; card.card_id: u64 width=6; \
         seq: u32 desc; buckets=4:hash(card.device_id,card.seller_id,card.card_id,seq)"
    );
    let first = OuterFirst {
        card,
        tag: Some(true),
    };
    assert_eq!(agree(&first)[1..], *"000054!a100!006777!1");
    agree(&OuterFirst { tag: None, ..first });
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Wrapper<T> {
    #[pk(width = 2)]
    version: u8,
    inner: T,
    tail: Option<u16>,
}

impl<T: Values> Values for Wrapper<T> {
    fn values(&self) -> Vec<Value> {
        let mut v = vec![self.version.into()];
        v.extend(self.inner.values());
        v.push(self.tail.into());
        v
    }
}

#[test]
fn generic_structs_agree() {
    let w = Wrapper {
        version: 1,
        inner: Order {
            order_number: 200_001,
        },
        tail: Some(9),
    };
    // The nested key's own hash prefix is not written when it is spliced in.
    assert_eq!(agree(&w), "01,200001,00009");
    agree(&Wrapper {
        version: 2,
        inner: Card6 {
            device_id: 1,
            seller_id: "s".into(),
            card_id: 2,
        },
        tail: None,
    });
}

#[derive(PartitionKey, Debug)]
struct Borrowed<'a> {
    name: &'a str,
    raw: &'a [u8],
    #[pk(escaped)]
    note: Option<&'a str>,
    n: u32,
}

#[test]
fn borrowed_fields_encode_like_owned_ones() {
    let b = Borrowed {
        name: "dev",
        raw: &[1, 2],
        note: Some("a,b"),
        n: 5,
    };
    let values = vec![
        Value::from("dev"),
        Value::from(&[1u8, 2][..]),
        Value::from("a,b"),
        Value::from(5u32),
    ];
    assert_eq!(
        b.encode().unwrap(),
        Borrowed::layout().encode(&values).unwrap()
    );
    assert_eq!(b.encode().unwrap(), "dev,0102,=a-2cb,0000000005");
    assert_eq!(
        Borrowed::ranges_raw_eq("dev", &[1, 2]).unwrap()[0].start,
        "dev,0102"
    );
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(max_len = 12)]
struct Short {
    name: String,
}

#[test]
fn key_length_limit_is_enforced() {
    assert_eq!(
        Short {
            name: "twelve_chars".into()
        }
        .encode()
        .unwrap()
        .len(),
        12
    );
    let long = Short {
        name: "thirteen_char".into(),
    };
    assert!(matches!(
        long.encode(),
        Err(Error::KeyTooLong { len: 13, limit: 12 })
    ));
    let mut out = String::from("kept");
    assert!(long.encode_into(&mut out).is_err());
    assert_eq!(out, "kept");
    assert_eq!(Short::layout().to_string(), "name: str; max_len=12");
}

#[test]
fn plain_strings_are_checked_against_the_delimiter() {
    let bad = Card {
        device_id: 1,
        seller_id: "a,b".into(),
        card_id: 1,
    };
    assert!(matches!(
        bad.encode(),
        Err(Error::CharBelowDelimiter { ch: ',', .. })
    ));
    assert!(Card::decode("000001,a").is_err());
    assert!(Card::decode("").is_err());
    assert!(Card::decode("000001,a,0001,").is_err());
}

#[test]
fn layouts_round_trip_through_their_text_spec() {
    for layout in [
        Card::layout(),
        Mixed::layout(),
        Outer::layout(),
        TimeKey::layout(),
        OrderSep::layout(),
    ] {
        let again: Layout = layout.to_string().parse().unwrap();
        assert_eq!(again, layout);
    }
}

/// A crate that re-exports pk-codec under another path.
mod reexport {
    pub(crate) use pk_codec as codec;
}

#[derive(reexport::codec::PartitionKey, Debug, Clone, PartialEq)]
#[pk(crate = "reexport::codec", buckets(count = 4, modulo = 0))]
struct ThroughReexport(#[pk(width = 3)] u16, String);

impl Values for ThroughReexport {
    fn values(&self) -> Vec<Value> {
        vec![self.0.into(), self.1.clone().into()]
    }
}

#[test]
fn the_crate_path_can_be_changed() {
    assert_eq!(agree(&ThroughReexport(6, "x".into())), "2006,x");
    assert_eq!(ThroughReexport::ranges_1_eq(6, "x").unwrap().len(), 1);
}

/// A type parameter bounded by `KeyField` is a scalar field; one without is a nested key.
#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Tagged<T: pk_codec::DecodeField, K>
where
    K: Clone,
{
    tag: T,
    key: K,
}

impl<T: pk_codec::DecodeField + Into<Value> + Clone, K: Values + Clone> Values for Tagged<T, K> {
    fn values(&self) -> Vec<Value> {
        let mut v = vec![self.tag.clone().into()];
        v.extend(self.key.values());
        v
    }
}

#[test]
fn type_parameters_bounded_by_key_field_are_scalars() {
    let key = Order { order_number: 1 };
    assert_eq!(
        agree(&Tagged {
            tag: 7u8,
            key: key.clone()
        }),
        "007,000001"
    );
    assert_eq!(
        agree(&Tagged {
            tag: String::from("t"),
            key: key.clone()
        }),
        "t,000001"
    );
    assert_eq!(
        agree(&Tagged {
            tag: Some(-1i8),
            key
        }),
        "-999,000001"
    );
    assert_eq!(
        Tagged::<u8, Order>::ranges_tag(1..).unwrap()[0].start,
        "001"
    );
}

mod damaged_keys {
    //! A runtime layout reads its common fields by direct readers, and anything they decline by
    //! the general path; the derive reads every field by the general one. On any text, even
    //! damaged, both must give the same values or the same error.

    use pk_codec::{DecodeKey, PartitionKey, Value};
    use proptest::prelude::*;

    use super::support;

    #[derive(PartitionKey, Debug, Clone, PartialEq)]
    struct Mixed {
        #[pk(width = 6)]
        device_id: u32,
        seller_id: String,
        #[pk(width = 5)]
        delta: i16,
        #[pk(desc)]
        order_number: u64,
        #[pk(width = 3, desc)]
        shelf: u8,
    }

    fn values(m: &Mixed) -> Vec<Value> {
        vec![
            m.device_id.into(),
            m.seller_id.as_str().into(),
            m.delta.into(),
            m.order_number.into(),
            m.shelf.into(),
        ]
    }

    fn mixed() -> impl Strategy<Value = Mixed> {
        (
            0u32..1_000_000,
            "[a-z0-9]{0,6}",
            -9999i16..=9999,
            any::<u64>(),
            0u8..=255,
        )
            .prop_map(|(device_id, seller_id, delta, order_number, shelf)| Mixed {
                device_id,
                seller_id,
                delta,
                order_number,
                shelf,
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: support::cases(512), ..ProptestConfig::default() })]

        #[test]
        fn layout_and_derive_read_any_text_alike(
            m in mixed(),
            edits in prop::collection::vec((any::<prop::sample::Index>(), prop::sample::select(b",-0159az:+\x7f".to_vec()), 0u8..3), 0..3),
        ) {
            let layout = Mixed::layout();
            let key = m.encode().unwrap();
            prop_assert_eq!(layout.encode(&values(&m)).unwrap(), key.clone());
            let mut bytes = key.into_bytes();
            support::damage(&mut bytes, &edits);
            let text = String::from_utf8(bytes).unwrap();
            let derived = Mixed::decode(&text).map(|m| values(&m));
            prop_assert_eq!(layout.decode(&text), derived, "text {:?}", text);
        }
    }
}

/// A generic key whose own delimiter its instance could not use on its own (`.` does not sort
/// below the `-` of an optional signed field), spliced into a key whose delimiter it can: the
/// nested key's own delimiter is not used when nested, so the outer key and its layout are valid.
#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(delimiter = '.')]
struct DottedInner<V: pk_codec::KeyField> {
    #[pk(width = 2)]
    v: V,
    #[pk(width = 1)]
    w: u8,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct DottedOuter {
    i: DottedInner<Option<i8>>,
    #[pk(width = 1)]
    n: u8,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(100)))]
    #[test]
    fn a_nested_key_s_own_delimiter_does_not_stop_the_outer_layout(v in prop::option::of(-10i8..10), w in 0u8..10, n in 0u8..10) {
        let o = DottedOuter { i: DottedInner { v, w }, n };
        let key = o.encode().unwrap();
        prop_assert_eq!(DottedOuter::decode(&key).unwrap(), o);
        let layout = DottedOuter::layout();
        prop_assert_eq!(layout.to_string(), "i.v: i8 width=2 optional; i.w: u8 width=1; n: u8 width=1");
        let values = layout.decode(&key).unwrap();
        prop_assert_eq!(layout.encode(&values).unwrap(), key);
    }
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Addr {
    city: String,
    #[pk(width = 2)]
    zip: u8,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Trip {
    from: Addr,
    to: Addr,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(300)))]
    /// An error in a field of a nested key names that field as the layout does (`to.city`), so
    /// that it says which of two nested keys of one type is wrong (an encode error has no
    /// position to tell them apart).
    #[test]
    fn errors_in_nested_keys_name_the_field_as_the_layout_does(
        cities in prop::array::uniform2("[a,]{0,2}"), zips in prop::array::uniform2(any::<u8>()),
        edits in prop::collection::vec((any::<prop::sample::Index>(), prop::sample::select(b",0x".to_vec()), 0u8..3), 0..3),
    ) {
        let trip = Trip {
            from: Addr { city: cities[0].clone(), zip: zips[0] },
            to: Addr { city: cities[1].clone(), zip: zips[1] },
        };
        let layout = Trip::layout();
        let values = [cities[0].as_str().into(), zips[0].into(), cities[1].as_str().into(), zips[1].into()];
        prop_assert_eq!(trip.encode(), layout.encode(&values));
        let of_from = Trip::ranges_from_eq(&trip.from);
        prop_assert_eq!(of_from.is_ok(), trip.from.encode().is_ok());
        if let Err(e) = of_from {
            prop_assert_eq!(Err::<String, _>(e), layout.encode(&values[..2].iter().cloned().chain([Value::from(""), Value::from(0u8)]).collect::<Vec<_>>()));
        }
        let fixed = Trip {
            from: Addr { city: cities[0].replace(',', "a"), zip: zips[0] % 100 },
            to: Addr { city: cities[1].replace(',', "a"), zip: zips[1] % 100 },
        };
        let mut bytes = fixed.encode().unwrap().into_bytes();
        support::damage(&mut bytes, &edits);
        let text = String::from_utf8(bytes).unwrap();
        prop_assert_eq!(Trip::decode(&text).map(|_| ()), layout.decode(&text).map(|_| ()));
    }
}
