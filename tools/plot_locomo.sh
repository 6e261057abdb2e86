#!/usr/bin/env bash
# plot_locomo.sh: runs `remem eval locomo` over every profile and draws
# recall@5/@10/@20 per profile as a bar chart (gnuplot, Debian's gnuplot-nox),
# next to the plain-BM25 reference of the benchmark's notice.
#   tools/plot_locomo.sh FILE [OUT.png]     (default docs/img/locomo.png)
set -euo pipefail
file=${1:?usage: tools/plot_locomo.sh LOCOMO.json [OUT.png]}
out=${2:-docs/img/locomo.png}
here=$(cd "$(dirname "$0")/.." && pwd)
command -v gnuplot >/dev/null || { echo "needs gnuplot: apt-get install gnuplot-nox" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$here/build/remem" --quiet --json eval locomo "$file" --all-profiles > "$tmp/eval.json"
python3 - "$tmp/eval.json" > "$tmp/data.tsv" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for name, p in d["profiles"].items():
    print(f'{name}\t{p["recall@5"]:.4f}\t{p["recall@10"]:.4f}\t{p["recall@20"]:.4f}')
print("BM25 (reference)\t0.454\t0.536\t0.613")
PY
gnuplot <<GP
set terminal pngcairo size 900,480 font "sans,10" noenhanced
set datafile separator "\t"
set output "$out"
set title "LoCoMo retrieval (categories 1-4): recall@k by profile, hash embedder"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set yrange [0:0.8]
set ylabel "recall"
set grid ytics
set key top right
set xtics rotate by -20
plot "$tmp/data.tsv" using 2:xtic(1) title "recall@5", '' using 3 title "recall@10", '' using 4 title "recall@20"
GP
echo "wrote $out"
