//! A day of student-card purchases, stored under each key design of the key-design practices,
//! in the in-memory range-partitioned table: which designs spread load, which run hot, and which
//! still answer "all purchases of devices 15 to 99" with range reads.
//!
//! ```text
//! cargo run --example student_cards
//! ```
//!
//! Each design keys a row by two String columns, as a store's two-column primary key: the
//! partition key (the design's leading fields, spliced by pk-codec) and the rest of the key. As in
//! the store, one partition-key value is never split, so a design whose values are few, skewed or
//! sequential shows it. Every figure printed is measured on the generated day; heatmaps go to
//! `student_cards/*.svg` under the cargo target directory in use.
//!
//! The load figures come from the [`Judge`], the table model's verdict in bounded memory that
//! `pk analyze` uses too (the table holds the rows, for the reads). The figure each design is
//! judged by is the hottest *key range* share: per one-minute window, the share of writes in
//! the busiest range between the partition bounds of the window's start. A tail hotspot stays
//! one range however often the tail splits inside the window, where the busiest single
//! partition's share would understate it.

use std::error::Error;
use std::ops::Range;

use pk_codec::table::{
    Attribute, AttributeValue, Heatmap, HeatmapOptions, HotspotReport, Judge, LoadReport,
    ManualClock, PkColumn, PkType, PkValue, PrimaryKey, RangeRequest, Schema, Table, TableOptions,
};
use pk_codec::{KeyRange, PartitionKey};

/// Midnight of the simulated day, in ms since the epoch.
const DAY_START: u64 = 1_700_006_400_000;
const DAY_MS: u64 = 86_400_000;
/// Operations one partition serves per load window in the capacity model.
const OPS_PER_TICK: u64 = 40;
/// The DeviceID range every design is asked to read.
const DEVICES: Range<u32> = 15..100;

/// One purchase: the facts' columns, plus when it happened and how much it cost.
#[derive(Debug, Clone)]
pub(crate) struct Purchase {
    card_id: u32,
    seller_id: String,
    device_id: u32,
    order_number: u64,
    ts: u64,
    amount_cents: i64,
}

// ---- The designs: the partition-key part of each, and the rest of its primary key. -------------

/// CardID first: tens of thousands of cards.
#[derive(PartitionKey)]
struct CardFirst {
    #[pk(width = 6)]
    card_id: u32,
}

/// DeviceID first: point-of-sale terminals, each bounded by its cashier's speed.
#[derive(PartitionKey)]
struct DeviceFirst {
    #[pk(width = 4)]
    device_id: u32,
}

/// SellerID first: few sellers, a few of them very busy.
#[derive(PartitionKey)]
struct SellerFirst<'a> {
    seller_id: &'a str,
}

/// OrderNumber first: increases over time on every terminal.
#[derive(PartitionKey)]
struct OrderFirst {
    #[pk(width = 8)]
    order_number: u64,
}

/// OrderNumber behind the first 4 hex characters of its MD5.
#[derive(PartitionKey)]
#[pk(hash(md5, len = 4, separator))]
struct OrderHashed {
    #[pk(width = 8)]
    order_number: u64,
}

/// DeviceID, SellerID and CardID spliced into one partition key.
#[derive(PartitionKey)]
struct Spliced<'a> {
    #[pk(width = 4)]
    device_id: u32,
    seller_id: &'a str,
    #[pk(width = 6)]
    card_id: u32,
}

/// The time, behind its bucket `ts % 16`; the example stores the bucket as the partition key and
/// the time as the next key column.
#[derive(PartitionKey)]
#[pk(buckets(count = 16, modulo = ts, separator))]
struct TimeBucket {
    #[pk(width = 13)]
    ts: u64,
}

/// The rest of a primary key: whatever makes the row unique under its partition key.
#[derive(PartitionKey)]
struct Rest {
    #[pk(width = 4)]
    device_id: u32,
    #[pk(width = 8)]
    order_number: u64,
}

/// How a design reads all purchases of the devices in [`DEVICES`].
enum DeviceRead {
    /// Range reads over these partition-key ranges.
    Ranges(Vec<KeyRange>),
    /// No range holds them: a full scan, filtered by each row's rest-of-key.
    FullScan,
}

/// One key design: its name, how it keys a purchase, and how it reads a DeviceID range.
pub(crate) struct Design {
    name: &'static str,
    /// Writes a purchase's partition key to the first String and the rest of its primary key
    /// to the second (both empty): the caller keeps and refills the two.
    key: fn(&Purchase, &mut String, &mut String) -> pk_codec::Result<()>,
    device_read: fn() -> pk_codec::Result<DeviceRead>,
}

/// Appends the rest of `p`'s primary key to `out`.
fn rest(p: &Purchase, out: &mut String) -> pk_codec::Result<()> {
    Rest {
        device_id: p.device_id,
        order_number: p.order_number,
    }
    .encode_into(out)
}

fn full_scan() -> pk_codec::Result<DeviceRead> {
    Ok(DeviceRead::FullScan)
}

/// The designs of the key-design practices, in their order.
#[must_use]
pub(crate) fn designs() -> Vec<Design> {
    vec![
        Design {
            name: "CardID first",
            key: |p, pk, rest_of_key| {
                CardFirst { card_id: p.card_id }.encode_into(pk)?;
                rest(p, rest_of_key)
            },
            device_read: full_scan,
        },
        Design {
            name: "DeviceID first",
            key: |p, pk, rest_of_key| {
                DeviceFirst {
                    device_id: p.device_id,
                }
                .encode_into(pk)?;
                rest(p, rest_of_key)
            },
            device_read: || Ok(DeviceRead::Ranges(DeviceFirst::ranges_device_id(DEVICES)?)),
        },
        Design {
            name: "SellerID first",
            key: |p, pk, rest_of_key| {
                SellerFirst {
                    seller_id: &p.seller_id,
                }
                .encode_into(pk)?;
                rest(p, rest_of_key)
            },
            device_read: full_scan,
        },
        Design {
            name: "OrderNumber first",
            key: |p, pk, rest_of_key| {
                OrderFirst {
                    order_number: p.order_number,
                }
                .encode_into(pk)?;
                rest(p, rest_of_key)
            },
            device_read: full_scan,
        },
        Design {
            name: "MD5(OrderNumber) prefix",
            key: |p, pk, rest_of_key| {
                OrderHashed {
                    order_number: p.order_number,
                }
                .encode_into(pk)?;
                rest(p, rest_of_key)
            },
            device_read: full_scan,
        },
        Design {
            name: "Device+Seller+Card spliced",
            key: |p, pk, rest_of_key| {
                Spliced {
                    device_id: p.device_id,
                    seller_id: &p.seller_id,
                    card_id: p.card_id,
                }
                .encode_into(pk)?;
                rest(p, rest_of_key)
            },
            device_read: || Ok(DeviceRead::Ranges(Spliced::ranges_device_id(DEVICES)?)),
        },
        Design {
            name: "time % 16 buckets",
            // As in the practices: the first column is the bucket alone, the second the time
            // (then a comma and the rest of the key). The whole key is encoded into the second
            // String, its bucket moved to the first.
            key: |p, pk, rest_of_key| {
                TimeBucket { ts: p.ts }.encode_into(rest_of_key)?;
                let (bucket, time) = TimeBucket::SHAPE.split_prefix(rest_of_key)?;
                pk.push_str(bucket);
                let time_starts = rest_of_key.len() - time.len();
                rest_of_key.drain(..time_starts);
                rest_of_key.push(',');
                rest(p, rest_of_key)
            },
            device_read: full_scan,
        },
    ]
}

// ---- The day of purchases. ----------------------------------------------------------------------

/// A small, seeded generator (a 64-bit LCG; the high bits are good enough for a simulation).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// `purchases` purchases over one day: 20,000 cards; 30 sellers whose business falls off as
/// 1/rank^1.3 (a heavy few); 600 terminals, given to sellers in proportion to their business so
/// that each terminal's rate stays bounded; order numbers from one increasing sequence (as in
/// the practices' table: 200001, 200002, ... across terminals), so unique per terminal and
/// increasing over time; busier at lunch and in the evening.
#[must_use]
pub(crate) fn generate_day(purchases: usize, seed: u64) -> Vec<Purchase> {
    let mut rng = Rng(seed);
    let sellers = 30usize;
    let weights: Vec<f64> = (0..sellers)
        .map(|r| 1.0 / ((r + 1) as f64).powf(1.3))
        .collect();
    let total: f64 = weights.iter().sum();
    // Terminals per seller, at least one each, 600 in all (device ids 1..=600).
    let mut devices_of: Vec<Vec<u32>> = vec![Vec::new(); sellers];
    let mut next_device = 1u32;
    for (s, w) in weights.iter().enumerate() {
        let n = ((w / total) * 600.0).round().max(1.0) as u32;
        for _ in 0..n {
            devices_of[s].push(next_device);
            next_device += 1;
        }
    }
    let seller_ids: Vec<String> = (0..sellers).map(|s| format!("a{}", 100 + s)).collect();
    let cards: Vec<u32> = (0..20_000)
        .map(|_| 100_000 + rng.below(900_000) as u32)
        .collect();
    let mut day = Vec::with_capacity(purchases);
    for i in 0..purchases {
        // Time: uniform, with extra purchases at lunch (11:30-13:30) and in the evening (17-19).
        // Millisecond jitter: evenly spaced times would all share their low bits, and `ts % 16`
        // would put them in one bucket.
        let mut ts = (i as u64 * DAY_MS) / purchases as u64 + rng.below(1_000);
        if rng.below(3) == 0 {
            let (from, len) = if rng.below(2) == 0 {
                (41_400_000, 7_200_000)
            } else {
                (61_200_000, 7_200_000)
            };
            ts = from + rng.below(len);
        }
        let pick = rng.below(1_000_000) as f64 / 1_000_000.0 * total;
        let mut acc = 0.0;
        let seller = weights.iter().position(|w| {
            acc += w;
            pick < acc
        });
        let seller = seller.unwrap_or(sellers - 1);
        let devices = &devices_of[seller];
        let device_id = devices[rng.below(devices.len() as u64) as usize];
        day.push(Purchase {
            card_id: cards[rng.below(cards.len() as u64) as usize],
            seller_id: seller_ids[seller].clone(),
            device_id,
            order_number: 0,
            ts: DAY_START + ts,
            amount_cents: 100 + rng.below(2_000) as i64,
        });
    }
    // Events happen in time order, and order numbers follow it.
    day.sort_by_key(|p| p.ts);
    for (i, p) in day.iter_mut().enumerate() {
        p.order_number = 200_001 + i as u64;
    }
    day
}

// ---- Storing and judging a design. --------------------------------------------------------------

/// What a design did with the day.
pub(crate) struct Outcome {
    /// The design's name.
    pub(crate) name: &'static str,
    /// The table's load report.
    pub(crate) report: LoadReport,
    /// The hotspot measure that holds through splits inside a window.
    pub(crate) hotspot: HotspotReport,
    /// Range reads issued to read the DeviceID range, or `None` for a full scan.
    pub(crate) device_range_reads: Option<usize>,
    /// Rows the DeviceID read went through, against the rows it had to find.
    pub(crate) device_rows_read: usize,
    /// Whether the DeviceID read found exactly the purchases of those devices.
    pub(crate) device_read_exact: bool,
    /// The table's load heatmap. The table itself is dropped when the design is measured, so
    /// that the next design's table reuses its memory.
    pub(crate) heatmap: Heatmap,
}

fn two_column_schema() -> Result<Schema, Box<dyn Error>> {
    Ok(Schema::new(vec![
        PkColumn::new("pk", PkType::String),
        PkColumn::new("rest", PkType::String),
    ])?)
}

fn string_key(a: String, b: PkValue) -> PrimaryKey {
    PrimaryKey::new(vec![PkValue::String(a), b])
}

/// Reads `[start, end)` to the end, page by page; returns the number of rows.
fn count_all(table: &Table, start: PrimaryKey, end: PrimaryKey) -> Result<usize, Box<dyn Error>> {
    let mut rows = 0;
    let mut next = Some(start);
    while let Some(from) = next {
        // The rows are lent one by one, not collected: nothing to allocate per row.
        next = table.for_each_in_range(&RangeRequest::forward(from, end.clone()), |_| rows += 1)?;
    }
    Ok(rows)
}

/// Stores the day under `design` and measures it.
///
/// # Errors
///
/// Any codec or table error (none are expected: the day is valid data).
pub(crate) fn run_design(design: &Design, day: &[Purchase]) -> Result<Outcome, Box<dyn Error>> {
    let clock = ManualClock::new(DAY_START as i64);
    let options = TableOptions::default()
        .split_size_bytes(96 << 10)
        .split_load_ops(80)
        .load_window_ms(60_000)
        .load_sample_every(1);
    let table = Table::with_clock(two_column_schema()?, options.clone(), clock.clone())?;
    // The load is judged beside the table (which keeps the rows for the reads below).
    let mut judge = Judge::new(two_column_schema()?, options)?;
    // One attribute list and one key, refilled for every purchase (`put_ref` borrows them):
    // the key's two Strings keep their buffers, so a purchase allocates nothing.
    let mut attributes = vec![Attribute::new("amount_cents", 0)];
    let mut values = vec![
        PkValue::String(String::new()),
        PkValue::String(String::new()),
    ];
    for p in day {
        if let [PkValue::String(pk), PkValue::String(rest)] = values.as_mut_slice() {
            pk.clear();
            rest.clear();
            (design.key)(p, pk, rest)?;
        }
        clock.set(p.ts as i64);
        attributes[0].value = AttributeValue::Integer(p.amount_cents);
        let key = PrimaryKey::new(values);
        table.put_ref(&key, &attributes)?;
        judge.put(&key, &attributes, p.ts as i64)?;
        values = key.into_values();
    }

    // "All purchases of devices 15 to 99", the way this design can answer it.
    let wanted = day
        .iter()
        .filter(|p| DEVICES.contains(&p.device_id))
        .count();
    let (reads, rows_read, found) = match (design.device_read)()? {
        DeviceRead::Ranges(ranges) => {
            let mut rows = 0;
            for r in &ranges {
                let end = match &r.end {
                    Some(end) => string_key(end.clone(), PkValue::InfMin),
                    None => PrimaryKey::inf_max(2),
                };
                rows += count_all(&table, string_key(r.start.clone(), PkValue::InfMin), end)?;
            }
            (Some(ranges.len()), rows, rows)
        }
        DeviceRead::FullScan => {
            // Scan everything; a row is wanted if its rest-of-key names a device in range.
            let mut rows = 0;
            let mut found = 0;
            let mut next = Some(PrimaryKey::inf_min(2));
            let mut bad_device = None;
            while let Some(from) = next {
                let req = RangeRequest::forward(from, PrimaryKey::inf_max(2));
                next = table.for_each_in_range(&req, |row| {
                    rows += 1;
                    if let Some(PkValue::String(rest)) = row.key.values().get(1) {
                        // The device is the second-to-last field of the rest of the key.
                        match rest.rsplit(',').nth(1).unwrap_or_default().parse::<u32>() {
                            Ok(device) => found += usize::from(DEVICES.contains(&device)),
                            Err(e) => {
                                bad_device.get_or_insert(e);
                            }
                        }
                    }
                })?;
                if let Some(e) = bad_device.take() {
                    return Err(e.into());
                }
            }
            (None, rows, found)
        }
    };
    let heatmap = judge.heatmap(&HeatmapOptions {
        max_bands: 24,
        max_columns: 48,
        title: Some(design.name.to_owned()),
        ..HeatmapOptions::default()
    });
    Ok(Outcome {
        name: design.name,
        report: judge.report(),
        hotspot: judge.hotspot(),
        device_range_reads: reads,
        device_rows_read: rows_read,
        device_read_exact: found == wanted,
        heatmap,
    })
}

/// The comparison table.
#[must_use]
pub(crate) fn comparison(outcomes: &[Outcome], day: usize) -> String {
    let mut s = format!(
        "{:<27} {:>7} {:>5} {:>7} {:>8} {:>8} {:>10} {:>11}  {}\n",
        "design",
        "hottest",
        "parts",
        "written",
        "hot part",
        "max/mean",
        "efficiency",
        "unsplittable",
        "DeviceID 15..100 read"
    );
    for o in outcomes {
        let r = &o.report;
        let read = match o.device_range_reads {
            Some(n) => format!("{n} range read(s), {} rows", o.device_rows_read),
            None => format!("full scan of {} rows", o.device_rows_read),
        };
        s.push_str(&format!(
            "{:<27} {:>6.1}% {:>5} {:>7} {:>7.1}% {:>8.2} {:>9.0}% {:>11}  {read}{}\n",
            o.name,
            o.hotspot.hottest_share * 100.0,
            r.partitions,
            r.partitions_with_writes,
            r.hottest_share * 100.0,
            r.max_over_mean,
            r.capacity(OPS_PER_TICK).efficiency * 100.0,
            r.hot_key_values.len(),
            if o.device_read_exact {
                ""
            } else {
                " (WRONG ROWS)"
            },
        ));
    }
    s.push_str(&format!(
        "\n{day} purchases in one day; a partition splits above 96 KB or 80 operations per one-minute window;\n\
         hottest = the share of each window's writes in its busiest key range, the ranges being the partitions at the window's start\n\
         (a tail hotspot counts as one however often the tail splits); hot part = the busiest single partition's share;\n\
         written = partitions that received writes; efficiency = capacity model at {OPS_PER_TICK} ops/partition/window;\n\
         unsplittable = partition-key values whose load no split could spread.\n"
    ));
    s
}

/// The cargo target directory in use: `CARGO_TARGET_DIR` when set, else the directory this
/// program was built into (`<target>/<profile>/examples/student_cards`).
fn target_dir() -> std::path::PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return dir.into();
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.parent()?.to_path_buf()))
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
}

fn main() -> Result<(), Box<dyn Error>> {
    let day = generate_day(100_000, 7);
    let mut outcomes = Vec::new();
    for design in designs() {
        outcomes.push(run_design(&design, &day)?);
    }
    println!("{}", comparison(&outcomes, day.len()));

    let dir = target_dir().join("student_cards");
    std::fs::create_dir_all(&dir)?;
    for o in &outcomes {
        let heatmap = &o.heatmap;
        let file = dir.join(format!(
            "{}.svg",
            o.name.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
        ));
        std::fs::write(&file, heatmap.to_svg(1000, 560)?)?;
        if matches!(o.name, "OrderNumber first" | "MD5(OrderNumber) prefix") {
            println!(
                "Write heatmap, {} (key bands top to bottom, time left to right):",
                o.name
            );
            println!("{}", heatmap.to_text());
        }
    }
    println!("SVG heatmaps of every design: {}", dir.display());
    Ok(())
}
