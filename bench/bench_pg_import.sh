#!/usr/bin/env bash
# bench_pg_import.sh: `remem import --batch 5000` into PostgreSQL (issue
# 17: loading the 1M-memory tenant store), each build given into a fresh
# database of one throwaway PostgreSQL 15 (tests/support/pg.sh), the
# builds alternating A B A B so that the machine's drift hits both alike:
# memories/s per run and, with two builds, the ratio of the medians.
# The memories are the tenant benchmark's (bench_tenants.sh): composed
# from the LoCoMo dev turns, 10 per namespace "t:%05d".
#
#   bench/bench_pg_import.sh BUILD [BASE_BUILD]
#     REMEM_IMPORT_N (memories, 50000), REMEM_IMPORT_ROUNDS (3),
#     REMEM_IMPORT_PG (a PostgreSQL admin URI to use instead of a
#     throwaway server)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
builds=("$@")
[ ${#builds[@]} -ge 1 ] || builds=(build)
n=${REMEM_IMPORT_N:-50000}
rounds=${REMEM_IMPORT_ROUNDS:-3}
tmp=$(mktemp -d /tmp/remem-bench-pg-XXXXXX)
pg_dir=
cleanup() { [ -n "$pg_dir" ] && bash "$root/tests/support/pg.sh" stop "$pg_dir"; rm -rf "$tmp"; }
trap cleanup EXIT
uri=${REMEM_IMPORT_PG:-}
if [ -z "$uri" ]; then
    # A folder of its own under /tmp: the server's user cannot enter $tmp
    # (mktemp makes it 0700), and pg.sh stop removes it.
    pg_dir=$(mktemp -d /tmp/remem-bench-pgdata-XXXXXX)
    uri=$(bash "$root/tests/support/pg.sh" start "$pg_dir") || { echo "bench_pg_import: skipped: no PostgreSQL"; exit 0; }
fi
python3 "$root/bench/locomo_compose.py" memories "$n" --ns x | python3 -c '
import json, sys
for i, line in enumerate(sys.stdin):
    m = json.loads(line); m["ns"] = "t:%05d" % (i // 10); m.pop("id", None)
    print(json.dumps(m))' > "$tmp/m.jsonl"
echo "== import --batch 5000 of $n memories ($((n / 10)) namespaces x 10) into PostgreSQL, $rounds rounds =="
echo "   $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
    for i in "${!builds[@]}"; do
        b=${builds[$i]}
        case $b in /*) ;; *) b=$root/$b ;; esac
        db=$(bash "$root/tests/support/pg.sh" newdb "$uri")
        t0=$(date +%s.%N)
        "$b/remem" --db "$db" --embedder hash import --batch 5000 "$tmp/m.jsonl" >/dev/null
        t1=$(date +%s.%N)
        psql -q "$uri" -c "DROP DATABASE ${db##*/}" >/dev/null
        rate=$(awk -v a="$t0" -v b="$t1" -v n="$n" 'BEGIN {printf "%.0f", n / (b - a)}')
        echo "$i $rate" >> "$tmp/rates"
        printf '   round %d  %-24s %8s memories/s\n' "$r" "$(basename "$(dirname "$b")")/$(basename "$b")" "$rate"
    done
done
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
a=$(awk '$1 == 0 {print $2}' "$tmp/rates" | median)
echo "   median ${builds[0]}: $a memories/s"
if [ ${#builds[@]} -ge 2 ]; then
    base=$(awk '$1 == 1 {print $2}' "$tmp/rates" | median)
    echo "   median ${builds[1]}: $base memories/s"
    awk -v a="$a" -v b="$base" 'BEGIN {printf "   ratio (first / second): %.2f\n", a / b}'
fi
