# A 3-node etcd cluster on loopback, for the distributed tests (scripts/distributed-tests.sh) and
# the failover benchmark (scripts/etcd-failover-bench.sh): the one place it is installed, started
# and stopped. Source it, then:
#
#   etcd_install                 # Debian's etcd-server and etcd-client, when etcd is missing
#   etcd_cluster_start DIR       # starts n1..n3 under DIR, waits until healthy; sets
#                                # ETCD_ENDPOINTS (comma-separated, node order) and ETCD_PIDS
#                                # (an array, node order)
#   etcd_cluster_stop            # stops every node still running (call it from a trap)
#
# The nodes listen on 127.0.0.1:23791-23793 (clients) and 23801-23803 (peers), with etcd's
# default election timeout (1 s) and heartbeat (100 ms).

etcd_install() {
    if ! command -v etcd >/dev/null 2>&1 || ! command -v etcdctl >/dev/null 2>&1; then
        echo "== installing etcd (Debian packages etcd-server, etcd-client)"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server etcd-client
        # The package may start its own single-node service: these scripts run their own cluster.
        if command -v systemctl >/dev/null 2>&1; then systemctl stop etcd >/dev/null 2>&1 || true; fi
    fi
}

ETCD_PIDS=()
ETCD_ENDPOINTS="http://127.0.0.1:23791,http://127.0.0.1:23792,http://127.0.0.1:23793"

etcd_cluster_start() {
    local dir=$1 i
    local cluster="n1=http://127.0.0.1:23801,n2=http://127.0.0.1:23802,n3=http://127.0.0.1:23803"
    ETCD_PIDS=()
    for i in 1 2 3; do
        etcd --name "n$i" --data-dir "$dir/n$i" \
            --listen-client-urls "http://127.0.0.1:2379$i" --advertise-client-urls "http://127.0.0.1:2379$i" \
            --listen-peer-urls "http://127.0.0.1:2380$i" --initial-advertise-peer-urls "http://127.0.0.1:2380$i" \
            --initial-cluster "$cluster" --initial-cluster-state new --initial-cluster-token pk-codec-tests \
            >"$dir/n$i.log" 2>&1 &
        ETCD_PIDS+=("$!")
    done
    echo "== waiting for the 3-node etcd cluster on 127.0.0.1:23791-23793"
    for _ in $(seq 1 60); do
        if ETCDCTL_API=3 etcdctl --endpoints="$ETCD_ENDPOINTS" endpoint health >/dev/null 2>&1; then
            return 0
        fi
        sleep 0.5
    done
    echo "the etcd cluster did not become healthy; its logs:" >&2
    tail -n 20 "$dir"/n*.log >&2
    return 1
}

etcd_cluster_stop() {
    local p
    for p in "${ETCD_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${ETCD_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    ETCD_PIDS=()
}
