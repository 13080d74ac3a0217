#!/usr/bin/env bash
# What a lost etcd node costs an import (BENCHMARKS.md, "etcd: a node lost during an import"):
# 60,000 rows through a BulkWriter with 4 workers into a 3-node cluster on loopback, one node
# killed right before row 20,000 is added (a gate on the row count, not a sleep), with:
#   none      no node killed
#   follower  a node that is not the leader, SIGKILL
#   leader    the leader, SIGKILL
#   leader-5s the leader, SIGKILL, with the request timeout of 5 s the client had before
# and, by name only: leader@MS (a request timeout of MS ms), leader-stop (the leader stopped
# with SIGSTOP: it holds its connections and answers nothing), leader-policy (the store sends
# to the leader, EndpointPolicy::Leader).
# RUNS runs of each (default 3), interleaved (none, follower, leader, leader-5s, none, ...), each
# on a fresh cluster, every timing run under `flock /tmp/pk-bench.lock`; the medians at the end.
#
#   scripts/etcd-failover-bench.sh [RUNS] [SCENARIO...]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
shift || true
scenarios=("$@")
if [ ${#scenarios[@]} -eq 0 ]; then scenarios=(none follower leader leader-5s); fi

# shellcheck source=scripts/etcd-cluster.sh
source scripts/etcd-cluster.sh
etcd_install

cargo bench --features etcd --bench etcd_failover --no-run
bench=$(cargo bench --features etcd --bench etcd_failover --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "etcd_failover" and m.get("executable"):
        print(m["executable"])')

dir=$(mktemp -d)
results="$dir/results"
cleanup() {
    etcd_cluster_stop
    rm -rf "$dir"
}
trap cleanup EXIT

echo "== uptime before: $(uptime)"
for run in $(seq 1 "$runs"); do
    for scenario in "${scenarios[@]}"; do
        case $scenario in
            none) args=(none) ;;
            follower) args=(follower -KILL) ;;
            leader) args=(leader -KILL) ;;
            leader-5s) args=(leader -KILL 5000) ;;
            leader@*) args=(leader -KILL "${scenario#leader@}") ;; # leader@MS: request timeout MS
            leader-stop) args=(leader -STOP) ;;
            leader-policy) args=(leader -KILL 2000 leader) ;;
            *) echo "unknown scenario $scenario" >&2; exit 2 ;;
        esac
        rm -rf "$dir/cluster" && mkdir -p "$dir/cluster"
        etcd_cluster_start "$dir/cluster" >/dev/null
        line=$(PK_ETCD_ENDPOINTS="$ETCD_ENDPOINTS" PK_ETCD_NODE_PIDS="${ETCD_PIDS[*]}" \
            flock /tmp/pk-bench.lock "$bench" "${args[@]}")
        # A node stopped with SIGSTOP must be let go to be stopped.
        for p in "${ETCD_PIDS[@]}"; do kill -CONT "$p" 2>/dev/null || true; done
        etcd_cluster_stop
        echo "run $run $scenario: $line"
        echo "$scenario $line" >>"$results"
    done
done
echo "== uptime after: $(uptime)"

echo "== medians of $runs runs"
python3 - "$results" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    scenario, *fields = line.split()
    kv = dict(f.split("=", 1) for f in fields if "=" in f)
    rows.setdefault(scenario, []).append(kv)
for scenario, runs in rows.items():
    med = lambda k: statistics.median(float(r[k]) for r in runs)
    spread = lambda k: "-".join(f"{float(x):.2f}" for x in (min(float(r[k]) for r in runs), max(float(r[k]) for r in runs)))
    print(f"{scenario:14} import {med('elapsed_s'):.2f} s ({spread('elapsed_s')}), "
          f"stall {med('stall_s'):.2f} s ({spread('stall_s')}), "
          f"failovers {med('failovers'):.0f}, timeouts {med('timeouts'):.0f}, "
          f"rows with faults {med('rows_with_faults'):.0f}, retries {med('retries'):.0f}")
PY
