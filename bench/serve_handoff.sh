#!/usr/bin/env bash
# serve_handoff.sh: what handing each request to a worker thread costs
# (libmicrohttpd suspends the connection, a worker of server/work.c runs the
# handler and resumes it), against a build without the hand-off, side by
# side in one run: HTTP recall (`stream`, k = 10, touch off, 10,000
# memories) with wrk from 2 and 8 connections, servers of the two builds
# started alternately (A B A B A B), median of the rounds, ratio new / REF.
#
#   bench/serve_handoff.sh REF_BUILD [BUILD]   (REMEM_BENCH_SECONDS=5,
#                                               REMEM_BENCH_ROUNDS=3)
# REF_BUILD is a build folder of the other commit (e.g. one made from
# `git archive 1a9de9e`); BUILD defaults to this tree's build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/serve_url.sh"
ref=${1:?usage: bench/serve_handoff.sh REF_BUILD [BUILD]}
new=${2:-$root/build}
secs=${REMEM_BENCH_SECONDS:-5}
rounds=${REMEM_BENCH_ROUNDS:-3}
command -v wrk >/dev/null || { echo "serve_handoff: skipped: wrk is not installed"; exit 0; }
api=$new/bench/bench_recall_api
[ -x "$api" ] || make -C "$root" --no-print-directory BUILD="$new" "$api" >&2
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
"$api" fill "$tmp/bench.db" bench 10000 >/dev/null
"$api" queries 64 > "$tmp/queries.txt"

to_ms() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /[0-9]s$/) n *= 1000; printf "%.3f", n }'; }
serve() { # build -> sets pid, url
    "$1/remem" --db "$tmp/bench.db" --embedder hash serve --listen 127.0.0.1:0 --quiet \
        > "$tmp/server.log" 2>&1 &
    pid=$!
    url=$(serve_url "$tmp/server.log") || exit 1
}
recall() { # connections seconds -> "rps p50"
    wrk -t2 -c"$1" -d"$2s" --timeout 10s --latency -s "$root/bench/serve_recall.lua" \
        "$url/v1/recall" -- "$tmp/queries.txt" bench stream > "$tmp/wrk.txt"
    echo "$(awk '/^Requests\/sec/ {printf "%.0f", $2}' "$tmp/wrk.txt")" \
         "$(to_ms "$(awk '$1 == "50%" {print $2}' "$tmp/wrk.txt")")"
}
: > "$tmp/figures"
for r in $(seq 1 "$rounds"); do
    for side in ref new; do
        b=$ref; [ $side = new ] && b=$new
        serve "$b"
        recall 8 2 >/dev/null # warm every pooled handle
        for c in 2 8; do
            read -r rps p50 < <(recall "$c" "$secs")
            echo "$side c$c rps $rps" >> "$tmp/figures"
            echo "$side c$c p50_ms $p50" >> "$tmp/figures"
        done
        kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
    done
done
echo "== HTTP recall, stream, 10,000 memories: $rounds rounds of ${secs}s, median; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
printf '   %-16s %10s %10s %8s\n' figure REF new new/REF
for c in 2 8; do
    for f in rps p50_ms; do
        med() { awk -v s="$1" -v c="c$c" -v f="$f" '$1 == s && $2 == c && $3 == f {print $4}' "$tmp/figures" |
                sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
        a=$(med ref); b=$(med new)
        printf '   %-16s %10s %10s %8.2f\n' "$c conns, $f" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN {print b / a}')"
    done
done
