//! The leader of the 3-node cluster killed (SIGKILL) in the middle of a bulk import: nothing is
//! lost, the failover is counted (the writer's stats, the rows' outcomes, the store's stats), and
//! the import stalls no longer than the store's timeouts and etcd's election allow. It leaves two
//! nodes: `scripts/distributed-tests.sh` runs it on a cluster of its own.

use std::sync::Arc;
use std::time::Duration;

use pk_codec::store::{Backoff, BulkOptions, EtcdStore};

use super::failover_import::{Victim, import, victim_index};

/// etcd's default election timeout (`--election-timeout`, which the cluster of
/// `scripts/etcd-cluster.sh` keeps): followers notice a lost leader after it, and elect the next
/// within about another.
const ELECTION_TIMEOUT: Duration = Duration::from_secs(1);

#[test]
#[ignore = "needs a cluster of its own from scripts/distributed-tests.sh (it kills the leader)"]
fn the_leader_killed_mid_import_loses_nothing_is_counted_and_stalls_a_bounded_time() {
    // Timeouts below the defaults (500 ms, 2 s), so that the bound below (5.25 s) stays under
    // the 7 s etcd itself holds a write lost with its leader: a store that did not apply its
    // request timeout would break it.
    let store = Arc::new(
        EtcdStore::builder(super::endpoints())
            .connect_timeout(Duration::from_millis(250))
            .request_timeout(Duration::from_secs(1))
            .build()
            .unwrap(),
    );
    let prefix = "lost-leader/";
    super::clear(&store, prefix);
    let (rows, kill_at) = (60_000u32, 20_000u32);
    let cap = Duration::from_millis(500);
    let options = BulkOptions {
        workers: Some(4),
        backoff: Backoff::Jittered {
            base: Duration::from_millis(10),
            cap,
        },
        deadline: Duration::from_secs(120),
        ..BulkOptions::default()
    };
    let leader = victim_index(&store, Victim::Leader);
    let r = import(
        &store,
        prefix,
        rows,
        options,
        leader,
        &super::node_pids(),
        "-KILL",
        kill_at,
    );
    // Nothing lost.
    assert_eq!(
        (
            r.stats.rows_written,
            r.stats.rows_failed,
            r.stats.rows_lost()
        ),
        (u64::from(rows), 0, 0),
        "{r:?}"
    );
    // The failover is counted where a user looks: the writer's stats, the rows it carried, the
    // store's own stats.
    assert!(
        r.stats.failovers > 0,
        "no failover in the writer's stats: {r:?}"
    );
    assert!(r.rows_with_faults > 0, "no row shows a failover: {r:?}");
    assert!(r.store.failovers >= r.stats.failovers, "{r:?}");
    // The stall is bounded by what the timeouts allow: a write lost with the leader waits out
    // one request timeout (twice, if the next node had not yet noticed the loss), each try of
    // the dead node costs at most a connect timeout, the election takes up to two election
    // timeouts, and a batch refused everywhere waits one backoff. Generous (the stall measured
    // with a 1 s request timeout was 0.93 s; BENCHMARKS.md), but not past what etcd holds a
    // lost write for (7 s: 5 s and two election timeouts).
    let (connect, request) = (store.connect_timeout(), store.request_timeout());
    let bound = 2 * (request + connect) + connect + 2 * ELECTION_TIMEOUT + cap;
    assert!(
        r.stall <= bound,
        "the import stalled {:?} after the leader was killed, above {bound:?}: {r:?}",
        r.stall
    );
    // Every row is there once, with its value.
    assert_eq!(super::numbered_rows(&store, prefix), rows as usize);
}
