//! An in-memory, range-partitioned reference model of a wide-column store.
//!
//! TODO docs
mod error;
mod heatmap;
mod load;
mod options;
mod partition;
mod request;
mod schema;
mod store;
mod version;

pub use error::{Result, TableError};
pub use heatmap::{Heatmap, HeatmapOptions, Metric};
pub use load::{
    CapacityEstimate, HotKeyValue, Load, LoadReport, OversizedKeyValue, PartitionStats,
    PartitionWindow, WindowStats, compare_designs,
};
pub use options::{DEFAULT_SPLIT_SIZE_BYTES, TableOptions};
pub use partition::{split_points_by_size, split_points_even};
pub use request::{
    Direction, MAX_BATCH_BYTES, MAX_BATCH_ROWS, MAX_RANGE_BYTES, MAX_RANGE_ROWS, RangeRequest,
    RangeResult, ReplayStats, RowWrite, UpdateOp,
};
pub use schema::{
    Attribute, Cell, MAX_ATTRIBUTE_BYTES, MAX_KEY_COLUMNS, MAX_KEY_VALUE_BYTES, PkColumn, PkType,
    PkValue, PrimaryKey, Row, Schema, Value, check_column_name,
};
pub use store::Table;
pub use version::{Clock, ManualClock, ReadOptions, SystemClock, TimeRange};
