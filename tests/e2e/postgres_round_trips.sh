#!/usr/bin/env bash
# postgres_round_trips.sh: one add on PostgreSQL costs at most 4 round
# trips (issue 17), counted from the server's own statement log: a
# PostgreSQL 15 of its own runs with log_statement = 'all', where each
# line "statement: ..." (a simple query, possibly of several statements)
# or "execute ..." (one extended-protocol statement) is one round trip.
# The add's transaction is the span of its backend's lines from its BEGIN
# to its COMMIT. Also: the memory is there afterwards, and recalled.
# SKIP (77) where PostgreSQL cannot be installed or started.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/support/e2e.sh"
e2e_init pg-round-trips
. "$root/tests/support/pg_env.sh"
REMEM_TEST_PG_URI= REMEM_TEST_PG=1 pg_need # our own server: its log is read
cat >> "$pg_own/data/postgresql.conf" <<CONF
log_statement = 'all'
log_line_prefix = '[%p] '
CONF
bash "$root/tests/support/pg.sh" restart "$pg_own" || { echo "FAIL: restarting PostgreSQL"; exit 1; }
db=$(pg_newdb)
log=$pg_own/log

# The round trips of the one transaction the command ran (BEGIN .. COMMIT
# on its backend), from the log lines written since line $1.
round_trips() {
    tail -n +"$(( $1 + 1 ))" "$log" | python3 -c '
import re, sys
lines = [l for l in sys.stdin if re.search(r"LOG:  (statement|execute)", l)]
begin = [i for i, l in enumerate(lines) if "statement: BEGIN; SET LOCAL" in l]
if not begin: print(-1); sys.exit()
pid = re.match(r"\[(\d+)\]", lines[begin[-1]]).group(1)
mine = [l for l in lines[begin[-1]:] if l.startswith("[" + pid + "]")]
end = next((i for i, l in enumerate(mine) if "COMMIT" in l), None)
print(-1 if end is None else end + 1)'
}

r add --ns rt --text "the first memory: it creates the namespace" >/dev/null || fail "first add"
mark=$(wc -l < "$log")
id=$(r add --ns rt --text "a ferry to the island leaves at noon") || fail "second add"
n=$(round_trips "$mark")
echo "round trips of one add: $n"
[ "$n" -ge 1 ] && [ "$n" -le 4 ] || fail "one add took $n round trips (at most 4; -1: no transaction found)"

# An upsert of the same id (a replace) stays correct, whatever it costs.
mark=$(wc -l < "$log")
r add --ns rt --id "$id" --text "a ferry to the island leaves at one" >/dev/null || fail "upsert"
echo "round trips of one upsert: $(round_trips "$mark")"

out=$(r recall --ns rt --query "ferry island") || fail "recall"
case $out in *"leaves at one"*) ;; *) fail "the upsert is not recalled: $out" ;; esac
case $(r stats --ns rt) in "memories: 2 "*) ;; *) fail "2 memories expected: $(r stats --ns rt | head -1)" ;; esac
[ "$fails" = 0 ] && echo "ok"
exit $((fails > 0))
