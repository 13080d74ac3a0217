//! The float, UUID and timestamp kinds through the derive (std, `uuid`, `time` and `chrono`
//! types), hash prefixes over leading fields with their typed range reads, and split points from a
//! layout's prefix. The runtime `Layout` side of every kind is covered by `codec_props.rs`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pk_codec::table::{Schema, Table, TableOptions};
use pk_codec::{DecodeKey, Error, Layout, PartitionKey, Precision, Rule, Value};
use proptest::prelude::*;

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Measure {
    price: f32,
    #[pk(desc)]
    weight: f64,
    #[pk(precision = ns)]
    at: SystemTime,
    id: uuid::Uuid,
    #[pk(desc, precision = s)]
    day: chrono::DateTime<chrono::Utc>,
    #[pk(precision = us)]
    seen: time::OffsetDateTime,
}

impl Measure {
    fn values(&self) -> Vec<Value> {
        vec![
            self.price.into(),
            self.weight.into(),
            self.at.into(),
            self.id.into(),
            self.day.into(),
            self.seen.into(),
        ]
    }
}

fn measure() -> impl Strategy<Value = Measure> {
    (
        any::<u32>().prop_map(f32::from_bits),
        any::<u64>().prop_map(f64::from_bits),
        (0u64..4_000_000_000_000_000_000).prop_map(|ns| UNIX_EPOCH + Duration::from_nanos(ns)),
        any::<u128>().prop_map(uuid::Uuid::from_u128),
        (-62_167_219_200i64..253_402_300_800)
            .prop_map(|s| chrono::DateTime::from_timestamp(s, 0).unwrap()),
        (-10_000_000_000_000i64..10_000_000_000_000).prop_map(|us| {
            time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(us) * 1000).unwrap()
        }),
    )
        .prop_map(|(price, weight, at, id, day, seen)| Measure {
            price,
            weight,
            at,
            id,
            day,
            seen,
        })
}

/// The typed order: floats in total order, the `desc` fields reversed.
fn typed_cmp(a: &Measure, b: &Measure) -> std::cmp::Ordering {
    a.price
        .total_cmp(&b.price)
        .then(b.weight.total_cmp(&a.weight))
        .then(a.at.cmp(&b.at))
        .then(a.id.cmp(&b.id))
        .then(b.day.cmp(&a.day))
        .then(a.seen.cmp(&b.seen))
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(hash(md5, len = 4, separator, fields(device_id)))]
struct Reading {
    #[pk(width = 6)]
    device_id: u32,
    #[pk(width = 13)]
    ts: u64,
    seq: u8,
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn new_kinds_keep_order_round_trip_and_agree_with_the_layout(a in measure(), b in measure()) {
        let (ka, kb) = (a.encode().unwrap(), b.encode().unwrap());
        prop_assert_eq!(typed_cmp(&a, &b), ka.cmp(&kb), "{:?} vs {:?}", ka, kb);
        for (m, k) in [(&a, &ka), (&b, &kb)] {
            let back = Measure::decode(k).unwrap();
            prop_assert_eq!(back.price.to_bits(), m.price.to_bits());
            prop_assert_eq!(back.weight.to_bits(), m.weight.to_bits());
            prop_assert_eq!((back.at, back.id, back.day, back.seen), (m.at, m.id, m.day, m.seen));
            let layout = Measure::layout();
            prop_assert_eq!(&layout.encode(&m.values()).unwrap(), k);
            prop_assert_eq!(layout.decode(k).unwrap(), m.values());
        }
    }

    #[test]
    fn a_hash_over_leading_fields_keeps_one_entity_range_readable(
        rows in prop::collection::vec((0u32..4, 0u64..50, any::<u8>()), 1..40),
        device in 0u32..4,
        lo in 0u64..50,
        span in 0u64..30,
    ) {
        let keys: Vec<(Reading, String)> = rows
            .iter()
            .map(|&(d, t, s)| {
                let r = Reading { device_id: d, ts: t, seq: s };
                let k = r.encode().unwrap();
                (r, k)
            })
            .collect();
        let ranges = Reading::ranges_ts(device, lo..lo + span).unwrap();
        prop_assert_eq!(ranges.len(), 1);
        let eq = Reading::ranges_device_id_eq(device).unwrap();
        let layout = Reading::layout();
        let typed = layout
            .ranges(&[device.into()], std::ops::Bound::Included(&lo.into()), std::ops::Bound::Excluded(&(lo + span).into()))
            .unwrap();
        prop_assert_eq!(&typed, &ranges);
        for (r, k) in &keys {
            prop_assert_eq!(Reading::decode(k).unwrap(), r.clone());
            prop_assert_eq!(&layout.encode(&[r.device_id.into(), r.ts.into(), r.seq.into()]).unwrap(), k);
            let want = r.device_id == device && (lo..lo + span).contains(&r.ts);
            prop_assert_eq!(ranges[0].contains(k), want, "{:?} {:?}", ranges, k);
            prop_assert_eq!(eq[0].contains(k), r.device_id == device);
        }
    }
}

#[test]
fn the_hash_covers_only_the_leading_fields() {
    let key = Reading {
        device_id: 54,
        ts: 1_700_000_000_000,
        seq: 7,
    }
    .encode()
    .unwrap();
    assert_eq!(key, "f953,000054,1700000000000,007");
    assert_eq!(
        Reading::layout().to_string(),
        "device_id: u32 width=6; ts: u64 width=13; seq: u8; hash=md5(device_id):4:sep"
    );
    // A changed prefix is refused with its byte position.
    assert!(matches!(
        Reading::decode("f954,000054,1700000000000,007"),
        Err(Error::PrefixMismatch { position: 3, .. })
    ));
    // Without the hashed field fixed there is no range to read.
    let layout = Reading::layout();
    assert!(matches!(
        layout.prefix_ranges(&[]),
        Err(Error::RangeUnsupported { .. })
    ));
}

#[test]
fn hashed_fields_must_lead_and_exist() {
    for spec in [
        "a: u8; b: u8; hash=md5(b):4",
        "a: u8; b: u8; c: u8; hash=md5(a,c):4",
    ] {
        assert_eq!(
            spec.parse::<Layout>().unwrap_err(),
            Error::BrokenRule {
                field: None,
                rule: Rule::HashLeadingFields
            },
            "{spec}"
        );
    }
    assert!("a: u8; b: u8; hash=md5(x):4".parse::<Layout>().is_err());
    let ok: Layout = "a: u8; b: u8; hash=md5(b,a):4".parse().unwrap();
    assert_eq!(ok.to_string(), "a: u8; b: u8; hash=md5(a,b):4");
}

#[test]
fn timestamps_out_of_the_form_are_refused_naming_field_and_value() {
    let layout: Layout = "at: timestamp".parse().unwrap();
    let err = layout.encode(&[Value::Timestamp(1)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "field `at`: value 1 ns since the epoch does not fit in a timestamp of whole milliseconds"
    );
    let err = layout
        .encode(&[Value::Timestamp(253_402_300_800_000_000_000)])
        .unwrap_err();
    assert!(err.to_string().contains("years 0000 to 9999"), "{err}");
    // Text that is no real instant is refused at its byte.
    assert!(matches!(
        layout.decode("2026-02-29T00:00:00.000Z"),
        Err(Error::Malformed { position: 8, .. })
    ));
    assert_eq!(
        "at: u64 precision=ms".parse::<Layout>().unwrap_err(),
        Error::BrokenRule {
            field: Some("at".into()),
            rule: Rule::PrecisionOnNonTimestamp
        }
    );
    assert_eq!(
        "at: timestamp precision=ns"
            .parse::<Layout>()
            .unwrap()
            .fields()[0]
            .spec()
            .precision(),
        Precision::Nanos
    );
}

#[test]
fn split_points_pre_split_a_table_evenly() {
    let hashed: Layout = "order_number: u64 width=8; hash=md5:4".parse().unwrap();
    let points = hashed.shape().split_points(15).unwrap();
    assert_eq!(points.len(), 15);
    assert_eq!(points[0], "1000");
    assert_eq!(points[14], "f000");
    let buckets: Layout = "ts: u64; buckets=16:mod(ts):sep".parse().unwrap();
    assert_eq!(
        buckets.shape().split_points(15).unwrap(),
        (1..16).map(|b| format!("{b:02}")).collect::<Vec<_>>()
    );
    // The points pre-split a table into 16 partitions.
    let table = Table::new(
        Schema::single_string("pk").unwrap(),
        TableOptions::default().pre_split(points.iter().map(|p| p.as_str().into()).collect()),
    )
    .unwrap();
    assert_eq!(table.partition_count(), 16);
    // More points than prefix values, or no prefix at all: an error that says what to do.
    assert!(buckets.shape().split_points(16).is_err());
    let err = "ts: u64"
        .parse::<Layout>()
        .unwrap()
        .shape()
        .split_points(4)
        .unwrap_err();
    assert!(err.to_string().contains("split from a sample"), "{err}");
}
