#!/usr/bin/env bash
# abi_symbols.sh: libremem.so exports only the public API. The library is
# built with -fvisibility=hidden and include/remem.h marks each public call
# REMEM_API, so `nm -D --defined-only` must list remem_* names and nothing
# else (besides the linker's own _init/_fini/_edata/_end/__bss_start and,
# in sanitizer builds, the sanitizers' registration symbols). It also checks
# the other direction: every function the header declares is exported, and
# remem.pc carries the header's version.
set -euo pipefail
build=${REMEM_BUILD:-build}
root=${REMEM_ROOT:-.}
so="$build/libremem.so"
[ -f "$so" ] || { echo "no $so (make all first)"; exit 1; }
syms=$(nm -D --defined-only "$so" | awk '{print $3}' | sed 's/@.*//' | sort -u)
bad=$(printf '%s\n' "$syms" | grep -v -E '^(remem_[a-z0-9_]+|_init|_fini|_edata|_end|__bss_start|_ITM_.*|__gmon_start__|__(a|ub|t)san_.*|___asan_.*|__odr_asan.*|__sancov.*)$' || true)
if [ -n "$bad" ]; then
    echo "libremem.so exports names outside the public API:"
    printf '  %s\n' $bad | head -n 40
    echo "($(printf '%s\n' $bad | wc -l) in all; mark public calls REMEM_API in include/remem.h, keep the rest hidden)"
    exit 1
fi
# Every REMEM_API declaration of the header is exported.
declared=$(grep -oE '^REMEM_API [^(]*\bremem_[a-z0-9_]+\(' "$root/include/remem.h" |
    grep -oE 'remem_[a-z0-9_]+\($' | tr -d '(' | sort -u)
missing=$(comm -23 <(printf '%s\n' "$declared") <(printf '%s\n' "$syms" | grep '^remem_'))
if [ -n "$missing" ]; then
    echo "declared in remem.h but not exported: $missing"
    exit 1
fi
n=$(printf '%s\n' "$syms" | grep -c '^remem_')
[ "$n" -ge 40 ] || { echo "only $n remem_ symbols exported"; exit 1; }
# One version: remem.pc says what the header says.
want=$(sed -n 's/^#define REMEM_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' "$root/include/remem.h" | paste -sd.)
grep -qx "Version: $want" "$build/remem.pc" || { echo "remem.pc does not say Version: $want"; exit 1; }
"$build/remem" --version | grep -qx "remem $want" || { echo "remem --version does not say $want"; exit 1; }
echo "libremem.so exports $n remem_ names and nothing else; version $want everywhere"
