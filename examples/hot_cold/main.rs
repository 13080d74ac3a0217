//! Hot and cold tables: a year of seeded student-card purchases written into monthly tables,
//! each with its own reserved read and write capacity (rolled on the clock: the next month's
//! table created a day ahead, a finished month lowered, months past a quarter moved to a history
//! table), against one table for everything, reserved for the busiest month all year.
//!
//! ```text
//! cargo run --release --example hot_cold
//! ```
//!
//! The key is the practices' recommended student-card key (CardID first, then the terminal and
//! its order number: `examples/student_cards.rs`), the same in every month; a month is a period
//! of a [`Timeline`], which places each purchase in its month's table. Capacity is in Tablestore's
//! capacity units (CU): one per operation of up to 4 KB; reserved capacity is CU per second,
//! reserved over the table's life. Each month's table is reserved for its own month's busiest
//! hour (at least 1 CU/s, the floor, which a campus's volume never passes); the single table for
//! the busiest month's. Reads of past months go to tables lowered to 0 CU/s: they are served on
//! demand ("over"), as are the moves into history (read from the old month, written to history).
//!
//! At the end, one card's purchases of the whole year are read across the history table and
//! the live monthly tables (`scan_timeline`, merged in typed order) and compared with the same
//! read of the single table.

use std::error::Error;
use std::ops::Bound::Unbounded;
use std::ops::ControlFlow;

use pk_codec::store::{RangeStore, scan_ranges, scan_timeline};
use pk_codec::table::{
    Capacity, Instance, ManualClock, PeriodTables, RollPolicy, Schema, Table, TableOptions,
    usage_table,
};
use pk_codec::timeline::{Period, Timeline};
use pk_codec::{Layout, Value};

/// 2026-01-01T00:00:00Z, ms.
const YEAR_START: i64 = 1_767_225_600_000;
const DAY_MS: i64 = 86_400_000;
const HOUR_MS: i64 = 3_600_000;
const DAYS_IN_MONTH: [i64; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/// Purchases a term day sees; the months' factors scale it.
const TERM_DAY: u64 = 2_000;
/// Each month's share of a term day's purchases: exams in January, holidays in July and August.
const MONTH_FACTOR: [f64; 12] = [0.6, 1.0, 1.0, 1.0, 1.0, 0.8, 0.15, 0.1, 1.0, 1.0, 1.0, 0.7];
/// A purchase looks up this many earlier purchases of the card (its recent history on the
/// terminal's screen); one in `OLD_READ_EVERY` purchases also reads one of months ago.
const RECENT_READS: u64 = 2;
const OLD_READ_EVERY: u64 = 50;

/// The student-card key: CardID first, then the rest of the row's key (`student_cards.rs`).
const KEY: &str = "card_id: u32 width=6; device_id: u32 width=4; order_number: u64 width=8";

/// A small, seeded generator (a 64-bit LCG's high bits).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

struct Purchase {
    card_id: u32,
    device_id: u32,
    order_number: u64,
    ts: i64,
}

impl Purchase {
    fn values(&self) -> [Value; 3] {
        [
            Value::from(self.card_id),
            Value::from(self.device_id),
            Value::from(self.order_number),
        ]
    }
}

fn month_starts() -> Vec<i64> {
    let mut start = YEAR_START;
    DAYS_IN_MONTH
        .iter()
        .map(|d| {
            let s = start;
            start += d * DAY_MS;
            s
        })
        .collect()
}

/// A year of purchases in time order: 20,000 cards, 600 terminals, busier at lunch, order
/// numbers increasing over the year.
fn generate_year(seed: u64) -> Vec<Purchase> {
    let mut rng = Rng(seed);
    let cards: Vec<u32> = (0..20_000)
        .map(|_| 100_000 + rng.below(900_000) as u32)
        .collect();
    let mut year = Vec::new();
    for (m, start) in month_starts().into_iter().enumerate() {
        let per_day = (TERM_DAY as f64 * MONTH_FACTOR[m]) as u64;
        for day in 0..DAYS_IN_MONTH[m] {
            let midnight = start + day * DAY_MS;
            for _ in 0..per_day {
                // From 7:00 to 21:00, a third of them at lunch (11:30 to 13:30).
                let at = if rng.below(3) == 0 {
                    41_400_000 + rng.below(7_200_000)
                } else {
                    25_200_000 + rng.below(50_400_000)
                };
                year.push(Purchase {
                    card_id: cards[rng.below(cards.len() as u64) as usize],
                    device_id: 1 + rng.below(600) as u32,
                    order_number: 0,
                    ts: midnight + at as i64,
                });
            }
        }
    }
    year.sort_by_key(|p| p.ts);
    for (i, p) in year.iter_mut().enumerate() {
        p.order_number = 200_001 + i as u64;
    }
    year
}

/// The capacity a month needs: its busiest hour's purchases per second, rounded up (at least 1
/// CU/s) for writes, times the lookups each purchase makes for reads.
fn needs(year: &[Purchase], from: i64, to: i64) -> Capacity {
    let mut per_hour = std::collections::HashMap::<i64, u64>::new();
    for p in year.iter().filter(|p| (from..to).contains(&p.ts)) {
        *per_hour.entry(p.ts / HOUR_MS).or_default() += 1;
    }
    let peak = per_hour.values().copied().max().unwrap_or(0);
    let write = peak.div_ceil(3_600).max(1);
    Capacity::new(write * RECENT_READS, write)
}

fn main() -> Result<(), Box<dyn Error>> {
    let layout: Layout = KEY.parse()?;
    let starts = month_starts();
    let year_end = starts[11] + DAYS_IN_MONTH[11] * DAY_MS;
    let names: Vec<String> = (1..=12).map(|m| format!("cards_2026_{m:02}")).collect();
    let year = generate_year(2026);

    // The design over time: one table per month, the same key in each.
    let timeline = Timeline::new(
        starts
            .iter()
            .zip(&names)
            .map(|(s, n)| Period::new(*s, n.as_str(), layout.clone()))
            .collect(),
    )?;

    // Hot and cold: monthly tables rolled on the clock, each month reserved for its own needs.
    let clock = ManualClock::new(YEAR_START - DAY_MS);
    let options = TableOptions::default().load_window_ms(HOUR_MS);
    let schema = Schema::single_string("pk")?;
    let policy = RollPolicy {
        lead_ms: DAY_MS,
        hot: Capacity::new(1, 1),
        cold: Capacity::new(0, 0),
        keep_periods: 3,
        history: Some(("cards_history".into(), Capacity::new(0, 0))),
    };
    let periods = names.iter().cloned().zip(starts.iter().copied()).collect();
    let mut monthly = PeriodTables::new(
        Instance::new(clock.clone()),
        periods,
        schema.clone(),
        options.clone(),
        policy,
    )?;
    let mut busiest = Capacity::default();
    for (m, name) in names.iter().enumerate() {
        let end = starts.get(m + 1).copied().unwrap_or(year_end);
        let need = needs(&year, starts[m], end);
        busiest = Capacity::new(busiest.read.max(need.read), busiest.write.max(need.write));
        monthly.set_hot_capacity(name, need)?;
    }
    // One table for everything, reserved for the busiest month all year.
    let mut single = Instance::new(clock.clone());
    single.create_table("cards_all", schema, options, busiest)?;

    let started = std::time::Instant::now();
    let mut next_roll = YEAR_START - DAY_MS;
    let mut rng = Rng(7);
    let (mut archived, mut key) = (0u64, String::new());
    for (i, p) in year.iter().enumerate() {
        while next_roll <= p.ts {
            clock.set(next_roll);
            let roll = monthly.roll()?;
            archived += roll.archived.iter().map(|a| a.1).sum::<u64>();
            if !roll.deferred.is_empty() {
                return Err(format!("a roll deferred {:?}", roll.deferred).into());
            }
            next_roll += DAY_MS;
        }
        clock.set(p.ts);
        let placed = timeline.encode(p.ts, &p.values())?;
        let all = single.table("cards_all").ok_or("no single table")?;
        monthly.table_at(p.ts)?.put(placed.key.as_str(), vec![])?;
        all.put(placed.key.as_str(), vec![])?;
        // Reads: the card's recent purchases (earlier ones of the last days), and now and
        // then one of months ago, from the table that holds it now.
        let mut reads: Vec<usize> = (0..RECENT_READS)
            .map(|_| i.saturating_sub(1 + rng.below(5_000) as usize))
            .collect();
        if rng.below(OLD_READ_EVERY) == 0 {
            reads.push(rng.below(i as u64 + 1) as usize);
        }
        for j in reads {
            let q = &year[j];
            key.clear();
            layout.encode_into(&q.values(), &mut key)?;
            monthly
                .table_at(q.ts)?
                .get(key.as_str(), &Default::default())?;
            all.get(key.as_str(), &Default::default())?;
        }
    }
    clock.set(year_end);
    monthly.roll()?;

    println!(
        "{} purchases in 2026 ({} to {} a day), {} rows moved to history; simulated in {:.1} s\n",
        year.len(),
        (TERM_DAY as f64 * 0.1) as u64,
        TERM_DAY,
        archived,
        started.elapsed().as_secs_f64()
    );
    let usage = monthly.instance().usage();
    println!(
        "Monthly tables (hot: each month's busiest hour; cold and history: 0 CU/s), CU over the year:"
    );
    println!("{}", usage_table(&usage));
    let single_usage = single.usage();
    println!("One table for everything ({busiest} all year):");
    println!("{}", usage_table(&single_usage));
    let sum = |u: &[pk_codec::table::TableUsage], f: fn(&pk_codec::table::TableUsage) -> u64| {
        u.iter().map(f).sum::<u64>()
    };
    let reserved = |u: &pk_codec::table::TableUsage| u.read.reserved + u.write.reserved;
    let used = |u: &pk_codec::table::TableUsage| u.read.consumed + u.write.consumed;
    let over = |u: &pk_codec::table::TableUsage| u.read.over + u.write.over;
    println!(
        "Reserved CU: monthly {} against one table {} ({:+.1}%); consumed: {} against {} \
         ({} on demand against {})\n",
        sum(&usage, reserved),
        sum(&single_usage, reserved),
        (sum(&usage, reserved) as f64 / sum(&single_usage, reserved) as f64 - 1.0) * 100.0,
        sum(&usage, used),
        sum(&single_usage, used),
        sum(&usage, over),
        sum(&single_usage, over),
    );

    // A card's whole year, read across history and the live monthly tables, against the single
    // table: the same rows in the same order.
    let after_archive = Timeline::new(
        starts
            .iter()
            .zip(&names)
            .enumerate()
            .map(|(m, (s, n))| {
                let table = if m < 9 { "cards_history" } else { n.as_str() };
                Period::new(*s, table, layout.clone())
            })
            .collect(),
    )?;
    let card = [Value::from(year[year.len() / 2].card_id)];
    let visits = after_archive.ranges(YEAR_START..year_end, &card, Unbounded, Unbounded)?;
    let tables = monthly.instance();
    let mut across = Vec::new();
    let mut cursor = None;
    loop {
        cursor = scan_timeline(
            &after_archive,
            &visits,
            |t| tables.table(t),
            5,
            cursor.as_ref(),
            |row| {
                across.push(row.values.to_vec());
                if across.len() % 5 == 0 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            },
        )?;
        if cursor.is_none() {
            break;
        }
    }
    let all: &Table = single.table("cards_all").ok_or("no single table")?;
    let mut one = Vec::new();
    let ranges = layout.prefix_ranges(&card)?;
    scan_ranges(
        all as &dyn RangeStore,
        layout.shape().prefix(),
        &ranges,
        1000,
        None,
        |k, _| {
            one.push(layout.decode(k).expect("a key the layout wrote"));
            ControlFlow::Continue(())
        },
    )?;
    println!(
        "Card {}'s year: {} purchases read across {} tables in pages of 5, the same as one table's read: {}",
        card[0].as_u64().unwrap_or(0),
        across.len(),
        visits.len(),
        across == one
    );

    // ---- Changing the layout on the live table ------------------------------------------------
    // The re-keying part (a live bucket-count change 16 -> 64) lives in `rekey.rs` beside this
    // file: declare `mod rekey;` at the top and call it here.
    Ok(())
}
