//! pk-codec: order-preserving, checked primary keys for range-partitioned stores.

/// An in-memory, range-partitioned reference model of the store, to see whether a key design runs hot.
pub mod table;
