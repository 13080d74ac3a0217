//! Typed values are stored exactly: every value `Typed::put`, `Typed::put_values`,
//! `BulkWriter::add_typed` and `BulkWriter::add_values` accept reads back bit for bit (floats
//! by their bits: NaN payloads, infinities, -0.0, subnormals; every integer's extremes; bytes;
//! nested options, sequences, maps and enums), and a value whose type cannot read back from
//! the value format is refused before anything is stored, leaving any row already there as it
//! was.

use std::collections::BTreeMap;
use std::sync::Arc;

use pk_codec::store::{BulkOptions, BulkWriter, MemoryStore, RangeStore, Typed, TypedError};
use pk_codec::{Layout, PartitionKey, Value};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

use crate::support;

#[derive(PartitionKey, Debug, Clone, PartialEq, Eq)]
#[pk(buckets(count = 16, hash(device_id), separator))]
struct Reading {
    device_id: u32,
    ts: u64,
}

#[derive(PartitionKey, Debug, Clone, PartialEq, Eq)]
#[pk(form = binary, buckets(count = 16, hash(device_id)))]
struct BinReading {
    device_id: u32,
    ts: u64,
}

#[derive(Serialize, Deserialize, Debug, Clone)]
enum Shape {
    Unit,
    Newtype(f64),
    Tuple(f32, i8),
    Struct { a: Option<Option<()>>, b: Vec<u8> },
}

/// A value holding every kind of data serde describes.
#[derive(Serialize, Deserialize, Debug, Clone)]
struct Everything {
    f32s: Vec<f32>,
    f64s: Vec<f64>,
    ints: (i8, i16, i32, i64, i128, isize),
    uints: (u8, u16, u32, u64, u128, usize),
    bytes: Vec<u8>,
    text: String,
    c: char,
    flag: bool,
    unit: (),
    nested: Option<Option<()>>,
    some_unit: Option<()>,
    maybe: Option<Option<f64>>,
    map: BTreeMap<String, f64>,
    shapes: Vec<Shape>,
}

/// The value as bits: floats by `to_bits`, so that NaN payloads and -0.0 compare exactly.
fn bits(v: &Everything) -> String {
    fn shape(s: &Shape) -> String {
        match s {
            Shape::Unit => "unit".into(),
            Shape::Newtype(f) => format!("newtype {:x}", f.to_bits()),
            Shape::Tuple(f, i) => format!("tuple {:x} {i}", f.to_bits()),
            Shape::Struct { a, b } => format!("struct {a:?} {b:?}"),
        }
    }
    format!(
        "{:x?} {:x?} {:?} {:?} {:?} {:?} {:?} {} {:?} {:?} {:?} {:?} {:?} {:?}",
        v.f32s.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
        v.f64s.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
        v.ints,
        v.uints,
        v.bytes,
        v.text,
        v.c,
        v.flag,
        v.unit,
        v.nested,
        v.some_unit,
        v.maybe.map(|o| o.map(f64::to_bits)),
        v.map
            .iter()
            .map(|(k, f)| (k.clone(), f.to_bits()))
            .collect::<Vec<_>>(),
        v.shapes.iter().map(shape).collect::<Vec<_>>(),
    )
}

/// Floats drawn from every bit pattern, with the special values always in the mix.
fn f64s() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<u64>().prop_map(f64::from_bits),
        prop::sample::select(vec![
            f64::NAN,
            -f64::NAN,
            f64::from_bits(0x7ff0_0000_0000_0001), // a signalling NaN payload
            f64::INFINITY,
            f64::NEG_INFINITY,
            -0.0,
            0.0,
            f64::MIN_POSITIVE / 2.0, // subnormal
            f64::MAX,
            f64::MIN,
            27.49,
        ]),
    ]
}

fn f32s() -> impl Strategy<Value = f32> {
    prop_oneof![
        any::<u32>().prop_map(f32::from_bits),
        prop::sample::select(vec![f32::NAN, -0.0, f32::INFINITY, f32::from_bits(1)]),
    ]
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        Just(Shape::Unit),
        f64s().prop_map(Shape::Newtype),
        (f32s(), any::<i8>()).prop_map(|(f, i)| Shape::Tuple(f, i)),
        (
            prop::option::of(prop::option::of(Just(()))),
            prop::collection::vec(any::<u8>(), 0..8)
        )
            .prop_map(|(a, b)| Shape::Struct { a, b }),
    ]
}

fn extremes<T: Clone + std::fmt::Debug + 'static>(
    all: impl Strategy<Value = T> + 'static,
    ends: Vec<T>,
) -> BoxedStrategy<T> {
    prop_oneof![all, prop::sample::select(ends)].boxed()
}

fn everything() -> impl Strategy<Value = Everything> {
    let ints = (
        extremes(any::<i8>(), vec![i8::MIN, -1, 0, i8::MAX]),
        extremes(any::<i16>(), vec![i16::MIN, i16::MAX]),
        extremes(any::<i32>(), vec![i32::MIN, i32::MAX]),
        extremes(any::<i64>(), vec![i64::MIN, i64::MAX]),
        extremes(any::<i128>(), vec![i128::MIN, -1, i128::MAX]),
        extremes(any::<isize>(), vec![isize::MIN, isize::MAX]),
    );
    let uints = (
        extremes(any::<u8>(), vec![0, u8::MAX]),
        extremes(any::<u16>(), vec![0, u16::MAX]),
        extremes(any::<u32>(), vec![0, u32::MAX]),
        extremes(any::<u64>(), vec![0, u64::MAX]),
        extremes(any::<u128>(), vec![0, u128::MAX]),
        extremes(any::<usize>(), vec![0, usize::MAX]),
    );
    (
        (
            prop::collection::vec(f32s(), 0..4),
            prop::collection::vec(f64s(), 0..6),
            ints,
            uints,
        ),
        (
            prop::collection::vec(any::<u8>(), 0..16),
            "\\PC{0,8}",
            any::<char>(),
            any::<bool>(),
            prop::option::of(prop::option::of(Just(()))),
            prop::option::of(Just(())),
            prop::option::of(prop::option::of(f64s())),
            prop::collection::btree_map("[a-z]{0,3}", f64s(), 0..3),
            prop::collection::vec(shape(), 0..4),
        ),
    )
        .prop_map(
            |(
                (f32s, f64s, ints, uints),
                (bytes, text, c, flag, nested, some_unit, maybe, map, shapes),
            )| Everything {
                f32s,
                f64s,
                ints,
                uints,
                bytes,
                text,
                c,
                flag,
                unit: (),
                nested,
                some_unit,
                maybe,
                map,
                shapes,
            },
        )
}

fn layout(binary: bool) -> Layout {
    let text = "device_id: u32 width=6; ts: u64 width=13";
    if binary {
        format!("{text}; form=binary").parse().unwrap()
    } else {
        text.parse().unwrap()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(256)))]

    /// Every value reads back bit for bit through each typed write path, in both key forms.
    #[test]
    fn every_value_reads_back_bit_for_bit(v in everything(), device in any::<u32>(), ts in any::<u64>()) {
        let store = MemoryStore::default();
        let typed = Typed::new(&store);
        let key = Reading { device_id: device, ts };
        typed.put(&key, &v).unwrap();
        let back: Everything = typed.get(&key).unwrap().unwrap();
        prop_assert_eq!(bits(&back), bits(&v));

        let bin = BinReading { device_id: device, ts };
        typed.put(&bin, &v).unwrap();
        let back: Everything = typed.get(&bin).unwrap().unwrap();
        prop_assert_eq!(bits(&back), bits(&v));

        for binary in [false, true] {
            let layout = layout(binary);
            let values = [Value::Uint(u128::from(device % 1_000_000)), Value::Uint(u128::from(ts % 10_000_000_000_000))];
            typed.put_values(&layout, &values, &v).unwrap();
            let back: Everything = typed.get_values(&layout, &values).unwrap().unwrap();
            prop_assert_eq!(bits(&back), bits(&v));
        }

        let store = Arc::new(MemoryStore::default());
        let writer = BulkWriter::new(Arc::clone(&store), BulkOptions::default()).unwrap();
        writer.add_typed(&key, &v).unwrap();
        writer.add_typed(&bin, &v).unwrap();
        let values = [Value::Uint(u128::from(device % 1_000_000)), Value::Uint(0)];
        writer.add_values(&layout(true), &values, &v).unwrap();
        let stats = writer.close();
        prop_assert_eq!(stats.rows_written, 3);
        let typed = Typed::new(&*store);
        for back in [
            typed.get::<_, Everything>(&key).unwrap().unwrap(),
            typed.get::<_, Everything>(&bin).unwrap().unwrap(),
            typed.get_values::<Everything>(&layout(true), &values).unwrap().unwrap(),
        ] {
            prop_assert_eq!(bits(&back), bits(&v));
        }
    }

    /// A single float of any bit pattern reads back with the same bits (the JSON format this
    /// replaced changed about a quarter of them, and stored NaN and the infinities as null).
    #[test]
    fn every_f64_and_f32_reads_back_by_its_bits(f in f64s(), g in f32s()) {
        let store = MemoryStore::default();
        let typed = Typed::new(&store);
        let key = Reading { device_id: 1, ts: 2 };
        typed.put(&key, &f).unwrap();
        prop_assert_eq!(typed.get::<_, f64>(&key).unwrap().unwrap().to_bits(), f.to_bits());
        typed.put(&key, &g).unwrap();
        prop_assert_eq!(typed.get::<_, f32>(&key).unwrap().unwrap().to_bits(), g.to_bits());
    }
}

/// `Some(None)` and `Some(())` stay what they are (a self-describing format such as JSON reads
/// both back as `None`).
#[test]
fn nested_options_keep_their_depth() {
    let store = MemoryStore::default();
    let typed = Typed::new(&store);
    let key = Reading {
        device_id: 1,
        ts: 2,
    };
    typed.put(&key, &Some(None::<u8>)).unwrap();
    assert_eq!(
        typed.get::<_, Option<Option<u8>>>(&key).unwrap(),
        Some(Some(None))
    );
    typed.put(&key, &Some(())).unwrap();
    assert_eq!(typed.get::<_, Option<()>>(&key).unwrap(), Some(Some(())));
}

/// Values of a type that needs a self-describing format to read back (serde's untagged enums,
/// `serde_json::Value`) are refused before anything is stored, and a row already at the key
/// keeps its value; `str` and `[T]` values are accepted and read back as `String` and `Vec<T>`.
#[test]
fn a_value_that_would_not_read_back_is_refused_with_nothing_stored() {
    #[derive(Serialize, Deserialize, Debug)]
    #[serde(untagged)]
    enum Loose {
        Number(f64),
        Text(String),
    }
    let store = Arc::new(MemoryStore::default());
    let typed = Typed::new(&*store);
    let key = Reading {
        device_id: 1,
        ts: 2,
    };
    typed.put(&key, &1.5f64).unwrap();
    let before = store.get(&key.encode().unwrap().into_bytes()).unwrap();

    let err = typed.put(&key, &Loose::Number(2.0)).unwrap_err();
    assert!(matches!(err, TypedError::Value(_)), "{err}");
    let message = err.to_string();
    assert!(message.contains("does not read back"), "{message}");
    let err = typed
        .put(&key, &serde_json::json!({"a": [1, 2.5]}))
        .unwrap_err();
    assert!(matches!(err, TypedError::Value(_)), "{err}");
    assert_eq!(
        store.get(&key.encode().unwrap().into_bytes()).unwrap(),
        before
    );
    assert_eq!(typed.get::<_, f64>(&key).unwrap(), Some(1.5));

    let writer = BulkWriter::new(Arc::clone(&store), BulkOptions::default()).unwrap();
    let err = writer
        .add_typed(&key, &Loose::Text("x".into()))
        .unwrap_err();
    assert!(matches!(err, TypedError::Value(_)), "{err}");
    assert_eq!(writer.close().rows_added, 0);
    assert_eq!(typed.get::<_, f64>(&key).unwrap(), Some(1.5));

    typed.put(&key, "text").unwrap();
    assert_eq!(
        typed.get::<_, String>(&key).unwrap().as_deref(),
        Some("text")
    );
    typed.put(&key, &[1u16, 2, 3][..]).unwrap();
    assert_eq!(typed.get::<_, Vec<u16>>(&key).unwrap(), Some(vec![1, 2, 3]));
}

/// A stored value read as another type, or bytes with more after the value, is a value error
/// naming the key, not a wrong value.
#[test]
fn a_stored_value_of_another_shape_is_an_error() {
    let store = MemoryStore::default();
    let typed = Typed::new(&store);
    let key = Reading {
        device_id: 1,
        ts: 2,
    };
    typed.put(&key, &(1u8, 2u8)).unwrap();
    let err = typed.get::<_, u8>(&key).unwrap_err();
    assert!(matches!(err, TypedError::Value(_)), "{err}");
    store.put(&key.encode().unwrap().into_bytes(), &[]).unwrap();
    assert!(typed.get::<_, u64>(&key).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(64)))]

    /// Typed writes through a re-keying read back exactly, before and after the switch, and
    /// what the job wrote under the new layout reads through `Typed` as the same value.
    #[test]
    fn typed_writes_through_a_rekeying_read_back_exactly(v in everything(), card in 0u64..100_000_000) {
        use pk_codec::store::{KeySpace, Rekey, RekeyJob, RekeyOptions};
        let old: Layout = "card: u64 width=8; buckets=4:mod(card):sep".parse().unwrap();
        let new: Layout = "card: u64 width=8; buckets=16:hash(card); form=binary".parse().unwrap();
        let store = Arc::new(MemoryStore::default());
        let rekey = Rekey::new("exact", KeySpace::new(old), KeySpace::new(new.clone()).under("v2/"));
        let job = RekeyJob::start(Arc::clone(&store), rekey, RekeyOptions::default()).unwrap();
        let values = [Value::Uint(u128::from(card))];
        job.put_typed(&values, &v).unwrap();
        prop_assert_eq!(bits(&job.get_typed::<Everything>(&values).unwrap().unwrap()), bits(&v));
        job.run().unwrap();
        prop_assert_eq!(bits(&job.get_typed::<Everything>(&values).unwrap().unwrap()), bits(&v));
        let prefixed = pk_codec::store::PrefixedStore::new(&*store, "v2/");
        let back: Everything = Typed::new(&prefixed).get_values(&new, &values).unwrap().unwrap();
        prop_assert_eq!(bits(&back), bits(&v));
    }
}
