//! A newcomer's IoT app: readings keyed by device and time, spread over 16 buckets by a hash of
//! the device, bulk-written into two tables of one redb file (by time, and newest first), then
//! read back by device and time.
//!
//! - `RedbDatabase` hands out named tables, each a `RangeStore`;
//! - `BulkWriter::add_typed` writes typed rows, with the defaults redb likes (its write profile);
//! - `Typed::scan` reads a device's time range back, and says when it is done.
//!
//! ```sh
//! cargo run --release --example iot_readings
//! ```

use std::ops::ControlFlow;
use std::sync::Arc;

use pk_codec::PartitionKey;
use pk_codec::store::{BulkOptions, BulkWriter, RedbDatabase, Typed};
use serde::{Deserialize, Serialize};

/// A reading's key: the device's readings stay together in its bucket, in time order.
#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 16, hash(device_id), separator))]
struct Reading {
    #[pk(width = 6)]
    device_id: u32,
    #[pk(width = 13)]
    ts: u64,
}

/// The same readings newest first: a device's latest readings are the first rows of its range.
#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 16, hash(device_id), separator))]
struct Newest {
    #[pk(width = 6)]
    device_id: u32,
    #[pk(desc, width = 13)]
    ts: u64,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Sample {
    /// Tenths of a degree Celsius.
    decicelsius: i32,
    humidity: u8,
}

const DEVICES: u32 = 1_000;
const READINGS: u64 = 200;
const T0: u64 = 1_700_000_000_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("pk-codec-iot-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let result = run(&dir.join("iot.redb"));
    std::fs::remove_dir_all(&dir)?;
    result
}

fn run(path: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let db = RedbDatabase::create(path)?;
    let by_time = Arc::new(db.table("readings")?);
    let newest = Arc::new(db.table("readings_newest_first")?);
    let profile = BulkOptions::default().profile_for(&*by_time);
    println!(
        "tables {:?}; the writer's defaults into redb: {} worker, {} rows a batch",
        db.table_names()?,
        profile.workers,
        profile.max_batch_rows
    );

    // One writer per table, the defaults taken from the store.
    let to_time = BulkWriter::new(Arc::clone(&by_time), BulkOptions::default())?;
    let to_newest = BulkWriter::new(Arc::clone(&newest), BulkOptions::default())?;
    for t in 0..READINGS {
        for device_id in 0..DEVICES {
            let ts = T0 + t * 1_000;
            let sample = Sample {
                decicelsius: 150 + ((device_id as u64 * 7 + t) % 200) as i32,
                humidity: ((device_id as u64 + t) % 100) as u8,
            };
            to_time.add_typed(&Reading { device_id, ts }, &sample)?;
            to_newest.add_typed(&Newest { device_id, ts }, &sample)?;
        }
    }
    let (a, b) = (to_time.close(), to_newest.close());
    println!(
        "written: {} rows by time, {} newest first, {} lost",
        a.rows_written,
        b.rows_written,
        a.rows_lost() + b.rows_lost()
    );

    // Device 54's first ten seconds, in time order.
    let typed = Typed::new(&*by_time);
    let ranges = Reading::ranges_ts(54, T0..T0 + 10_000)?;
    let mut first = Vec::new();
    let done = typed.scan(&ranges, 1_000, None, |k: Reading, s: Sample| {
        first.push((k.ts - T0, s.decicelsius));
        ControlFlow::Continue(())
    })?;
    println!(
        "device 54, first 10 s: {} readings, (ms, decicelsius) {:?} .. {:?}; done: {}",
        first.len(),
        first.first().unwrap(),
        first.last().unwrap(),
        done.is_none()
    );

    // Its three latest readings: the first rows of its newest-first range. The scan stops on
    // the third, and its cursor says more rows are left.
    let typed = Typed::new(&*newest);
    let ranges = Newest::ranges_device_id_eq(54)?;
    let mut latest = Vec::new();
    let cursor = typed.scan(&ranges, 10, None, |k: Newest, _: Sample| {
        latest.push(k.ts - T0);
        if latest.len() == 3 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })?;
    println!(
        "device 54, latest: {latest:?} ms; more left: {}",
        cursor.is_some()
    );
    Ok(())
}
