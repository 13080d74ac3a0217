//! pk-codec: order-preserving, checked primary keys for range-partitioned stores.
