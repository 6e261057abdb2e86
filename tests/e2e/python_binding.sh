#!/usr/bin/env bash
# python_binding.sh: the Python binding (bindings/python/remem/) against
# the libremem.so of this build, with the machine's python3 and nothing
# else: its unittest suite (every test must run and pass, none skipped),
# then examples/agent_loop.py, whose agent must learn from its failures.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${REMEM_BUILD:-$root/build}
export REMEM_ROOT=$root
export REMEM_LIB=${REMEM_LIB:-$build/libremem.so}
[ -f "$REMEM_LIB" ] || { echo "no $REMEM_LIB (make builds it)"; exit 1; }
# A sanitizer build of the library needs its runtime loaded first into the
# uninstrumented python3; Python's own allocations are not ours to check.
runtime=$(ldd "$REMEM_LIB" | awk '/lib(asan|ubsan)\.so/ {print $3}' | tr '\n' ' ')
if [ -n "${runtime// }" ]; then
    export LD_PRELOAD="$runtime" ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cd "$root/bindings/python"
want=$(grep -c '^    def test_' test_remem.py)
status=0
python3 -m unittest -v test_remem > "$tmp/unit" 2>&1 || status=$?
cat "$tmp/unit"
ran=$(sed -n 's/^Ran \([0-9]*\) tests\? in .*/\1/p' "$tmp/unit")
[ "$status" -eq 0 ] || { echo "unittest failed (exit $status)"; exit 1; }
[ "$ran" = "$want" ] || { echo "ran ${ran:-0} tests, the file defines $want"; exit 1; }
grep -q 'skipped' "$tmp/unit" && { echo "a test was skipped"; exit 1; }
tail -n 1 "$tmp/unit" | grep -qx 'OK' || { echo "unittest did not end with OK"; exit 1; }
echo "ok - $ran Python binding tests passed"

python3 "$root/examples/agent_loop.py" "${REMEM_TEST_DB:-$tmp/agent.db}" > "$tmp/agent" 2>&1 || { cat "$tmp/agent"; echo "agent_loop.py failed"; exit 1; }
cat "$tmp/agent"
summary=$(tail -n 1 "$tmp/agent")
[[ $summary =~ ^([0-9]+)/([0-9]+)\ tickets\ resolved\;\ ([0-9]+)\ answers\ followed\ a\ recalled\ lesson\;\ ([0-9]+)\ lessons\ in\ memory$ ]] \
    || { echo "unexpected summary: $summary"; exit 1; }
solved=${BASH_REMATCH[1]} total=${BASH_REMATCH[2]} followed=${BASH_REMATCH[3]} lessons=${BASH_REMATCH[4]}
# Two lessons are taught by the first failures; every ticket after them
# must be answered right, at least two of them because a lesson was recalled.
[ "$lessons" -eq 2 ] || { echo "expected 2 lessons in memory, got $lessons"; exit 1; }
[ "$followed" -ge 2 ] || { echo "only $followed answers followed a recalled lesson"; exit 1; }
[ "$solved" -eq $((total - 2)) ] || { echo "$solved/$total resolved: the agent did not learn"; exit 1; }
grep -Eq '^  recalled [0-9]+\.[0-9]{3} \[' "$tmp/agent" || { echo "no recall printed with its score"; exit 1; }
grep -q 'relevance .* lexical .* recency .* importance' "$tmp/agent" || { echo "no score components printed"; exit 1; }
# The store the example wrote is a real one: reopen it and count.
python3 - "${REMEM_TEST_DB:-$tmp/agent.db}" <<'PY'
import sys
sys.path.insert(0, ".")
import remem
with remem.open(sys.argv[1], embedder="hash") as db:
    [ns] = db.namespaces()
    # 2 briefing memories + 6 observations + 2 lessons (one lesson re-taught
    # would be a duplicate, not a new row).
    assert ns["count"] == 10, ns
print("ok - the example's store reopens with its 10 memories")
PY
echo "ok - agent_loop.py: $solved/$total resolved, $followed by a recalled lesson"
