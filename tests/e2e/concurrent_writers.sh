#!/usr/bin/env bash
# concurrent_writers.sh: two processes each adding 10,000 memories to one
# store, into one namespace, at the same time (acceptance check 4): two
# `remem import` runs with distinct ids and batches of 50, so that their
# transactions interleave, while a third process keeps recalling. Both
# imports must succeed (a busy store waits, it does not fail), and the store
# must hold all 20,000 memories, each id once, with its history row and the
# namespace's counter right, and pass integrity_check. The rowids show
# whether the writers really interleaved.
set -u
. "$(dirname "$0")/../support/e2e.sh"
e2e_init concurrent
pids=()
trap 'for p in "${pids[@]}"; do kill -9 $p 2>/dev/null; done; rm -rf "$tmp"' EXIT
per=10000
sql() { sqlite3 -cmd '.timeout 5000' "$db" "$@"; }

for w in a b; do
    python3 - "$tmp/$w.jsonl" $w $per <<'EOF'
import json, sys
path, w, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(path, "w") as f:
    for i in range(1, n + 1):
        f.write(json.dumps({"id": f"{w}{i}",
                            "text": f"writer {w} memory {i}: topic {i % 211} seen at step {i}",
                            "metadata": {"writer": w, "i": i}}) + "\n")
EOF
done
# The store exists before the race, so neither writer creates the schema.
"$bin" --db "$db" --quiet import /dev/null >/dev/null || fail "creating the store"

"$bin" --db "$db" --quiet import --ns shared --batch 50 "$tmp/a.jsonl" >"$tmp/a.out" 2>&1 &
pa=$!
"$bin" --db "$db" --quiet import --ns shared --batch 50 "$tmp/b.jsonl" >"$tmp/b.out" 2>&1 &
pb=$!
pids=($pa $pb)
# A reader alongside: every recall must succeed while the writers run.
recalls=0
while kill -0 $pa 2>/dev/null || kill -0 $pb 2>/dev/null; do
    "$bin" --db "$db" --json recall --ns shared --query "topic 17" --k 5 --no-touch \
        >"$tmp/r.out" 2>&1 || { fail "a recall during the writes: $(cat "$tmp/r.out")"; break; }
    recalls=$((recalls+1))
    sleep 0.2
done
wait $pa; sa=$?
wait $pb; sb=$?
pids=()
[ $sa -eq 0 ] || fail "writer a exited $sa: $(cat "$tmp/a.out")"
[ $sb -eq 0 ] || fail "writer b exited $sb: $(cat "$tmp/b.out")"

[ "$(sql 'PRAGMA integrity_check')" = ok ] || fail "integrity_check"
total=$(sql 'SELECT count(*) FROM memories')
[ "$total" = $((2 * per)) ] || fail "$total memories, expected $((2 * per))"
sql 'SELECT id FROM memories' >"$tmp/ids"
python3 - "$tmp/ids" $per <<'EOF' || fail "the ids are not exactly a1..a$per and b1..b$per"
import sys
ids = [l.strip() for l in open(sys.argv[1])]
n = int(sys.argv[2])
want = {f"{w}{i}" for w in "ab" for i in range(1, n + 1)}
assert len(ids) == len(want) and set(ids) == want, (len(ids), len(set(ids) & want))
EOF
[ "$(sql "SELECT rows FROM namespaces WHERE ns='shared'")" = $((2 * per)) ] || fail "namespace counter"
[ "$(sql "SELECT count(*) FROM history WHERE op='add'")" = $((2 * per)) ] || fail "history rows"
[ "$("$bin" --db "$db" --json stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["memories"])')" = $((2 * per)) ] ||
    fail "remem stats"
# Both writers' memories are found by recall.
for w in a b; do
    "$bin" --db "$db" --json recall --ns shared --query "writer $w memory 4242" --k 1 --no-touch \
        --filter "{\"writer\":\"$w\"}" >"$tmp/r.out" || fail "recall of writer $w"
    python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["hits"]; assert h and h[0]["id"]==sys.argv[2], h' \
        "$tmp/r.out" "${w}4242" || fail "writer $w's memory 4242 is not recalled"
done
# Did they interleave? Count the switches between writers in commit order.
switches=$(sql "SELECT count(*) FROM (SELECT substr(id,1,1) w, lag(substr(id,1,1)) OVER (ORDER BY rowid) p FROM memories) WHERE w <> p")
echo "writers switched $switches times in commit order; $recalls recalls ran alongside"
[ "$switches" -ge 2 ] || fail "the two writers did not interleave ($switches switches)"

[ $fails -eq 0 ] || { echo "concurrent_writers: $fails failures"; exit 1; }
echo "concurrent_writers: ok"
