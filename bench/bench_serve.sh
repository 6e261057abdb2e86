#!/usr/bin/env bash
# bench_serve.sh: remem serve under load, on loopback.
#
#   1. recall throughput: a 10,000-memory namespace, wrk POSTing /v1/recall
#      (k = 10, touch off) from a few connections, next to the same recalls
#      through the C API in the same run (bench_recall_api, one handle per
#      thread, the same queries); the ratio HTTP / C API is the server's
#      overhead. Two profiles: "stream" (vector lane and scoring only) and
#      "default" (hybrid: vector + BM25 + context).
#   2. a soak: REMEM_SOAK_SECONDS (60) of mixed adds and recalls from
#      several connections; no error, resident memory at the end within 10%
#      of what it was after warm-up (the first 10 s), every acknowledged add
#      in the store afterwards; then SIGTERM and a clean exit.
#
#   bench/bench_serve.sh [BUILD]    (REMEM_BENCH_SECONDS=10 per measurement;
#                                    REMEM_BENCH_QUICK=1: 3 s and a 20 s soak)
# Exit status: non-zero when the soak fails (an error, a leak, a lost add).
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/serve_url.sh"
case $build in /*) ;; *) build=$root/$build ;; esac
bin=$build/remem
api=$build/bench/bench_recall_api
if [ -n "${REMEM_BENCH_QUICK:-}" ]; then
    secs=${REMEM_BENCH_SECONDS:-3}; soak=${REMEM_SOAK_SECONDS:-20}
else
    secs=${REMEM_BENCH_SECONDS:-10}; soak=${REMEM_SOAK_SECONDS:-60}
fi
conns=${REMEM_BENCH_CONNECTIONS:-8}

if ! command -v wrk >/dev/null; then
    echo "bench_serve: skipped: wrk is not installed (REMEM_DEPS_EXTRA=wrk make deps)"
    exit 0
fi
[ -x "$bin" ] && [ -x "$api" ] ||
    make -C "$root" --no-print-directory BUILD="$build" all "$api" >&2

tmp=$(mktemp -d)
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
db=$tmp/bench.db

"$api" fill "$db" bench 10000 >/dev/null
"$api" queries 64 > "$tmp/queries.txt"

"$bin" --db "$db" --embedder hash serve --listen 127.0.0.1:0 --quiet > "$tmp/server.log" 2>&1 &
pid=$!
url=$(serve_url "$tmp/server.log") || exit 1

# wrk prints latencies as 812.00us, 1.23ms or 1.01s: in ms.
to_ms() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /[0-9]s$/) n *= 1000; printf "%.3f", n }'; }
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }

wrk_recall() { # connections seconds profile -> "rps p50 p99" (ms)
    wrk -t2 -c"$1" -d"$2s" --timeout 10s --latency -s "$root/bench/serve_recall.lua" \
        "$url/v1/recall" -- "$tmp/queries.txt" bench "$3" > "$tmp/wrk.txt"
    if grep -q "Non-2xx\|Socket errors" "$tmp/wrk.txt"; then
        echo "bench_serve: errors during the HTTP run:" >&2; cat "$tmp/wrk.txt" >&2; exit 1
    fi
    echo "$(awk '/^Requests\/sec/ {printf "%.0f", $2}' "$tmp/wrk.txt")" \
         "$(to_ms "$(awk '$1 == "50%" {print $2}' "$tmp/wrk.txt")")" \
         "$(to_ms "$(awk '$1 == "99%" {print $2}' "$tmp/wrk.txt")")"
}
line() { printf '     %-22s %7s/s  p50 %8s ms  p99 %8s ms%s\n' "$@"; }

echo "== recall over HTTP vs the C API: 10,000 memories, k=10, touch off =="
echo "   $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg); server: default threads; wrk -t2; ${secs}s each"
for profile in stream default; do
    echo "   profile $profile"
    a1=$("$api" recall "$db" bench "$secs" 1 "$tmp/queries.txt" "$profile")
    a2=$("$api" recall "$db" bench "$secs" 2 "$tmp/queries.txt" "$profile")
    line "C API, 1 thread" "$(echo "$a1" | field recalls_per_s)" "$(echo "$a1" | field p50_ms)" "$(echo "$a1" | field p99_ms)" ""
    line "C API, 2 threads" "$(echo "$a2" | field recalls_per_s)" "$(echo "$a2" | field p50_ms)" "$(echo "$a2" | field p99_ms)" ""
    # warm every pooled handle's cache first, then measure
    wrk_recall "$conns" 3 "$profile" >/dev/null
    for c in 2 "$conns"; do
        read -r rps p50 p99 < <(wrk_recall "$c" "$secs" "$profile")
        line "HTTP, $c connections" "$rps" "$p50" "$p99" \
            "$(awk -v h="$rps" -v a="$(echo "$a2" | field recalls_per_s)" 'BEGIN { printf "   HTTP / C API (2 threads) = %.2f", h / a }')"
    done
done

# Recall while another client writes to the same namespace: every write
# makes the other pooled handles reload that namespace's vectors.
echo "== recall (stream, $conns connections) while 10 adds/s go to the same namespace =="
(end=$((SECONDS + secs + 1)); n=0
 while [ $SECONDS -lt $end ]; do
     curl -s -o /dev/null "$url/v1/namespaces/bench/memories" -H 'Content-Type: application/json' \
          -d "{\"text\":\"a live observation number $n about the garden\"}"
     n=$((n + 1)); sleep 0.1
 done; echo "$n" > "$tmp/live_writes") &
writer=$!
read -r rps p50 p99 < <(wrk_recall "$conns" "$secs" stream)
wait "$writer"
line "HTTP, $conns connections" "$rps" "$p50" "$p99" "   ($(cat "$tmp/live_writes") adds meanwhile)"

echo "== soak: ${soak}s of mixed adds (1 in 5) and recalls, wrk -t2 -c$conns =="
mkdir -p "$tmp/acked"
rss() { awk '/^VmRSS/ {print $2}' "/proc/$pid/status"; }
rss_start=$(rss)
wrk -t2 -c"$conns" -d"${soak}s" --timeout 10s -s "$root/bench/serve_soak.lua" "$url" \
    -- "$tmp/queries.txt" "$tmp/acked" > "$tmp/soak.txt" &
wrk_pid=$!
sleep 10
rss_warm=$(rss)
samples="$rss_warm"
while kill -0 "$wrk_pid" 2>/dev/null; do
    sleep 5
    kill -0 "$wrk_pid" 2>/dev/null && samples="$samples $(rss)"
done
wait "$wrk_pid"
rss_end=$(rss)
cat "$tmp/soak.txt" | grep -E "requests in|Requests/sec|Non-2xx|Socket errors|soak " | sed 's/^/   /'
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=
cat "$tmp"/acked/*.txt > "$tmp/acked.txt"
verify=$("$api" verify "$db" soak "$tmp/acked.txt" || true)
acked=$(sed -n 's/.*adds_acked=\([0-9]*\).*/\1/p' "$tmp/soak.txt")
growth=$(awk -v w="$rss_warm" -v e="$rss_end" 'BEGIN { printf "%.1f", 100 * (e - w) / w }')
echo "   RSS: start $((rss_start / 1024)) MiB, after warm-up $((rss_warm / 1024)) MiB, end $((rss_end / 1024)) MiB ($growth%)"
echo "   RSS every 5 s (KiB): $samples"
echo "   acknowledged adds in the store: $verify (wrk counted $acked)"
echo "   server exit status after SIGTERM: $status"

ok=1
grep -q "Non-2xx\|Socket errors" "$tmp/soak.txt" && { echo "   FAIL: errors during the soak"; ok=0; }
grep -q "failures=0" "$tmp/soak.txt" || { echo "   FAIL: failed requests"; ok=0; }
awk -v g="$growth" 'BEGIN { exit !(g > 10) }' && { echo "   FAIL: memory grew more than 10% after warm-up"; ok=0; }
echo "$verify" | grep -q "missing=0" || { echo "   FAIL: acknowledged adds missing"; ok=0; }
[ "$(echo "$verify" | sed -n 's/.*ids=\([0-9]*\).*/\1/p')" = "$acked" ] || { echo "   FAIL: acked count differs"; ok=0; }
[ "$status" -eq 0 ] || { echo "   FAIL: exit status $status"; ok=0; }
[ $ok -eq 1 ] && echo "   soak: ok" || exit 1
