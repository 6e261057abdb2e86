#!/usr/bin/env bash
# postgres_copy.sh: `remem copy SRC DST` between SQLite and PostgreSQL
# (issue 13, "Moving stores"): memories with vectors, models and history
# arrive the same (exports and histories compared), a second run skips
# what is there, a copy killed midway completes when run again, and a
# destination namespace with other content is refused. SKIP (77) without
# PostgreSQL.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/support/e2e.sh"
e2e_init pg-copy
. "$root/tests/support/pg_env.sh"
pg_need
src=$tmp/src.db
# A store with several namespaces, edits, an invalidation and a forget
# (archived: still a memory, so 1000 + 2 x 3 memories).
python3 - > "$tmp/big.jsonl" <<'PY'
for i in range(1000):
    print('{"id":"m%d","text":"memory %d about topic %d and place %d","importance":0.%d}' % (i, i, i % 89, i % 13, i % 10))
PY
"$bin" --db "$src" --quiet import --ns big "$tmp/big.jsonl" >/dev/null || fail "import big"
for ns in agent:ada proj/x; do
    "$bin" --db "$src" --quiet add --ns "$ns" --id a1 --text "Ada prefers tea in the morning" --meta '{"k":1}' >/dev/null
    "$bin" --db "$src" --quiet add --ns "$ns" --id a2 --text "the deploy is on Tuesday" >/dev/null
    "$bin" --db "$src" --quiet update --ns "$ns" a1 --text "Ada prefers green tea" --actor bob >/dev/null
    "$bin" --db "$src" --quiet invalidate --ns "$ns" a2 --reason moved >/dev/null
    "$bin" --db "$src" --quiet add --ns "$ns" --id a3 --text "to be forgotten" >/dev/null
    "$bin" --db "$src" --quiet forget --ns "$ns" a3 >/dev/null
done
same() { # store store what: exports (with vectors) and histories equal
    "$bin" --db "$1" export --vectors | sort > "$tmp/e1"
    "$bin" --db "$2" export --vectors | sort > "$tmp/e2"
    [ -s "$tmp/e1" ] && cmp -s "$tmp/e1" "$tmp/e2" || fail "$3: exports differ ($(wc -l < "$tmp/e1") / $(wc -l < "$tmp/e2") lines)"
    # History of an edited, an invalidated and a forgotten memory (one
    # namespace: each CLI call is a process and a connection).
    for ns in agent:ada; do for id in a1 a2 a3; do
        h1=$("$bin" --db "$1" --json history --ns "$ns" "$id" | python3 -c 'import json,sys; print([{k: v for k, v in h.items() if k != "seq"} for h in json.load(sys.stdin)["history"]])' 2>&1)
        h2=$("$bin" --db "$2" --json history --ns "$ns" "$id" | python3 -c 'import json,sys; print([{k: v for k, v in h.items() if k != "seq"} for h in json.load(sys.stdin)["history"]])' 2>&1)
        [ "$h1" = "$h2" ] && [ "$h1" != "[]" ] || fail "$3: history of $ns/$id differs: $h1 / $h2"
    done; done
}
pg1=$(pg_newdb)
"$bin" copy "$src" "$pg1" > "$tmp/out" 2>&1 || fail "copy SQLite -> PostgreSQL: $(cat "$tmp/out")"
grep -q "3 namespaces copied, 0 already there; 1006 memories" "$tmp/out" || fail "copy report: $(cat "$tmp/out")"
same "$src" "$pg1" "SQLite -> PostgreSQL"
"$bin" --json copy "$src" "$pg1" > "$tmp/out" 2>&1 || fail "second copy: $(cat "$tmp/out")"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["copied"]==0 and j["skipped"]==3, j' "$tmp/out" || fail "a second run skips everything"
same "$src" "$pg1" "after a second run"
"$bin" copy "$pg1" "$tmp/back.db" > "$tmp/out" 2>&1 || fail "copy PostgreSQL -> SQLite: $(cat "$tmp/out")"
same "$pg1" "$tmp/back.db" "PostgreSQL -> SQLite"
"$bin" --db "$tmp/back.db" --json recall --ns big --query "memory 734 about topic" --k 1 --no-touch | grep -q '"id":"m734"' ||
    fail "the copy back recalls"
# Killed midway, then run again: complete and verified.
pg2=$(pg_newdb)
"$bin" copy "$src" "$pg2" > /dev/null 2>&1 & pid=$!
sleep 0.2; kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
"$bin" copy "$src" "$pg2" > "$tmp/out" 2>&1 || fail "resumed copy: $(cat "$tmp/out")"
echo "resumed: $(tail -n 1 "$tmp/out")"
same "$src" "$pg2" "resumed copy"
# A destination namespace with other content is refused, and left alone.
pg3=$(pg_newdb)
"$bin" --db "$pg3" --quiet add --ns proj/x --id other --text "something else" >/dev/null
"$bin" copy "$src" "$pg3" > "$tmp/out" 2>&1 && fail "copy over other content succeeded"
grep -q "already holds namespace proj/x with other content" "$tmp/out" || fail "refusal message: $(cat "$tmp/out")"
[ "$("$bin" --db "$pg3" export --ns proj/x | wc -l)" = 1 ] || fail "the refused namespace was changed"
"$bin" copy "$src" "$src" > "$tmp/out" 2>&1 && fail "copy onto itself succeeded"
[ $fails -eq 0 ] && echo "postgres_copy: ok"
[ $fails -eq 0 ]
