#!/usr/bin/env bash
# bench_inspector.sh: the inspector's page load (docs/inspector.md) from a
# local remem serve, in headless chromium: the timeline view (its first
# page of 50, memory.list) and the namespaces view (stats) of a namespace
# of 100,000 memories, side by side with the same views of a namespace of
# 100 in the same store and the same run, alternating; the ratio is
# big / small. Each load is a fresh browser context (nothing cached).
#
#   bench/bench_inspector.sh BUILD     REMEM_BIG_N (100000), REMEM_ROUNDS (15)
# Needs chromium, node and tests/inspector's puppeteer-core (npm ci there).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case $build in /*) ;; *) build=$root/$build ;; esac
n=${REMEM_BIG_N:-100000}
rounds=${REMEM_ROUNDS:-15}
chromium=$(command -v chromium || true)
pup=$root/tests/inspector
if [ -z "$chromium" ] || ! command -v node >/dev/null; then
    echo "bench_inspector: SKIP (no chromium or node)"; exit 0
fi
[ -d "$pup/node_modules/puppeteer-core" ] || (cd "$pup" && npm ci --no-audit --no-fund >/dev/null 2>&1) ||
    { echo "bench_inspector: SKIP (npm could not install puppeteer-core)"; exit 0; }
[ -x "$build/bench/bench_recall_api" ] || make -C "$root" "BUILD=${build#$root/}" "$build/bench/bench_recall_api" >/dev/null
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
"$build/bench/bench_recall_api" fill "$tmp/b.db" big "$n" >/dev/null
"$build/bench/bench_recall_api" fill "$tmp/b.db" small 100 >/dev/null
"$build/remem" --db "$tmp/b.db" --quiet serve --listen 127.0.0.1:0 > "$tmp/out" 2>&1 &
pid=$!
for _ in $(seq 1 100); do url=$(sed -n 's/^listening on //p' "$tmp/out"); [ -n "$url" ] && break; sleep 0.1; done
echo "== inspector page load, headless chromium, $rounds loads per view, fresh context each =="
echo "   $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg); namespaces of $n and 100 memories"
node "$root/bench/inspector_load.cjs" "$pup" "$chromium" "$url" "$rounds" \
    timeline:small timeline:big namespaces:small namespaces:big > "$tmp/res"
cat "$tmp/res"
med() { sed -n "s/^$1 median_ms=\([0-9.]*\).*/\1/p" "$tmp/res"; }
for v in timeline namespaces; do
    awk -v a="$(med "$v:big")" -v b="$(med "$v:small")" -v v="$v" \
        'BEGIN { printf "%s: %d memories / 100: median %.1f / %.1f ms = %.2fx\n", v, '"$n"', a, b, a / b }'
done
