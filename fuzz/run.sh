#!/usr/bin/env bash
# run.sh: builds each fuzz/fuzz_*.c with clang's libFuzzer (plus ASan and
# UBSan, any undefined behaviour fatal) against the library sources and runs
# it for SECONDS on its corpus (fuzz/corpus/NAME/), one target after
# another. A crash fails the run and leaves the input in build-fuzz/; turn
# it into a test case. Each target ends with one line of libFuzzer's final
# figures (executions, coverage, seconds); docs/fuzzing.md keeps a long run's.
#   fuzz/run.sh [SECONDS] [NAME-SUBSTRING]
set -eu
secs=${1:-10}
only=${2:-}
here=$(cd "$(dirname "$0")/.." && pwd); cd "$here"
out=build-fuzz; mkdir -p "$out"
# the library's own package list, from the Makefile (one list, never two)
pkgs="$(make -s --no-print-directory print-pkgs)"
flags="-g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Iinclude -Isrc $(pkg-config --cflags $pkgs)"
# libstemmer (Snowball) has no pkg-config file.
libs="$(pkg-config --libs $pkgs) -lstemmer -lm -lpthread"
srcs=$(make -s --no-print-directory print-lib-src)

# The library's sources are compiled once, with the targets' flags, into an
# archive every target links (each target used to compile all of them
# again: twenty minutes of a test run for nineteen targets). An object is
# compiled again when its source is newer, every one when a header is.
lib=$out/libremem-fuzz.a
stale=()
all_stale=
if [ ! -f "$lib" ] || [ -n "$(find src include -name '*.h' -newer "$lib" | head -1)" ]; then
    all_stale=1
fi
for c in $srcs; do
    o=$out/obj/${c%.c}.o
    if [ -n "$all_stale" ] || [ ! -f "$o" ] || [ "$c" -nt "$o" ]; then stale+=("$c"); fi
done
if [ ${#stale[@]} -gt 0 ] || [ ! -f "$lib" ]; then
    jobs_max=$(nproc 2>/dev/null || echo 2)
    for c in "${stale[@]}"; do
        o=$out/obj/${c%.c}.o
        mkdir -p "$(dirname "$o")"
        while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
        clang $flags -c "$c" -o "$o" &
    done
    while [ "$(jobs -rp | wc -l)" -gt 0 ]; do wait -n; done
    objs=()
    for c in $srcs; do objs+=("$out/obj/${c%.c}.o"); done
    rm -f "$lib"
    ar rcs "$lib" "${objs[@]}"
fi

n=0
for f in fuzz/fuzz_*.c; do
    [ -f "$f" ] || continue
    name=$(basename "$f" .c)
    [ -n "$only" ] && [[ $name != *"$only"* ]] && continue
    if [ ! -x "$out/$name" ] || [ "$lib" -nt "$out/$name" ] ||
        [ -n "$(find server mcp "$f" -newer "$out/$name" -name '*.[ch]' | head -1)" ]; then
        clang $flags -o "$out/$name" "$f" "$lib" $libs
    fi
    corpus="fuzz/corpus/${name#fuzz_}"; mkdir -p "$out/$name.new"
    echo "fuzz: $name for ${secs}s (corpus $corpus)"
    t0=$SECONDS
    (cd "$out" && "./$name" -max_total_time="$secs" -artifact_prefix="./$name-" \
        -print_final_stats=1 "$name.new" "$here/$corpus" >"$name.log" 2>&1) || {
        tail -n 40 "$out/$name.log"; echo "fuzz: $name FAILED"; exit 1; }
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$name.log")
    cov=$(grep -o 'DONE *cov: [0-9]* ft: [0-9]*' "$out/$name.log" | tail -1 | sed 's/DONE *//')
    echo "fuzz: $name clean: ${runs:-?} executions, ${cov:-cov ?}, $((SECONDS-t0)) s"
    n=$((n+1))
done
echo "fuzz: $n targets clean"
