#!/usr/bin/env bash
# What pk-codec's `rocksdb` feature builds against: Debian's librocksdb (the library and its
# headers) and libclang with clang (librocksdb-sys generates its bindings from the headers with
# bindgen, which loads libclang and asks clang for its include paths).
# .cargo/config.toml points the build at them. Installs the packages when one is missing.
set -euo pipefail

missing=()
for pkg in librocksdb-dev libclang-dev clang; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
    echo "== installing ${missing[*]} (Debian packages)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi
