#!/usr/bin/env bash
# store_compare.sh: SQLite and PostgreSQL side by side in one run (issue 13,
# acceptance check 4), on a throwaway PostgreSQL 15 (tests/support/pg.sh).
#
#   1. bench_store on a SQLite file and on a fresh PostgreSQL database, one
#      after the other: single adds, batches of 1,000, the cold load of a
#      namespace of N memories (REMEM_BENCH_N, 100,000), `default` recall
#      p50/p99 on it.
#   2. remem serve over HTTP (wrk, REMEM_BENCH_SECONDS each, 4 connections
#      in all): single adds and `default` recalls through one server on
#      SQLite, one server on PostgreSQL, and two servers on the same
#      PostgreSQL database (2 connections each, run at the same time).
#
#   bash bench/store_compare.sh [BUILD]
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/serve_url.sh"
case $build in /*) ;; *) build=$root/$build ;; esac
bin=$build/remem
n=${REMEM_BENCH_N:-100000}
secs=${REMEM_BENCH_SECONDS:-10}
make -C "$root" --no-print-directory BUILD="$build" all "$build/bench/bench_store" \
    "$build/bench/bench_recall_api" >&2
command -v wrk >/dev/null || { echo "store_compare: wrk is not installed"; exit 1; }
tmp=$(mktemp -d)
pids=()
pgdir=$(mktemp -d /tmp/remem-pg-XXXXXX) # its own: the server user must reach it
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    bash "$root/tests/support/pg.sh" stop "$pgdir" >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT

admin=$(bash "$root/tests/support/pg.sh" start "$pgdir") || { echo "store_compare: PostgreSQL did not start"; exit 1; }
newdb() { bash "$root/tests/support/pg.sh" newdb "$admin"; }

echo "## in process: bench_store, N = $n"
"$build/bench/bench_store" --n "$n" sqlite="$tmp/s.db" postgres="$(newdb)"

serve() { # store -> url
    "$bin" --db "$1" --embedder hash serve --listen 127.0.0.1:0 --quiet > "$tmp/log.$$.$RANDOM" 2>&1 &
    local pid=$! log
    pids+=("$pid")
    log=$(ls -t "$tmp"/log.* | head -n1)
    url=$(serve_url "$log" 200) || exit 1
}
rate() { sed -n 's/^Requests\/sec: *\([0-9.]*\)/\1/p' "$1"; }
"$build/bench/bench_recall_api" queries 64 > "$tmp/queries.txt"
measure() { # label url...: adds, then recalls, from every url at once
    local label=$1; shift
    local c=$((4 / $#)) i w adds=0 recalls=0
    w=(); i=0
    for u in "$@"; do
        i=$((i + 1))
        wrk -t1 -c$c -d${secs}s -s "$root/bench/serve_add.lua" "$u" -- "${label// /}$i" bench \
            > "$tmp/add.$i" 2>&1 & w+=($!)
    done
    wait "${w[@]}"
    w=(); i=0
    for u in "$@"; do
        i=$((i + 1))
        wrk -t1 -c$c -d${secs}s -s "$root/bench/serve_recall.lua" "$u/v1/recall" -- \
            "$tmp/queries.txt" bench default > "$tmp/rec.$i" 2>&1 & w+=($!)
    done
    wait "${w[@]}"
    adds=0; recalls=0
    for j in $(seq 1 $i); do
        adds=$(python3 -c "print($adds + 0$(rate "$tmp/add.$j"))")
        recalls=$(python3 -c "print($recalls + 0$(rate "$tmp/rec.$j"))")
    done
    printf '| %s | %.0f/s | %.0f/s |\n' "$label" "$adds" "$recalls"
}
echo
echo "## over HTTP: wrk, 4 connections in all, ${secs} s each"
echo "| servers | single adds | \`default\` recalls |"
echo "|---|---:|---:|"
serve "$tmp/h.db"; u1=$url
measure "one server, SQLite" "$u1"
pg=$(newdb)
serve "$pg"; u2=$url
measure "one server, PostgreSQL" "$u2"
serve "$pg"; u3=$url
measure "two servers, one PostgreSQL" "$u2" "$u3"
