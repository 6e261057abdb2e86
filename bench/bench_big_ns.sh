#!/usr/bin/env bash
# bench_big_ns.sh: one large namespace (100,000 memories), recall p50 and
# p99 through the C API (bench_recall_api, one thread, k = 10, touch off)
# for the "stream" and "default" profiles, each build given measured on
# the same store in the same run, alternating (A B A B) so that a change
# in the machine's load hits both; the ratio is new / first build.
#
#   bench/bench_big_ns.sh BUILD BASE_BUILD
#     REMEM_BIG_N (100000), REMEM_BENCH_SECONDS (10 per measurement)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
new=$1 base=$2
case $new in /*) ;; *) new=$root/$new ;; esac
case $base in /*) ;; *) base=$root/$base ;; esac
n=${REMEM_BIG_N:-100000}
secs=${REMEM_BENCH_SECONDS:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$new/bench/bench_recall_api" fill "$tmp/big.db" bench "$n" >/dev/null
"$new/bench/bench_recall_api" queries 64 > "$tmp/q.txt"
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }
echo "== one namespace of $n memories, C API, 1 thread, ${secs}s per measurement =="
echo "   $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg)"
for profile in stream default; do
    declare -A p50=() p99=()
    for round in 1 2; do
        for b in "$base" "$new"; do
            out=$(REMEM_SNAPSHOTS=0 "$b/bench/bench_recall_api" recall "$tmp/big.db" bench "$secs" 1 \
                "$tmp/q.txt" "$profile")
            p50[$b]="${p50[$b]:-} $(echo "$out" | field p50_ms)"
            p99[$b]="${p99[$b]:-} $(echo "$out" | field p99_ms)"
        done
    done
    for b in "$base" "$new"; do
        printf '   %-8s %-6s p50 %s ms  p99 %s ms\n' "$profile" "$(basename "$(dirname "$b")")" \
            "${p50[$b]}" "${p99[$b]}"
    done
    awk -v a="${p50[$base]}" -v b="${p50[$new]}" 'BEGIN {
        split(a, x, " "); split(b, y, " ");
        printf "   %s p50 ratio (new / base, best of 2 each): %.2f\n", "'"$profile"'",
            (y[1] < y[2] ? y[1] : y[2]) / (x[1] < x[2] ? x[1] : x[2]) }'
    unset p50 p99
done
