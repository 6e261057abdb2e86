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
pg_need_logged
db=$(pg_newdb)
log=$pg_own/log


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
