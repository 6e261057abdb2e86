#!/usr/bin/env bash
# check_cli.sh: `remem check` and `remem repair` as cron and scripts use
# them (seed 003 failure mode 4): a sound store checks clean with exit 0; a
# store with a damaged vector (written behind remem's back with sqlite3)
# exits 1 and names the memory; `remem repair` re-embeds it and the next
# check is clean again. And `remem reindex --pending` answers from the
# retry queue (nothing pending here).
set -u
. "$(dirname "$0")/../support/e2e.sh"
e2e_init check
command -v sqlite3 >/dev/null || { echo "SKIP: no sqlite3 command"; exit 77; }
for i in 1 2 3; do r add --ns c --id "m$i" --text "memory number $i about the deploy" >/dev/null || fail "add $i"; done
out=$(r check --json); st=$?
[ $st -eq 0 ] || fail "a sound store: check exits 0 (got $st)"
echo "$out" | python3 -c 'import json,sys; a=json.load(sys.stdin); assert a["ok"] is True, a' || fail "a sound store: ok true"
sqlite3 "$db" "UPDATE memories SET embedding=zeroblob(64) WHERE id='m2'" || fail "damage"
out=$(r check --json); st=$?
[ $st -eq 1 ] || fail "a damaged vector: check exits 1 (got $st)"
echo "$out" | grep -q '"m2"' || fail "the check names m2: $out"
echo "$out" | python3 -c 'import json,sys; a=json.load(sys.stdin); assert a["ok"] is False, a' || fail "ok false"
r repair --json >/dev/null || fail "repair"
r check >/dev/null; st=$?
[ $st -eq 0 ] || fail "after repair: check exits 0 (got $st)"
out=$(r reindex --pending --ns c --json) || fail "reindex --pending"
[ "$out" = '{"embedded":0,"pending":0,"text":"0 embedded, 0 still pending"}' ] || fail "reindex --pending: $out"
[ $fails -eq 0 ] && echo "ok - check, repair, reindex --pending"
exit $((fails > 0))
