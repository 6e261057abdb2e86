#!/usr/bin/env bash
# run.sh: runs every test program in BUILD/tests and every end-to-end script
# in tests/e2e, each with a time limit, and ends with one line,
#   N passed, M failed, K skipped
# counted per test program or script, plus one skip per skipped part.
#   tests/run.sh [BUILD] [NAME-SUBSTRING]
#
# Skips are never counted as passes. A program or script says it skipped:
#   - wholly, by exiting with status 77 (the automake convention): counted
#     as one skip, not a pass; its "SKIP: ..." lines say why;
#   - in part, by printing a line "SKIP: name: why" (tests/test.h's SKIP()
#     does this for one C test function; a script echoes it) and exiting 0:
#     counted as a pass for what ran, and one skip per such line.
# Any other non-zero status is a failure, and its output is shown. The
# SKIP lines of every test are printed under its name, so the reason for
# each skip is in the log.
set -u
build=${1:-build}
only=${2:-}
here=$(cd "$(dirname "$0")/.." && pwd)
export REMEM_BIN="$here/$build/remem" REMEM_BUILD="$here/$build" REMEM_ROOT="$here"
pass=0; fail=0; skip=0; failed=()
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# One throwaway PostgreSQL 15 for every test that runs on it (the store
# conformance test, tests/e2e/postgres_*.sh), unless the caller names one in
# REMEM_TEST_PG_URI or sets REMEM_TEST_PG=0. Where it cannot start those
# tests report SKIP.
pg_dir=
if [ -z "${REMEM_TEST_PG_URI:-}" ] && [ "${REMEM_TEST_PG:-1}" != 0 ]; then
    pg_dir=$(mktemp -d /tmp/remem-pg-XXXXXX)
    if uri=$(bash "$here/tests/support/pg.sh" start "$pg_dir" 2>"$tmp/pg.err"); then
        export REMEM_TEST_PG_URI=$uri
        trap 'bash "$here/tests/support/pg.sh" stop "$pg_dir"; rm -rf "$tmp"' EXIT
    else
        sed 's/^/      | /' "$tmp/pg.err"
        rm -rf "$pg_dir"; pg_dir=
        export REMEM_TEST_PG=0
    fi
fi
# Each test gets a temporary folder of its own as $TMPDIR (Python's
# tempfile and mktemp without a path use it), removed after the test: what
# a test leaves there (a server's scratch store, say) does not pile up in
# /tmp run after run. tests/e2e/tmp_own.sh checks it is set.
run_one() { # name, command...
    local name=$1; shift
    [ -n "$only" ] && [[ $name != *"$only"* ]] && return
    local t0=$SECONDS st=0 own
    own=$(mktemp -d /tmp/remem-run-XXXXXX)
    chmod 755 "$own" # as /tmp: PostgreSQL's user may enter what a test makes there
    TMPDIR=$own timeout "${REMEM_TEST_TIMEOUT:-600}" "$@" >"$tmp/out" 2>&1 || st=$?
    rm -rf "$own"
    local skips
    skips=$(grep -c '^ *SKIP: ' "$tmp/out" || true)
    if [ $st -eq 0 ]; then
        pass=$((pass+1)); skip=$((skip+skips))
        printf 'ok    %-40s %3ds\n' "$name" $((SECONDS-t0))
    elif [ $st -eq 77 ]; then
        skip=$((skip+1))
        printf 'skip  %-40s %3ds\n' "$name" $((SECONDS-t0))
    else
        fail=$((fail+1)); failed+=("$name")
        printf 'FAIL  %-40s %3ds\n' "$name" $((SECONDS-t0))
        sed 's/^/      | /' "$tmp/out" | tail -n 60
        return
    fi
    grep '^ *SKIP: ' "$tmp/out" | sed 's/^ */      | /' || true
}
for t in "$here/$build"/tests/test_*; do
    [ -x "$t" ] || continue
    # A binary left from a test file since removed or renamed is not run.
    [ -f "$here/tests/$(basename "$t").c" ] || continue
    run_one "$(basename "$t")" "$t"
done
for s in "$here"/tests/e2e/*.sh; do
    [ -f "$s" ] || continue
    run_one "e2e/$(basename "$s" .sh)" bash "$s"
done
[ $fail -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
