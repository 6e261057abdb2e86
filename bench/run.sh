#!/usr/bin/env bash
# run.sh: runs every benchmark program BUILD/bench/bench_* and script
# bench/bench_*.sh (given BUILD as its argument) in turn (one at a time: they
# measure latency, and two at once would measure each other) and
# tees all output to bench/results/latest.txt, after a header naming the
# date, the commit and the CPU, so that a result can be traced to its run.
# A benchmark that exits non-zero (a wrong answer, say) is reported and the
# others still run; the exit status is then 1.
#   bench/run.sh [BUILD] [--quick] [NAME-SUBSTRING]
# --quick sets REMEM_BENCH_QUICK=1, which each benchmark reads as "the short
# run" (bench_flat: 10k and 100k rows only).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
[ $# -gt 0 ] && shift
only=
for arg in "$@"; do
    case $arg in
        --quick) export REMEM_BENCH_QUICK=1 ;;
        *) only=$arg ;;
    esac
done
case $build in /*) ;; *) build="$here/$build" ;; esac
mkdir -p "$here/bench/results"
out="$here/bench/results/latest.txt"
failed=()
{
    echo "remem benchmarks, $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)" \
         "$(git -C "$here" status --porcelain 2>/dev/null | grep -q . && echo '(work tree modified)')"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    [ -n "${REMEM_BENCH_QUICK:-}" ] && echo "quick run"
    echo
} | tee "$out"
found=0
# Programs, then scripts (bench_serve.sh drives the server with wrk).
for b in "$build"/bench/bench_* "$here"/bench/bench_*.sh; do
    [ -x "$b" ] || [[ $b == *.sh && -f $b ]] || continue
    name=$(basename "$b")
    [ -n "$only" ] && [[ $name != *"$only"* ]] && continue
    found=1
    echo "== $name" | tee -a "$out"
    t0=$SECONDS
    if [[ $b == *.sh ]]; then bash "$b" "$build"; else "$b"; fi 2>&1 | tee -a "$out"
    status=${PIPESTATUS[0]}
    echo "== $name: exit $status, $((SECONDS - t0)) s" | tee -a "$out"
    echo | tee -a "$out"
    [ "$status" -eq 0 ] || failed+=("$name")
done
[ $found -eq 1 ] || { echo "no benchmarks in $build/bench (make bench builds them)" | tee -a "$out"; exit 1; }
if [ ${#failed[@]} -gt 0 ]; then
    echo "failed: ${failed[*]}" | tee -a "$out"
    exit 1
fi
echo "results in bench/results/latest.txt"
