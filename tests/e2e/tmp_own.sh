#!/usr/bin/env bash
# tmp_own.sh: tests/run.sh gives each test a temporary folder of its own as
# $TMPDIR and removes it after the test, so that the scratch stores of the
# Python server tests (tests/e2e/serve_util.py: one folder per server
# started, ~100 a run) no longer pile up in /tmp. Checked here: $TMPDIR is
# such a folder, empty at the start, and a server test's scratch folder
# lands in it (so it goes with it).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/support/e2e.sh" # fail, $fails (its own $tmp is a path in /tmp)
e2e_init tmp-own
case ${TMPDIR:-} in
/tmp/remem-run-*) ;;
*) fail "the test runner's own temporary folder: TMPDIR='${TMPDIR:-}'" ;;
esac
[ -d "${TMPDIR:-/nonexistent}" ] || fail "TMPDIR is a folder"
[ -z "$(ls -A "${TMPDIR:-/nonexistent}" 2>/dev/null)" ] || fail "TMPDIR is empty at the start"
where=$(cd "$root/tests/e2e" && python3 -c '
import serve_util, tempfile
print(tempfile.mkdtemp(prefix="remem-serve-"))')
case $where in
"${TMPDIR:-/nonexistent}"/remem-serve-*) ;;
*) fail "a server test's scratch folder is under TMPDIR: $where"; rm -rf "$where" ;;
esac
[ $fails -eq 0 ] && echo "PASS: tmp_own" || exit 1
