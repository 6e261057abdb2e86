#!/usr/bin/env bash
# postgres_batch_round_trips.sh: a batch of adds on PostgreSQL costs a
# few round trips in all, not several per memory (issue 17: a 1M-memory
# import), counted from the server's own statement log as in
# postgres_round_trips.sh: `import --batch 200` of 200 new memories in 20
# namespaces (4 of them holding rows already, 16 new) is one transaction
# of at most 8 round trips, and so is a batch of 36 of which 24 are
# duplicates. And the batch path folds duplicates exactly as
# SQLite does, one memory at a time: duplicates of stored rows, of
# memories earlier in the same batch, and the same text in another
# namespace (not a duplicate) give the same rows, in the same order, with
# the same duplicate counts and history on both stores. `remem copy` of a
# namespace of 60 into PostgreSQL is at most 8 round trips as well.
# SKIP (77) where PostgreSQL cannot be installed or started.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/support/e2e.sh"
e2e_init pg-batch-round-trips
. "$root/tests/support/pg_env.sh"
pg_need_logged
pgdb=$(pg_newdb)
lite=$tmp/lite.db
log=$pg_own/log

# JSONL of memories: gen.py KIND writes the lines of one of the files below.
cat > "$tmp/gen.py" <<'PY'
import json, sys
kind = sys.argv[1]
def m(ns, text): print(json.dumps({"ns": ns, "text": text}))
if kind == "stored":      # 4 namespaces of 5
    for j in range(4):
        for i in range(5): m("b:%02d" % j, "stored fact %d of namespace %d" % (i, j))
elif kind == "copy":      # one namespace of 60, for `remem copy`
    for i in range(60): m("c:one", "copied memory %d" % i)
elif kind == "new":       # 200 new memories, 20 namespaces of 10
    for j in range(20):
        for i in range(10): m("b:%02d" % j, "new memory %d of namespace %d, about ferries" % (i, j))
else:                     # duplicates of every kind, among new memories
    for j in range(4):
        m("b:%02d" % j, "stored fact 1 of namespace %d" % j)            # of a stored row
        m("b:%02d" % j, "  Stored FACT 2 of namespace %d " % j)         # the same, normalised
        m("b:%02d" % j, "a fresh text %d" % j)
        m("b:%02d" % j, "a fresh text %d" % j)                          # of this batch
        m("b:%02d" % j, "stored fact 1 of namespace %d" % j)            # a second time
        m("b:%02d" % (j + 10), "stored fact 1 of namespace %d" % j)     # another namespace
        m("b:%02d" % j, "new memory 3 of namespace %d, about ferries" % j)
        m("b:%02d" % (j + 30), "a namespace made by this batch %d" % j)
        m("b:%02d" % (j + 30), "a namespace made by this batch %d" % j)
PY
for f in stored new dups copy; do python3 "$tmp/gen.py" $f > "$tmp/$f.jsonl"; done
# What must agree between the stores: each row's namespace, text, kind and
# duplicate count, in rowid order.
rows() { "$bin" --db "$1" export | python3 -c '
import json, sys
for l in sys.stdin:
    m = json.loads(l); print(m["ns"], m["kind"], m["duplicate_count"], m["text"], sep="|")'; }

for s in "$pgdb" "$lite"; do
    "$bin" --db "$s" import --batch 100 "$tmp/stored.jsonl" >/dev/null || fail "importing the stored rows into $s"
done
mark=$(wc -l < "$log")
out=$("$bin" --db "$pgdb" import --batch 200 "$tmp/new.jsonl") || fail "importing 200 memories"
n=$(round_trips "$mark")
echo "round trips of a batch of 200 adds: $n"
[ "$n" -ge 1 ] && [ "$n" -le 8 ] || fail "a batch of 200 adds took $n round trips (at most 8; -1: no transaction found)"
case $out in *"200 added"*) ;; *) fail "200 added expected: $out" ;; esac
"$bin" --db "$lite" import --batch 200 "$tmp/new.jsonl" >/dev/null || fail "importing 200 memories into SQLite"

mark=$(wc -l < "$log")
pg_out=$("$bin" --db "$pgdb" import --batch 100 "$tmp/dups.jsonl") || fail "importing duplicates"
n=$(round_trips "$mark")
echo "round trips of a batch of 36 with 24 duplicates: $n"
[ "$n" -ge 1 ] && [ "$n" -le 8 ] || fail "a batch of 36 adds (24 duplicates) took $n round trips (at most 8)"
lite_out=$("$bin" --db "$lite" import --batch 100 "$tmp/dups.jsonl") || fail "importing duplicates into SQLite"
echo "PostgreSQL: $pg_out"
[ "$pg_out" = "$lite_out" ] || fail "the imports differ: PostgreSQL '$pg_out', SQLite '$lite_out'"
case $pg_out in *"12 added, 0 replaced, 24 duplicates"*) ;; *) fail "12 added and 24 duplicates expected: $pg_out" ;; esac
rows "$pgdb" > "$tmp/pg.rows"; rows "$lite" > "$tmp/lite.rows"
[ "$(wc -l < "$tmp/pg.rows")" = 232 ] || fail "232 rows expected on PostgreSQL, $(wc -l < "$tmp/pg.rows")"
diff "$tmp/lite.rows" "$tmp/pg.rows" > "$tmp/diff" || fail "the rows differ (SQLite <, PostgreSQL >): $(head -5 "$tmp/diff")"
# The history of a stored row duplicated twice in one batch, and of a
# memory duplicated within its batch, as on SQLite: each change with its
# before and after duplicate count.
hist() { # store ns text
    local id
    id=$("$bin" --db "$1" export --ns "$2" | T=$3 python3 -c '
import json, os, sys
print(next(m["id"] for m in map(json.loads, sys.stdin) if m["text"] == os.environ["T"]))')
    "$bin" --db "$1" history --json --ns "$2" "$id" | python3 -c '
import json, sys
for h in json.load(sys.stdin)["history"]:
    c = lambda m: None if m is None else m["duplicate_count"]
    print(h["op"], c(h["before"]), c(h["after"]))'
}
for t in "b:00|stored fact 1 of namespace 0" "b:01|a fresh text 1" "b:32|a namespace made by this batch 2"; do
    a=$(hist "$pgdb" "${t%%|*}" "${t#*|}"); b=$(hist "$lite" "${t%%|*}" "${t#*|}")
    [ -n "$a" ] && [ "$a" = "$b" ] || fail "the history of '${t#*|}' differs: PostgreSQL '$a', SQLite '$b'"
done
case $(hist "$pgdb" b:00 "stored fact 1 of namespace 0" | tr '\n' ' ') in
"add None 0 duplicate 0 1 duplicate 1 2 ") ;; *) fail "add and two duplicates expected in history" ;; esac
case $("$bin" --db "$pgdb" recall --ns b:31 --query "namespace made by this batch") in
*"made by this batch 1"*) ;; *) fail "the new namespace's memory is not recalled" ;; esac
# `remem copy` into PostgreSQL takes a namespace (60 memories with their
# history) in a few round trips too, and verifies what it wrote.
"$bin" --db "$tmp/c.db" import "$tmp/copy.jsonl" >/dev/null || fail "importing the copy's source"
cdb=$(pg_newdb)
mark=$(wc -l < "$log")
"$bin" copy "$tmp/c.db" "$cdb" >/dev/null || fail "copying a namespace of 60 into PostgreSQL"
n=$(round_trips "$mark")
echo "round trips of copying a namespace of 60: $n"
[ "$n" -ge 1 ] && [ "$n" -le 8 ] || fail "copying a namespace of 60 took $n round trips (at most 8)"
[ "$("$bin" --db "$cdb" export | wc -l)" = 60 ] || fail "60 memories expected after the copy"
[ "$fails" = 0 ] && echo "ok"
exit $((fails > 0))
