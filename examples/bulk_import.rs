//! The same rows imported into the throttling table model under the strategies of the
//! key-design practices ("write data in parallel", "add error retry intervals"), with the
//! measured outcome of each.
//!
//! Every partition serves at most `CAPACITY` operations per one-second load window (its reserved
//! throughput); past it, writes fail with a retryable "partition busy". The writer's requests
//! take `SERVICE` of virtual time each, and `simulate_import` plays the import in virtual time,
//! so the table sees its load windows pass as a real import would.
//!
//! ```sh
//! cargo run --release --example bulk_import            # 1,000,000 rows
//! cargo run --release --example bulk_import -- 200000  # fewer
//! ```

use std::time::Duration;

use pk_codec::Layout;
use pk_codec::store::{Backoff, BulkOptions, Dispatch, Simulation, simulate_import};
use pk_codec::table::{ManualClock, Schema, Table, TableOptions};

/// Operations one partition serves per load window.
const CAPACITY: u64 = 20_000;
/// Virtual time one batch request takes.
const SERVICE: Duration = Duration::from_millis(2);
const START_MS: i64 = 1_700_000_000_000;

/// The order rows are imported in.
#[derive(Clone, Copy, PartialEq)]
enum Input {
    /// In key order, as a dump of a sorted table.
    Sorted,
    /// In a random order.
    Shuffled,
}

struct Strategy {
    name: &'static str,
    input: Input,
    workers: usize,
    dispatch: Dispatch,
    pre_split: bool,
    backoff: Backoff,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rows: usize = match std::env::args().nth(1) {
        Some(n) => n.parse()?,
        None => 1_000_000,
    };
    // Well-spread keys (an MD5 prefix of the device, then time): the design is fine; only the
    // order and the spread of the import differ between strategies.
    let layout: Layout =
        "device_id: u32 width=8; ts: u64 width=13; hash=md5(device_id):4:sep".parse()?;
    let mut keys: Vec<String> = (0..rows as u64)
        .map(|i| {
            layout.encode(&[
                ((i % 50_000) as u32).into(),
                (START_MS as u64 + i / 50_000).into(),
            ])
        })
        .collect::<Result<_, _>>()?;
    keys.sort();
    let mut shuffled = keys.clone();
    shuffle(&mut shuffled, 42);
    let split_points = layout.shape().split_points(15)?;

    let jitter = Backoff::Jittered {
        base: Duration::from_millis(20),
        cap: Duration::from_secs(2),
    };
    // A strategy on a table that splits as it goes.
    let plain = |name, input, workers, dispatch, backoff| Strategy {
        name,
        input,
        workers,
        dispatch,
        pre_split: false,
        backoff,
    };
    let strategies = [
        plain(
            "sorted, 1 writer",
            Input::Sorted,
            1,
            Dispatch::RoundRobin,
            jitter,
        ),
        plain(
            "sorted, 1 writer, no backoff",
            Input::Sorted,
            1,
            Dispatch::RoundRobin,
            Backoff::None,
        ),
        plain(
            "shuffled, 1 writer",
            Input::Shuffled,
            1,
            Dispatch::RoundRobin,
            jitter,
        ),
        plain(
            "8 writers, sorted",
            Input::Sorted,
            8,
            Dispatch::RoundRobin,
            jitter,
        ),
        plain(
            "8 writers, sorted, no backoff",
            Input::Sorted,
            8,
            Dispatch::RoundRobin,
            Backoff::None,
        ),
        plain(
            "8 writers, a subset each",
            Input::Sorted,
            8,
            Dispatch::Chunks(rows.div_ceil(8)),
            jitter,
        ),
        plain(
            "8 writers, random subsets",
            Input::Shuffled,
            8,
            Dispatch::Random,
            jitter,
        ),
        Strategy {
            pre_split: true,
            ..plain(
                "8 writers, pre-split table",
                Input::Shuffled,
                8,
                Dispatch::Random,
                jitter,
            )
        },
    ];

    println!(
        "{rows} rows; each partition serves {CAPACITY} operations a second; a request takes {SERVICE:?}\n"
    );
    println!(
        "{:<33} {:>10} {:>10} {:>10} {:>8} {:>6} {:>10} {:>5}",
        "strategy", "time (s)", "busy", "retries", "hottest", "parts", "written", "lost"
    );
    for s in &strategies {
        let clock = ManualClock::new(START_MS);
        let mut options = TableOptions::default()
            .throttle_ops_per_window(CAPACITY)
            // Partitions split as data grows (2 MB); a load split would hand out new capacity
            // within a window, which a real store's split, taking minutes, does not.
            .split_size_bytes(2 << 20)
            .load_window_ms(1_000);
        if s.pre_split {
            options = options.pre_split(split_points.iter().map(|p| p.as_str().into()).collect());
        }
        let table = Table::with_clock(Schema::single_string("pk")?, options, clock.clone())?;
        let order = match s.input {
            Input::Sorted => &keys,
            Input::Shuffled => &shuffled,
        };
        let bulk = BulkOptions {
            workers: Some(s.workers),
            dispatch: s.dispatch,
            backoff: s.backoff,
            deadline: Duration::from_secs(600),
            ..BulkOptions::default()
        };
        let Simulation { elapsed, stats } = simulate_import(
            &table,
            order.iter().map(|k| (k.clone(), b"x".to_vec())),
            &bulk,
            SERVICE,
            |ms| clock.set(START_MS + ms),
        )?;
        let report = table.report();
        println!(
            "{:<33} {:>10.1} {:>10} {:>10} {:>7.1}% {:>6} {:>10} {:>5}",
            s.name,
            elapsed.as_secs_f64(),
            stats.busy,
            stats.retries,
            report.hottest_share * 100.0,
            report.partitions,
            stats.rows_written,
            stats.rows_lost() + stats.rows_failed,
        );
        assert_eq!(
            report.busy_rejections, stats.busy,
            "the table counted every busy refusal"
        );
        assert_eq!(
            table.report().rows,
            stats.rows_written,
            "every written row is in the table"
        );
    }
    Ok(())
}

/// Fisher-Yates with a seeded SplitMix64.
fn shuffle<T>(items: &mut [T], mut seed: u64) {
    let mut next = move || {
        seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    for i in (1..items.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        items.swap(i, j);
    }
}
