#!/usr/bin/env bash
# The build time a user pays: a fresh binary crate with one three-field key (u32, String, u64),
# once with `#[derive(PartitionKey)]` from pk-codec (default features, by path to this
# repository, or to PK_CODEC_DIR) and once with storekey 0.11's derives. Dependencies are fetched
# first, so downloads are not timed; then each crate is built from a clean target directory RUNS
# times (default 3), the two interleaved, and the medians printed (wall, and user + system CPU).
#
#   scripts/bench-build.sh [RUNS]
set -euo pipefail
runs="${1:-3}"
root="$(cd "$(dirname "$0")/.." && pwd)"
pk_dir="${PK_CODEC_DIR:-$root}/pk-codec"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/with-pk/src" "$tmp/with-storekey/src"
cat > "$tmp/with-pk/Cargo.toml" <<EOF
[package]
name = "with-pk"
version = "0.1.0"
edition = "2024"

[dependencies]
pk-codec = { path = "$pk_dir" }
EOF
cat > "$tmp/with-pk/src/main.rs" <<'EOF'
use pk_codec::PartitionKey;

#[derive(PartitionKey)]
struct CardKey {
    #[pk(width = 6)]
    device_id: u32,
    seller_id: String,
    #[pk(width = 6)]
    card_id: u64,
}

fn main() {
    let key = CardKey { device_id: 54, seller_id: "a100".into(), card_id: 6777 };
    println!("{}", key.encode().unwrap());
}
EOF
cat > "$tmp/with-storekey/Cargo.toml" <<'EOF'
[package]
name = "with-storekey"
version = "0.1.0"
edition = "2024"

[dependencies]
storekey = "0.11"
EOF
cat > "$tmp/with-storekey/src/main.rs" <<'EOF'
#[derive(storekey::Encode, storekey::Decode)]
struct CardKey {
    device_id: u32,
    seller_id: String,
    card_id: u64,
}

fn main() {
    let key = CardKey { device_id: 54, seller_id: "a100".into(), card_id: 6777 };
    println!("{:?}", storekey::encode_vec(&key).unwrap());
}
EOF

for c in with-pk with-storekey; do
    (cd "$tmp/$c" && cargo fetch -q)
done

# One clean debug build; prints "wall cpu" in seconds.
build() {
    local dir="$1" start end
    rm -rf "$dir/target"
    start=$(date +%s.%N)
    local times
    times=$( { /usr/bin/env bash -c "cd '$dir' && TIMEFORMAT='%U %S' && time cargo build -q --offline >/dev/null 2>&1" ; } 2>&1 )
    end=$(date +%s.%N)
    awk -v s="$start" -v e="$end" -v t="$times" 'BEGIN { split(t, a, " "); printf "%.2f %.2f\n", e - s, a[1] + a[2] }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

: > "$tmp/with-pk.times"
: > "$tmp/with-storekey.times"
for i in $(seq "$runs"); do
    for c in with-pk with-storekey; do
        t=$(build "$tmp/$c")
        echo "run $i $c: wall ${t% *} s, cpu ${t#* } s"
        echo "$t" >> "$tmp/$c.times"
    done
done

echo
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(rustc --version)"
for c in with-pk with-storekey; do
    wall=$(cut -d' ' -f1 "$tmp/$c.times" | median)
    cpu=$(cut -d' ' -f2 "$tmp/$c.times" | median)
    echo "$c: median wall ${wall} s, median cpu ${cpu} s ($runs clean debug builds)"
done
