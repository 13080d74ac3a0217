#!/usr/bin/env bash
# Times `pk analyze` on a generated dump: ROWS rows (default 10 million) of sequential order
# numbers with a card id and a time column, judged under one design (an MD5 prefix over the
# order number), release build. The CSV goes to a temporary directory, removed at the end.
#
#   scripts/bench-analyze.sh [ROWS] [shuffled]
#
# With `shuffled`, the dump's lines are shuffled (a fixed shuffle) before the run, so the rows
# must be put in time order through sorted runs on disk; without it, they come in time order.
# Prints the file size, the wall time, the rows per second and the peak resident memory (when
# GNU time exists). The report itself goes to the temporary directory.
set -euo pipefail
rows="${1:-10000000}"
order="${2:-sorted}"
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
if [ "$order" = shuffled ]; then
    { head -1 "$tmp/orders.csv"; tail -n +2 "$tmp/orders.csv" | shuf --random-source=<(yes); } > "$tmp/shuffled.csv"
    mv "$tmp/shuffled.csv" "$tmp/orders.csv"
fi
echo "rows: $rows ($order), file: $(du -h "$tmp/orders.csv" | cut -f1)"

# Order numbers run from 10,000,000: eight digits up to 90 million rows, more past that.
width=8
[ "$rows" -gt 90000000 ] && width=9
args=(analyze "$tmp/orders.csv" --time ts --design "order_no: u64 width=$width; hash=md5:4")
start=$(date +%s.%N)
if [ -x /usr/bin/time ]; then
    TMPDIR="$tmp" /usr/bin/time -f "wall %e s, user %U s, system %S s, peak RSS %M KB" "$pk" "${args[@]}" > "$tmp/report.txt" 2> "$tmp/stderr.txt" || { cat "$tmp/stderr.txt" >&2; exit 1; }
    grep -v '^pk:' "$tmp/stderr.txt" >&2 || true
else
    TMPDIR="$tmp" "$pk" "${args[@]}" > "$tmp/report.txt"
fi
end=$(date +%s.%N)
awk -v r="$rows" -v a="$start" -v b="$end" 'BEGIN { printf "%.2f M rows per second (wall)\n", r / (b - a) / 1e6 }'
