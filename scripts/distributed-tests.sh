#!/usr/bin/env bash
# The distributed tests: a 3-node etcd cluster on loopback, the etcd tests against it
# (tests/it/etcd_store.rs), and the cluster always stopped afterwards.
#
# Installs etcd from Debian's packages (etcd-server, etcd-client) when it is missing. A cluster
# that does not come up, or a test that cannot reach it, fails this script: nothing is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v etcd >/dev/null 2>&1 || ! command -v etcdctl >/dev/null 2>&1; then
    echo "== installing etcd (Debian packages etcd-server, etcd-client)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server etcd-client
    # The package may start its own single-node service: this script runs its own cluster.
    if command -v systemctl >/dev/null 2>&1; then systemctl stop etcd >/dev/null 2>&1 || true; fi
fi

dir=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$dir"
}
trap cleanup EXIT

cluster="n1=http://127.0.0.1:23801,n2=http://127.0.0.1:23802,n3=http://127.0.0.1:23803"
for i in 1 2 3; do
    etcd --name "n$i" --data-dir "$dir/n$i" \
        --listen-client-urls "http://127.0.0.1:2379$i" --advertise-client-urls "http://127.0.0.1:2379$i" \
        --listen-peer-urls "http://127.0.0.1:2380$i" --initial-advertise-peer-urls "http://127.0.0.1:2380$i" \
        --initial-cluster "$cluster" --initial-cluster-state new --initial-cluster-token pk-codec-tests \
        >"$dir/n$i.log" 2>&1 &
    pids+=("$!")
done
endpoints="http://127.0.0.1:23791,http://127.0.0.1:23792,http://127.0.0.1:23793"

echo "== waiting for the 3-node etcd cluster on 127.0.0.1:23791-23793"
healthy=no
for _ in $(seq 1 60); do
    if ETCDCTL_API=3 etcdctl --endpoints="$endpoints" endpoint health >/dev/null 2>&1; then
        healthy=yes
        break
    fi
    sleep 0.5
done
if [ "$healthy" != yes ]; then
    echo "the etcd cluster did not become healthy; its logs:" >&2
    tail -n 20 "$dir"/n*.log >&2
    exit 1
fi

echo "== cargo test --features etcd --test it store_conformance::etcd (the conformance suite, before any node is stopped)"
PK_ETCD_ENDPOINTS="$endpoints" \
    cargo test --features etcd --test it store_conformance::etcd -- --ignored --test-threads=1

echo "== cargo test --features etcd --test it etcd_store:: (against the cluster)"
# The tests stop one node (PK_ETCD_NODE_PIDS) to check that work survives it.
PK_ETCD_ENDPOINTS="$endpoints" PK_ETCD_NODE_PIDS="${pids[*]}" \
    cargo test --features etcd --test it etcd_store:: -- --ignored --test-threads=1

echo "== cargo run --features etcd --example real_store (against the cluster, one node stopped)"
PK_ETCD_ENDPOINTS="$endpoints" cargo run --features etcd --example real_store
