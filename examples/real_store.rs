//! The student-card key in a real store: redb on disk by default, or an etcd cluster.
//!
//! - a DeviceID range answered by one range read, through typed range constructors;
//! - a 16-bucket time design (`ts % 16` buckets) read back in time order: the 16 bucket ranges
//!   read in parallel, paged, and merged;
//! - a read stopped halfway and resumed from its cursor.
//!
//! ```sh
//! cargo run --example real_store                          # redb, in a temporary directory
//! PK_ETCD_ENDPOINTS=http://127.0.0.1:2379 cargo run --features etcd --example real_store
//! ```

use std::ops::ControlFlow;

use pk_codec::PartitionKey;
use pk_codec::store::{RangeStore, RedbStore, Typed};
use serde::{Deserialize, Serialize};

/// The card key of the key-design practices: DeviceID first, so a DeviceID range is one read.
#[derive(PartitionKey, Debug, Clone, PartialEq)]
struct CardKey {
    #[pk(width = 6)]
    device_id: u32,
    seller_id: String,
    #[pk(width = 6)]
    card_id: u64,
    #[pk(width = 8)]
    order_number: u64,
}

/// The time design: purchases by time, spread over 16 buckets by `ts % 16`.
#[derive(PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 16, modulo = ts, separator))]
struct TimeKey {
    #[pk(width = 13)]
    ts: u64,
    #[pk(width = 8)]
    order_number: u64,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Purchase {
    amount_cents: u32,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    match std::env::var("PK_ETCD_ENDPOINTS") {
        Ok(list) => run_on_etcd(&list),
        Err(_) => {
            let dir =
                std::env::temp_dir().join(format!("pk-codec-real-store-{}", std::process::id()));
            std::fs::create_dir_all(&dir)?;
            let path = dir.join("cards.redb");
            println!("store: redb at {}", path.display());
            let result = demo(&RedbStore::create(&path)?);
            std::fs::remove_dir_all(&dir)?;
            result
        }
    }
}

#[cfg(feature = "etcd")]
fn run_on_etcd(list: &str) -> Result<(), Box<dyn std::error::Error>> {
    println!("store: etcd at {list}");
    demo(&pk_codec::store::EtcdStore::new(list.split(','))?)
}

#[cfg(not(feature = "etcd"))]
fn run_on_etcd(_: &str) -> Result<(), Box<dyn std::error::Error>> {
    Err("PK_ETCD_ENDPOINTS is set, but this build has no etcd adapter: add --features etcd".into())
}

fn demo<S: RangeStore>(store: &S) -> Result<(), Box<dyn std::error::Error>> {
    let typed = Typed::new(store);
    let start_ts = 1_700_000_000_000u64;
    for n in 0..2_000u64 {
        let purchase = Purchase {
            amount_cents: (n * 37 % 5_000) as u32,
        };
        let card = CardKey {
            device_id: (n * 7_919 % 300) as u32,
            seller_id: format!("a{}", 100 + n % 40),
            card_id: n * 13 % 1_000_000,
            order_number: 200_000 + n,
        };
        typed.put(&card, &purchase)?;
        // Timestamps with jitter, as real clocks have (coarse ones would share one bucket).
        let ts = start_ts + n * 250 + n * 7_919 % 13;
        typed.put(
            &TimeKey {
                ts,
                order_number: 200_000 + n,
            },
            &purchase,
        )?;
    }

    // DeviceID in [15, 100): one range read.
    let ranges = CardKey::ranges_device_id(15..100)?;
    let mut rows = 0;
    let mut devices = Vec::new();
    typed.scan(&ranges, 500, None, |k: CardKey, _: Purchase| {
        rows += 1;
        devices.push(k.device_id);
        ControlFlow::Continue(())
    })?;
    assert!(
        devices.windows(2).all(|w| w[0] <= w[1]) && devices.iter().all(|d| (15..100).contains(d))
    );
    println!(
        "DeviceID 15..100: {} range read(s), {rows} rows, devices {}..={}",
        ranges.len(),
        devices.first().unwrap_or(&0),
        devices.last().unwrap_or(&0)
    );

    // A minute of the time design: 16 bucket ranges read in parallel, merged in time order.
    let (from, to) = (start_ts + 60_000, start_ts + 120_000);
    let ranges = TimeKey::ranges_ts(from..to)?;
    let mut times = Vec::new();
    let cursor = typed.scan(&ranges, 25, None, |k: TimeKey, _: Purchase| {
        times.push(k.ts);
        if times.len() == 100 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })?;
    // Stopped after 100 rows: resume from the cursor.
    typed.scan(&ranges, 25, cursor.as_ref(), |k: TimeKey, _: Purchase| {
        times.push(k.ts);
        ControlFlow::Continue(())
    })?;
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "merged in time order"
    );
    println!(
        "ts in one minute: {} bucket range reads in parallel, {} rows merged in time order (stopped after 100, resumed)",
        ranges.len(),
        times.len()
    );
    Ok(())
}
