//! An in-memory, range-partitioned reference model of a wide-column store, to see whether a
//! key design runs hot.
//!
//! The model follows the data model of stores such as Tablestore (HBase and Bigtable are
//! alike): rows sorted by a primary key of 1 to 4 columns (String, Integer or Binary; strings
//! and binaries compare bytewise, integers numerically), the first column being the
//! *partition key*; the table is cut into partitions by ranges of that key, which split by
//! size and by load and merge again when small and cold. Attribute values carry versions
//! (ms since the epoch) with `max_versions`, TTL and max version offset. The store's limits
//! are enforced and every refusal is a [`TableError`].
//!
//! The point is the [`LoadReport`]: per load window it finds the busiest partition, and turns
//! that into the skew figures that decide a design (hottest partition's share of operations,
//! max/mean load, partitions that saw writes, key values too big or too hot to split) and a
//! capacity model ([`LoadReport::capacity`]). [`Table::heatmap`] draws load over key space and
//! time as text or SVG, like the key visualizers of managed stores.
//!
//! This module does not depend on the key codec: any key, made by hand or by the codec, can be
//! stored.
//!
//! # Comparing key designs
//!
//! Replay the same traffic under several designs, each in a table with one String
//! partition-key column, and compare the reports. [`Table::replay`] sets a [`ManualClock`] to
//! each event's timestamp before writing it, so a day of traffic takes a moment and the load
//! windows are exact.
//!
//! ```
//! use pk_codec::table::{
//!     Attribute, HeatmapOptions, ManualClock, Schema, Table, TableOptions, compare_designs,
//! };
//!
//! let start = 1_700_000_000_000; // ms
//! // One design = one table, split at 4 KB or 50 operations per one-second window.
//! let make = || -> Result<(Table, ManualClock), pk_codec::table::TableError> {
//!     let clock = ManualClock::new(start);
//!     let options = TableOptions::default()
//!         .split_size_bytes(4 << 10)
//!         .split_load_ops(50)
//!         .load_window_ms(1_000);
//!     Ok((Table::with_clock(Schema::single_string("pk")?, options, clock.clone())?, clock))
//! };
//! // 2,000 purchases, 10 a second; order numbers increase over time.
//! let purchases = (0..2_000i64).map(|i| (200_000 + i, (i * 7_919) % 1_000, start + i * 100));
//!
//! // Design 1: the order number as it is (sequential: a tail hotspot).
//! let (seq, clock) = make()?;
//! seq.replay(&clock, purchases.clone().map(|(order, _card, ts)| {
//!     (format!("{order:08}"), vec![Attribute::new("amount_cents", 532)], ts)
//! }))?;
//!
//! // Design 2: the card id first (spread over many values), the order number after it.
//! let (spread, clock) = make()?;
//! spread.replay(&clock, purchases.map(|(order, card, ts)| {
//!     (format!("{card:06},{order:08}"), vec![Attribute::new("amount_cents", 532)], ts)
//! }))?;
//!
//! let (a, b) = (seq.report(), spread.report());
//! assert!(a.hottest_share > b.hottest_share);
//! println!("{}", compare_designs(&[("order number", &a), ("card,order", &b)], 5));
//! let heatmap = spread.heatmap(&HeatmapOptions::default());
//! println!("{}", heatmap.to_text());
//! # #[cfg(feature = "svg")] {
//! let svg: String = heatmap.to_svg(800, 400)?; // write it to a file to view it (feature `svg`)
//! assert!(svg.contains("</svg>"));
//! # }
//! # Ok::<(), pk_codec::table::TableError>(())
//! ```
//!
//! # Operations
//!
//! | operation | method |
//! |---|---|
//! | write a row (replacing it) | [`Table::put`] |
//! | read a row, some columns, versions or a time range | [`Table::get`] with [`ReadOptions`] |
//! | change some columns | [`Table::update`] with [`UpdateOp`]s |
//! | delete a row | [`Table::delete`] |
//! | up to 200 rows / 4 MB, each row on its own | [`Table::batch_write`] |
//! | read a range forward or backward, with INF_MIN / INF_MAX, limit and resume key | [`Table::get_range`] |
//! | pre-split | [`TableOptions::pre_split`], [`split_points_even`], [`split_points_by_size`] |
//!
//! # Threads
//!
//! Every operation takes `&self`. Each partition has its own lock, and threads read the
//! partition map from one of several copies (chosen per thread), so writers to different
//! partitions do not wait for each other; writers to the same partition take turns, so to load in parallel, pre-split the
//! table (or set split thresholds low enough) that the writers' keys fall in different
//! partitions. A split or merge locks the map and the partitions concerned for a moment; a
//! range read moves partition by partition, so rows come in order, each once, while splits
//! happen.
//!
//! # What the model leaves out
//!
//! Expired data is invisible at once and dropped when its row is next written or at
//! [`Table::compact`]. Load splits decide from a sample of operations (one in
//! [`TableOptions::load_sample_every`]). There is no persistence, no secondary index and no
//! conditional write.
//!
//! [`LoadReport::capacity`]: crate::table::LoadReport::capacity
//! [`LoadReport`]: crate::table::LoadReport
//! [`ManualClock`]: crate::table::ManualClock
//! [`ReadOptions`]: crate::table::ReadOptions
//! [`Table::batch_write`]: crate::table::Table::batch_write
//! [`Table::compact`]: crate::table::Table::compact
//! [`Table::delete`]: crate::table::Table::delete
//! [`Table::get_range`]: crate::table::Table::get_range
//! [`Table::get`]: crate::table::Table::get
//! [`Table::heatmap`]: crate::table::Table::heatmap
//! [`Table::put`]: crate::table::Table::put
//! [`Table::replay`]: crate::table::Table::replay
//! [`Table::update`]: crate::table::Table::update
//! [`TableError`]: crate::table::TableError
//! [`TableOptions::load_sample_every`]: crate::table::TableOptions::load_sample_every
//! [`TableOptions::pre_split`]: crate::table::TableOptions::pre_split
//! [`UpdateOp`]: crate::table::UpdateOp
//! [`split_points_by_size`]: crate::table::split_points_by_size
//! [`split_points_even`]: crate::table::split_points_even

pub mod analysis;
mod error;
mod heatmap;
mod hotspot;
mod judge;
mod load;
mod options;
mod partition;
mod periods;
mod pk_type;
mod practices;
mod rebalance;
mod request;
mod row;
mod rowset;
mod schema;
mod small_bytes;
mod splits;
mod store;
mod version;
mod window;

/// A seeded generator of 31-bit numbers (a 64-bit LCG's high bits), for the unit tests.
#[cfg(test)]
pub(crate) fn test_lcg(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed;
    move || {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        x >> 33
    }
}

pub use error::TableError;
pub use heatmap::{Heatmap, HeatmapOptions, Metric, utc};
pub use hotspot::{HotspotMeter, HotspotReport, HotspotWindow};
pub use judge::{DEFAULT_SKETCH_BUDGET, Judge};
pub use load::{
    CapacityEstimate, HotKeyValue, Load, LoadReport, OversizedKeyValue, PartitionStats,
    PartitionWindow, WindowStats, compare_designs,
};
pub use options::{DEFAULT_SPLIT_SIZE_BYTES, TableOptions};
pub use partition::{split_points_by_size, split_points_even};
pub use periods::{
    CAPACITY_CHANGE_INTERVAL_MS, CAPACITY_UNIT_BYTES, Capacity, Instance, MAX_CAPACITY_UNITS,
    MAX_TABLES, PeriodError, PeriodTables, Roll, RollPolicy, TableUsage, UnitUsage, WindowUsage,
    capacity_units, usage_table,
};
pub use practices::{
    AttributeAudit, DEFAULT_PARTITION_LIMIT, Finding, FindingCode, Growth, MAX_ROW_COLUMNS,
    TABLE_ROW_LIMIT, ValueVolume, VolumeMeter, YEAR_MS, table_findings, volume_findings,
};
pub use request::{
    Direction, MAX_BATCH_BYTES, MAX_BATCH_ROWS, MAX_RANGE_BYTES, MAX_RANGE_ROWS, RangeRequest,
    RangeResult, ReplayStats, RowWrite, UpdateOp,
};
pub use schema::{
    Attribute, AttributeValue, Cell, MAX_ATTRIBUTE_BYTES, MAX_KEY_COLUMNS, MAX_KEY_VALUE_BYTES,
    PkColumn, PkType, PkValue, PrimaryKey, Row, Schema, cell_bytes, check_column_name,
};
pub use store::Table;
pub use version::{Clock, ManualClock, ReadOptions, SystemClock, TimeRange};
