#!/usr/bin/env bash
# bench_inspector.sh: the inspector's page load (docs/inspector.md) from a
# local remem serve, in headless chromium: the timeline view (its first
# page of 50, memory.list) and the namespaces view (stats) of a namespace
# of 100,000 memories, side by side with the same views of a namespace of
# 100 in the same store and the same run, alternating; the ratio is
# big / small. Each load is a fresh browser context (nothing cached). The
# namespaces are loaded first (a recall each), as on a server in use; the
# first calls before that are printed too.
#
#   bench/bench_inspector.sh BUILD [BASE_BUILD]
#     REMEM_BIG_N (100000), REMEM_ROUNDS (10)
# With BASE_BUILD (another tree's build, e.g. b008c61's), the two API calls
# behind the timeline and namespaces views (memory.list's first page,
# stats) are also timed with curl against both builds' servers on the same
# store, alternating, loaded namespace; ratio new / base.
# Needs chromium, node and tests/inspector's puppeteer-core (npm ci there).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case $build in /*) ;; *) build=$root/$build ;; esac
base=${2:-}
case $base in ''|/*) ;; *) base=$root/$base ;; esac
n=${REMEM_BIG_N:-100000}
rounds=${REMEM_ROUNDS:-10}
chromium=$(command -v chromium || true)
pup=$root/tests/inspector
if [ -z "$chromium" ] || ! command -v node >/dev/null; then
    echo "bench_inspector: SKIP (no chromium or node)"; exit 0
fi
[ -d "$pup/node_modules/puppeteer-core" ] || (cd "$pup" && npm ci --no-audit --no-fund >/dev/null 2>&1) ||
    { echo "bench_inspector: SKIP (npm could not install puppeteer-core)"; exit 0; }
[ -x "$build/bench/bench_recall_api" ] || make -C "$root" "BUILD=${build#$root/}" "${build#$root/}/bench/bench_recall_api" >/dev/null
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
"$build/bench/bench_recall_api" fill "$tmp/b.db" big "$n" >/dev/null
"$build/bench/bench_recall_api" fill "$tmp/b.db" small 100 >/dev/null
start() { # build: a server on the store, $url and $pid
    "$1/remem" --db "$tmp/b.db" --quiet serve --listen 127.0.0.1:0 > "$tmp/out" 2>&1 &
    pid=$!
    url=
    for _ in $(seq 1 100); do url=$(sed -n 's/^listening on //p' "$tmp/out"); [ -n "$url" ] && break; sleep 0.1; done
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; }
start "$build"
post() { curl -s -o /dev/null -w '%{time_total}' "$url/v1/$1" -H 'Content-Type: application/json' -d "$2"; }
echo "== inspector page load, headless chromium, $rounds loads per view, fresh context each =="
echo "   $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg); namespaces of $n and 100 memories"
# Before the namespace is loaded (a server just started): the store's scans.
echo "   first calls, namespace not loaded: memory.list $(post memory/list '{"ns":"big","desc":true,"limit":50}') s," \
     "stats $(post stats '{"ns":"big"}') s"
# A server in use has its namespaces loaded (recall loads them): so here.
post recall '{"ns":"big","query":"warm","touch":false}' > /dev/null
post recall '{"ns":"small","query":"warm","touch":false}' > /dev/null
node "$root/bench/inspector_load.cjs" "$pup" "$chromium" "$url" "$rounds" \
    memory:small timeline:small timeline:big namespaces:small namespaces:big > "$tmp/res"
cat "$tmp/res"
med() { sed -n "s/^$1 median_ms=\([0-9.]*\).*/\1/p" "$tmp/res"; }
echo "(memory:small is the floor: the page, its script and one GET /v1/namespaces)"
for v in timeline namespaces; do
    awk -v a="$(med "$v:big")" -v b="$(med "$v:small")" -v v="$v" \
        'BEGIN { printf "%s: %d memories / 100: median %.1f / %.1f ms = %.2fx\n", v, '"$n"', a, b, a / b }'
done
stop
[ -n "$base" ] || exit 0
# The API calls alone, this build against BASE_BUILD, alternating.
echo "== the views' API calls, namespace of $n loaded, curl, medians of 3 x 2 rounds =="
declare -A list=() stats=()
for round in 1 2; do
    for b in "$base" "$build"; do
        start "$b"
        post recall '{"ns":"big","query":"warm","touch":false}' > /dev/null
        for _ in 1 2 3; do
            list[$b]="${list[$b]:-} $(post memory/list '{"ns":"big","desc":true,"limit":50}')"
            stats[$b]="${stats[$b]:-} $(post stats '{"ns":"big"}')"
        done
        stop
    done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
for what in list stats; do
    declare -n m=$what
    a=$(echo "${m[$base]}" | median) b=$(echo "${m[$build]}" | median)
    awk -v w="$what" -v a="$a" -v b="$b" 'BEGIN { printf "%s: base %.1f ms, this build %.1f ms, new / base %.3f\n", w, a * 1000, b * 1000, b / a }'
done
