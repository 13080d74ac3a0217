//! Tables with their own reserved throughput in one instance, and period tables rolled on the
//! clock: the hot/cold practice (recent rows in a table with high reserved read and write
//! capacity, older periods lowered, the oldest moved to a history table) against one table for
//! everything, with the reserved capacity each uses and wastes.
//!
//! The instance keeps the store's rules: at most [`MAX_TABLES`] tables (indexes included; the
//! model has none), reserved capacity from 0 to [`MAX_CAPACITY_UNITS`] per table, changed at
//! most once every [`CAPACITY_CHANGE_INTERVAL_MS`] (creating a table sets its first capacity).
//! Consumption is read from each table's load records ([`Table::load_records`]), in capacity
//! units ([`capacity_units`]).

use std::fmt::{self, Write as _};
use std::num::NonZeroU64;

use serde::Serialize;

use crate::schedule::{Schedule, period_at};

use super::error::TableError;
use super::load::PartitionWindow;
use super::options::TableOptions;
use super::request::{MAX_BATCH_ROWS, RangeRequest};
use super::schema::{Attribute, PrimaryKey, Schema};
use super::store::Table;
use super::version::{Clock, ManualClock};

/// The most tables one instance holds, secondary indexes included (Tablestore's limit).
pub const MAX_TABLES: usize = 64;

/// The least time between two changes of a table's reserved capacity, ms (Tablestore: 2 minutes).
pub const CAPACITY_CHANGE_INTERVAL_MS: i64 = 120_000;

/// The most reserved capacity units a table may have, for reads and for writes.
pub const MAX_CAPACITY_UNITS: u64 = 100_000;

/// The bytes one capacity unit reads or writes: an operation consumes one unit per 4 KB it
/// moves, and at least one.
pub const CAPACITY_UNIT_BYTES: u64 = 4096;

/// Reserved throughput: capacity units per second, for reads and for writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Capacity {
    /// Read capacity units per second.
    pub read: u64,
    /// Write capacity units per second.
    pub write: u64,
}

impl Capacity {
    /// `read` and `write` capacity units per second.
    #[must_use]
    pub const fn new(read: u64, write: u64) -> Self {
        Self { read, write }
    }
}

impl fmt::Display for Capacity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} read / {} write CU/s", self.read, self.write)
    }
}

/// The capacity units `ops` operations moving `bytes` bytes consume: one per 4 KB moved, and at
/// least one per operation. The rule is applied per window to a table's summed load (the load
/// records count operations and bytes, not each operation's size), so it is a lower bound of
/// what rows over 4 KB would consume one by one.
///
/// # Examples
///
/// ```
/// use pk_codec::table::capacity_units;
///
/// assert_eq!(capacity_units(10, 1_000), 10); // small rows: one unit each
/// assert_eq!(capacity_units(1, 40_000), 10); // a range read of 40 KB: ten units
/// ```
#[must_use]
pub const fn capacity_units(ops: u64, bytes: u64) -> u64 {
    let by_bytes = bytes.div_ceil(CAPACITY_UNIT_BYTES);
    if by_bytes > ops { by_bytes } else { ops }
}

/// What an [`Instance`] or [`PeriodTables`] refuses, naming the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PeriodError {
    /// The instance already holds [`MAX_TABLES`] tables.
    TooManyTables {
        /// The table that was to be created.
        name: String,
        /// The limit.
        limit: usize,
    },
    /// A capacity change sooner than [`CAPACITY_CHANGE_INTERVAL_MS`] after the table's last.
    CapacityChangeTooSoon {
        /// The table.
        name: String,
        /// When its capacity last changed (or it was created), ms.
        last_change_ms: i64,
        /// The first time a change is allowed, ms.
        allowed_from_ms: i64,
        /// Now, ms.
        now_ms: i64,
    },
    /// A reserved capacity above [`MAX_CAPACITY_UNITS`].
    CapacityOutOfRange {
        /// The table.
        name: String,
        /// The capacity asked for.
        capacity: Capacity,
    },
    /// A table of that name exists already.
    TableExists {
        /// The name.
        name: String,
    },
    /// No table of that name is in the instance.
    NoSuchTable {
        /// The name.
        name: String,
    },
    /// A schedule of periods that cannot be rolled.
    Schedule {
        /// What is wrong, and where.
        reason: String,
    },
    /// The table model refused something.
    Table(TableError),
}

impl fmt::Display for PeriodError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooManyTables { name, limit } => write!(
                f,
                "cannot create table {name:?}: an instance holds at most {limit} tables, indexes included"
            ),
            Self::CapacityChangeTooSoon {
                name,
                last_change_ms,
                allowed_from_ms,
                now_ms,
            } => write!(
                f,
                "cannot change the reserved capacity of table {name:?} at {now_ms} ms: it last changed at \
                 {last_change_ms} ms and may change at most once every 2 minutes (next from {allowed_from_ms} ms)"
            ),
            Self::CapacityOutOfRange { name, capacity } => write!(
                f,
                "reserved capacity {capacity} for table {name:?} is out of range: each of read and write \
                 is 0 to {MAX_CAPACITY_UNITS} CU"
            ),
            Self::TableExists { name } => write!(f, "table {name:?} exists already"),
            Self::NoSuchTable { name } => write!(f, "no table {name:?} in the instance"),
            Self::Schedule { reason } => write!(f, "bad period schedule: {reason}"),
            Self::Table(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for PeriodError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Table(e) => Some(e),
            _ => None,
        }
    }
}

impl From<TableError> for PeriodError {
    fn from(e: TableError) -> Self {
        Self::Table(e)
    }
}

/// One table of an instance, live or retired.
struct Slot {
    name: String,
    /// The table while it lives.
    table: Option<Table>,
    /// Its load records, kept when it is deleted.
    records: Vec<PartitionWindow>,
    window_ms: i64,
    created_ms: i64,
    deleted_ms: Option<i64>,
    /// Its reserved capacity from each time on, in time order (the first at creation).
    capacity: Vec<(i64, Capacity)>,
}

impl Slot {
    fn reserved(&self) -> Capacity {
        self.capacity.last().map_or_else(Capacity::default, |c| c.1)
    }

    /// Reserved capacity units over `[from, to)` (ms), read and write: the capacity in force
    /// at each moment times its duration, within the table's life.
    fn reserved_between(&self, from: i64, to: i64) -> (u64, u64) {
        let (mut read, mut write) = (0u128, 0u128);
        for (i, &(since, c)) in self.capacity.iter().enumerate() {
            let until = self
                .capacity
                .get(i + 1)
                .map_or(self.deleted_ms.unwrap_or(i64::MAX), |n| n.0);
            let (a, b) = (since.max(from), until.min(to));
            if a < b {
                let ms = u128::from(b.abs_diff(a));
                read += u128::from(c.read) * ms;
                write += u128::from(c.write) * ms;
            }
        }
        let units = |x: u128| u64::try_from(x / 1000).unwrap_or(u64::MAX);
        (units(read), units(write))
    }
}

/// Capacity units reserved and consumed by one table, for reads or for writes.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct UnitUsage {
    /// Units reserved over the table's life (capacity × seconds).
    pub reserved: u64,
    /// Units its operations consumed ([`capacity_units`] per window).
    pub consumed: u64,
    /// Units consumed beyond the reservation of their window (throttled or paid apart).
    pub over: u64,
    /// Units reserved and not consumed.
    pub wasted: u64,
    /// `consumed / reserved` (0 with nothing reserved).
    pub utilisation: f64,
}

impl UnitUsage {
    fn add_window(&mut self, consumed: u64, reserved: u64) {
        self.consumed = self.consumed.saturating_add(consumed);
        self.over = self.over.saturating_add(consumed.saturating_sub(reserved));
    }

    fn finish(&mut self, reserved: u64) {
        self.reserved = reserved;
        let within = self.consumed.saturating_sub(self.over);
        self.wasted = reserved.saturating_sub(within);
        #[allow(clippy::cast_precision_loss)]
        let u = if reserved == 0 {
            0.0
        } else {
            self.consumed as f64 / reserved as f64
        };
        self.utilisation = u;
    }
}

/// One load window of one table: units consumed against units reserved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WindowUsage {
    /// Window index (`time_ms / load_window_ms`).
    pub window: i64,
    /// Window start, ms.
    pub start_ms: i64,
    /// Read units consumed.
    pub read_consumed: u64,
    /// Write units consumed.
    pub write_consumed: u64,
    /// Read units reserved in the window.
    pub read_reserved: u64,
    /// Write units reserved in the window.
    pub write_reserved: u64,
}

/// How one table used its reserved capacity ([`Instance::usage`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableUsage {
    /// The table.
    pub name: String,
    /// The length of its load windows, ms ([`TableOptions::load_window_ms`]).
    pub window_ms: i64,
    /// When it was created, ms.
    pub created_ms: i64,
    /// When it was deleted, ms, if it was.
    pub deleted_ms: Option<i64>,
    /// Its reserved capacity now (at deletion for a deleted table).
    pub reserved_now: Capacity,
    /// Read operations it served (times the instance's [load scale](Instance::load_scale)).
    pub reads: u64,
    /// Write operations it served (times the instance's [load scale](Instance::load_scale)).
    pub writes: u64,
    /// Read units.
    pub read: UnitUsage,
    /// Write units.
    pub write: UnitUsage,
    /// The windows with operations, in time order.
    pub windows: Vec<WindowUsage>,
}

impl TableUsage {
    /// The least reserved capacity (CU/s, rounded up) that would have served the busiest load
    /// window starting in `[from_ms, to_ms)` without going over, for reads and for writes apart:
    /// the units the window consumed over its length in seconds. What to reserve for a period
    /// measured on a table with nothing reserved (last year's month, say); 0 with no load.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::table::{Capacity, Instance, ManualClock, Schema, TableOptions};
    ///
    /// let clock = ManualClock::new(0);
    /// let mut instance = Instance::new(clock.clone());
    /// let options = TableOptions::default().load_window_ms(1_000);
    /// let table = instance.create_table("t", Schema::single_string("pk")?, options, Capacity::default())?;
    /// for i in 0..5 {
    ///     table.put(format!("a{i}").as_str(), vec![])?; // 5 writes in the first second
    /// }
    /// clock.set(1_000);
    /// table.put("b", vec![])?; // 1 in the next
    /// let usage = &instance.usage()[0];
    /// assert_eq!(usage.busiest(0, 2_000), Capacity::new(0, 5));
    /// assert_eq!(usage.busiest(1_000, 2_000), Capacity::new(0, 1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn busiest(&self, from_ms: i64, to_ms: i64) -> Capacity {
        let window_ms = u128::from(self.window_ms.max(1).unsigned_abs());
        let per_second = |units: u64| {
            u64::try_from((u128::from(units) * 1000).div_ceil(window_ms)).unwrap_or(u64::MAX)
        };
        let (mut read, mut write) = (0u64, 0u64);
        for w in self
            .windows
            .iter()
            .filter(|w| (from_ms..to_ms).contains(&w.start_ms))
        {
            read = read.max(w.read_consumed);
            write = write.max(w.write_consumed);
        }
        Capacity::new(per_second(read), per_second(write))
    }
}

/// Usage of `slot` up to `now_ms`, from its load records: per window, the units consumed (the
/// summed load of its partitions, each operation and byte counted `scale` times) against the
/// units reserved then.
fn usage_of(slot: &Slot, now_ms: i64, scale: u64) -> TableUsage {
    let owned;
    let records: &[PartitionWindow] = match &slot.table {
        Some(t) => {
            owned = t.load_records();
            &owned
        }
        None => &slot.records,
    };
    let mut by_window: Vec<(i64, u64, u64, u64, u64)> = Vec::new();
    for r in records {
        let entry = match by_window.iter_mut().find(|w| w.0 == r.window) {
            Some(e) => e,
            None => {
                by_window.push((r.window, 0, 0, 0, 0));
                by_window.last_mut().expect("pushed")
            }
        };
        let scaled = |x: u64| x.saturating_mul(scale);
        entry.1 = entry.1.saturating_add(scaled(r.load.reads));
        entry.2 = entry.2.saturating_add(scaled(r.load.bytes_read));
        entry.3 = entry.3.saturating_add(scaled(r.load.writes));
        entry.4 = entry.4.saturating_add(scaled(r.load.bytes_written));
    }
    by_window.sort_by_key(|w| w.0);
    let (mut read, mut write) = (UnitUsage::default(), UnitUsage::default());
    let (mut reads, mut writes) = (0u64, 0u64);
    let mut windows = Vec::with_capacity(by_window.len());
    for (window, r_ops, r_bytes, w_ops, w_bytes) in by_window {
        let start_ms = window.saturating_mul(slot.window_ms);
        let (read_reserved, write_reserved) =
            slot.reserved_between(start_ms, start_ms.saturating_add(slot.window_ms));
        let u = WindowUsage {
            window,
            start_ms,
            read_consumed: capacity_units(r_ops, r_bytes),
            write_consumed: capacity_units(w_ops, w_bytes),
            read_reserved,
            write_reserved,
        };
        read.add_window(u.read_consumed, read_reserved);
        write.add_window(u.write_consumed, write_reserved);
        reads = reads.saturating_add(r_ops);
        writes = writes.saturating_add(w_ops);
        windows.push(u);
    }
    let end = slot.deleted_ms.unwrap_or(now_ms);
    let (read_reserved, write_reserved) = slot.reserved_between(slot.created_ms, end);
    read.finish(read_reserved);
    write.finish(write_reserved);
    TableUsage {
        name: slot.name.clone(),
        window_ms: slot.window_ms,
        created_ms: slot.created_ms,
        deleted_ms: slot.deleted_ms,
        reserved_now: slot.reserved(),
        reads,
        writes,
        read,
        write,
        windows,
    }
}

/// An instance of tables, each with its own reserved read and write capacity, on one manual
/// clock: the store's rules on the number of tables and on capacity changes, and a report of
/// each table's consumption against its reservation ([`Instance::usage`]).
///
/// # Examples
///
/// ```
/// use pk_codec::table::{Attribute, Capacity, Instance, ManualClock, PeriodError, Schema, TableOptions};
///
/// let clock = ManualClock::new(0);
/// let mut instance = Instance::new(clock.clone());
/// let table = instance.create_table("orders", Schema::single_string("pk")?, TableOptions::default(), Capacity::new(10, 10))?;
/// table.put("a", vec![Attribute::new("n", 1)])?;
/// // A change within 2 minutes of the last (the creation) is refused.
/// clock.advance(60_000);
/// let err = instance.set_capacity("orders", Capacity::new(1, 1)).unwrap_err();
/// assert!(matches!(err, PeriodError::CapacityChangeTooSoon { allowed_from_ms: 120_000, .. }));
/// clock.advance(60_000);
/// instance.set_capacity("orders", Capacity::new(1, 1))?;
/// let usage = &instance.usage()[0];
/// assert_eq!((usage.write.consumed, usage.write.reserved), (1, 1_200)); // 10 CU/s for 120 s
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Instance {
    clock: ManualClock,
    slots: Vec<Slot>,
    /// Operations each recorded operation stands for ([`Instance::load_scale`]).
    scale: u64,
}

impl fmt::Debug for Instance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Instance")
            .field("now_ms", &self.clock.now_ms())
            .field("load_scale", &self.scale)
            .field(
                "tables",
                &self.live().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Instance {
    /// An empty instance on `clock`, which every table it creates shares.
    #[must_use]
    pub const fn new(clock: ManualClock) -> Self {
        Self {
            clock,
            slots: Vec::new(),
            scale: 1,
        }
    }

    /// The same instance, its usage counting each operation its tables serve as `scale`
    /// operations of the same size: a simulation of a sample of the traffic (one purchase in
    /// 250, say) reports the units the whole traffic consumes, to set against capacity reserved
    /// for the whole traffic. Reservations and the rules are unchanged; only
    /// [`Instance::usage`]'s consumed units and operation counts are multiplied (saturating).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::num::NonZeroU64;
    /// use pk_codec::table::{Capacity, Instance, ManualClock, Schema, TableOptions};
    ///
    /// let scale = NonZeroU64::new(250).unwrap();
    /// let mut instance = Instance::new(ManualClock::new(0)).load_scale(scale);
    /// let table = instance.create_table("t", Schema::single_string("pk")?, TableOptions::default(), Capacity::new(0, 0))?;
    /// table.put("a", vec![])?;
    /// let usage = &instance.usage()[0];
    /// assert_eq!((usage.writes, usage.write.consumed, usage.write.over), (250, 250, 250));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub const fn load_scale(mut self, scale: NonZeroU64) -> Self {
        self.scale = scale.get();
        self
    }

    /// The instance clock's time, ms.
    #[must_use]
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    fn live(&self) -> impl Iterator<Item = &Slot> {
        self.slots.iter().filter(|s| s.table.is_some())
    }

    fn slot_mut(&mut self, name: &str) -> Result<&mut Slot, PeriodError> {
        self.slots
            .iter_mut()
            .find(|s| s.name == name && s.table.is_some())
            .ok_or_else(|| PeriodError::NoSuchTable {
                name: name.to_owned(),
            })
    }

    fn check_capacity(name: &str, capacity: Capacity) -> Result<(), PeriodError> {
        if capacity.read > MAX_CAPACITY_UNITS || capacity.write > MAX_CAPACITY_UNITS {
            return Err(PeriodError::CapacityOutOfRange {
                name: name.to_owned(),
                capacity,
            });
        }
        Ok(())
    }

    /// Creates table `name` with `reserved` capacity, at the clock's time.
    ///
    /// # Errors
    ///
    /// [`PeriodError::TooManyTables`] when the instance holds [`MAX_TABLES`] already;
    /// [`PeriodError::TableExists`]; [`PeriodError::CapacityOutOfRange`]; the table model's
    /// errors for the schema and options.
    pub fn create_table(
        &mut self,
        name: &str,
        schema: Schema,
        options: TableOptions,
        reserved: Capacity,
    ) -> Result<&Table, PeriodError> {
        if self.live().any(|s| s.name == name) {
            return Err(PeriodError::TableExists {
                name: name.to_owned(),
            });
        }
        if self.live().count() >= MAX_TABLES {
            return Err(PeriodError::TooManyTables {
                name: name.to_owned(),
                limit: MAX_TABLES,
            });
        }
        Self::check_capacity(name, reserved)?;
        let window_ms = options.load_window_ms;
        let table = Table::with_clock(schema, options, self.clock.clone())?;
        let now = self.now_ms();
        self.slots.push(Slot {
            name: name.to_owned(),
            table: Some(table),
            records: Vec::new(),
            window_ms,
            created_ms: now,
            deleted_ms: None,
            capacity: vec![(now, reserved)],
        });
        Ok(self
            .slots
            .last()
            .and_then(|s| s.table.as_ref())
            .expect("just pushed"))
    }

    /// The live table `name`.
    #[must_use]
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.live()
            .find(|s| s.name == name)
            .and_then(|s| s.table.as_ref())
    }

    /// The names of the live tables, in creation order.
    #[must_use]
    pub fn table_names(&self) -> Vec<&str> {
        self.live().map(|s| s.name.as_str()).collect()
    }

    /// The reserved capacity of the live table `name`.
    #[must_use]
    pub fn reserved(&self, name: &str) -> Option<Capacity> {
        self.live().find(|s| s.name == name).map(Slot::reserved)
    }

    /// Changes the reserved capacity of table `name`, at the clock's time.
    ///
    /// # Errors
    ///
    /// [`PeriodError::CapacityChangeTooSoon`] within [`CAPACITY_CHANGE_INTERVAL_MS`] of its last
    /// change or its creation; [`PeriodError::CapacityOutOfRange`]; [`PeriodError::NoSuchTable`].
    pub fn set_capacity(&mut self, name: &str, reserved: Capacity) -> Result<(), PeriodError> {
        let now = self.now_ms();
        Self::check_capacity(name, reserved)?;
        let slot = self.slot_mut(name)?;
        let last = slot.capacity.last().map_or(i64::MIN, |c| c.0);
        let allowed = last.saturating_add(CAPACITY_CHANGE_INTERVAL_MS);
        if now < allowed {
            return Err(PeriodError::CapacityChangeTooSoon {
                name: name.to_owned(),
                last_change_ms: last,
                allowed_from_ms: allowed,
                now_ms: now,
            });
        }
        slot.capacity.push((now, reserved));
        Ok(())
    }

    /// Deletes table `name` (its rows with it), at the clock's time; its usage stays in the
    /// report.
    ///
    /// # Errors
    ///
    /// [`PeriodError::NoSuchTable`].
    pub fn delete_table(&mut self, name: &str) -> Result<(), PeriodError> {
        let now = self.now_ms();
        let slot = self.slot_mut(name)?;
        if let Some(t) = slot.table.take() {
            slot.records = t.load_records();
        }
        slot.deleted_ms = Some(now);
        Ok(())
    }

    /// Every table's usage so far, live and deleted, in creation order.
    #[must_use]
    pub fn usage(&self) -> Vec<TableUsage> {
        let now = self.now_ms();
        self.slots
            .iter()
            .map(|s| usage_of(s, now, self.scale))
            .collect()
    }
}

/// A few lines comparing tables' usage: reserved capacity now (CU/s), units consumed and
/// reserved and the utilisation, for reads and for writes, units over the reservation (served
/// on demand, or throttled) and units wasted (reserved, unused); a total line.
///
/// # Examples
///
/// ```
/// use pk_codec::table::{Capacity, Instance, ManualClock, Schema, TableOptions, usage_table};
///
/// let mut instance = Instance::new(ManualClock::new(0));
/// instance.create_table("t", Schema::single_string("pk")?, TableOptions::default(), Capacity::new(1, 1))?;
/// assert!(usage_table(&instance.usage()).contains("total"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use]
pub fn usage_table(usages: &[TableUsage]) -> String {
    let width = usages
        .iter()
        .map(|u| u.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(5);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:width$}  {:>12}  {:>10}  {:>11}  {:>6}  {:>10}  {:>11}  {:>6}  {:>9}  {:>11}",
        "table",
        "CU/s r/w",
        "read used",
        "read resvd",
        "util",
        "write used",
        "write resvd",
        "util",
        "over",
        "wasted"
    );
    let mut total = (UnitUsage::default(), UnitUsage::default());
    let pct = |u: &UnitUsage| u.utilisation * 100.0;
    for u in usages {
        let _ = writeln!(
            s,
            "{:width$}  {:>12}  {:>10}  {:>11}  {:>5.1}%  {:>10}  {:>11}  {:>5.1}%  {:>9}  {:>11}",
            u.name,
            format!("{}/{}", u.reserved_now.read, u.reserved_now.write),
            u.read.consumed,
            u.read.reserved,
            pct(&u.read),
            u.write.consumed,
            u.write.reserved,
            pct(&u.write),
            u.read.over.saturating_add(u.write.over),
            u.read.wasted.saturating_add(u.write.wasted)
        );
        for (t, x) in [(&mut total.0, &u.read), (&mut total.1, &u.write)] {
            t.add_window(x.consumed, x.consumed.saturating_sub(x.over));
            t.reserved = t.reserved.saturating_add(x.reserved);
        }
    }
    let (mut r, mut w) = total;
    r.finish(r.reserved);
    w.finish(w.reserved);
    let _ = writeln!(
        s,
        "{:width$}  {:>12}  {:>10}  {:>11}  {:>5.1}%  {:>10}  {:>11}  {:>5.1}%  {:>9}  {:>11}",
        "total",
        "",
        r.consumed,
        r.reserved,
        pct(&r),
        w.consumed,
        w.reserved,
        pct(&w),
        r.over.saturating_add(w.over),
        r.wasted.saturating_add(w.wasted)
    );
    s
}

/// How [`PeriodTables`] rolls its periods.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RollPolicy {
    /// How long before its period starts a table is created, ms.
    pub lead_ms: i64,
    /// The capacity of the table of the current period (and of one created ahead of it).
    pub hot: Capacity,
    /// The capacity a period's table is lowered to once the period is over.
    pub cold: Capacity,
    /// How many periods keep their own table, the current one included: older periods' rows
    /// move to the history table (or are dropped without one) and their tables are deleted.
    pub keep_periods: usize,
    /// The history table and its capacity; `None` to drop periods past retention.
    pub history: Option<(String, Capacity)>,
}

/// Where one period's table stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Planned,
    Hot,
    Cold,
    Archived,
}

/// What one [`PeriodTables::roll`] did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Roll {
    /// Tables created (the next period's, the history table).
    pub created: Vec<String>,
    /// Tables lowered to the cold capacity.
    pub lowered: Vec<String>,
    /// Tables whose rows moved to history (or were dropped), and the rows moved.
    pub archived: Vec<(String, u64)>,
    /// Capacity changes due but refused for now by the 2-minute rule, with the refusal: the
    /// next roll tries again.
    pub deferred: Vec<PeriodError>,
}

/// Tables per period (one a month, say) in an [`Instance`], rolled on the clock by
/// [`PeriodTables::roll`]: the next period's table created `lead_ms` before the period starts
/// with the hot capacity, a period's table lowered to the cold capacity once the period is over,
/// and periods past retention moved to the history table and deleted.
///
/// # Examples
///
/// ```
/// use pk_codec::table::{Attribute, Capacity, Instance, ManualClock, PeriodTables, RollPolicy, Schema, TableOptions};
///
/// const DAY: i64 = 86_400_000;
/// let clock = ManualClock::new(0);
/// let periods = (0..4).map(|m| (format!("m{m}"), m * 30 * DAY)).collect();
/// let policy = RollPolicy {
///     lead_ms: DAY,
///     hot: Capacity::new(100, 100),
///     cold: Capacity::new(5, 0),
///     keep_periods: 2,
///     history: Some(("history".into(), Capacity::new(1, 1))),
/// };
/// let mut tables = PeriodTables::new(Instance::new(clock.clone()), periods, Schema::single_string("pk")?, TableOptions::default(), policy)?;
/// tables.roll()?;
/// tables.table_at(5)?.put("a", vec![Attribute::new("n", 1)])?;
/// for day in 1..=70 {
///     clock.set(day * DAY);
///     tables.roll()?;
/// }
/// // Day 70 is in m2: m1 is cold, m0 is in history, m3 is not created yet.
/// let names = tables.instance().table_names();
/// assert_eq!(names, ["history", "m1", "m2"]);
/// assert_eq!(tables.instance().reserved("m1"), Some(Capacity::new(5, 0)));
/// assert_eq!(tables.instance().table("history").unwrap().stored_rows(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct PeriodTables {
    instance: Instance,
    /// Name, start, stage, and the capacity its table has while hot.
    periods: Vec<(String, i64, Stage, Capacity)>,
    schema: Schema,
    options: TableOptions,
    policy: RollPolicy,
}

impl PeriodTables {
    /// Periods `(table name, start ms)` in start order, each in force until the next starts
    /// (the last without end), rolled in `instance` by `policy`; every table gets `schema` and
    /// `options`. Nothing is created until [`PeriodTables::roll`]. A calendar of months or days
    /// is [`Schedule::calendar`]'s [`periods`](Schedule::into_periods); the same schedule makes
    /// a [`Timeline`](crate::timeline::Timeline) for any store
    /// ([`Timeline::from_schedule`](crate::timeline::Timeline::from_schedule)).
    ///
    /// # Errors
    ///
    /// [`PeriodError::Schedule`] for what [`Schedule::new`] refuses (no periods, starts not
    /// increasing, an empty or repeated name), the history table named as a period,
    /// `keep_periods` of 0 or a negative lead.
    pub fn new(
        instance: Instance,
        periods: Vec<(String, i64)>,
        schema: Schema,
        options: TableOptions,
        policy: RollPolicy,
    ) -> Result<Self, PeriodError> {
        let bad = |reason: String| Err(PeriodError::Schedule { reason });
        if periods.is_empty() {
            return bad("no periods".into());
        }
        if policy.keep_periods == 0 {
            return bad("keep_periods is 0: the current period must keep its table".into());
        }
        if policy.lead_ms < 0 {
            return bad(format!(
                "lead_ms is {}: a table is created before its period, not after",
                policy.lead_ms
            ));
        }
        // The schedule's own rules (starts increasing, names distinct), then the history
        // table's name against the periods'.
        let periods = Schedule::new(periods)
            .map_err(|e| PeriodError::Schedule {
                reason: e.to_string(),
            })?
            .into_periods();
        if let Some((history, _)) = &policy.history
            && periods.iter().any(|p| p.0 == *history)
        {
            return bad(format!("table name {history:?} is used twice"));
        }
        Ok(Self {
            instance,
            periods: periods
                .into_iter()
                .map(|(n, s)| (n, s, Stage::Planned, policy.hot))
                .collect(),
            schema,
            options,
            policy,
        })
    }

    /// The instance, for its tables and usage.
    #[must_use]
    pub const fn instance(&self) -> &Instance {
        &self.instance
    }

    /// Sets the capacity period `name`'s table gets while hot, in place of the policy's: a
    /// period's expected traffic (a quiet summer month, a busy term). For a period whose table
    /// is not created yet, it is the capacity it is created with; for the current one, its
    /// capacity changes now ([`Instance::set_capacity`], under the 2-minute rule).
    ///
    /// # Errors
    ///
    /// [`PeriodError::NoSuchTable`] for a name that is no period, [`PeriodError::Schedule`] for
    /// a period that is over; [`Instance::set_capacity`]'s errors for the current one.
    pub fn set_hot_capacity(&mut self, name: &str, hot: Capacity) -> Result<(), PeriodError> {
        let Some(i) = self.periods.iter().position(|p| p.0 == name) else {
            return Err(PeriodError::NoSuchTable {
                name: name.to_owned(),
            });
        };
        Instance::check_capacity(name, hot)?;
        match self.periods[i].2 {
            Stage::Planned => {}
            Stage::Hot => self.instance.set_capacity(name, hot)?,
            Stage::Cold | Stage::Archived => {
                return Err(PeriodError::Schedule {
                    reason: format!("period {name:?} is over: its hot capacity cannot change"),
                });
            }
        }
        self.periods[i].3 = hot;
        Ok(())
    }

    /// The number of the period in force at `time_ms`, if any.
    fn period_at(&self, time_ms: i64) -> Option<usize> {
        period_at(&self.periods, |p| p.1, time_ms)
    }

    /// The table that holds the rows of `time_ms`: its period's table, or once the period is
    /// archived, the history table. Where a row of that time is written and read.
    ///
    /// # Errors
    ///
    /// [`PeriodError::Schedule`] before the first period; [`PeriodError::NoSuchTable`] when the
    /// period's table was not created yet (no roll since its lead time), or was archived with
    /// no history table.
    pub fn table_at(&self, time_ms: i64) -> Result<&Table, PeriodError> {
        let Some(i) = self.period_at(time_ms) else {
            return Err(PeriodError::Schedule {
                reason: format!("no period is in force at {time_ms} ms"),
            });
        };
        let name = match (&self.periods[i].2, &self.policy.history) {
            (Stage::Archived, Some((history, _))) => history,
            _ => &self.periods[i].0,
        };
        self.instance
            .table(name)
            .ok_or_else(|| PeriodError::NoSuchTable { name: name.clone() })
    }

    /// Does what is due at the clock's time: creates the history table (first roll) and each
    /// period's table from `lead_ms` before its start (hot), lowers each period's table to the
    /// cold capacity once the period is over, and moves the rows of periods past `keep_periods`
    /// into the history table (each row's newest values, versioned at the move), then deletes
    /// their tables. A lowering the 2-minute rule refuses is deferred to the next roll.
    ///
    /// # Errors
    ///
    /// [`PeriodError::TooManyTables`] when a table is due and the instance is full; the table
    /// model's errors while moving rows.
    pub fn roll(&mut self) -> Result<Roll, PeriodError> {
        let now = self.instance.now_ms();
        let mut roll = Roll::default();
        let current = self.period_at(now);
        // Archive first: it frees table slots.
        if let Some(c) = current {
            for i in 0..self.periods.len() {
                let stage = self.periods[i].2;
                if i + self.policy.keep_periods <= c && matches!(stage, Stage::Hot | Stage::Cold) {
                    let name = self.periods[i].0.clone();
                    let moved = self.archive(&name)?;
                    self.instance.delete_table(&name)?;
                    self.periods[i].2 = Stage::Archived;
                    roll.archived.push((name, moved));
                }
            }
        }
        if let Some((name, capacity)) = self.policy.history.clone()
            && self.instance.table(&name).is_none()
            && !self.instance.slots.iter().any(|s| s.name == name)
        {
            self.create(&name, capacity)?;
            roll.created.push(name);
        }
        for i in 0..self.periods.len() {
            let (name, start, stage, hot) = self.periods[i].clone();
            let ended = self.periods.get(i + 1).is_some_and(|n| n.1 <= now);
            if stage == Stage::Hot && ended {
                match self.instance.set_capacity(&name, self.policy.cold) {
                    Ok(()) => {
                        self.periods[i].2 = Stage::Cold;
                        roll.lowered.push(name);
                    }
                    Err(e @ PeriodError::CapacityChangeTooSoon { .. }) => roll.deferred.push(e),
                    Err(e) => return Err(e),
                }
            } else if stage == Stage::Planned
                && now >= start.saturating_sub(self.policy.lead_ms)
                && !ended
            {
                self.create(&name, hot)?;
                self.periods[i].2 = Stage::Hot;
                roll.created.push(name);
            }
        }
        Ok(roll)
    }

    /// Creates table `name` with the tables' schema and options.
    fn create(&mut self, name: &str, capacity: Capacity) -> Result<(), PeriodError> {
        self.instance
            .create_table(name, self.schema.clone(), self.options.clone(), capacity)
            .map(drop)
    }

    /// Moves every row of table `name` into the history table (if there is one): each row's
    /// newest value per column, a page at a time; answers the rows moved.
    fn archive(&self, name: &str) -> Result<u64, PeriodError> {
        let Some((history, _)) = &self.policy.history else {
            return Ok(0);
        };
        let (Some(from), Some(to)) = (self.instance.table(name), self.instance.table(history))
        else {
            return Ok(0);
        };
        let columns = self.schema.columns().len();
        let mut start = PrimaryKey::inf_min(columns);
        let mut moved = 0u64;
        loop {
            let mut rows: Vec<(PrimaryKey, Vec<Attribute>)> = Vec::new();
            let req = RangeRequest::forward(start.clone(), PrimaryKey::inf_max(columns))
                .limit(MAX_BATCH_ROWS);
            let next = from.for_each_in_range(&req, |row| {
                let mut attributes: Vec<Attribute> = Vec::new();
                for c in &row.cells {
                    if !attributes.iter().any(|a| a.name == c.name) {
                        attributes.push(Attribute::new(c.name.clone(), c.value.clone()));
                    }
                }
                rows.push((row.key.clone(), attributes));
            })?;
            moved += rows.len() as u64;
            // One put per row: a batch's 4 MB limit could refuse a page of large rows.
            for (key, attributes) in rows {
                to.put(key, attributes)?;
            }
            match next {
                Some(n) => start = n,
                None => return Ok(moved),
            }
        }
    }
}
