#!/usr/bin/env bash
# run.sh: runs every test program in BUILD/tests and every end-to-end script
# in tests/e2e, each with a time limit, and ends with "N passed, M failed"
# (counted per test program or script). Output of a failing one is shown.
#   tests/run.sh [BUILD] [NAME-SUBSTRING]
set -u
build=${1:-build}
only=${2:-}
here=$(cd "$(dirname "$0")/.." && pwd)
export REMEM_BIN="$here/$build/remem" REMEM_BUILD="$here/$build" REMEM_ROOT="$here"
pass=0; fail=0; failed=()
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
run_one() { # name, command...
    local name=$1; shift
    [ -n "$only" ] && [[ $name != *"$only"* ]] && return
    local t0=$SECONDS
    if timeout "${REMEM_TEST_TIMEOUT:-600}" "$@" >"$tmp/out" 2>&1; then
        pass=$((pass+1)); printf 'ok    %-40s %3ds\n' "$name" $((SECONDS-t0))
    else
        fail=$((fail+1)); failed+=("$name")
        printf 'FAIL  %-40s %3ds\n' "$name" $((SECONDS-t0))
        sed 's/^/      | /' "$tmp/out" | tail -n 60
    fi
}
for t in "$here/$build"/tests/test_*; do
    [ -x "$t" ] || continue
    run_one "$(basename "$t")" "$t"
done
for s in "$here"/tests/e2e/*.sh; do
    [ -f "$s" ] || continue
    run_one "e2e/$(basename "$s" .sh)" bash "$s"
done
[ $fail -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
