#!/usr/bin/env bash
# bench_tenants.sh: many small namespaces behind one `remem serve` (issue
# 17): N namespaces of 10 memories each, composed from the LoCoMo dev turns
# (bench/locomo_compose.py), random recalls over all of them from 8
# connections (wrk), a cache budget smaller than the data; each build given
# is measured in the same run, on the same store, one after the other:
# recalls/s, p50 and p99, the server's resident memory at the end (VmRSS)
# and its peak (VmHWM) and the anonymous part of it (RssAnon: the heap,
# which the budget bounds; the rest is the store file's pages that
# SQLite's memory map has touched, the kernel's page cache, shared and
# reclaimable), with 1, 4 and 8 server threads.
#
#   bench/bench_tenants.sh BUILD [BASE_BUILD]
#     REMEM_TENANTS (10000), REMEM_TENANT_MB (the --cache-mb budget, 64),
#     REMEM_BENCH_SECONDS (20 per run), REMEM_TENANT_THREADS ("1 4 8"),
#     REMEM_TENANT_DB (a store file kept from an earlier run, or a PostgreSQL
#     URI whose database an earlier run filled: no import)
# A BASE_BUILD without --cache-mb (1a9de9e) runs without the flag.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/serve_url.sh"
builds=("$@")
[ ${#builds[@]} -ge 1 ] || builds=(build)
n_ns=${REMEM_TENANTS:-10000}
mb=${REMEM_TENANT_MB:-64}
secs=${REMEM_BENCH_SECONDS:-20}
threads=${REMEM_TENANT_THREADS:-"1 4 8"}
command -v wrk >/dev/null || { echo "bench_tenants: skipped: wrk is not installed"; exit 0; }
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

first=${builds[0]}; case $first in /*) ;; *) first=$root/$first ;; esac
db=${REMEM_TENANT_DB:-$tmp/t.db}
python3 "$root/bench/locomo_compose.py" questions > "$tmp/q.txt"
t0=$(date +%s.%N)
if [ ! -e "$db" ] && [[ $db != postgres*://* ]]; then
python3 "$root/bench/locomo_compose.py" memories $((n_ns * 10)) --ns x |
    python3 -c '
import json, sys
for i, line in enumerate(sys.stdin):
    m = json.loads(line); m["ns"] = "t:%05d" % (i // 10); m.pop("id", None)
    print(json.dumps(m))' > "$tmp/m.jsonl"
"$first/remem" --db "$db" --embedder hash import --batch 5000 "$tmp/m.jsonl" >/dev/null
fi
echo "== $n_ns namespaces x 10 memories ($((n_ns * 10)) memories; import $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.0f", b-a}') s), budget ${mb} MB, wrk -t2 -c8, ${secs}s per run =="
echo "   $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg)"

to_ms() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /[0-9]s$/) n *= 1000; printf "%.2f", n }'; }
run() { # build threads
    local b=$1 th=$2 flag=
    "$b/remem" serve --help 2>/dev/null | grep -q -- --cache-mb && flag="--cache-mb $mb"
    # shellcheck disable=SC2086
    "$b/remem" --db "$db" --embedder hash serve --listen 127.0.0.1:0 --quiet \
        --threads "$th" $flag > "$tmp/server.log" 2>&1 &
    pid=$!
    local url
    url=$(serve_url "$tmp/server.log") || exit 1
    wrk -t2 -c8 -d"${secs}s" --timeout 10s --latency -s "$root/bench/serve_tenants.lua" \
        "$url/v1/recall" -- "$tmp/q.txt" "$n_ns" > "$tmp/wrk.txt"
    local rss hwm anon errs=""
    rss=$(awk '/^VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$pid/status")
    hwm=$(awk '/^VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$pid/status")
    anon=$(awk '/^RssAnon/ {printf "%.0f", $2 / 1024}' "/proc/$pid/status")
    grep -q "Non-2xx\|Socket errors" "$tmp/wrk.txt" && errs="  (errors: $(grep -h 'Non-2xx\|Socket errors' "$tmp/wrk.txt" | tr -s ' '))"
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
    printf '   %-22s %2s threads %6s/s  p50 %7s ms  p99 %7s ms  RSS %5s MB (peak %5s, anonymous %5s)%s\n' \
        "$(basename "$(dirname "$b")")${flag:+ --cache-mb $mb}" "$th" \
        "$(awk '/^Requests\/sec/ {printf "%.0f", $2}' "$tmp/wrk.txt")" \
        "$(to_ms "$(awk '$1 == "50%" {print $2}' "$tmp/wrk.txt")")" \
        "$(to_ms "$(awk '$1 == "99%" {print $2}' "$tmp/wrk.txt")")" "$rss" "$hwm" "$anon" "$errs"
}
for th in $threads; do
    for b in "${builds[@]}"; do
        case $b in /*) ;; *) b=$root/$b ;; esac
        run "$b" "$th"
    done
done
