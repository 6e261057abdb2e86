#!/usr/bin/env bash
# compare.sh: this tree's speed against another commit's, side by side in one
# run. The machines remem is built on are shared and noisy, so a figure from
# yesterday says little; the same benchmark run alternately from two builds
# (A B A B ...) a few minutes apart says whether a change made remem slower.
#
#   bench/compare.sh [REF] [--rounds N] [--serve]
#
# REF (default HEAD~1) is built in a temporary git worktree. Each round runs
# `bench_engine --quick` (ingest, recall at 10k and 100k) from both builds,
# and with --serve also `bench_recall_api` alone (in-process recall over
# 10,000 memories, profiles stream and default, 1 and 2 threads: what
# `remem serve` can at most answer). It prints, per figure, the median of
# the rounds from each build and the ratio this tree / REF. For latency a
# ratio above 1 is slower; for throughput a ratio below 1 is slower.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
ref=HEAD~1
rounds=3
serve=0
while [ $# -gt 0 ]; do
    case $1 in
        --rounds) rounds=$2; shift ;;
        --serve) serve=1 ;;
        -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
        *) ref=$1 ;;
    esac
    shift
done
cd "$here"
sha=$(git rev-parse --short "$ref")
tmp=$(mktemp -d)
wt="$tmp/ref"
cleanup() { git worktree remove --force "$wt" >/dev/null 2>&1 || true; rm -rf "$tmp"; }
trap cleanup EXIT
git worktree add --detach -q "$wt" "$sha"
echo "compare: building $sha (REF) and this tree" >&2
make -s -C "$wt" -j2 all build/bench/bench_engine build/bench/bench_recall_api >/dev/null
make -s -C "$here" -j2 all build/bench/bench_engine build/bench/bench_recall_api >/dev/null

# One figure per line, "name value", from a bench_engine output.
engine_figures() {
    awk '
    /synchronous=/ { d = $1; sub("synchronous=", "", d)
                     print "ingest_" d "_batched_per_s", $3; print "ingest_" d "_single_per_s", $7 }
    /memories: p50/ { n = $1; print "recall_" n "_p50_ms", $4; print "recall_" n "_p99_ms", $7 }'
}
api_figures() { # lines "  PROFILE api threads=T ... recalls_per_s=X p50_ms=Y p99_ms=Z"
    awk '/ api threads=/ { p = $1
        for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
        pre = "api_" p "_" f["threads"] "t_"
        print pre "recalls_per_s", f["recalls_per_s"]; print pre "p50_ms", f["p50_ms"]; print pre "p99_ms", f["p99_ms"] }'
}
run_side() { # build-dir label
    local b=$1 label=$2
    "$b/build/bench/bench_engine" --quick 2>/dev/null | engine_figures | sed "s/^/$label /"
    if [ $serve -eq 1 ]; then
        REMEM_BENCH_QUICK=1 "$b/build/bench/bench_recall_api" 2>/dev/null | api_figures |
            sed "s/^/$label /"
    fi
}
for r in $(seq 1 "$rounds"); do
    echo "compare: round $r of $rounds" >&2
    run_side "$wt" ref >>"$tmp/figures"
    run_side "$here" new >>"$tmp/figures"
done
echo "this tree ($(git rev-parse --short HEAD)$(git status --porcelain | grep -q . && echo ', modified')) against $sha," \
     "$rounds rounds, load $(cut -d' ' -f1-3 /proc/loadavg)"
awk '
function median(s,   a, n, i, j, t) {
    n = split(s, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ v[$1, $2] = v[$1, $2] " " $3; if (!($2 in seen)) { seen[$2] = 1; order[++k] = $2 } }
END {
    printf "%-34s %12s %12s %8s\n", "figure", "REF median", "new median", "new/REF"
    for (i = 1; i <= k; i++) {
        f = order[i]; a = median(v["ref", f]); b = median(v["new", f])
        printf "%-34s %12.3f %12.3f %8.2f\n", f, a, b, (a > 0 ? b / a : 0)
    }
}' "$tmp/figures"
