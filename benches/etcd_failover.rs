//! An import into a 3-node etcd cluster with a node killed at a fixed row: how long the import
//! takes and how long it stalls, with the leader killed, a follower killed, or neither. Run by
//! `scripts/etcd-failover-bench.sh`, which starts a fresh cluster for each run; results in
//! BENCHMARKS.md ("etcd: a node lost during an import").
//!
//! `cargo bench --features etcd --bench etcd_failover -- VICTIM [SIGNAL] [REQUEST_TIMEOUT_MS]
//! [POLICY]` with `PK_ETCD_ENDPOINTS` and `PK_ETCD_NODE_PIDS` (node order) set: VICTIM is `none`,
//! `follower` or `leader`; SIGNAL `-KILL` (default), `-STOP` or `-TERM`; POLICY `last-good`
//! (default) or `leader`. Prints one line: the scenario, the import's time, its stall, and the
//! counts.

use std::sync::Arc;
use std::time::Duration;

use pk_codec::store::{BulkOptions, EndpointPolicy, EtcdStore};

#[path = "../tests/it/etcd_store/failover_import.rs"]
mod failover_import;

use failover_import::{Victim, import, victim_index};

/// The import of issue 39: 60,000 rows, 4 workers, the node killed at row 20,000.
const ROWS: u32 = 60_000;
const KILL_AT: u32 = 20_000;

fn main() {
    // `cargo bench` passes `--bench`; the rest are ours.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let victim = match args.first().map(String::as_str) {
        Some("none") => Victim::None,
        Some("follower") => Victim::Follower,
        Some("leader") => Victim::Leader,
        other => panic!("the victim is none, follower or leader, not {other:?}"),
    };
    let signal = args.get(1).map_or("-KILL", String::as_str);
    let endpoints: Vec<String> = std::env::var("PK_ETCD_ENDPOINTS")
        .expect("PK_ETCD_ENDPOINTS (run scripts/etcd-failover-bench.sh)")
        .split(',')
        .map(str::to_owned)
        .collect();
    let pids: Vec<String> = std::env::var("PK_ETCD_NODE_PIDS")
        .expect("PK_ETCD_NODE_PIDS (run scripts/etcd-failover-bench.sh)")
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    let mut builder = EtcdStore::builder(endpoints);
    if let Some(ms) = args.get(2) {
        builder =
            builder.request_timeout(Duration::from_millis(ms.parse().expect("a timeout in ms")));
    }
    let policy = match args.get(3).map(String::as_str) {
        None | Some("last-good") => EndpointPolicy::LastGood,
        Some("leader") => EndpointPolicy::Leader,
        Some(other) => panic!("the policy is last-good or leader, not {other:?}"),
    };
    let store = Arc::new(builder.endpoint_policy(policy).build().expect("the store"));
    let index = victim_index(&store, victim);
    let options = BulkOptions {
        workers: Some(4),
        deadline: Duration::from_secs(120),
        ..BulkOptions::default()
    };
    let r = import(
        &store, "bench/", ROWS, options, index, &pids, signal, KILL_AT,
    );
    assert_eq!(
        (
            r.stats.rows_written,
            r.stats.rows_failed,
            r.stats.rows_lost()
        ),
        (u64::from(ROWS), 0, 0),
        "{r:?}"
    );
    println!(
        "victim={victim:?} signal={signal} request_timeout={:?} policy={policy:?} killed={:?} \
         elapsed_s={:.3} stall_s={:.3} requests={} retries={} failovers={} timeouts={} \
         rows_with_faults={} store_failovers={} store_timeouts={}",
        store.request_timeout(),
        r.killed,
        r.elapsed.as_secs_f64(),
        r.stall.as_secs_f64(),
        r.stats.requests,
        r.stats.retries,
        r.stats.failovers,
        r.stats.timeouts,
        r.rows_with_faults,
        r.store.failovers,
        r.store.timeouts,
    );
}
