//! Derived keys read and write the golden keys byte for byte: for each golden layout, a struct
//! whose derived `layout()` is that layout decodes every golden key of it and encodes it
//! back unchanged.

use pk_codec::{DecodeKey, PartitionKey};

const GOLDEN: &str = include_str!("../golden/keys.jsonl");

fn check<T: DecodeKey>(spec: &str) {
    let golden: pk_codec::Layout = spec.parse().unwrap();
    assert_eq!(
        T::layout(),
        golden,
        "the derived layout is not the golden one"
    );
    let mut seen = 0;
    for line in GOLDEN.lines() {
        let entry: serde_json::Value = serde_json::from_str(line).unwrap();
        if entry["layout"] != spec {
            continue;
        }
        let key = entry["key"].as_str().unwrap();
        let value = T::decode(key).unwrap_or_else(|e| panic!("`{spec}`: {key:?}: {e}"));
        assert_eq!(value.encode().unwrap(), key, "`{spec}`");
        seen += 1;
    }
    assert!(seen > 0, "no golden key for `{spec}`");
}

#[derive(PartitionKey)]
struct Card {
    #[pk(width = 6)]
    device_id: u32,
    seller_id: String,
    #[pk(width = 4)]
    card_id: u64,
}

#[derive(PartitionKey)]
#[pk(hash(md5, len = 4))]
struct Md5Order {
    #[pk(width = 6)]
    order_number: u64,
}

#[derive(PartitionKey)]
#[pk(hash(md5, len = 4, separator))]
struct Md5OrderSep {
    #[pk(width = 6)]
    order_number: u64,
}

#[derive(PartitionKey)]
#[pk(hash(xxh3, len = 4))]
struct Xxh3Order {
    #[pk(width = 6)]
    order_number: u64,
}

#[derive(PartitionKey)]
#[pk(hash(xxh64, len = 16, separator))]
struct Xxh64Order {
    #[pk(width = 6)]
    order_number: u64,
}

#[derive(PartitionKey)]
#[pk(buckets(count = 16, modulo = ts, separator))]
struct TimeBuckets {
    #[pk(width = 13)]
    ts: u64,
}

#[derive(PartitionKey)]
#[pk(buckets(count = 16, modulo = ts))]
struct SignedBuckets {
    ts: i64,
}

#[derive(PartitionKey)]
#[pk(buckets(count = 100, hash(a, c), separator))]
struct HashBuckets {
    a: u32,
    b: String,
    c: u8,
}

#[derive(PartitionKey)]
struct DescI64 {
    #[pk(desc)]
    v: i64,
}

#[derive(PartitionKey)]
struct EscapedDesc {
    #[pk(escaped, desc)]
    v: String,
}

#[derive(PartitionKey)]
struct Optionals {
    v: Option<u32>,
    w: Option<String>,
}

#[derive(PartitionKey)]
struct OptionalsDesc {
    #[pk(desc)]
    v: Option<i16>,
    w: Option<Vec<u8>>,
}

#[derive(PartitionKey)]
struct CharDesc {
    #[pk(desc)]
    v: char,
}

#[derive(PartitionKey)]
struct U128 {
    v: u128,
}

#[derive(PartitionKey)]
struct I8 {
    v: i8,
}

#[test]
fn derived_keys_match_the_golden_keys() {
    check::<Card>("device_id: u32 width=6; seller_id: str; card_id: u64 width=4");
    check::<Md5Order>("order_number: u64 width=6; hash=md5:4");
    check::<Md5OrderSep>("order_number: u64 width=6; hash=md5:4:sep");
    check::<Xxh3Order>("order_number: u64 width=6; hash=xxh3:4");
    check::<Xxh64Order>("order_number: u64 width=6; hash=xxh64:16:sep");
    check::<TimeBuckets>("ts: u64 width=13; buckets=16:mod(ts):sep");
    check::<SignedBuckets>("ts: i64; buckets=16:mod(ts)");
    check::<HashBuckets>("a: u32; b: str; c: u8; buckets=100:hash(a,c):sep");
    check::<DescI64>("v: i64 desc");
    check::<EscapedDesc>("v: str escaped desc");
    check::<Optionals>("v: u32 optional; w: str optional");
    check::<OptionalsDesc>("v: i16 optional desc; w: bytes optional");
    check::<CharDesc>("v: char desc");
    check::<U128>("v: u128");
    check::<I8>("v: i8");
}

#[test]
fn a_derived_escaped_key_with_a_control_delimiter_matches_too() {
    #[derive(PartitionKey)]
    #[pk(delimiter = '\x01')]
    struct ControlDelimited {
        #[pk(width = 6)]
        device_id: u32,
        #[pk(escaped)]
        seller_id: String,
    }
    check::<ControlDelimited>("device_id: u32 width=6; seller_id: str escaped; delimiter='\\x01'");
}
