#!/usr/bin/env bash
# run.sh: builds each fuzz/fuzz_*.c with clang's libFuzzer (plus ASan and
# UBSan) against the library sources and runs it for SECONDS on its corpus
# (fuzz/corpus/NAME/). A crash fails the run and leaves the input in
# build-fuzz/; turn it into a test case.
#   fuzz/run.sh [SECONDS]
set -eu
secs=${1:-10}
here=$(cd "$(dirname "$0")/.." && pwd); cd "$here"
out=build-fuzz; mkdir -p "$out"
pkgs="sqlite3 jansson libcurl libmicrohttpd openblas libutf8proc libzstd libcrypto"
flags="-g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Iinclude -Isrc $(pkg-config --cflags $pkgs)"
libs="$(pkg-config --libs $pkgs) -lm -lpthread"
srcs=$(make -s --no-print-directory print-lib-src)
n=0
for f in fuzz/fuzz_*.c; do
    [ -f "$f" ] || continue
    name=$(basename "$f" .c)
    if [ ! -x "$out/$name" ] || [ -n "$(find src include server mcp "$f" -newer "$out/$name" -name '*.[ch]' | head -1)" ]; then
        clang $flags -o "$out/$name" "$f" $srcs $libs
    fi
    corpus="fuzz/corpus/${name#fuzz_}"; mkdir -p "$out/$name.new"
    echo "fuzz: $name for ${secs}s (corpus $corpus)"
    (cd "$out" && "./$name" -max_total_time="$secs" -artifact_prefix="./$name-" \
        -print_final_stats=0 "$name.new" "$here/$corpus" >"$name.log" 2>&1) || {
        tail -n 40 "$out/$name.log"; echo "fuzz: $name FAILED"; exit 1; }
    n=$((n+1))
done
echo "fuzz: $n targets clean"
