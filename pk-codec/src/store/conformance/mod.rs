//! A conformance kit for [`RangeStore`] adapters: every promise of the trait, and of what is
//! built on it ([`scan_ranges`], [`BulkWriter`], [`RekeyJob`]), written down as a [`Promise`]
//! and checked against a store the adapter's own tests make.
//!
//! A key codec is only as correct as the store under it reads its keys: a store that sorts
//! `ff` below `00`, drops the last row of a page, ignores a failed compare or reports a row
//! written that was not, breaks every guarantee of the keys above it without a single key
//! being wrong. [`Suite::run`] finds each of these and names the promise broken, the keys
//! involved, what was expected and what was found.
//!
//! # Running it
//!
//! The suite takes a factory: a closure that makes a fresh, empty store, called once per check
//! (so one check's rows never meet another's). From the adapter's tests:
//!
//! ```
//! use pk_codec::store::MemoryStore;
//! use pk_codec::store::conformance::Suite;
//!
//! let report = Suite::new(|| Ok(MemoryStore::default())).run();
//! assert!(report.is_ok(), "{report}");
//! // Or, failing the test with every promise broken listed:
//! Suite::new(|| Ok(MemoryStore::default())).cases(16).assert_conforms();
//! ```
//!
//! A check that finds the store offers no conditional writes ([`RangeStore::write_if`]'s
//! default refusal) is skipped, not failed, and listed in [`Report::skipped`]: such a store is
//! allowed, though [`RekeyJob`] cannot run on it. [`Suite::require_conditional_writes`] makes
//! it a failure.
//!
//! # Writing an adapter, step by step
//!
//! The RocksDB adapter (`store::RocksStore`, feature `rocksdb`,
//! `pk-codec/src/store/rocksdb.rs`) is the worked example. An adapter is a type that holds the
//! store's handle and implements [`RangeStore`]:
//!
//! 1. **Keys and order.** Keys are bytes compared bytewise (`memcmp`, shorter first on a tie):
//!    a binary layout's keys hold `00` and `ff` anywhere, and a text key is its UTF-8 bytes. A
//!    store with a custom comparator, or one that reads keys as C strings, breaks
//!    [`Promise::ByteOrder`]. RocksDB's default comparator is bytewise: the adapter keeps it.
//! 2. **Point writes.** `put`, `get`, `delete` map to the store's own; `delete` answers whether
//!    the key was there (RocksDB's delete does not say, so the adapter reads first, in the same
//!    transaction).
//! 3. **Range reads.** [`RangeQuery::remaining`] turns a query and its resume key into one
//!    interval `[from, to)` (or `[from, to]` when resuming backward): compute it once and seek
//!    there; never re-derive the resume rules. Walk forward from `from`, or backward from `to`,
//!    take at most `limit` rows (and at most your [`max_page`](RangeStore::max_page)), then
//!    look at one row more: its key is [`RangePage::next`], `None` when there is none. A limit
//!    of 0 is [`StoreErrorKind::Invalid`].
//! 4. **Batches.** [`batch_write`](RangeStore::batch_write) answers one result per op, in
//!    order; report `Ok` only for a row the store has taken (RocksDB: a `WriteBatch`, all rows
//!    in one write, so one result for all). A batch over [`max_batch`](RangeStore::max_batch)
//!    is refused as a whole.
//! 5. **Conditional writes.** [`write_if`](RangeStore::write_if) checks every [`Expect`]
//!    (with [`Expect::holds`], the one test every store makes) and applies the ops, atomically
//!    against other writes: RocksDB's `OptimisticTransactionDB` checks the keys it read at
//!    commit and answers `Busy` when another write touched one, so the adapter retries the
//!    check. Without transactions, keep the default (it refuses; the suite skips those checks).
//! 6. **Write profile.** [`write_profile`](RangeStore::write_profile) tells a [`BulkWriter`]
//!    how the store likes to be written; measure it (BENCHMARKS.md, "Bulk writes into
//!    RocksDB": a writer with its defaults against the best plain batched loop).
//! 7. **Run the suite** from the adapter's tests, with a factory that opens a fresh store (a
//!    new temporary directory for RocksDB):
//!
//! ```ignore
//! // `ignore` here: RocksStore exists only with the `rocksdb` feature. The same example runs
//! // as a doc test of `RocksStore` (`cargo test -p pk-codec --features rocksdb --doc RocksStore`)
//! // and in tests/it/store_conformance.rs (`cargo test --features rocksdb`).
//! use pk_codec::store::RocksStore;
//! use pk_codec::store::conformance::Suite;
//!
//! let dir = std::env::temp_dir().join("my-adapter-tests");
//! let mut n = 0;
//! Suite::new(|| {
//!     n += 1;
//!     RocksStore::open(dir.join(n.to_string()))
//! })
//! .require_conditional_writes(true)
//! .assert_conforms();
//! ```
//!
//! The suite checks a store from the outside, in one process: it cannot see durability across a
//! crash, and its concurrent checks show lost updates and lost rows, not every interleaving.
//!
//! # Random keys without a dependency
//!
//! The random checks ([`Promise::RandomTextKeys`], [`Promise::RandomBinaryKeys`]) use a small
//! seeded generator inside this module rather than proptest: an adapter's tests then need no
//! dependency besides pk-codec, and a failure names its seed ([`Suite::seed`]) so it replays
//! exactly.

mod checks;
mod random;

use std::fmt;

#[cfg(doc)]
use super::{BulkWriter, Expect, RangePage, RangeQuery, RekeyJob, StoreErrorKind, scan_ranges};
use super::{RangeStore, StoreError, show_key};

/// One promise of [`RangeStore`] (or of what is built on it) that the suite checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Promise {
    /// The factory gives an empty store.
    FreshStoreIsEmpty,
    /// `put` then `get` answers the value; a second `put` replaces it; an absent key is `None`.
    PointWrites,
    /// `delete` removes the key and answers whether it was there.
    DeleteReports,
    /// The empty key is either stored and read first like any key, or refused as `Invalid`
    /// without writing anything.
    EmptyKey,
    /// Range reads answer keys in bytewise order (`00` lowest, `ff` highest, a key before its
    /// extensions), ascending forward and descending backward.
    ByteOrder,
    /// A range read answers exactly the keys in `[start, end)`.
    RangeBounds,
    /// A range read with a limit of 0 is refused as `Invalid`.
    LimitZero,
    /// A page holds at most `min(limit, max_page)` rows; `max_page` and `max_batch` are at
    /// least 1.
    PageLimit,
    /// Following `RangePage::next` forward answers every row of the range once, in order, and
    /// ends.
    ForwardPaging,
    /// Following `RangePage::next` backward answers every row of the range once, in order, and
    /// ends.
    BackwardPaging,
    /// A resume key outside `[start, end)` keeps the read inside it, as
    /// `RangeQuery::remaining` says.
    ResumeClamped,
    /// `batch_write` answers one result per op, in order, and every op reported `Ok` is applied,
    /// in order (a key written twice in a batch ends with its last write).
    BatchResults,
    /// A batch over `max_batch` rows is refused as a whole.
    BatchOverLimit,
    /// `write_if` whose expectations all hold answers `true` and applies every op, in order.
    WriteIfApplies,
    /// `write_if` with an expectation that fails answers `false` and writes nothing.
    WriteIfRefuses,
    /// `batch_write_if` answers one result per write, in order, each as `write_if` alone.
    BatchWriteIf,
    /// Conditional writes from threads at once lose no update (compare-and-set increments add
    /// up, and the ops of one write land together).
    WriteIfAtomic,
    /// Writes from threads at once all land, and range reads during them stay in order.
    ConcurrentWriters,
    /// The write profile is one a `BulkWriter` takes: 1 to `MAX_WORKERS` workers, 1 to
    /// `max_batch` rows, at least one byte.
    WriteProfile,
    /// `scan_ranges` over a bucketed layout's ranges visits every row once, merged in key order
    /// after the bucket prefix, resuming from its cursor.
    ScanRanges,
    /// A `BulkWriter` with the store's profile writes every row and reports each written.
    BulkWriter,
    /// A `RekeyJob` moves every row to the new layout through conditional writes, keeping a
    /// live write made while it runs.
    Rekey,
    /// Random writes of text layouts' keys, then paged reads in both directions, agree with a
    /// sorted map, and every key read decodes to the values it was made of.
    RandomTextKeys,
    /// The same with binary layouts' keys and raw byte keys (any byte, `00` and `ff` often).
    RandomBinaryKeys,
}

impl Promise {
    /// Every promise, in the order the suite checks them.
    pub const ALL: [Self; 24] = [
        Self::FreshStoreIsEmpty,
        Self::PointWrites,
        Self::DeleteReports,
        Self::EmptyKey,
        Self::ByteOrder,
        Self::RangeBounds,
        Self::LimitZero,
        Self::PageLimit,
        Self::ForwardPaging,
        Self::BackwardPaging,
        Self::ResumeClamped,
        Self::BatchResults,
        Self::BatchOverLimit,
        Self::WriteIfApplies,
        Self::WriteIfRefuses,
        Self::BatchWriteIf,
        Self::WriteIfAtomic,
        Self::ConcurrentWriters,
        Self::WriteProfile,
        Self::ScanRanges,
        Self::BulkWriter,
        Self::Rekey,
        Self::RandomTextKeys,
        Self::RandomBinaryKeys,
    ];

    /// The promise's name, as failures print it.
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::store::conformance::Promise;
    ///
    /// assert_eq!(Promise::ByteOrder.name(), "byte order");
    /// ```
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::FreshStoreIsEmpty => "fresh store is empty",
            Self::PointWrites => "point writes",
            Self::DeleteReports => "delete reports",
            Self::EmptyKey => "empty key",
            Self::ByteOrder => "byte order",
            Self::RangeBounds => "range bounds",
            Self::LimitZero => "limit zero",
            Self::PageLimit => "page limit",
            Self::ForwardPaging => "forward paging",
            Self::BackwardPaging => "backward paging",
            Self::ResumeClamped => "resume clamped",
            Self::BatchResults => "batch results",
            Self::BatchOverLimit => "batch over limit",
            Self::WriteIfApplies => "write_if applies",
            Self::WriteIfRefuses => "write_if refuses",
            Self::BatchWriteIf => "batch_write_if",
            Self::WriteIfAtomic => "write_if atomic",
            Self::ConcurrentWriters => "concurrent writers",
            Self::WriteProfile => "write profile",
            Self::ScanRanges => "scan_ranges",
            Self::BulkWriter => "bulk writer",
            Self::Rekey => "rekey",
            Self::RandomTextKeys => "random text keys",
            Self::RandomBinaryKeys => "random binary keys",
        }
    }

    /// Whether the promise is about conditional writes (skipped for a store without them).
    const fn needs_write_if(self) -> bool {
        matches!(
            self,
            Self::WriteIfApplies
                | Self::WriteIfRefuses
                | Self::BatchWriteIf
                | Self::WriteIfAtomic
                | Self::Rekey
        )
    }
}

impl fmt::Display for Promise {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A promise broken: which, the keys involved, what was expected and what the store did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The promise broken.
    pub promise: Promise,
    /// The keys involved (as bytes).
    pub keys: Vec<Vec<u8>>,
    /// What the promise asks.
    pub expected: String,
    /// What the store did.
    pub found: String,
}

impl Violation {
    fn new(
        promise: Promise,
        keys: &[&[u8]],
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Self {
        Self {
            promise,
            keys: keys.iter().map(|k| k.to_vec()).collect(),
            expected: expected.into(),
            found: found.into(),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "promise broken: {}; keys [", self.promise)?;
        for (i, k) in self.keys.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(&show_key(k))?;
        }
        write!(f, "]; expected {}; found {}", self.expected, self.found)
    }
}

impl std::error::Error for Violation {}

/// What a [`Suite::run`] found: the promises kept, those skipped (with why), and those broken.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// The promises checked and kept.
    pub kept: Vec<Promise>,
    /// The promises not checked, with the reason (a store without conditional writes).
    pub skipped: Vec<(Promise, String)>,
    /// The promises broken, the first violation of each.
    pub violations: Vec<Violation>,
}

impl Report {
    /// Whether no promise was broken.
    #[must_use]
    pub fn is_ok(&self) -> bool {
        self.violations.is_empty()
    }

    /// The violation of `promise`, if it was broken.
    #[must_use]
    pub fn broken(&self, promise: Promise) -> Option<&Violation> {
        self.violations.iter().find(|v| v.promise == promise)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} promises kept, {} skipped, {} broken",
            self.kept.len(),
            self.skipped.len(),
            self.violations.len()
        )?;
        for (p, why) in &self.skipped {
            write!(f, "\n  skipped: {p}: {why}")?;
        }
        for v in &self.violations {
            write!(f, "\n  {v}")?;
        }
        Ok(())
    }
}

/// The conformance suite over stores made by a factory: see the [module docs](self).
pub struct Suite<F> {
    factory: F,
    cases: usize,
    seed: u64,
    threads: usize,
    require_write_if: bool,
}

impl<F> fmt::Debug for Suite<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Suite")
            .field("cases", &self.cases)
            .field("seed", &self.seed)
            .field("threads", &self.threads)
            .field("require_write_if", &self.require_write_if)
            .finish_non_exhaustive()
    }
}

impl<S, F> Suite<F>
where
    S: RangeStore + 'static,
    F: FnMut() -> Result<S, StoreError>,
{
    /// The suite over the stores `factory` makes (a fresh, empty store per check), with 32
    /// random cases per random check, seed 0 and 4 threads.
    #[must_use]
    pub const fn new(factory: F) -> Self {
        Self {
            factory,
            cases: 32,
            seed: 0,
            threads: 4,
            require_write_if: false,
        }
    }

    /// The same suite with `cases` random cases per random check (at least 1).
    #[must_use]
    pub fn cases(mut self, cases: usize) -> Self {
        self.cases = cases.max(1);
        self
    }

    /// The same suite with another seed for its random cases.
    #[must_use]
    pub const fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The same suite with `threads` threads in its concurrent checks (at least 2).
    #[must_use]
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(2);
        self
    }

    /// The same suite failing, rather than skipping, the conditional-write checks of a store
    /// without conditional writes.
    #[must_use]
    pub const fn require_conditional_writes(mut self, require: bool) -> Self {
        self.require_write_if = require;
        self
    }

    /// Runs every check, each on a fresh store, and reports.
    pub fn run(&mut self) -> Report {
        let mut report = Report::default();
        let mut write_if: Option<bool> = None;
        for promise in Promise::ALL {
            let store = match self.fresh() {
                Ok(store) => store,
                Err(v) => {
                    report.violations.push(v);
                    return report;
                }
            };
            if promise.needs_write_if() {
                let offered = *write_if.get_or_insert_with(|| checks::offers_write_if(&store));
                if !offered {
                    if self.require_write_if {
                        report.violations.push(Violation::new(
                            promise,
                            &[],
                            "conditional writes (required by the suite)",
                            "write_if refused as Invalid: the store offers none",
                        ));
                    } else {
                        report.skipped.push((
                            promise,
                            "the store offers no conditional writes (write_if refuses)".to_owned(),
                        ));
                    }
                    continue;
                }
            }
            let ctx = checks::Ctx {
                cases: self.cases,
                seed: self.seed,
                threads: self.threads,
            };
            match checks::check(promise, store, &ctx) {
                Ok(()) => report.kept.push(promise),
                Err(v) => report.violations.push(v),
            }
        }
        report
    }

    /// Runs every check and panics, listing every promise broken, if one is: for an adapter's
    /// `#[test]`.
    ///
    /// # Panics
    ///
    /// When the store breaks a promise; the message is the [`Report`].
    pub fn assert_conforms(&mut self) {
        let report = self.run();
        assert!(report.is_ok(), "the store does not conform: {report}");
    }

    /// A store from the factory, checked empty.
    fn fresh(&mut self) -> Result<S, Violation> {
        let store = (self.factory)().map_err(|e| {
            Violation::new(
                Promise::FreshStoreIsEmpty,
                &[],
                "the factory to make a store",
                format!("it failed: {e}"),
            )
        })?;
        let page = store
            .range(&super::RangeQuery::new("", None).limit(1))
            .map_err(|e| {
                Violation::new(
                    Promise::FreshStoreIsEmpty,
                    &[],
                    "a read of every key",
                    format!("the store refused it: {e}"),
                )
            })?;
        if let Some((k, _)) = page.rows.first() {
            return Err(Violation::new(
                Promise::FreshStoreIsEmpty,
                &[k],
                "an empty store from the factory",
                "a store holding this key",
            ));
        }
        Ok(store)
    }
}
