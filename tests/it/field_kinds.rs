//! The float, UUID and timestamp kinds through the derive (std, `uuid`, `time` and `chrono`
//! types), and hash prefixes over leading fields with their typed range reads. The runtime
//! `Layout` side of every kind is covered by `codec_props.rs`, its refusals by `codec_errors.rs`.
//!
//! Also: the feature kinds agree with their layout, and floats of every bit pattern (NaNs
//! included) round-trip and keep total order.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pk_codec::{DecodeKey, Error, PartitionKey, Value};
use proptest::prelude::*;

use crate::support;

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
    #![proptest_config(ProptestConfig { cases: support::cases(256), ..ProptestConfig::default() })]

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

#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct Moment {
    #[pk(precision = ns)]
    at: chrono::DateTime<chrono::Utc>,
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(256), ..ProptestConfig::default() })]

    /// chrono writes a leap second as `hh:mm:59` plus a second or more of nanoseconds: counted
    /// from the epoch that is the next second's instant, so `23:59:60.5` and `00:00:00.5` shared
    /// one key (and decoded to the second). A leap second is refused, naming the field; every
    /// other instant near it keeps its own key and round-trips.
    #[test]
    fn a_chrono_leap_second_is_refused_not_merged_with_the_next_second(
        minute in -1_000_000_000i64..4_000_000_000,
        nanos in 0u32..1_000_000_000,
    ) {
        let last = minute * 60 + 59;
        let leap = chrono::DateTime::from_timestamp(last, 1_000_000_000 + nanos).unwrap();
        match (Moment { at: leap }).encode() {
            Err(Error::ValueOutOfRange { field, .. }) => prop_assert_eq!(field, "at"),
            other => prop_assert!(false, "{leap:?}: {other:?}"),
        }
        let before = chrono::DateTime::from_timestamp(last, nanos).unwrap();
        let after = chrono::DateTime::from_timestamp(last + 1, nanos).unwrap();
        let (kb, ka) = ((Moment { at: before }).encode().unwrap(), (Moment { at: after }).encode().unwrap());
        prop_assert!(kb < ka);
        prop_assert_eq!(Moment::decode(&kb).unwrap().at, before);
        prop_assert_eq!(Moment::decode(&ka).unwrap().at, after);
    }
}

#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 10000, modulo = m, separator), delimiter = '#')]
struct Kinds {
    #[pk(desc)]
    u: Option<uuid::Uuid>,
    #[pk(precision = us)]
    t: Option<time::OffsetDateTime>,
    #[pk(desc, precision = s)]
    c: chrono::DateTime<chrono::Utc>,
    #[pk(width = 39)]
    m: u128,
    #[pk(desc)]
    f: Option<f64>,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(300)))]
    #[test]
    fn feature_kinds_agree_with_their_layout(u in any::<Option<u128>>(), t in prop::option::of(-62_167_219_200_000_000i64..253_402_300_799_000_000), c in -62_167_219_200i64..253_402_300_799, m in any::<u128>(), f in any::<Option<u64>>()) {
        let k = Kinds {
            u: u.map(uuid::Uuid::from_u128),
            t: t.map(|t| time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(t) * 1000).unwrap()),
            c: chrono::DateTime::from_timestamp(c, 0).unwrap(),
            m,
            f: f.map(f64::from_bits),
        };
        let key = k.encode().unwrap();
        let back = Kinds::decode(&key).unwrap();
        prop_assert_eq!(back.encode().unwrap(), key.clone());
        let layout = Kinds::layout();
        let values = layout.decode(&key).unwrap();
        prop_assert_eq!(layout.encode(&values).unwrap(), key.clone());
        let text: pk_codec::Layout = layout.to_string().parse().unwrap();
        prop_assert_eq!(text.encode(&values).unwrap(), key);
    }
}

// ---- Floats: every bit pattern, NaNs included ---------------------------------------------------

#[derive(PartitionKey, Debug, Clone)]
struct Floats {
    a: f32,
    #[pk(desc)]
    b: f64,
    c: Option<f32>,
    #[pk(desc)]
    d: Option<f64>,
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(512), ..ProptestConfig::default() })]

    #[test]
    fn floats_of_every_bit_pattern_round_trip_and_keep_total_order(
        a in any::<u32>(), b in any::<u64>(), c in prop::option::of(any::<u32>()), d in prop::option::of(any::<u64>()),
        a2 in any::<u32>(), b2 in any::<u64>(),
    ) {
        let x = Floats { a: f32::from_bits(a), b: f64::from_bits(b), c: c.map(f32::from_bits), d: d.map(f64::from_bits) };
        let key = x.encode().unwrap();
        let back = Floats::decode(&key).unwrap();
        prop_assert_eq!(back.a.to_bits(), a);
        prop_assert_eq!(back.b.to_bits(), b);
        prop_assert_eq!(back.c.map(f32::to_bits), c);
        prop_assert_eq!(back.d.map(f64::to_bits), d);
        let values = vec![Value::from(x.a), Value::from(x.b), Value::from(x.c), Value::from(x.d)];
        prop_assert_eq!(&Floats::layout().encode(&values).unwrap(), &key);
        let y = Floats { a: f32::from_bits(a2), b: f64::from_bits(b2), ..x.clone() };
        let ky = y.encode().unwrap();
        let typed = x.a.total_cmp(&y.a).then(y.b.total_cmp(&x.b));
        prop_assert_eq!(typed, key.cmp(&ky));
    }
}
