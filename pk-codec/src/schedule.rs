//! [`Schedule`]: periods by the calendar, each with its table's name: a table a month
//! (`readings_2026_01`, ...) or a day, in UTC. The one place a schedule of periods is checked
//! (starts increasing, names distinct) and a time is looked up in it (`period_at`), which
//! the table model's `PeriodTables` and [`Timeline`](crate::timeline::Timeline) both use, so a
//! schedule serves any store: [`Timeline::from_schedule`](crate::timeline::Timeline::from_schedule)
//! makes a timeline of it for any `RangeStore`, and its periods are what `PeriodTables::new`
//! takes.
//!
//! A leaf: the calendar arithmetic of `timestamp.rs`, nothing else.

use std::fmt;

use crate::timestamp::{civil_from_days, days_from_civil, days_in_month};

const DAY_MS: i64 = 86_400_000;

/// How long each period of a calendar [`Schedule`] lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Every {
    /// A calendar month (UTC): tables named `{table}_{YYYY}_{MM}`.
    Month,
    /// A calendar day (UTC): tables named `{table}_{YYYY}_{MM}_{DD}`.
    Day,
}

/// Why a [`Schedule`] was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleError {
    reason: String,
}

impl fmt::Display for ScheduleError {
    #[cfg_attr(debug_assertions, inline)]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for ScheduleError {}

impl ScheduleError {
    #[cfg_attr(debug_assertions, inline)]
    fn new(reason: String) -> Self {
        Self { reason }
    }
}

/// Periods `(table name, start ms)` in start order, each in force until the next starts (the
/// last without end): made by the calendar ([`Schedule::calendar`]) or given
/// ([`Schedule::new`]), checked either way.
///
/// # Examples
///
/// ```
/// use pk_codec::schedule::{Every, Schedule};
///
/// let months = Schedule::calendar(Every::Month, "readings", (2025, 11, 1), 3)?;
/// let names: Vec<&str> = months.periods().iter().map(|(n, _)| n.as_str()).collect();
/// assert_eq!(names, ["readings_2025_11", "readings_2025_12", "readings_2026_01"]);
/// assert_eq!(months.periods()[2].1, 1_767_225_600_000); // 2026-01-01T00:00:00Z
/// assert_eq!(months.period_at(1_767_225_599_999), Some(1));
/// let days = Schedule::calendar(Every::Day, "events", (2024, 2, 28), 3)?;
/// assert_eq!(days.periods()[2].0, "events_2024_03_01"); // 2024 is a leap year: Feb 29 between
/// # Ok::<(), pk_codec::schedule::ScheduleError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Schedule {
    periods: Vec<(String, i64)>,
}

impl Schedule {
    /// The periods given, checked: at least one, starts strictly increasing, table names
    /// distinct and not empty.
    ///
    /// # Errors
    ///
    /// [`ScheduleError`] naming the first period that breaks a rule.
    #[cfg_attr(debug_assertions, inline)]
    pub fn new(periods: Vec<(String, i64)>) -> Result<Self, ScheduleError> {
        if periods.is_empty() {
            return Err(ScheduleError::new("no periods".into()));
        }
        if let Some((i, start, previous)) = unordered(periods.iter().map(|p| p.1)) {
            return Err(ScheduleError::new(format!(
                "period {i} ({:?}) starts at {start} ms, not after period {} at {previous} ms",
                periods[i].0,
                i - 1
            )));
        }
        for (i, (name, _)) in periods.iter().enumerate() {
            if name.is_empty() {
                return Err(ScheduleError::new(format!(
                    "period {i}'s table name is empty"
                )));
            }
            if periods[..i].iter().any(|p| p.0 == *name) {
                return Err(ScheduleError::new(format!(
                    "table name {name:?} is used twice"
                )));
            }
        }
        Ok(Self { periods })
    }

    /// `count` periods of a calendar month or day (UTC) from the one that holds the date
    /// `(year, month, day)` (a month schedule starts at its month's first day), each in a table
    /// named `{table}_{YYYY}_{MM}` (month) or `{table}_{YYYY}_{MM}_{DD}` (day).
    ///
    /// # Errors
    ///
    /// [`ScheduleError`] for no periods, an empty table name, a date that does not exist, or
    /// periods past the year 9999.
    #[cfg_attr(debug_assertions, inline)]
    pub fn calendar(
        every: Every,
        table: &str,
        (year, month, day): (i64, u32, u32),
        count: usize,
    ) -> Result<Self, ScheduleError> {
        if table.is_empty() {
            return Err(ScheduleError::new("the table name is empty".into()));
        }
        let (month, day) = (i64::from(month), i64::from(day));
        if !(0..=9999).contains(&year)
            || !(1..=12).contains(&month)
            || day < 1
            || day > days_in_month(year, month)
        {
            return Err(ScheduleError::new(format!(
                "{year:04}-{month:02}-{day:02} is not a date of the years 0 to 9999"
            )));
        }
        let mut periods = Vec::with_capacity(count.min(1 << 16));
        let (mut y, mut m, mut d) = (year, month, if every == Every::Month { 1 } else { day });
        for _ in 0..count {
            if y > 9999 {
                return Err(ScheduleError::new(format!(
                    "{count} periods from {year:04}-{month:02} run past the year 9999"
                )));
            }
            let start = days_from_civil(y, m, d) * DAY_MS;
            let name = match every {
                Every::Month => format!("{table}_{y:04}_{m:02}"),
                Every::Day => format!("{table}_{y:04}_{m:02}_{d:02}"),
            };
            periods.push((name, start));
            (y, m, d) = match every {
                Every::Month if m == 12 => (y + 1, 1, 1),
                Every::Month => (y, m + 1, 1),
                Every::Day => civil_from_days(days_from_civil(y, m, d) + 1),
            };
        }
        Self::new(periods)
    }

    /// The periods `(table name, start ms)`, in start order.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn periods(&self) -> &[(String, i64)] {
        &self.periods
    }

    /// The periods, owned: what `PeriodTables::new` takes.
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn into_periods(self) -> Vec<(String, i64)> {
        self.periods
    }

    /// The number of the period in force at `time_ms`, if any (none before the first start).
    #[must_use]
    #[cfg_attr(debug_assertions, inline)]
    pub fn period_at(&self, time_ms: i64) -> Option<usize> {
        period_at(&self.periods, |p| p.1, time_ms)
    }
}

/// The number of the last of `periods` (in start order) whose start is at or before
/// `time_ms`, `None` before the first: the one lookup of a period by time.
pub(crate) fn period_at<T>(
    periods: &[T],
    start: impl Fn(&T) -> i64,
    time_ms: i64,
) -> Option<usize> {
    periods
        .partition_point(|p| start(p) <= time_ms)
        .checked_sub(1)
}

/// The first start that is not after the one before it: `(index, start, previous start)`;
/// `None` when the starts strictly increase. The one check of a schedule's order.
#[cfg_attr(debug_assertions, inline)]
pub(crate) fn unordered(starts: impl IntoIterator<Item = i64>) -> Option<(usize, i64, i64)> {
    let mut previous = None;
    for (i, start) in starts.into_iter().enumerate() {
        if let Some(p) = previous
            && start <= p
        {
            return Some((i, start, p));
        }
        previous = Some(start);
    }
    None
}
