//! Calendar schedules (`pk_codec::schedule`): a table a month or a day, in UTC, each period
//! starting at the first millisecond of its month or day and named for it, checked against
//! chrono over the whole range of dates; the one schedule serves the table model's
//! `PeriodTables` and a `Timeline` over any store (here redb, through `TypedTimeline`).

use std::ops::Bound::Unbounded;
use std::ops::ControlFlow;

use chrono::{Datelike, Months, NaiveDate, TimeDelta};
use pk_codec::schedule::{Every, Schedule};
use pk_codec::store::{RangeQuery, RangeStore, RedbDatabase, TypedTimeline};
use pk_codec::timeline::Timeline;
use pk_codec::{Layout, Value};
use proptest::prelude::*;

use crate::support::cases;

fn ms(date: NaiveDate) -> i64 {
    date.and_hms_opt(0, 0, 0)
        .unwrap()
        .and_utc()
        .timestamp_millis()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    #[test]
    fn calendar_periods_start_at_their_month_or_day_and_are_named_for_it(
        year in 0i64..=9998,
        month in 1u32..=12,
        day in 1u32..=31,
        count in 1usize..40,
        by_day in any::<bool>(),
    ) {
        let Some(first) = NaiveDate::from_ymd_opt(year as i32, month, day) else {
            // A date that does not exist is refused.
            prop_assert!(Schedule::calendar(Every::Day, "t", (year, month, day), count).is_err());
            return Ok(());
        };
        let every = if by_day { Every::Day } else { Every::Month };
        let schedule = Schedule::calendar(every, "t", (year, month, day), count).unwrap();
        prop_assert_eq!(schedule.periods().len(), count);
        for (i, (name, start)) in schedule.periods().iter().enumerate() {
            let date = if by_day {
                first + TimeDelta::days(i as i64)
            } else {
                first.with_day(1).unwrap() + Months::new(i as u32)
            };
            prop_assert_eq!(*start, ms(date));
            let want = if by_day {
                format!("t_{:04}_{:02}_{:02}", date.year(), date.month(), date.day())
            } else {
                format!("t_{:04}_{:02}", date.year(), date.month())
            };
            prop_assert_eq!(name, &want);
            // The last ms before a start is the period before.
            prop_assert_eq!(schedule.period_at(*start), Some(i));
            prop_assert_eq!(schedule.period_at(*start - 1), i.checked_sub(1));
        }
    }
}

#[test]
fn a_schedule_refuses_what_no_store_could_hold() {
    let err = Schedule::new(vec![("a".into(), 5), ("b".into(), 5)]).unwrap_err();
    assert!(err.to_string().contains("not after period 0"), "{err}");
    let err = Schedule::new(vec![("a".into(), 5), ("a".into(), 9)]).unwrap_err();
    assert!(err.to_string().contains("used twice"), "{err}");
    assert!(Schedule::new(vec![]).is_err());
    assert!(Schedule::calendar(Every::Month, "", (2026, 1, 1), 1).is_err());
    assert!(Schedule::calendar(Every::Month, "t", (2026, 13, 1), 1).is_err());
    let err = Schedule::calendar(Every::Month, "t", (9999, 12, 1), 2).unwrap_err();
    assert!(err.to_string().contains("9999"), "{err}");
}

/// A monthly schedule as a timeline over redb tables: typed rows placed by their time field in
/// their month's table, read back across months in typed order.
#[test]
fn a_monthly_schedule_serves_a_timeline_over_redb() {
    let months = Schedule::calendar(Every::Month, "readings", (2026, 1, 1), 3).unwrap();
    let layout: Layout = "device: u32; ts: u64; buckets=4:hash(device); form=binary"
        .parse()
        .unwrap();
    let timeline = Timeline::from_schedule(&months, &layout)
        .unwrap()
        .with_time_field("ts")
        .unwrap();
    let db = RedbDatabase::in_memory().unwrap();
    let tables: Vec<_> = months
        .periods()
        .iter()
        .map(|(n, _)| (n.clone(), db.table(n).unwrap()))
        .collect();
    let store = |t: &str| tables.iter().find(|(n, _)| n == t).map(|(_, s)| s);
    let rows = TypedTimeline::new(&timeline, store);
    let start = months.periods()[0].1 as u64;
    const DAY: u64 = 86_400_000;
    let times: Vec<u64> = (0..80).map(|d| start + d * DAY + 17).collect();
    for &ts in times.iter().rev() {
        rows.put(&[Value::from(54u32), Value::from(ts)], &ts)
            .unwrap();
    }
    // Each row in its month's table: January's 31 days, February's 28, then March's.
    let counts: Vec<usize> = tables
        .iter()
        .map(|(_, s)| {
            s.range(&RangeQuery::new(&[][..], None).limit(usize::MAX))
                .unwrap()
                .rows
                .len()
        })
        .collect();
    assert_eq!(counts, [31, 28, 21]);
    let visits = timeline
        .ranges(
            i64::MIN..i64::MAX,
            &[Value::from(54u32)],
            Unbounded,
            Unbounded,
        )
        .unwrap();
    let mut seen = Vec::new();
    rows.scan::<u64>(&visits, 7, None, |values, v| {
        assert_eq!(values[1].as_u64(), Some(v));
        seen.push(v);
        ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(seen, times);
}
