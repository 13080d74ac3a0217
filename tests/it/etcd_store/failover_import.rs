//! An import into etcd with a node killed at a fixed row: what the leader-loss test
//! (`etcd_store::failover`) and the failover benchmark (`benches/etcd_failover.rs`,
//! `scripts/etcd-failover-bench.sh`) both run, written once. The node is killed by the thread
//! that adds the rows, right before it adds row `kill_at` (a gate on the row count, not a sleep).
//!
//! No `crate::` paths: the benchmark includes this file as a module of its own.

// Shared with benches/etcd_failover.rs, which uses what the test does not.
#![allow(dead_code)]

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pk_codec::store::{BulkOptions, BulkStats, BulkWriter, EtcdStats, EtcdStore};

/// Which node to kill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Victim {
    /// None: the baseline.
    None,
    /// A node that is not the leader.
    Follower,
    /// The leader (asked of the cluster before the import).
    Leader,
}

/// What the import did.
#[derive(Debug)]
pub(crate) struct Report {
    /// From the first row added to the writer closed.
    pub(crate) elapsed: Duration,
    /// The longest time without a row written after the kill (0 without a kill): what the
    /// lost node cost.
    pub(crate) stall: Duration,
    /// The writer's stats.
    pub(crate) stats: BulkStats,
    /// Rows whose requests met a failover or a timeout (`RowOutcome::faults`).
    pub(crate) rows_with_faults: u64,
    /// The store's stats over the import.
    pub(crate) store: EtcdStats,
    /// The endpoint index of the node killed.
    pub(crate) killed: Option<usize>,
}

/// The index of the node to kill, asked of the cluster: the leader, or the first node that is
/// not the leader.
///
/// # Panics
///
/// When no node says it leads (the cluster is not healthy).
#[must_use]
pub(crate) fn victim_index(store: &EtcdStore, victim: Victim) -> Option<usize> {
    let leader = || {
        store
            .leader()
            .expect("no etcd node says it is the leader: the cluster is not healthy")
    };
    match victim {
        Victim::None => None,
        Victim::Leader => Some(leader()),
        Victim::Follower => Some(usize::from(leader() == 0)),
    }
}

/// Imports `rows` rows (`{prefix}{i:08}`, the value `i` big-endian) through a `BulkWriter` with
/// `options`, sending `signal` (`-KILL`, `-STOP`, ...) to `pids[victim]` right before row
/// `kill_at` is added.
///
/// # Panics
///
/// When the writer cannot start or `kill` fails.
#[allow(clippy::too_many_arguments)]
pub(crate) fn import(
    store: &Arc<EtcdStore>,
    prefix: &str,
    rows: u32,
    options: BulkOptions,
    victim: Option<usize>,
    pids: &[String],
    signal: &str,
    kill_at: u32,
) -> Report {
    let before = store.stats();
    // When the last row was written, and the longest gap between two rows written after the
    // kill (in microseconds since the start).
    let start = Instant::now();
    let killed_at_us: Arc<AtomicU64> = Arc::new(AtomicU64::new(u64::MAX));
    let gaps: Arc<Mutex<(u64, u64)>> = Arc::new(Mutex::new((0, 0)));
    let faulty = Arc::new(AtomicU64::new(0));
    let writer = {
        let (killed_at_us, gaps, faulty) = (
            Arc::clone(&killed_at_us),
            Arc::clone(&gaps),
            Arc::clone(&faulty),
        );
        BulkWriter::with_callback(Arc::clone(store), options, move |o| {
            if o.faults.any() {
                faulty.fetch_add(1, Relaxed);
            }
            if o.result.is_err() {
                return;
            }
            // The time taken under the lock, so that the rows' times come in order.
            let mut g = gaps.lock().unwrap();
            let now = u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX);
            let killed = killed_at_us.load(Relaxed);
            let (last, longest) = &mut *g;
            if now >= killed {
                *longest = (*longest).max(now - (*last).max(killed));
            }
            *last = (*last).max(now);
        })
        .expect("a bulk writer")
    };
    for i in 0..rows {
        if i == kill_at
            && let Some(v) = victim
        {
            killed_at_us.store(
                u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX),
                Relaxed,
            );
            let status = std::process::Command::new("kill")
                .args([signal, &pids[v]])
                .status()
                .expect("kill");
            assert!(status.success(), "kill {signal} {} failed", pids[v]);
        }
        writer
            .add(format!("{prefix}{i:08}"), i.to_be_bytes().to_vec())
            .expect("a row added");
    }
    let stats = writer.close();
    let elapsed = start.elapsed();
    let after = store.stats();
    let stall = Duration::from_micros(gaps.lock().unwrap().1);
    let mut store_stats = EtcdStats::default();
    store_stats.requests = after.requests - before.requests;
    store_stats.failovers = after.failovers - before.failovers;
    store_stats.timeouts = after.timeouts - before.timeouts;
    Report {
        elapsed,
        stall,
        stats,
        rows_with_faults: faulty.load(Relaxed),
        store: store_stats,
        killed: victim,
    }
}
