//! Period tables with their own throughput (`table::periods`): the roll on a manual clock
//! (tables created ahead, lowered once over, the oldest moved to history, nothing lost), the
//! instance's refusals (a 65th table, a capacity change within 2 minutes, capacity out of
//! range, names), and the usage report's units against the load the tables served.

use pk_codec::table::{
    Attribute, CAPACITY_CHANGE_INTERVAL_MS, Capacity, Instance, MAX_TABLES, ManualClock,
    PeriodError, PeriodTables, RollPolicy, Schema, TableOptions, capacity_units, usage_table,
};

const DAY: i64 = 86_400_000;
const HOT: Capacity = Capacity::new(50, 100);
const COLD: Capacity = Capacity::new(5, 0);

fn schema() -> Schema {
    Schema::single_string("pk").unwrap()
}

fn options() -> TableOptions {
    TableOptions::default().load_window_ms(60_000)
}

fn policy(history: bool) -> RollPolicy {
    RollPolicy {
        lead_ms: 2 * DAY,
        hot: HOT,
        cold: COLD,
        keep_periods: 3,
        history: history.then(|| ("history".to_owned(), Capacity::new(2, 2))),
    }
}

/// Twelve 30-day periods from day 0.
fn months() -> Vec<(String, i64)> {
    (0..12)
        .map(|m| (format!("m{m:02}"), m * 30 * DAY))
        .collect()
}

/// Monthly tables in a new instance on `clock`, with a history table or without.
fn monthly(clock: &ManualClock, history: bool) -> PeriodTables {
    PeriodTables::new(
        Instance::new(clock.clone()),
        months(),
        schema(),
        options(),
        policy(history),
    )
    .unwrap()
}

#[test]
fn a_year_rolls_on_the_clock_and_loses_no_row() {
    let clock = ManualClock::new(0);
    let mut tables = monthly(&clock, true);
    let mut written = 0u64;
    let mut archived = 0u64;
    for day in 0..360 {
        clock.set(day * DAY);
        let roll = tables.roll().unwrap();
        assert!(roll.deferred.is_empty(), "day {day}: {roll:?}");
        archived += roll.archived.iter().map(|a| a.1).sum::<u64>();
        let month = day / 30;
        // The table of the next month is created 2 days before it starts.
        let expect_created: Vec<String> = match (day, day % 30) {
            (0, _) => vec!["history".into(), "m00".into()],
            (_, 28) if month < 11 => vec![format!("m{:02}", month + 1)],
            _ => vec![],
        };
        assert_eq!(roll.created, expect_created, "day {day}");
        if day % 30 == 0 && day > 0 {
            assert_eq!(roll.lowered, [format!("m{:02}", month - 1)], "day {day}");
            if month >= 3 {
                assert_eq!(roll.archived.len(), 1, "day {day}");
                assert_eq!(roll.archived[0].0, format!("m{:02}", month - 3));
            }
        }
        for i in 0..10 {
            let t = day * DAY + i * 1000;
            tables
                .table_at(t)
                .unwrap()
                .put(format!("{t:015}"), vec![Attribute::new("n", i)])
                .unwrap();
            written += 1;
        }
        let live = tables.instance().table_names();
        assert!(live.len() <= 5, "day {day}: {live:?}");
        for name in &live {
            let want = if *name == "history" {
                Capacity::new(2, 2)
            } else if *name == format!("m{month:02}") || *name == format!("m{:02}", month + 1) {
                HOT
            } else {
                COLD
            };
            assert_eq!(
                tables.instance().reserved(name),
                Some(want),
                "day {day}, {name}"
            );
        }
    }
    // Months 0 to 8 are in history; 9, 10 and 11 keep their tables. A row of an archived
    // month is found in history.
    let first = tables
        .table_at(0)
        .unwrap()
        .get("000000000000000", &Default::default())
        .unwrap();
    assert!(first.is_some());
    let instance = tables.instance();
    assert_eq!(instance.table_names(), ["history", "m09", "m10", "m11"]);
    let history = instance.table("history").unwrap().stored_rows() as u64;
    assert_eq!(history, archived);
    assert_eq!(history, 9 * 30 * 10);
    let live: u64 = ["m09", "m10", "m11"]
        .iter()
        .map(|n| instance.table(n).unwrap().stored_rows() as u64)
        .sum();
    assert_eq!(history + live, written);
}

#[test]
fn without_history_old_periods_are_dropped() {
    let clock = ManualClock::new(0);
    let mut tables = monthly(&clock, false);
    tables.roll().unwrap();
    tables
        .table_at(0)
        .unwrap()
        .put("a", vec![Attribute::new("n", 1)])
        .unwrap();
    clock.set(90 * DAY);
    let roll = tables.roll().unwrap();
    assert_eq!(roll.archived, [("m00".to_owned(), 0)]);
    assert_eq!(tables.instance().table_names(), ["m03"]);
    assert_eq!(
        tables.table_at(0).unwrap_err(),
        PeriodError::NoSuchTable { name: "m00".into() }
    );
    // m01 and m02 were never created: no roll ran in their time.
    assert!(matches!(
        tables.table_at(45 * DAY),
        Err(PeriodError::NoSuchTable { .. })
    ));
    assert!(matches!(
        tables.table_at(-1),
        Err(PeriodError::Schedule { .. })
    ));
}

#[test]
fn a_lowering_within_two_minutes_of_creation_is_deferred_to_the_next_roll() {
    let clock = ManualClock::new(0);
    let periods = vec![("a".to_owned(), 60_000), ("b".to_owned(), 120_000)];
    let mut p = policy(false);
    p.lead_ms = 60_000;
    let mut tables = PeriodTables::new(
        Instance::new(clock.clone()),
        periods,
        schema(),
        options(),
        p,
    )
    .unwrap();
    assert_eq!(tables.roll().unwrap().created, ["a"]);
    clock.set(120_000); // "a" ends exactly 2 minutes after its creation: the change is allowed.
    let roll = tables.roll().unwrap();
    assert_eq!(roll.lowered, ["a"]);
    assert_eq!(roll.created, ["b"]);

    let clock = ManualClock::new(0);
    let periods = vec![("a".to_owned(), 0), ("b".to_owned(), 60_000)];
    let mut tables = PeriodTables::new(
        Instance::new(clock.clone()),
        periods,
        schema(),
        options(),
        policy(false),
    )
    .unwrap();
    tables.roll().unwrap(); // creates "a" and "b" (b is within its lead)
    clock.set(60_000);
    let roll = tables.roll().unwrap();
    assert!(roll.lowered.is_empty());
    assert!(
        matches!(&roll.deferred[..], [PeriodError::CapacityChangeTooSoon { name, allowed_from_ms: 120_000, .. }] if name == "a")
    );
    assert_eq!(tables.instance().reserved("a"), Some(HOT));
    clock.set(120_000);
    assert_eq!(tables.roll().unwrap().lowered, ["a"]);
    assert_eq!(tables.instance().reserved("a"), Some(COLD));
}

#[test]
fn a_65th_table_is_refused() {
    let mut instance = Instance::new(ManualClock::new(0));
    for i in 0..MAX_TABLES {
        instance
            .create_table(&format!("t{i}"), schema(), options(), Capacity::default())
            .unwrap();
    }
    let err = instance
        .create_table("t64", schema(), options(), Capacity::default())
        .unwrap_err();
    assert_eq!(
        err,
        PeriodError::TooManyTables {
            name: "t64".into(),
            limit: 64
        }
    );
    assert!(
        err.to_string()
            .contains("at most 64 tables, indexes included"),
        "{err}"
    );
    // A deleted table frees its slot.
    instance.delete_table("t0").unwrap();
    instance
        .create_table("t64", schema(), options(), Capacity::default())
        .unwrap();

    // A roll that needs a 65th table says so.
    let clock = ManualClock::new(0);
    let mut full = Instance::new(clock.clone());
    for i in 0..MAX_TABLES - 1 {
        full.create_table(&format!("x{i}"), schema(), options(), Capacity::default())
            .unwrap();
    }
    let periods = vec![("a".to_owned(), 0), ("b".to_owned(), 10 * DAY)];
    let mut tables = PeriodTables::new(full, periods, schema(), options(), policy(false)).unwrap();
    tables.roll().unwrap();
    clock.set(8 * DAY);
    assert!(
        matches!(tables.roll().unwrap_err(), PeriodError::TooManyTables { name, .. } if name == "b")
    );
}

#[test]
fn a_capacity_change_within_two_minutes_of_the_last_is_refused() {
    let clock = ManualClock::new(1_000);
    let mut instance = Instance::new(clock.clone());
    instance
        .create_table("t", schema(), options(), HOT)
        .unwrap();
    clock.set(1_000 + CAPACITY_CHANGE_INTERVAL_MS - 1);
    let err = instance.set_capacity("t", COLD).unwrap_err();
    assert_eq!(
        err,
        PeriodError::CapacityChangeTooSoon {
            name: "t".into(),
            last_change_ms: 1_000,
            allowed_from_ms: 121_000,
            now_ms: 120_999
        }
    );
    assert!(
        err.to_string().contains("at most once every 2 minutes"),
        "{err}"
    );
    clock.advance(1);
    instance.set_capacity("t", COLD).unwrap();
    clock.advance(CAPACITY_CHANGE_INTERVAL_MS - 1);
    assert!(matches!(
        instance.set_capacity("t", HOT),
        Err(PeriodError::CapacityChangeTooSoon {
            last_change_ms: 121_000,
            ..
        })
    ));
    assert_eq!(instance.reserved("t"), Some(COLD));
}

#[test]
fn names_and_capacities_out_of_the_rules_are_refused() {
    let mut instance = Instance::new(ManualClock::new(0));
    let err = instance
        .create_table("t", schema(), options(), Capacity::new(100_001, 0))
        .unwrap_err();
    assert!(err.to_string().contains("0 to 100000 CU"), "{err}");
    instance
        .create_table("t", schema(), options(), HOT)
        .unwrap();
    assert_eq!(
        instance
            .create_table("t", schema(), options(), HOT)
            .unwrap_err(),
        PeriodError::TableExists { name: "t".into() }
    );
    assert_eq!(
        instance.set_capacity("u", HOT).unwrap_err(),
        PeriodError::NoSuchTable { name: "u".into() }
    );
    assert_eq!(
        instance.delete_table("u").unwrap_err(),
        PeriodError::NoSuchTable { name: "u".into() }
    );
    let bad_options = TableOptions::default().load_window_ms(0);
    assert!(matches!(
        instance.create_table("v", schema(), bad_options, HOT),
        Err(PeriodError::Table(_))
    ));

    let new = |periods: Vec<(String, i64)>, policy: RollPolicy| {
        PeriodTables::new(
            Instance::new(ManualClock::new(0)),
            periods,
            schema(),
            options(),
            policy,
        )
        .unwrap_err()
        .to_string()
    };
    assert!(new(vec![], policy(true)).contains("no periods"));
    assert!(
        new(vec![("a".into(), 5), ("b".into(), 5)], policy(true)).contains("not after period 0")
    );
    assert!(
        new(vec![("a".into(), 5), ("a".into(), 9)], policy(true)).contains("\"a\" is used twice")
    );
    assert!(new(vec![("history".into(), 5)], policy(true)).contains("used twice"));
    let mut keep_none = policy(true);
    keep_none.keep_periods = 0;
    assert!(new(vec![("a".into(), 5)], keep_none).contains("keep_periods is 0"));
    let mut late = policy(true);
    late.lead_ms = -1;
    assert!(new(vec![("a".into(), 5)], late).contains("lead_ms is -1"));
}

#[test]
fn usage_counts_units_consumed_over_and_wasted_per_window() {
    let clock = ManualClock::new(0);
    let mut instance = Instance::new(clock.clone());
    let options = TableOptions::default().load_window_ms(1_000);
    let table = instance
        .create_table("t", schema(), options, Capacity::new(4, 10))
        .unwrap();
    // Window 0: 15 small writes (5 over the 10 reserved); window 2: 3 writes, one of 10 KB.
    for i in 0..15 {
        table
            .put(format!("k{i:02}"), vec![Attribute::new("n", i)])
            .unwrap();
    }
    clock.set(2_000);
    table.put("a", vec![Attribute::new("n", 1)]).unwrap();
    table.put("b", vec![Attribute::new("n", 1)]).unwrap();
    table
        .put("c", vec![Attribute::new("blob", vec![7u8; 10_000])])
        .unwrap();
    let r = table.get("k03", &Default::default()).unwrap();
    assert!(r.is_some());
    clock.set(4_000);
    let usage = &instance.usage()[0];
    assert_eq!(usage.windows.len(), 2);
    assert_eq!(
        (
            usage.windows[0].write_consumed,
            usage.windows[0].write_reserved
        ),
        (15, 10)
    );
    let w2 = usage.windows[1];
    let bytes: u64 = instance
        .table("t")
        .unwrap()
        .load_records()
        .iter()
        .filter(|r| r.window == 2)
        .map(|r| r.load.bytes_written)
        .sum();
    assert!(bytes > 10_000);
    assert_eq!(w2.write_consumed, capacity_units(3, bytes));
    assert_eq!(w2.write_consumed, 3);
    assert_eq!((w2.read_consumed, w2.read_reserved), (1, 4));
    assert_eq!(usage.writes, 18);
    assert_eq!(usage.reads, 1);
    // 4 seconds at 10 write CU/s; 5 units over in window 0; the rest within.
    assert_eq!(usage.write.reserved, 40);
    assert_eq!(usage.write.consumed, 18);
    assert_eq!(usage.write.over, 5);
    assert_eq!(usage.write.wasted, 40 - 13);
    assert!((usage.write.utilisation - 18.0 / 40.0).abs() < 1e-12);
    assert_eq!((usage.read.reserved, usage.read.wasted), (16, 15));
    let text = usage_table(&instance.usage());
    assert!(
        text.lines()
            .any(|l| l.starts_with("t ") && l.contains("4/10")),
        "{text}"
    );
}

#[test]
fn hot_cold_tables_consume_what_one_table_does_and_reserve_by_their_schedule() {
    // The same writes, a day at a time over 120 days: into monthly tables, and into one table
    // reserved at the hot capacity all the time.
    let clock = ManualClock::new(0);
    let mut periods = monthly(&clock, false);
    let mut single = Instance::new(clock.clone());
    single
        .create_table("all", schema(), options(), HOT)
        .unwrap();
    for day in 0..120 {
        clock.set(day * DAY);
        periods.roll().unwrap();
        for i in 0..5 {
            let key = format!("{:015}", day * DAY + i);
            periods
                .table_at(day * DAY)
                .unwrap()
                .put(key.as_str(), vec![Attribute::new("n", i)])
                .unwrap();
            single
                .table("all")
                .unwrap()
                .put(key.as_str(), vec![Attribute::new("n", i)])
                .unwrap();
        }
    }
    let (p, s) = (periods.instance().usage(), single.usage());
    let consumed =
        |usage: &[pk_codec::table::TableUsage]| usage.iter().map(|u| u.write.consumed).sum::<u64>();
    assert_eq!(consumed(&p), 600);
    assert_eq!(consumed(&s), 600);
    // One table: 119 days at the hot write capacity. Monthly tables: each hot from 2 days
    // before its month to the month's end (m00 30 days, m01 and m02 32, m03 31 so far, m04 1),
    // cold (no write capacity) after.
    let units = |days: i64| (HOT.write as i64 * days * 86_400) as u64;
    assert_eq!(s[0].write.reserved, units(119));
    let reserved: Vec<(&str, u64)> = p
        .iter()
        .map(|u| (u.name.as_str(), u.write.reserved))
        .collect();
    assert_eq!(
        reserved,
        [
            ("m00", units(30)),
            ("m01", units(32)),
            ("m02", units(32)),
            ("m03", units(31)),
            ("m04", units(1))
        ]
    );
}

#[test]
fn a_period_planned_with_its_own_hot_capacity_is_created_with_it() {
    let clock = ManualClock::new(0);
    let mut tables = monthly(&clock, false);
    let summer = Capacity::new(3, 7);
    tables.set_hot_capacity("m01", summer).unwrap();
    tables.roll().unwrap();
    // The current period changes now, under the 2-minute rule.
    assert!(matches!(
        tables.set_hot_capacity("m00", summer),
        Err(PeriodError::CapacityChangeTooSoon { .. })
    ));
    clock.set(CAPACITY_CHANGE_INTERVAL_MS);
    tables.set_hot_capacity("m00", summer).unwrap();
    assert_eq!(tables.instance().reserved("m00"), Some(summer));
    clock.set(28 * DAY);
    tables.roll().unwrap();
    assert_eq!(tables.instance().reserved("m01"), Some(summer));
    clock.set(30 * DAY);
    tables.roll().unwrap();
    let err = tables.set_hot_capacity("m00", HOT).unwrap_err();
    assert!(err.to_string().contains("\"m00\" is over"), "{err}");
    assert_eq!(
        tables.set_hot_capacity("x", HOT).unwrap_err(),
        PeriodError::NoSuchTable { name: "x".into() }
    );
    assert!(matches!(
        tables.set_hot_capacity("m05", Capacity::new(0, 100_001)),
        Err(PeriodError::CapacityOutOfRange { .. })
    ));
}

#[test]
fn a_load_scale_multiplies_what_was_consumed_and_leaves_the_reservation() {
    // The same operations into an instance counting each as one and as 250.
    let run = |scale: u64| {
        let clock = ManualClock::new(0);
        let mut instance =
            Instance::new(clock.clone()).load_scale(std::num::NonZeroU64::new(scale).unwrap());
        let table = instance
            .create_table("t", schema(), options(), Capacity::new(100, 300))
            .unwrap();
        for i in 0..3 {
            table
                .put(format!("k{i}").as_str(), vec![Attribute::new("n", i)])
                .unwrap();
        }
        table.get("k1", &Default::default()).unwrap();
        clock.set(60_000);
        instance.usage().remove(0)
    };
    let (one, many) = (run(1), run(250));
    assert_eq!((one.writes, one.reads), (3, 1));
    assert_eq!((many.writes, many.reads), (750, 250));
    assert_eq!(many.write.consumed, 250 * one.write.consumed);
    assert_eq!(many.read.consumed, 250 * one.read.consumed);
    // 60 s at 100 read / 300 write CU/s either way: the scale is no reservation.
    assert_eq!((one.read.reserved, one.write.reserved), (6_000, 18_000));
    assert_eq!(
        (many.read.reserved, many.write.reserved),
        (one.read.reserved, one.write.reserved)
    );
    assert_eq!((one.write.over, many.write.over), (0, 0));
    assert_eq!(many.write.wasted, 18_000 - 750);
    // The largest scale saturates: no overflow, no panic.
    let clock = ManualClock::new(0);
    let mut instance = Instance::new(clock).load_scale(std::num::NonZeroU64::MAX);
    let table = instance
        .create_table("t", schema(), options(), Capacity::default())
        .unwrap();
    table.put("a", vec![Attribute::new("n", 1)]).unwrap();
    table.put("b", vec![Attribute::new("n", 1)]).unwrap();
    let usage = &instance.usage()[0];
    assert_eq!((usage.writes, usage.write.consumed), (u64::MAX, u64::MAX));
}

#[test]
fn a_table_reserved_at_its_measured_busiest_window_goes_over_in_none() {
    // Windows of 1.5 s: units per second round up, never down.
    let options = TableOptions::default().load_window_ms(1_500);
    let scale = std::num::NonZeroU64::new(7).unwrap();
    // Writes per window 0..6 in a skewed pattern, reads of every other write.
    let load = [3u64, 0, 11, 1, 5, 2];
    let replay = |reserved: Capacity| {
        let clock = ManualClock::new(0);
        let mut instance = Instance::new(clock.clone()).load_scale(scale);
        let table = instance
            .create_table("t", schema(), options.clone(), reserved)
            .unwrap();
        for (w, n) in load.iter().enumerate() {
            clock.set(w as i64 * 1_500);
            for i in 0..*n {
                let key = format!("{w}-{i}");
                table
                    .put(key.as_str(), vec![Attribute::new("n", 1)])
                    .unwrap();
                if i % 2 == 0 {
                    table.get(key.as_str(), &Default::default()).unwrap();
                }
            }
        }
        clock.set(load.len() as i64 * 1_500);
        instance.usage().remove(0)
    };
    let measured = replay(Capacity::default());
    assert_eq!(measured.window_ms, 1_500);
    // The busiest window: 11 writes × 7 = 77 units in 1.5 s, 51.3 CU/s, so 52; 6 reads × 7.
    let busiest = measured.busiest(0, i64::MAX);
    assert_eq!(busiest, Capacity::new(28, 52));
    // A span's busiest is of its own windows only; a span with none is 0.
    assert_eq!(measured.busiest(3_000, 4_500), busiest);
    assert_eq!(measured.busiest(4_500, 9_000), Capacity::new(14, 24));
    assert_eq!(measured.busiest(1_500, 3_000), Capacity::default());
    let reserved = replay(busiest);
    assert_eq!((reserved.read.over, reserved.write.over), (0, 0));
    // One unit less per second and the busiest window goes over.
    let short = replay(Capacity::new(busiest.read - 1, busiest.write - 1));
    assert!(short.read.over > 0 && short.write.over > 0, "{short:?}");
}
