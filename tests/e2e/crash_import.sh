#!/usr/bin/env bash
# crash_import.sh: a `remem import` of 100,000 lines killed with SIGKILL
# part-way (acceptance check 3). Batches of 1000 lines are one transaction
# each, and ids are line numbers, so after the kill the store must open,
# pass PRAGMA integrity_check, and hold
# exactly the lines 1..N for N a multiple of 1000: every memory of the
# committed batches, nothing of the batch that was being written (its rows,
# its history rows, its namespace counter). Then the same import run again
# is an upsert: 100,000 memories, the first N updated, the rest added.
set -u
. "$(dirname "$0")/../support/e2e.sh"
e2e_init crash-import
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT
lines=100000
batch=1000
sql() { sqlite3 -cmd '.timeout 5000' "$db" "$@"; }

python3 - "$tmp/in.jsonl" $lines <<'EOF'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(1, int(sys.argv[2]) + 1):
        f.write(json.dumps({"id": str(i),
                            "text": f"line {i}: the agent saw event {i % 977} at place {i % 113}",
                            "importance": (i % 10) / 10,
                            "metadata": {"line": i}}) + "\n")
EOF

"$bin" --db "$db" --quiet import --ns crash --batch $batch "$tmp/in.jsonl" &
pid=$!
# Wait until some batches (3 to 42, a different point each run) have
# committed, then kill it mid-stream.
want=$(( (3 + RANDOM % 40) * batch ))
t0=$SECONDS
while :; do
    if [ -s "$db" ]; then
        n=$(sql 'SELECT count(*) FROM memories' 2>/dev/null || echo 0)
        [ "${n:-0}" -ge $want ] && break
    fi
    kill -0 $pid 2>/dev/null || break
    [ $((SECONDS - t0)) -gt 120 ] && break
    sleep 0.02
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
status=$?
pid=
[ $status -eq 137 ] || fail "the import was not killed (exit $status)"

[ "$(sql 'PRAGMA integrity_check')" = ok ] || fail "integrity_check after the kill"
n=$(sql 'SELECT count(*) FROM memories')
echo "killed after $n memories committed"
[ "$n" -gt 0 ] && [ "$n" -lt $lines ] || fail "count $n is not part-way"
[ $((n % batch)) -eq 0 ] || fail "count $n is not a multiple of the batch size $batch"
# Exactly the lines 1..N: each id once, none beyond.
sql 'SELECT id FROM memories' >"$tmp/ids"
python3 - "$tmp/ids" "$n" <<'EOF' || fail "the ids are not exactly 1..$n"
import sys
ids = [int(l) for l in open(sys.argv[1])]
n = int(sys.argv[2])
assert len(ids) == n and set(ids) == set(range(1, n + 1)), (len(ids), min(ids), max(ids))
EOF
[ "$(sql "SELECT rows FROM namespaces WHERE ns='crash'")" = "$n" ] || fail "namespace counter"
[ "$(sql "SELECT count(*) FROM history WHERE op='add'")" = "$n" ] || fail "history rows"
[ "$(sql "SELECT count(*) FROM memories WHERE embedding IS NULL OR length(embedding) <> 1536")" = 0 ] ||
    fail "a memory without its vector"
# The store opens and answers through remem.
[ "$("$bin" --db "$db" --json stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["memories"])')" = "$n" ] ||
    fail "remem stats after the kill"
"$bin" --db "$db" --json recall --ns crash --query "event 5 at place 7" --k 3 --no-touch >"$tmp/out" ||
    fail "recall after the kill"

# Resume: the same file again, an upsert by id.
"$bin" --db "$db" --quiet import --ns crash --batch $batch "$tmp/in.jsonl" ||
    fail "the second import failed"
[ "$(sql 'PRAGMA integrity_check')" = ok ] || fail "integrity_check after resuming"
[ "$(sql 'SELECT count(*) FROM memories')" = $lines ] || fail "count after resuming: $(sql 'SELECT count(*) FROM memories')"
[ "$(sql 'SELECT count(DISTINCT id) FROM memories')" = $lines ] || fail "duplicate ids after resuming"
[ "$(sql 'SELECT min(CAST(id AS INTEGER)) || "-" || max(CAST(id AS INTEGER)) FROM memories')" = "1-$lines" ] ||
    fail "ids after resuming"
[ "$(sql "SELECT count(*) FROM history WHERE op='update'")" = "$n" ] ||
    fail "the first $n lines should have been updated, not added"
[ "$(sql "SELECT count(*) FROM history WHERE op='add'")" = $lines ] || fail "add history after resuming"
[ "$(sql "SELECT rows FROM namespaces WHERE ns='crash'")" = $lines ] || fail "namespace counter after resuming"

[ $fails -eq 0 ] || { echo "crash_import: $fails failures"; exit 1; }
echo "crash_import: ok ($n of $lines committed when killed; resumed to $lines)"
