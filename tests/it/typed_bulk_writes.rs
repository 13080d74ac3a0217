//! Typed bulk writes: `BulkWriter::add_typed` and `add_values` write exactly what `Typed` reads
//! back, for any key values and values, with any number of workers and batch sizes, into the
//! reference store and redb; what `Typed::put` refuses, they refuse with the same error.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::Arc;

use pk_codec::store::{
    BulkOptions, BulkWriter, MemoryStore, RangeQuery, RangeStore, RedbStore, Typed, TypedError,
};
use pk_codec::{Layout, PartitionKey, Value};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

use crate::support;

/// The newcomer's key: a device and a time, spread over 16 buckets by a hash of the device.
#[derive(PartitionKey, Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[pk(buckets(count = 16, hash(device_id), separator))]
struct Reading {
    device_id: u32,
    ts: u64,
    sensor: String,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Sample {
    millicelsius: i64,
    note: Option<String>,
    history: Vec<u16>,
}

fn sample() -> impl Strategy<Value = Sample> {
    (
        any::<i64>(),
        prop::option::of("\\PC{0,6}"),
        prop::collection::vec(any::<u16>(), 0..4),
    )
        .prop_map(|(millicelsius, note, history)| Sample {
            millicelsius,
            note,
            history,
        })
}

/// Every row of `store` read back through `Typed::scan` over all 16 buckets, in key order.
fn scan_all<S: RangeStore>(store: &S) -> Vec<(Reading, Sample)> {
    let ranges = Reading::layout().prefix_ranges(&[]).unwrap();
    let mut rows = Vec::new();
    let next = Typed::new(store)
        .scan(&ranges, 7, None, |k: Reading, v: Sample| {
            rows.push((k, v));
            ControlFlow::Continue(())
        })
        .unwrap();
    assert_eq!(next, None);
    rows
}

/// The order `Typed::scan` reads a bucketed key in: by the key after its bucket prefix.
fn natural_order(rows: &mut [(Reading, Sample)]) {
    let skip = Reading::SHAPE.prefix().len();
    rows.sort_by_cached_key(|(k, _)| k.encode().unwrap()[skip..].to_owned());
}

/// Adds `rows` to `store` through `add_typed` with `options`, and checks that every key reads
/// back its last value through `Typed::get`, that a scan of every bucket reads exactly the rows
/// in key order, and that the store holds the bytes `Typed::put` writes.
fn bulk_write_and_read_back<S: RangeStore + 'static>(
    store: Arc<S>,
    rows: &[(Reading, Sample)],
    options: &BulkOptions,
) -> Result<(), TestCaseError> {
    let reference = MemoryStore::default();
    let mut model: BTreeMap<Reading, Sample> = BTreeMap::new();
    let writer = BulkWriter::new(Arc::clone(&store), options.clone()).unwrap();
    for (key, value) in rows {
        let direct = Typed::new(&reference).put(key, value);
        let bulk = writer.add_typed(key, value);
        prop_assert_eq!(
            direct.is_ok(),
            bulk.is_ok(),
            "{:?}: {:?} / {:?}",
            key,
            direct,
            bulk
        );
        match bulk {
            Ok(()) => {
                model.insert(key.clone(), value.clone());
            }
            Err(e) => prop_assert!(matches!(e, TypedError::Key(_)), "{e}"),
        }
    }
    let stats = writer.close();
    prop_assert_eq!((stats.rows_failed, stats.rows_lost()), (0, 0));
    let typed = Typed::new(&*store);
    for (key, value) in &model {
        prop_assert_eq!(typed.get::<_, Sample>(key).unwrap(), Some(value.clone()));
    }
    let mut want: Vec<(Reading, Sample)> = model.into_iter().collect();
    natural_order(&mut want);
    prop_assert_eq!(&scan_all(&*store), &want);
    let everything = RangeQuery::new("", None).limit(usize::MAX);
    prop_assert_eq!(
        store.range(&everything).unwrap().rows,
        reference.range(&everything).unwrap().rows
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(48), ..ProptestConfig::default() })]

    /// Any readings (any device, time and sensor text, repeated keys included) added through
    /// `add_typed` with any workers and batch size, into the reference store or redb:
    /// `Typed::get` reads each key's last value, and a scan of every bucket reads exactly the
    /// rows, once each, in key order; the bytes are those `Typed::put` writes. A key
    /// `Typed::put` refuses, `add_typed` refuses alike, before queuing anything.
    #[test]
    fn typed_bulk_writes_read_back_exactly_through_typed(
        rows in prop::collection::vec(
            ((any::<u32>(), any::<u64>(), "\\PC{0,6}"), sample()),
            0..60,
        ),
        repeat in prop::collection::vec(any::<prop::sample::Index>(), 0..10),
        workers in prop::option::of(1usize..4),
        batch in prop::option::of(1usize..30),
        into_redb in any::<bool>(),
    ) {
        let mut rows: Vec<(Reading, Sample)> = rows
            .into_iter()
            .map(|((device_id, ts, sensor), v)| (Reading { device_id, ts, sensor }, v))
            .collect();
        // Some keys written again with another value: the last one stands.
        for at in repeat {
            if !rows.is_empty() {
                let (key, mut value) = rows[at.index(rows.len())].clone();
                value.millicelsius = value.millicelsius.wrapping_add(1);
                rows.push((key, value));
            }
        }
        let options = BulkOptions { workers, max_batch_rows: batch, ..BulkOptions::default() };
        if into_redb {
            bulk_write_and_read_back(Arc::new(RedbStore::in_memory().unwrap()), &rows, &options)?;
        } else {
            bulk_write_and_read_back(Arc::new(MemoryStore::default()), &rows, &options)?;
        }
    }

    /// `add_values` writes what `Typed::put_values` writes and `Typed::get_values` reads, for
    /// any values of a runtime layout.
    #[test]
    fn bulk_writes_by_runtime_layout_read_back_through_typed(
        rows in prop::collection::btree_map((any::<u32>(), any::<u64>()), any::<i32>(), 0..40),
    ) {
        let layout: Layout = "device_id: u32; ts: u64 desc; buckets=16:hash(device_id):sep".parse().unwrap();
        let store = Arc::new(RedbStore::in_memory().unwrap());
        let writer = BulkWriter::new(Arc::clone(&store), BulkOptions::default()).unwrap();
        for (&(device, ts), value) in &rows {
            writer.add_values(&layout, &[device.into(), ts.into()], value).unwrap();
        }
        prop_assert_eq!(writer.close().rows_written, rows.len() as u64);
        let typed = Typed::new(&*store);
        for (&(device, ts), value) in &rows {
            let key: [Value; 2] = [device.into(), ts.into()];
            prop_assert_eq!(typed.get_values::<i32>(&layout, &key).unwrap(), Some(*value));
        }
        let mut n = 0;
        typed.scan_values(&layout, &layout.prefix_ranges(&[]).unwrap(), 9, None, |k, v: i32| {
            let (device, ts) = (k[0].as_u64().unwrap() as u32, k[1].as_u64().unwrap());
            assert_eq!(rows.get(&(device, ts)), Some(&v));
            n += 1;
            ControlFlow::Continue(())
        }).unwrap();
        prop_assert_eq!(n, rows.len());
    }
}

/// A value that does not serialize is refused as a value error, before it is queued.
#[test]
fn a_value_that_does_not_serialize_is_refused_before_it_is_queued() {
    #[derive(Deserialize)]
    struct Unserializable;
    impl Serialize for Unserializable {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("no JSON for this"))
        }
    }
    let store = Arc::new(MemoryStore::default());
    let writer = BulkWriter::new(Arc::clone(&store), BulkOptions::default()).unwrap();
    let key = Reading {
        device_id: 1,
        ts: 2,
        sensor: "t".into(),
    };
    let err = writer.add_typed(&key, &Unserializable).unwrap_err();
    assert!(matches!(err, TypedError::Value(_)), "{err}");
    let stats = writer.close();
    assert_eq!((stats.rows_added, stats.rows_written), (0, 0));
    assert!(store.is_empty());
}
