#!/usr/bin/env bash
# plot_bench.sh: draws bench_engine's recall figures (p50 latency against
# the number of memories, for remem's recall, the plain scalar scan run in
# the same process, and the float32 and int8 memory-bandwidth floors) as a
# log-log chart with gnuplot (Debian's gnuplot-nox).
#   tools/plot_bench.sh [BENCH_OUTPUT] [OUT.png]
# BENCH_OUTPUT is a saved `build/bench/bench_engine` run (default: run it).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-docs/img/recall-latency.png}
command -v gnuplot >/dev/null || { echo "needs gnuplot: apt-get install gnuplot-nox" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if [ -n "${1:-}" ]; then cp "$1" "$tmp/bench.txt"; else "$here/build/bench/bench_engine" | tee "$tmp/bench.txt"; fi
# "  100000 memories: p50 1.342 ms p99 ... | scalar scan p50 17.933 ms ... | float32 floor 5.89 ms, int8 floor 1.47 ms"
sed -n 's/^ *\([0-9]*\) memories: p50 *\([0-9.]*\) ms.*scalar scan p50 *\([0-9.]*\) ms.*float32 floor \([0-9.]*\) ms, int8 floor \([0-9.]*\) ms.*/\1 \2 \3 \4 \5/p' \
    "$tmp/bench.txt" > "$tmp/data"
[ -s "$tmp/data" ] || { echo "plot_bench: no recall lines in the bench output" >&2; exit 1; }
gnuplot <<GP
set terminal pngcairo size 820,500 font "sans,10" noenhanced
set output "$out"
set title "remem recall: p50 latency, profile stream, filter keeps 50%, k=10, one thread"
set logscale xy
set xlabel "memories (384 dimensions)"
set ylabel "ms"
set grid
set key top left
set format x "%.0s%c"
plot "$tmp/data" using 1:3 with linespoints lw 2 title "plain scalar float32 scan (same run)", \
     "$tmp/data" using 1:4 with lines dt 2 lw 2 title "float32 memory-bandwidth floor", \
     "$tmp/data" using 1:5 with lines dt 3 lw 2 title "int8 memory-bandwidth floor", \
     "$tmp/data" using 1:2 with linespoints lw 3 title "remem recall (exact)"
GP
echo "wrote $out"
