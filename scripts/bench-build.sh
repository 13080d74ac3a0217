#!/usr/bin/env bash
# Build time of a fresh crate with one derived key: pk-codec (default features) against storekey 0.11.
#
# Creates throwaway crates under a temp dir, each with the same three-field struct
# (u32, String, u64) and a main that encodes one key:
#   pk-codec        depends on this repository's pk-codec (its working tree, or the workspace
#                   at PK_CODEC_DIR);
#   pk-codec@REV    the same against pk-codec as of git revision REV (one per REV argument,
#                   exported with `git archive`, e.g. `main` for the figure before a change);
#   storekey        storekey 0.11's derives and `encode_vec`.
# How pk-codec reaches the fresh crate (PK_AS):
#   registry (default)  as a user's crate gets it from crates.io: `cargo package` of pk-derive and
#                       pk-codec, served with their registry dependencies from a local directory
#                       source (`cargo vendor`'s format), so cargo builds them as it builds any
#                       registry crate (not incremental, lints capped), as it builds storekey;
#   path                a path dependency, which cargo builds as a local crate: incremental (its
#                       dependency graph written, 256 codegen units) and linted. BENCHMARKS.md's
#                       figures before its section "Issue 38: a debug build of pk-codec compiles
#                       only what its caller uses" were taken this way.
# Dependencies are fetched (and packaged) first, not timed; each crate is then built once, not
# timed, so that the first timed run does not also read rustc and the sources from disk (that first
# build often took seconds more wall time than CPU time); then each crate gets a clean debug
# `cargo build` in a fresh target directory, RUNS times (default 3), interleaved, and the medians
# of wall time and user+sys CPU time are printed.
#
#   scripts/bench-build.sh [REV...]          # e.g. scripts/bench-build.sh main
#   RUNS=5 scripts/bench-build.sh
#   PK_AS=path scripts/bench-build.sh main
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs="${RUNS:-3}"
pk_as="${PK_AS:-registry}"
case "$pk_as" in registry | path) ;; *) echo "PK_AS must be registry or path, not $pk_as" >&2; exit 2 ;; esac
tmp="$(mktemp -d "${TMPDIR:-/tmp}/pk-bench-build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
# No compiler cache or shared target directory may take part.
unset RUSTC_WRAPPER CARGO_BUILD_RUSTC_WRAPPER CARGO_TARGET_DIR CARGO_BUILD_TARGET_DIR

pk_crate() { # NAME WORKSPACE_DIR
    mkdir -p "$tmp/$1/src"
    cat >"$tmp/$1/Cargo.toml" <<EOF
[package]
name = "fresh-key"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
pk-codec = { path = "$2/pk-codec" }

[workspace]
EOF
    cat >"$tmp/$1/src/main.rs" <<'EOF'
use pk_codec::PartitionKey;

#[derive(PartitionKey)]
struct CardKey {
    device_id: u32,
    seller_id: String,
    card_id: u64,
}

fn main() {
    let key = CardKey { device_id: 54, seller_id: "a100".into(), card_id: 6777 };
    println!("{}", key.encode().unwrap());
}
EOF
    if [ "$pk_as" = registry ]; then
        # The registry dependencies in a directory source, then pk-derive and pk-codec as
        # `cargo package` writes them, in place of the path dependency.
        local vendor="$tmp/$1/vendor" pkg="$tmp/$1/pkg"
        (cd "$tmp/$1" && cargo vendor --quiet --versioned-dirs "$vendor" >/dev/null)
        (cd "$2" && cargo package --quiet --offline --no-verify --allow-dirty \
            -p pk-derive -p pk-codec --target-dir "$pkg")
        local c crate version
        for c in pk-derive pk-codec; do
            crate="$(ls "$pkg/package/$c"-[0-9]*.crate)"
            version="${crate##*/"$c"-}" && version="${version%.crate}"
            tar -xzf "$crate" -C "$vendor"
            printf '{"files":{},"package":"%s"}' "$(sha256sum "$crate" | cut -d' ' -f1)" \
                >"$vendor/$c-$version/.cargo-checksum.json"
        done
        rm -rf "$pkg" "$tmp/$1/Cargo.lock"
        sed -i "s|^pk-codec = .*|pk-codec = \"=$version\"|" "$tmp/$1/Cargo.toml"
        mkdir -p "$tmp/$1/.cargo"
        printf '[source.crates-io]\nreplace-with = "vendored"\n\n[source.vendored]\ndirectory = "%s"\n' \
            "$vendor" >"$tmp/$1/.cargo/config.toml"
    fi
}

storekey_crate() { # NAME
    mkdir -p "$tmp/$1/src"
    cat >"$tmp/$1/Cargo.toml" <<'EOF'
[package]
name = "fresh-key"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
storekey = "0.11"

[workspace]
EOF
    cat >"$tmp/$1/src/main.rs" <<'EOF'
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
}

variants=(pk-codec)
pk_crate pk-codec "${PK_CODEC_DIR:-$repo}"
for rev in "$@"; do
    name="pk-codec@$rev"
    src="$tmp/src-${rev//\//_}"
    mkdir -p "$src"
    git -C "$repo" archive "$rev" | tar -x -C "$src"
    pk_crate "$name" "$src"
    variants+=("$name")
done
storekey_crate storekey
variants+=(storekey)

for v in "${variants[@]}"; do
    (cd "$tmp/$v" && cargo fetch --quiet)
done

# One clean build in a fresh target directory; appends "wall cpu" (seconds) to $tmp/NAME.times.
build() {
    local dir="$tmp/$1" target="$tmp/target"
    rm -rf "$target"
    if [ -x /usr/bin/time ]; then
        (cd "$dir" && CARGO_TARGET_DIR="$target" /usr/bin/time -f '%e %U %S' -o "$tmp/t" \
            cargo build --quiet --offline)
    else
        local TIMEFORMAT='%R %U %S'
        { time (cd "$dir" && CARGO_TARGET_DIR="$target" cargo build --quiet --offline); } 2>"$tmp/t"
    fi
    awk '{ printf "%.2f %.2f\n", $1, $2 + $3 }' "$tmp/t" >>"$tmp/$1.times"
    rm -rf "$target"
}

for v in "${variants[@]}"; do
    build "$v"
    rm -f "$tmp/$v.times"
done

echo "$(date -u +%Y-%m-%dT%H:%MZ); $(nproc) CPUs; $(rustc --version); pk-codec as a $pk_as dependency; load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 1; i <= runs; i++)); do
    for v in "${variants[@]}"; do
        build "$v"
        echo "run $i  $v: $(tail -n1 "$tmp/$v.times" | awk '{ print $1 " s wall, " $2 " s CPU" }')"
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

median() { sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.2f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
sk_wall="$(cut -d' ' -f1 "$tmp/storekey.times" | median)"
sk_cpu="$(cut -d' ' -f2 "$tmp/storekey.times" | median)"
echo
printf '%-24s %14s %14s %14s %14s\n' crate "wall (median)" "CPU (median)" "wall/storekey" "CPU/storekey"
for v in "${variants[@]}"; do
    wall="$(cut -d' ' -f1 "$tmp/$v.times" | median)"
    cpu="$(cut -d' ' -f2 "$tmp/$v.times" | median)"
    printf '%-24s %12s s %12s s %14s %14s\n' "$v" "$wall" "$cpu" \
        "$(awk -v a="$wall" -v b="$sk_wall" 'BEGIN { printf "%.2fx", a / b }')" \
        "$(awk -v a="$cpu" -v b="$sk_cpu" 'BEGIN { printf "%.2fx", a / b }')"
done
