#!/usr/bin/env bash
# tenant_cost.sh: what one recall of the tenant benchmark costs a `remem
# serve`, counted rather than timed, so that a busy shared machine moves
# the figures little: the server's CPU time (user + system) per recall, and
# per recall its system calls, futex calls, context switches, page reads
# (pread) and madvise calls, from the kernel's own counters (perf stat on
# tracepoints). Each build given runs the same store in turn, warmed until
# its cache budget is full, then measured under wrk -t2 -c8 as
# bench_tenants.sh drives it.
#
#   bench/tenant_cost.sh DB NAMESPACES BUILD [BUILD...]
#     REMEM_TENANT_MB (512), REMEM_TENANT_THREADS ("4"), REMEM_COST_ROUNDS (2),
#     REMEM_COST_WARM (15 s), REMEM_BENCH_SECONDS (8 s measured)
# DB: a tenant store (bench/README.md's recipe); needs perf and wrk.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/serve_url.sh"
db=$1 n_ns=$2
shift 2
mb=${REMEM_TENANT_MB:-512} threads=${REMEM_TENANT_THREADS:-4} rounds=${REMEM_COST_ROUNDS:-2}
warm=${REMEM_COST_WARM:-15} secs=${REMEM_BENCH_SECONDS:-8}
for tool in wrk perf; do
    command -v $tool >/dev/null || { echo "tenant_cost: skipped: $tool is not installed"; exit 0; }
done
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
python3 "$root/bench/locomo_compose.py" questions > "$tmp/q.txt"
lua=$root/bench/serve_tenants.lua
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; } # clock ticks
events=raw_syscalls:sys_enter,syscalls:sys_enter_futex,sched:sched_switch,syscalls:sys_enter_pread64,syscalls:sys_enter_madvise
echo "== $n_ns namespaces, budget $mb MB, $threads threads, wrk -t2 -c8: warm ${warm} s, then ${secs} s counted; load average $(cut -d' ' -f1 /proc/loadavg) =="
printf '   %-14s %9s %9s %7s %9s %7s %8s %9s %7s\n' build "CPU us" syscalls futex switches pread madvise recalls/s RSS_MB
run() { # build
    local b=$1
    "$b/remem" --db "$db" --embedder hash serve --listen 127.0.0.1:0 --quiet --threads "$threads" \
        --cache-mb "$mb" > "$tmp/server.log" 2>&1 &
    pid=$!
    local url
    url=$(serve_url "$tmp/server.log") || exit 1
    wrk -t2 -c8 -d"${warm}s" -s "$lua" "$url/v1/recall" -- "$tmp/q.txt" "$n_ns" > /dev/null
    local c0 c1 n
    c0=$(cpu)
    perf stat -x, -e "$events" -p "$pid" -o "$tmp/perf.txt" -- sleep $((secs + 1)) &
    local pp=$!
    sleep 0.5
    wrk -t2 -c8 -d"${secs}s" -s "$lua" "$url/v1/recall" -- "$tmp/q.txt" "$n_ns" > "$tmp/wrk.txt"
    wait "$pp"
    c1=$(cpu)
    n=$(awk '/requests in/ {print $1}' "$tmp/wrk.txt")
    local rss
    rss=$(awk '/^VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$pid/status")
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
    get() { awk -F, -v e="$1" '$3 == e {print $1}' "$tmp/perf.txt"; }
    awk -v n="$n" -v c=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" -v sc="$(get raw_syscalls:sys_enter)" \
        -v fx="$(get syscalls:sys_enter_futex)" -v sw="$(get sched:sched_switch)" \
        -v pr="$(get syscalls:sys_enter_pread64)" -v ma="$(get syscalls:sys_enter_madvise)" \
        -v r="$(awk '/Requests\/sec/ {print $2}' "$tmp/wrk.txt")" -v name="$(basename "$(dirname "$b")")" \
        -v rss="$rss" 'BEGIN {printf "   %-14s %9.0f %9.1f %7.1f %9.1f %7.1f %8.2f %9.0f %7d\n", name,
            c * 1e6 / hz / n, sc / n, fx / n, sw / n, pr / n, ma / n, r, rss}'
}
for _ in $(seq 1 "$rounds"); do
    for b in "$@"; do
        case $b in /*) ;; *) b=$root/$b ;; esac
        run "$b"
    done
done
