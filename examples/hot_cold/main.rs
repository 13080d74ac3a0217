//! Hot and cold tables: a year of seeded student-card purchases written into monthly tables,
//! each with its own reserved read and write capacity (rolled on the clock: the next month's
//! table created a day ahead, a finished month lowered, months past a quarter moved to a history
//! table), against one table for everything, reserved for the busiest month all year.
//! Then the layout changes on the live table: a bucket count from 16 to 64 (`rekey.rs`).
//!
//! ```text
//! cargo run --release --example hot_cold
//! ```
//!
//! The key is the practices' recommended student-card key (CardID first, then the terminal and
//! its order number: `examples/student_cards.rs`), the same in every month; a month is a period
//! of a [`Timeline`], which places each purchase in its month's table. Capacity is in Tablestore's
//! capacity units (CU): one per operation of up to 4 KB; reserved capacity is CU per second,
//! reserved over the table's life.
//!
//! The volume is a city's card network, not a campus's: each simulated purchase stands for
//! [`SCALE`] purchases ([`Instance::load_scale`]), so a term day is a million purchases and the
//! busiest hour needs far more than the 1 CU/s a campus would. Reservations come from the model
//! too: last year's traffic (another seed, the same calendar) is replayed into one table with
//! nothing reserved, and [`TableUsage::busiest`] reads off each month's busiest hour. Each
//! monthly table is reserved for its own month's; the single table for the busiest month's, all
//! year, since a shared table cannot be lowered for a quiet month without starving the busy one.
//! Finished months and history keep a low read floor; what passes a reservation (a month's
//! reads just after it was lowered, the moves into history) is served on demand ("over").
//!
//! At the end, one card's purchases of the whole year are read across the history table and
//! the live monthly tables (`scan_timeline`, merged in typed order) and compared with the same
//! read of the single table.

mod rekey;

use std::error::Error;
use std::num::NonZeroU64;
use std::ops::Bound::Unbounded;
use std::ops::ControlFlow;

use pk_codec::schedule::{Every, Schedule};
use pk_codec::store::{RangeStore, scan_ranges, scan_timeline};
use pk_codec::table::{
    Capacity, Instance, ManualClock, PeriodTables, RollPolicy, Schema, Table, TableOptions,
    TableUsage, usage_table,
};
use pk_codec::timeline::{Period, Timeline};
use pk_codec::{Layout, Value};

/// 2026-01-01T00:00:00Z, ms.
const YEAR_START: i64 = 1_767_225_600_000;
/// 2025-01-01T00:00:00Z, ms: last year, whose traffic sets the reservations.
const LAST_YEAR_START: i64 = 1_735_689_600_000;
const DAY_MS: i64 = 86_400_000;
const HOUR_MS: i64 = 3_600_000;
/// 2025 and 2026 alike.
const DAYS_IN_MONTH: [i64; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/// Purchases a term day sees in the simulation; the months' factors scale it.
const TERM_DAY: u64 = 2_000;
/// Each month's share of a term day's purchases: exams in January, holidays in July and August.
const MONTH_FACTOR: [f64; 12] = [0.6, 1.0, 1.0, 1.0, 1.0, 0.8, 0.15, 0.1, 1.0, 1.0, 1.0, 0.7];
/// The purchases of the city's card network each simulated purchase stands for.
const SCALE: NonZeroU64 = NonZeroU64::new(500).expect("not 0");
/// A purchase looks up this many earlier purchases of the card (its recent history on the
/// terminal's screen); one in `OLD_READ_EVERY` purchases also reads one of months ago.
const RECENT_READS: u64 = 2;
const OLD_READ_EVERY: u64 = 50;
/// A finished month's table and the history table keep this much reserved: a low read floor
/// for the lookups of old purchases, nothing for writes.
const COLD: Capacity = Capacity::new(1, 0);

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

/// The months' starts of the year from `year_start`, and the year's end.
fn month_starts(year_start: i64) -> (Vec<i64>, i64) {
    let mut start = year_start;
    let starts = DAYS_IN_MONTH
        .iter()
        .map(|d| {
            let s = start;
            start += d * DAY_MS;
            s
        })
        .collect();
    (starts, start)
}

/// A year of purchases from `year_start` in time order: 20,000 cards, 600 terminals, busier at
/// lunch, order numbers increasing over the year.
fn generate_year(year_start: i64, seed: u64) -> Vec<Purchase> {
    let mut rng = Rng(seed);
    let cards: Vec<u32> = (0..20_000)
        .map(|_| 100_000 + rng.below(900_000) as u32)
        .collect();
    let mut year = Vec::new();
    for (m, start) in month_starts(year_start).0.into_iter().enumerate() {
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

type Res<T = ()> = Result<T, Box<dyn Error>>;

/// A year's traffic, in time order: for each purchase, `write` with it, then `read` with each
/// earlier purchase it looks up (recent ones of the last days, and now and then one of months
/// ago).
fn traffic(
    year: &[Purchase],
    mut write: impl FnMut(&Purchase) -> Res,
    mut read: impl FnMut(&Purchase) -> Res,
) -> Res {
    let mut rng = Rng(7);
    for (i, p) in year.iter().enumerate() {
        write(p)?;
        for _ in 0..RECENT_READS {
            read(&year[i.saturating_sub(1 + rng.below(5_000) as usize)])?;
        }
        if rng.below(OLD_READ_EVERY) == 0 {
            read(&year[rng.below(i as u64 + 1) as usize])?;
        }
    }
    Ok(())
}

/// Every month's needs: last year's traffic replayed into one table with nothing reserved, each
/// month's busiest hour read off its usage.
fn last_years_needs(
    layout: &Layout,
    schema: &Schema,
    options: &TableOptions,
) -> Res<Vec<Capacity>> {
    let year = generate_year(LAST_YEAR_START, 2025);
    let clock = ManualClock::new(LAST_YEAR_START);
    let mut instance = Instance::new(clock.clone()).load_scale(SCALE);
    let table = instance.create_table(
        "cards_2025",
        schema.clone(),
        options.clone(),
        Capacity::default(),
    )?;
    let (mut key, mut read_key) = (String::new(), String::new());
    traffic(
        &year,
        |p| {
            clock.set(p.ts);
            key.clear();
            layout.encode_into(&p.values(), &mut key)?;
            Ok(table.put(key.as_str(), vec![]).map(drop)?)
        },
        |q| {
            read_key.clear();
            layout.encode_into(&q.values(), &mut read_key)?;
            Ok(table
                .get(read_key.as_str(), &Default::default())
                .map(drop)?)
        },
    )?;
    let usage = instance.usage().remove(0);
    let (starts, end) = month_starts(LAST_YEAR_START);
    Ok((0..12)
        .map(|m| usage.busiest(starts[m], starts.get(m + 1).copied().unwrap_or(end)))
        .collect())
}

fn main() -> Res {
    let started = std::time::Instant::now();
    let layout: Layout = KEY.parse()?;
    let (starts, year_end) = month_starts(YEAR_START);
    // A table a month, named cards_2026_01 to cards_2026_12.
    let months = Schedule::calendar(Every::Month, "cards", (2026, 1, 1), 12)?;
    assert!(
        months
            .periods()
            .iter()
            .map(|p| p.1)
            .eq(starts.iter().copied())
    );
    let names: Vec<String> = months.periods().iter().map(|p| p.0.clone()).collect();
    let options = TableOptions::default().load_window_ms(HOUR_MS);
    let schema = Schema::single_string("pk")?;
    let needs = last_years_needs(&layout, &schema, &options)?;
    let year = generate_year(YEAR_START, 2026);

    // The design over time: one table per month, the same key in each.
    let timeline = Timeline::from_schedule(&months, &layout)?;

    // Hot and cold: monthly tables rolled on the clock, each month reserved for its own needs.
    let clock = ManualClock::new(YEAR_START - DAY_MS);
    let policy = RollPolicy {
        lead_ms: DAY_MS,
        hot: COLD,
        cold: COLD,
        keep_periods: 3,
        history: Some(("cards_history".into(), COLD)),
    };
    let mut monthly = PeriodTables::new(
        Instance::new(clock.clone()).load_scale(SCALE),
        months.into_periods(),
        schema.clone(),
        options.clone(),
        policy,
    )?;
    for (name, need) in names.iter().zip(&needs) {
        monthly.set_hot_capacity(name, *need)?;
    }
    // One table for everything, reserved all year for the busiest month's needs.
    let busiest = needs.iter().fold(Capacity::default(), |b, n| {
        Capacity::new(b.read.max(n.read), b.write.max(n.write))
    });
    let mut single = Instance::new(clock.clone()).load_scale(SCALE);
    single.create_table("cards_all", schema, options, busiest)?;

    let mut next_roll = YEAR_START - DAY_MS;
    let (mut archived, mut key) = (0u64, String::new());
    let all = single.table("cards_all").ok_or("no single table")?;
    let monthly = std::cell::RefCell::new(monthly);
    traffic(
        &year,
        |p| {
            let mut tables = monthly.borrow_mut();
            while next_roll <= p.ts {
                clock.set(next_roll);
                let roll = tables.roll()?;
                archived += roll.archived.iter().map(|a| a.1).sum::<u64>();
                if !roll.deferred.is_empty() {
                    return Err(format!("a roll deferred {:?}", roll.deferred).into());
                }
                next_roll += DAY_MS;
            }
            clock.set(p.ts);
            let placed = timeline.encode(p.ts, &p.values())?;
            // A text layout's key: its UTF-8 bytes, a string column's value.
            let key = std::str::from_utf8(&placed.key)?;
            tables.table_at(p.ts)?.put(key, vec![])?;
            all.put(key, vec![])?;
            Ok(())
        },
        |q| {
            // From the table that holds the purchase now.
            key.clear();
            layout.encode_into(&q.values(), &mut key)?;
            let tables = monthly.borrow();
            tables
                .table_at(q.ts)?
                .get(key.as_str(), &Default::default())?;
            all.get(key.as_str(), &Default::default())?;
            Ok(())
        },
    )?;
    let mut monthly = monthly.into_inner();
    clock.set(year_end);
    monthly.roll()?;

    let scale = SCALE.get();
    println!(
        "{} purchases in 2026 ({} to {} a day), each standing for {scale} of a city's card \
         network: {} purchases; {} rows ({} simulated) moved to history; simulated with last \
         year's in {:.1} s\n",
        year.len(),
        (TERM_DAY as f64 * 0.1) as u64,
        TERM_DAY,
        year.len() as u64 * scale,
        archived * scale,
        archived,
        started.elapsed().as_secs_f64()
    );
    let usage = monthly.instance().usage();
    let hot: Vec<String> = needs
        .iter()
        .enumerate()
        .map(|(m, c)| format!("{:02} {}/{}", m + 1, c.read, c.write))
        .collect();
    println!(
        "Each month's busiest hour last year, reserved while it is hot (read/write CU/s): {}\n",
        hot.join(", ")
    );
    println!(
        "Monthly tables (hot: each month's busiest hour last year; cold and history: {COLD}), \
         CU over the year:"
    );
    println!("{}", usage_table(&usage));
    let single_usage = single.usage();
    println!("One table for everything ({busiest} all year: the busiest month's):");
    println!("{}", usage_table(&single_usage));
    let sum = |u: &[TableUsage], f: fn(&TableUsage) -> u64| u.iter().map(f).sum::<u64>();
    let reserved = |u: &TableUsage| u.read.reserved + u.write.reserved;
    let used = |u: &TableUsage| u.read.consumed + u.write.consumed;
    let over = |u: &TableUsage| u.read.over + u.write.over;
    let wasted = |u: &TableUsage| u.read.wasted + u.write.wasted;
    let cu_hours = |units: u64| units / 3_600;
    let (m_res, s_res) = (sum(&usage, reserved), sum(&single_usage, reserved));
    // The share of what was reserved that operations used (1 - wasted / reserved).
    let used_share =
        |u: &[TableUsage], r: u64| (1.0 - sum(u, wasted) as f64 / r.max(1) as f64) * 100.0;
    println!(
        "Reserved over the year: monthly {} CU-hours against one table {} ({:.1}% less); \
         reserved capacity used {:.1}% against {:.1}%",
        cu_hours(m_res),
        cu_hours(s_res),
        (1.0 - m_res as f64 / s_res as f64) * 100.0,
        used_share(&usage, m_res),
        used_share(&single_usage, s_res),
    );
    println!(
        "Consumed: monthly {} CU against one table {}; on demand (over a reservation) {} against {}\n",
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
        &layout,
        &ranges,
        1000,
        None,
        |k, _| {
            one.push(layout.decode_bytes(k).expect("a key the layout wrote"));
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
    println!();
    rekey::run()
}
