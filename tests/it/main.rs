//! The integration tests of pk-codec, as one test binary: every binary is one more link of
//! pk-codec and its dependencies, so the tests are modules here, each named for the behaviour or
//! the module it pins. Only tests that need a process of their own have a file beside `it/`:
//! `derive_ui.rs` (trybuild compiles each case) and `no_alloc.rs` (a counting global allocator).
//!
//! Run one module with a filter: `cargo test --test it table_versions::`. Proptest keeps the
//! seeds of failed cases in `tests/proptest-regressions/<module>.txt`, and runs them first.

// Shared with any test binary beside `it/` (`mod support;` there).
#[path = "../support/mod.rs"]
mod support;

mod analysis_bucket_tails;
mod analysis_report;
mod analyze_judge;
mod analyze_practices;
mod binary_stores;
mod bucket_pruning;
mod buckets;
mod bulk_faults;
mod bulk_import;
mod bulk_writer;
mod cli;
mod codec_errors;
mod codec_props;
mod debug_build_codegen;
mod decimal_kind;
mod decode_bad_input;
mod derive_binary;
mod derive_binary_ranges;
mod derive_config_space;
mod derive_decode;
mod derive_golden;
mod derive_hygiene;
mod derive_layout;
mod derive_props;
// EtcdStore: `--features etcd` (scripts/distributed-tests.sh, .ci/run).
#[cfg(feature = "etcd")]
mod etcd_store;
mod facts_vectors;
mod field_kinds;
mod golden;
mod judge;
mod layout_forms;
mod layout_text;
mod overflow_props;
mod peer_regressions;
mod period_tables;
mod readme;
mod redb_tables;
mod rekey;
mod rekey_key_spaces;
mod scan_end;
mod schedules;
mod split_points;
mod store_conformance;
mod store_model;
mod store_ranges;
mod student_cards;
mod table_concurrency;
mod table_keys;
mod table_ops;
mod table_partitions;
mod table_props;
mod table_schema;
mod table_versions;
mod timeline;
mod typed_bulk_writes;
mod typed_values;
