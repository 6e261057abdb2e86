#!/usr/bin/env bash
# tenant_calls.sh: instructions per recall on the tenant benchmark's path
# without HTTP (bench/tenant_calls.c), this tree against another build of
# the library, side by side, counted by callgrind (a count the load of a
# shared machine does not move), and the two builds' answers compared
# byte for byte (took_ms left out).
#
#   bash bench/tenant_calls.sh DB NAMESPACES CACHE_MB BASE_TREE [CALLS]
#
# DB: a tenant store ("t:00000".. namespaces of 10 memories: bench_tenants.sh
# or bench/README.md's 100k recipe); BASE_TREE: a checkout of the commit to
# compare with, its library built (make -C BASE_TREE build/libremem.a).
# CALLS (default 1000) recalls each; the comparison of answers takes 3x.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
db=$1 n_ns=$2 mb=$3 base=$4 calls=${5:-1000}
command -v valgrind >/dev/null || { echo "tenant_calls: skipped: valgrind is not installed"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s -C "$root" build/libremem.a
libs="$(pkg-config --libs $(make -s -C "$root" print-pkgs)) -lstemmer -lm -lpthread"
python3 "$root/bench/locomo_compose.py" questions > "$tmp/q.txt"
# -O2 without -march=native: valgrind does not run AVX-512 code.
cc -O2 -I"$root/include" -o "$tmp/new" "$root/bench/tenant_calls.c" "$root/build/libremem.a" $libs
cc -O2 -I"$base/include" -o "$tmp/base" "$root/bench/tenant_calls.c" "$base/build/libremem.a" $libs
for b in base new; do
    DUMP=1 "$tmp/$b" "$db" "$n_ns" $((calls * 3)) "$tmp/q.txt" "$mb" > "$tmp/$b.out" 2>/dev/null
done
if cmp -s "$tmp/base.out" "$tmp/new.out"; then same="the same"; else same="DIFFERENT"; fi
echo "== $n_ns namespaces, budget $mb MB, $calls recalls each under callgrind; answers of $((calls * 3)) recalls: $same =="
declare -A ir
for b in base new; do
    valgrind --tool=callgrind --callgrind-out-file="$tmp/$b.cg" "$tmp/$b" "$db" "$n_ns" "$calls" \
        "$tmp/q.txt" "$mb" > /dev/null 2> "$tmp/$b.log"
    ir[$b]=$(awk '/refs:/ {gsub(",", "", $NF); print $NF}' "$tmp/$b.log")
    printf '   %-5s %12.0f instructions per recall\n' "$b" "$(awk -v a="${ir[$b]}" -v n="$calls" 'BEGIN {print a / n}')"
done
awk -v a="${ir[base]}" -v b="${ir[new]}" 'BEGIN {printf "   base / new: %.2fx\n", a / b}'
[ "$same" = "the same" ]
