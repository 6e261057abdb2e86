#!/usr/bin/env bash
# internal_kinds.sh: bookkeeping records stay out of the agent's way (issue
# 18, acceptance check 3). After the README's lesson tour (an error event,
# a lesson, hints before and after the error, an outcome, a validation),
# a plain recall in that namespace returns no hint_log, error_event,
# attempt or run record, in every profile, and neither do context and
# memory.list; asked for by kind (a filter on kind, or kinds), they are
# there.
set -u
. "$(dirname "$0")/../support/e2e.sh"
e2e_init internal-kinds
NS=agent:ada
internal='("hint_log", "error_event", "attempt", "run")'
kinds() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(" ".join(sorted({m["kind"] for m in d.get("hits", d.get("memories", []))})))'; }

r add --ns $NS --text "the orders table of the sqlite store is orders_2024" >/dev/null || fail "add"
r add --ns $NS --text "Maya prefers blue-green deployments" >/dev/null || fail "add"
r lesson event --ns $NS --domain sqlite --tool run_sqlite --channel hard_failure \
    --error "Error: near line 4: no such table: orders_2023" >/dev/null || fail "lesson event"
fp=$(r --json lesson event --ns $NS --domain sqlite --tool run_sqlite --channel hard_failure \
    --error "Error: near line 9: no such table: orders_2023" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["fingerprint"])') || fail "event 2"
lsn=$(r --json lesson add --ns $NS --domain sqlite --rule "list the tables before querying" \
    --fingerprint "$fp" | python3 -c 'import json,sys; print(json.load(sys.stdin)["lesson_id"])') ||
    fail "lesson add"
for step in 1 2 3; do
    r lesson hints --ns $NS --domain sqlite --error "no such table: orders_2023" --policy auto \
        --run r8 --step $step >/dev/null || fail "lesson hints $step"
done
r lesson outcome --ns $NS --run r8 --domain sqlite --result pass --lessons "$lsn" >/dev/null ||
    fail "lesson outcome"
echo '{"type":"object","required":["sql"],"properties":{"sql":{"type":"string"}}}' >"$tmp/tool.json"
r lesson validate --ns $NS --schema "$tmp/tool.json" --input '{"sql":""}' --run r8 --step 4 \
    >/dev/null 2>&1
stored=$(r --json memory list --ns $NS --kinds hint_log,error_event,attempt,run --limit 1000 | kinds)
case "$stored" in *hint_log*error_event* | *error_event*hint_log*) ;;
    *) fail "the tour wrote no bookkeeping records to test with: $stored" ;; esac

for p in default stream metaverse generative-agents; do
    got=$(r --json recall --ns $NS --query "sqlite orders table error" --k 6 --profile $p --no-touch | kinds)
    for k in hint_log error_event attempt run; do
        [[ " $got " == *" $k "* ]] && fail "recall ($p) returned a $k record: $got"
    done
    [ -n "$got" ] || fail "recall ($p) returned nothing"
done
got=$(r --json recall --ns $NS --query "sqlite orders table error" --k 6 --no-touch | 
      python3 -c 'import json,sys; print([h["kind"] for h in json.load(sys.stdin)["hits"]][:1])')
[[ "$got" == "['observation']" || "$got" == "['lesson']" ]] ||
    fail "the agent's own memory comes first, not bookkeeping: $got"
ctx=$(r --json context --ns $NS --query "sqlite orders table error" 2>&1)
python3 -c "
import json,sys
d=json.loads(sys.argv[1]); t=json.dumps(d)
bad=[k for k in $internal if '\"kind\": \"%s\"' % k in t or 'no such table: orders_2023' in d.get('text','')]
sys.exit(1 if bad else 0)" "$ctx" || fail "context holds bookkeeping: $ctx"
got=$(r --json list --ns $NS --limit 1000 | kinds)
for k in hint_log error_event attempt run; do
    [[ " $got " == *" $k "* ]] && fail "list returned a $k record: $got"
done
got=$(r --json recall --ns $NS --query "sqlite orders table error" --k 6 --no-touch \
      --filter '{"kind":"error_event"}' | kinds)
[ "$got" = error_event ] || fail "recall by kind error_event: '$got'"
got=$(r --json list --ns $NS --kinds hint_log --limit 1000 | kinds)
[ "$got" = hint_log ] || fail "list --kinds hint_log: '$got'"
[ "$fails" -eq 0 ] && echo "internal_kinds: ok" || { echo "internal_kinds: $fails failures"; exit 1; }
