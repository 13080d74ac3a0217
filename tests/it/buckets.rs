//! Bucket prefixes at their limits: the most buckets a key may have and a single bucket, the
//! split points of every bucket, modulo buckets over every integer type at its bounds (derived
//! keys against their layout), the merge of per-bucket streams that are not sorted, and
//! `bucket_prefix` answering only buckets that exist. Refusals of bucket shapes and spans are in
//! `codec_errors.rs`; bucketed ranges in `derive_props/edges.rs` and `codec_props.rs`.

use pk_codec::{DecodeKey, Layout, PartitionKey, Value};
use proptest::prelude::*;

use crate::support;

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 10000, modulo = ts))]
struct MostBuckets {
    #[pk(desc)]
    ts: i128,
    tag: String,
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 1, hash(tag), separator))]
struct OneBucket {
    ts: u128,
    tag: String,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(100)))]
    #[test]
    fn buckets_at_their_limits(ts in any::<i128>(), tag in "[a-c]{0,2}") {
        let most = MostBuckets { ts, tag: tag.clone() };
        let key = most.encode().unwrap();
        prop_assert_eq!(&key[..4], format!("{:04}", ts.rem_euclid(10_000)));
        prop_assert_eq!(MostBuckets::decode(&key).unwrap(), most.clone());
        let one = MostBuckets::ranges_tag_eq(ts, &tag).unwrap();
        prop_assert_eq!(one.len(), 1);
        prop_assert!(one[0].contains(&key));
        let all = MostBuckets::ranges_ts(..=ts).unwrap();
        prop_assert_eq!(all.len(), 10_000);
        prop_assert_eq!(all.iter().filter(|r| r.contains(&key)).count(), 1);
        let bucket = <MostBuckets as PartitionKey>::SHAPE.bucket_of_key(&key).unwrap();
        prop_assert_eq!(<MostBuckets as PartitionKey>::SHAPE.bucket_prefix(bucket).unwrap(), key[..4].to_string());
        let first = OneBucket { ts: ts.unsigned_abs(), tag };
        let key = first.encode().unwrap();
        prop_assert!(key.starts_with("0,"));
        prop_assert_eq!(OneBucket::decode(&key).unwrap(), first.clone());
        let ranges = OneBucket::ranges_ts(first.ts..).unwrap();
        prop_assert_eq!(ranges.len(), 1);
        prop_assert!(ranges[0].contains(&key));
    }
}

#[test]
fn split_points_of_the_most_buckets_are_every_bucket() {
    let shape = <MostBuckets as PartitionKey>::SHAPE;
    let points = shape.split_points(9_999).unwrap();
    assert_eq!(points.len(), 9_999);
    assert_eq!(
        (points[0].as_str(), points[9_998].as_str()),
        ("0001", "9999")
    );
    assert!(shape.split_points(10_000).is_err());
    assert!(<OneBucket as PartitionKey>::SHAPE.split_points(1).is_err());
    assert_eq!(
        <OneBucket as PartitionKey>::SHAPE.split_points(0).unwrap(),
        Vec::<String>::new()
    );
}

// ---- Modulo buckets over every integer type, at its bounds -------------------------------------

macro_rules! modulo_cases {
    ($($name:ident $t:ty, $count:literal);* $(;)?) => {
        $(
            #[derive(PartitionKey, Debug, Clone, PartialEq)]
            #[pk(buckets(count = $count, modulo = v, separator))]
            struct $name {
                #[pk(desc)]
                v: $t,
                w: Option<$t>,
            }
        )*

        proptest! {
            #![proptest_config(ProptestConfig { cases: support::cases(256), ..ProptestConfig::default() })]

            #[test]
            fn modulo_buckets_of_every_integer_agree_with_the_layout(
                raw in prop_oneof![Just(0u128), Just(u128::MAX), Just(1u128 << 127), Just((1u128 << 127) - 1), any::<u128>()],
                other in any::<u64>(),
            ) {
                $(
                    let v = raw as $t;
                    let w = if other % 3 == 0 { None } else { Some(other as $t) };
                    let key = $name { v, w };
                    let text = key.encode().unwrap();
                    let layout = $name::layout();
                    prop_assert_eq!(&layout.encode(&[Value::from(v), Value::from(w)]).unwrap(), &text, "{}", stringify!($name));
                    prop_assert_eq!(layout.decode(&text).unwrap(), vec![Value::from(v), Value::from(w)]);
                    prop_assert_eq!($name::decode(&text).unwrap(), key);
                    let ranges = $name::ranges_w_eq(v, &w).unwrap();
                    prop_assert_eq!(ranges.len(), 1);
                    prop_assert!(ranges[0].contains(&text));
                    let ranges = $name::ranges_v(v..=v).unwrap();
                    prop_assert_eq!(ranges.iter().filter(|r| r.contains(&text)).count(), 1);
                )*
            }
        }
    };
}

modulo_cases!(
    ModU8 u8, 7; ModU16 u16, 10; ModU32 u32, 9999; ModU64 u64, 10000; ModU128 u128, 13; ModUsize usize, 3;
    ModI8 i8, 7; ModI16 i16, 10; ModI32 i32, 1; ModI64 i64, 10000; ModI128 i128, 13; ModIsize isize, 3;
);

#[test]
fn merge_buckets_of_unsorted_streams_does_not_panic() {
    // The streams must be sorted (documented); unsorted input gives some interleaving of them,
    // every item once, and no panic.
    let l: Layout = "a: u32; buckets=4:hash".parse().unwrap();
    let streams = vec![
        vec!["3z".to_owned(), "1a".into(), "0".into(), String::new()],
        vec!["2b".into(), "2a".into()],
        vec![],
    ];
    let merged: Vec<String> = l
        .shape()
        .merge_buckets(streams, |k: &String| k.as_str())
        .collect();
    assert_eq!(merged.len(), 6);
}

/// `KeyShape::bucket_prefix` answered the text of bucket 16 of a 16-bucket prefix (`"16,"`), a
/// prefix no key has, so a scatter-gather read over a wrong bucket count read nothing and said
/// nothing. Now it answers only buckets that exist: at every count where the bucket width steps
/// and at the limit, with and without the separator, the prefix of every bucket starts every key
/// of that bucket, and there is none past the last bucket.
#[test]
fn bucket_prefix_answers_only_buckets_that_exist() {
    let counts = [
        1u32, 2, 9, 10, 11, 99, 100, 101, 999, 1000, 1001, 9999, 10_000,
    ];
    for count in counts {
        for sep in ["", ":sep"] {
            let layout: Layout = format!("ts: u64; buckets={count}:mod(ts){sep}")
                .parse()
                .unwrap();
            let shape = layout.shape();
            for ts in (0..u64::from(count) * 2).step_by(usize::try_from(count / 50 + 1).unwrap()) {
                let key = layout.encode(&[ts.into()]).unwrap();
                let bucket = shape.bucket_of_key(&key).unwrap();
                assert_eq!(u64::from(bucket), ts % u64::from(count), "{layout} {ts}");
                let prefix = shape.bucket_prefix(bucket).unwrap();
                assert!(key.starts_with(&prefix), "{layout}: {key} / {prefix}");
                assert_eq!(prefix.len(), shape.prefix().len(), "{layout}");
            }
            for past in [count, count + 1, u32::MAX] {
                assert_eq!(shape.bucket_prefix(past), None, "{layout} bucket {past}");
            }
        }
    }
    let plain: Layout = "ts: u64".parse().unwrap();
    assert_eq!(plain.shape().bucket_prefix(0), None);
    let hashed: Layout = "ts: u64 width=4; hash=xxh3:4".parse().unwrap();
    assert_eq!(hashed.shape().bucket_prefix(0), None);
}
