//! Store profiles: what one partition of a store serves and how the store splits, each figure
//! with its source, in one table a user reads and overrides: [`StoreProfile`].

use serde::Serialize;

use super::AnalysisError;

/// One figure of a profile: a number with its source, or a statement that the store
/// publishes none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub enum Figure {
    /// Published by the store (or set by an option).
    Published(u64),
    /// The store publishes no such figure.
    Unpublished,
}

impl Figure {
    /// The number, if there is one.
    #[must_use]
    pub const fn value(self) -> Option<u64> {
        match self {
            Self::Published(v) => Some(v),
            Self::Unpublished => None,
        }
    }
}

/// A store's load split: past `ops` operations a second (or per window for `generic`),
/// sustained for `sustain_ms`, a partition splits in two.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LoadSplit {
    /// Operations per window past which a partition splits.
    pub ops_per_window: Figure,
    /// How long the load must last, ms.
    pub sustain_ms: Figure,
}

/// What one partition of a store serves and how the store splits.
///
/// | profile | window | writes / s a partition | reads / s | split by size | split by load | one hot key isolated | per-value limit |
/// |---|---|---|---|---|---|---|---|
/// | `generic` | 60 s | 100 a window | not modelled | 64 MiB | above 100 writes a window, 1 window | no | 10 GB |
/// | `dynamodb` | 1 s | 1,000 | 3,000 | 10 GB | "split for heat": threshold and time not published | yes (item stays capped) | 10 GB |
/// | `tikv` | 1 s | not published | not published | region size (96 MiB) | 3,000 requests/s or 30 MiB/s, 10 s | no (avoids it) | none |
/// | `cockroachdb` | 1 s | not published | not published | 512 MiB | 2,500 queries/s, time not published | no | none |
/// | `hbase` | 1 s | not published | not published | 10 GiB (max file size) | none | no | none |
/// | `tablestore` | 1 s | 1,000 ops (about) | 1,000 ops (about) | 10 GB | by load, threshold not published | no | 10 GB |
///
/// Sources: DynamoDB, "Best practices for designing and using partition keys effectively" and
/// "Burst and adaptive capacity" (per-partition 3,000 RCU / 1,000 WCU, 10 GB, split for heat;
/// `KeyRangeThroughputExceeded`); TiKV, "Load Base Split" (`split.qps-threshold` 3,000,
/// `split.byte-threshold` 30 MiB, 10 s) and "Region split" (`region-split-size` 96 MiB);
/// CockroachDB, "Load-based splitting" (`kv.range_split.load_qps_threshold` 2,500) and
/// "Configure replication zones" (`range_max_bytes` 512 MiB); HBase, "Apache HBase Reference
/// Guide: Region splitting" (`hbase.hregion.max.filesize` 10 GiB, split by size only);
/// Tablestore, the table-design practices (a partition copes under about 1,000 operations a
/// second and 10 GB a partition-key value). `generic` is this crate's own model, not a store.
///
/// A figure a store does not publish is [`Figure::Unpublished`]: a run that needs it asks for
/// the option that sets it (never a guess).
///
/// What the model does with them: a partition splits after one window over the load
/// threshold; a longer sustain time (TiKV's 10 s) is kept here but not modelled yet, so the
/// throttling of a ramp before a split is under-counted for it (the throttling no split cures,
/// and so the verdict and the headroom, does not depend on it). Reads are not judged (a dump
/// holds writes).
///
/// # Examples
///
/// ```
/// use pk_codec::table::analysis::{Figure, StoreProfile};
///
/// let d = StoreProfile::named("dynamodb").unwrap();
/// assert_eq!(d.window_ms, 1_000);
/// assert_eq!(d.write_capacity, Figure::Published(1_000));
/// let hbase = StoreProfile::named("hbase").unwrap();
/// assert_eq!(hbase.write_capacity, Figure::Unpublished);
/// // HBase publishes no per-region capacity: the run asks for it.
/// assert!(hbase.capacity().unwrap_err().to_string().contains("--write-capacity"));
/// assert!(StoreProfile::named("hbase").unwrap().with_write_capacity(5_000).capacity().is_ok());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct StoreProfile {
    /// The profile's name (`generic`, `dynamodb`, ...).
    pub name: &'static str,
    /// The load window the figures are counted in, ms.
    pub window_ms: i64,
    /// Writes one partition serves per window.
    pub write_capacity: Figure,
    /// Reads one partition serves per window (dumps of writes do not use it).
    pub read_capacity: Figure,
    /// Bytes past which a partition splits by size.
    pub split_bytes: Figure,
    /// The load split, if the store splits by load.
    pub load_split: Option<LoadSplit>,
    /// Whether the store can isolate one hot key in a partition of its own (its load stays
    /// capped at one partition's capacity either way).
    pub isolates_hot_key: bool,
    /// Bytes one partition-key value may hold.
    pub value_limit: Figure,
    /// Where the figures come from.
    pub source: &'static str,
}

/// The profiles' names, in the order `--store` lists them.
pub const STORE_NAMES: [&str; 6] = [
    "generic",
    "dynamodb",
    "tikv",
    "cockroachdb",
    "hbase",
    "tablestore",
];

/// What a run uses of a profile, every figure it needs known.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Capacity {
    /// Writes one partition serves per window.
    pub writes_per_window: u64,
    /// The load window, ms.
    pub window_ms: i64,
    /// Writes per window past which a partition splits (`None`: no load split).
    pub split_ops: Option<u64>,
    /// Bytes past which a partition splits.
    pub split_bytes: u64,
}

impl StoreProfile {
    /// The profile `name` (one of [`STORE_NAMES`]), `None` for another name.
    #[must_use]
    pub fn named(name: &str) -> Option<Self> {
        use Figure::{Published as P, Unpublished as U};
        const GB: u64 = 10_000_000_000;
        Some(match name {
            "generic" => Self {
                name: "generic",
                window_ms: 60_000,
                write_capacity: P(100),
                read_capacity: U,
                split_bytes: P(64 << 20),
                load_split: Some(LoadSplit {
                    ops_per_window: P(100),
                    sustain_ms: P(60_000),
                }),
                isolates_hot_key: false,
                value_limit: P(GB),
                source: "pk-codec's own model (not a store): 100 writes a 60 s window, 64 MiB",
            },
            "dynamodb" => Self {
                name: "dynamodb",
                window_ms: 1_000,
                write_capacity: P(1_000),
                read_capacity: P(3_000),
                split_bytes: P(GB),
                load_split: Some(LoadSplit {
                    ops_per_window: U,
                    sustain_ms: U,
                }),
                isolates_hot_key: true,
                value_limit: P(GB),
                source: "DynamoDB Developer Guide: partition key design, burst and adaptive capacity (1,000 WCU and 3,000 RCU a partition a second, 10 GB, split for heat)",
            },
            "tikv" => Self {
                name: "tikv",
                window_ms: 1_000,
                write_capacity: U,
                read_capacity: U,
                split_bytes: P(96 << 20),
                load_split: Some(LoadSplit {
                    ops_per_window: P(3_000),
                    sustain_ms: P(10_000),
                }),
                isolates_hot_key: false,
                value_limit: U,
                source: "TiKV docs: Load Base Split (split.qps-threshold 3,000, 30 MiB/s, 10 s), region-split-size 96 MiB",
            },
            "cockroachdb" => Self {
                name: "cockroachdb",
                window_ms: 1_000,
                write_capacity: U,
                read_capacity: U,
                split_bytes: P(512 << 20),
                load_split: Some(LoadSplit {
                    ops_per_window: P(2_500),
                    sustain_ms: U,
                }),
                isolates_hot_key: false,
                value_limit: U,
                source: "CockroachDB docs: load-based splitting (kv.range_split.load_qps_threshold 2,500), range_max_bytes 512 MiB",
            },
            "hbase" => Self {
                name: "hbase",
                window_ms: 1_000,
                write_capacity: U,
                read_capacity: U,
                split_bytes: P(10 << 30),
                load_split: None,
                isolates_hot_key: false,
                value_limit: U,
                source: "Apache HBase Reference Guide: region splits by size (hbase.hregion.max.filesize 10 GiB), no load split by default",
            },
            "tablestore" => Self {
                name: "tablestore",
                window_ms: 1_000,
                write_capacity: P(1_000),
                read_capacity: P(1_000),
                split_bytes: P(GB),
                load_split: Some(LoadSplit {
                    ops_per_window: U,
                    sustain_ms: U,
                }),
                isolates_hot_key: false,
                value_limit: P(GB),
                source: "Tablestore table-design practices: a partition copes under about 1,000 operations a second and 10 GB a partition-key value",
            },
            _ => return None,
        })
    }

    /// The profile with its write capacity set (`--write-capacity`, writes a partition serves
    /// per window).
    #[must_use]
    pub const fn with_write_capacity(mut self, writes_per_window: u64) -> Self {
        self.write_capacity = Figure::Published(writes_per_window);
        self
    }

    /// The profile with its load-split threshold set (`--split-ops`, writes per window), a
    /// load split added if it had none.
    #[must_use]
    pub fn with_split_ops(mut self, ops_per_window: u64) -> Self {
        let sustain_ms = match self.load_split {
            Some(s) => s.sustain_ms,
            None => Figure::Unpublished,
        };
        self.load_split = Some(LoadSplit {
            ops_per_window: Figure::Published(ops_per_window),
            sustain_ms,
        });
        // `generic`'s partition serves what it splits above (today's `--split-ops`).
        if matches!(self.name.as_bytes(), b"generic") {
            self.write_capacity = Figure::Published(ops_per_window);
        }
        self
    }

    /// The profile with its size split set (`--split-bytes`).
    #[must_use]
    pub const fn with_split_bytes(mut self, bytes: u64) -> Self {
        self.split_bytes = Figure::Published(bytes);
        self
    }

    /// The profile with its per-value limit set (`--partition-limit`).
    #[must_use]
    pub const fn with_value_limit(mut self, bytes: u64) -> Self {
        self.value_limit = Figure::Published(bytes);
        self
    }

    /// The profile with its window set (`--window-ms`, at least 1). A store's figures are
    /// per second and scale with the window (1,000 writes a second are 60,000 a 60 s window);
    /// `generic`'s are per window and stay as they are.
    #[must_use]
    pub fn with_window_ms(mut self, ms: i64) -> Self {
        let ms = ms.max(1);
        if self.name != "generic" {
            let scale = |f: Figure| match f {
                Figure::Published(v) => Figure::Published(
                    u64::try_from(
                        u128::from(v) * u128::from(ms.unsigned_abs())
                            / u128::from(self.window_ms.unsigned_abs().max(1)),
                    )
                    .unwrap_or(u64::MAX)
                    .max(1),
                ),
                Figure::Unpublished => Figure::Unpublished,
            };
            self.write_capacity = scale(self.write_capacity);
            self.read_capacity = scale(self.read_capacity);
            if let Some(s) = &mut self.load_split {
                s.ops_per_window = scale(s.ops_per_window);
            }
        }
        self.window_ms = ms;
        self
    }

    /// The figures a run needs, every one known.
    ///
    /// # Errors
    ///
    /// When the store publishes no write capacity or load-split threshold and no option set
    /// it: the error names the option.
    pub fn capacity(&self) -> Result<Capacity, AnalysisError> {
        let mut missing = Vec::new();
        let writes = self.write_capacity.value();
        if writes.is_none() {
            missing.push(format!(
                "--write-capacity N (the writes one partition serves per {} ms window; {} publishes no per-partition write capacity)",
                self.window_ms, self.name
            ));
        }
        let split_ops = match self.load_split {
            None => None,
            Some(s) => match s.ops_per_window.value() {
                Some(v) => Some(v),
                None => {
                    missing.push(format!(
                        "--split-ops N (the writes per {} ms window past which a partition splits by load; {} splits by load but publishes no threshold)",
                        self.window_ms, self.name
                    ));
                    None
                }
            },
        };
        let split_bytes = self.split_bytes.value();
        if split_bytes.is_none() {
            missing.push(format!(
                "--split-bytes N ({} publishes no split size)",
                self.name
            ));
        }
        match (writes, split_bytes) {
            (Some(writes_per_window), Some(split_bytes)) if missing.is_empty() => Ok(Capacity {
                writes_per_window: writes_per_window.max(1),
                window_ms: self.window_ms,
                split_ops,
                split_bytes,
            }),
            _ => Err(format!(
                "--store {} needs figures the store does not publish: give {}",
                self.name,
                missing.join(", and ")
            )
            .into()),
        }
    }
}
