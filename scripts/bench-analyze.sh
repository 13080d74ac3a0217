#!/usr/bin/env bash
# Times `pk analyze` on a generated dump: ROWS rows (default 10 million) of sequential order
# numbers with a card id and a time column, judged under one design (an MD5 prefix over the
# order number). The CSV goes to a temporary directory, removed at the end.
#
#   scripts/bench-analyze.sh [ROWS]
#
# Prints the file size, the wall time and the peak resident memory (when GNU time exists).
set -euo pipefail
rows="${1:-10000000}"
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

cargo build --release -q -p pk-codec --features cli --bin pk --manifest-path "$root/Cargo.toml"
target="${CARGO_TARGET_DIR:-$root/target}"
pk="$target/release/pk"

# 20 orders a second from 2023-11-14 22:13:20 UTC, card ids from a fixed LCG.
awk -v n="$rows" 'BEGIN {
    print "order_no,card_id,ts,amount_cents";
    card = 12345;
    for (i = 0; i < n; i++) {
        card = (card * 1103515245 + 12345) % 2147483648;
        printf "%d,%d,%.0f,%d\n", 10000000 + i, card % 100000, 1700000000000 + i * 50, 100 + i % 4900;
    }
}' > "$tmp/orders.csv"
echo "rows: $rows, file: $(du -h "$tmp/orders.csv" | cut -f1)"

args=(analyze "$tmp/orders.csv" --time ts --design 'order_no: u64 width=8; hash=md5:4')
if [ -x /usr/bin/time ]; then
    /usr/bin/time -f "wall %e s, user %U s, system %S s, peak RSS %M KB" "$pk" "${args[@]}"
else
    time "$pk" "${args[@]}"
fi
