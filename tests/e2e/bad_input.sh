#!/usr/bin/env bash
# bad_input.sh: bad input gets a clear error and changes nothing (acceptance
# check 5). On a store with some history (an import, adds, an update, an
# invalidation), each bad command must exit non-zero with one stderr line
# naming the problem, and leave the store byte-for-byte the same as far as
# anyone can read it: the export with vectors, the full SQL dump (memories,
# namespaces, history, access times) and integrity_check "ok".
# Cases: malformed filter JSON, an unknown filter operator, an unknown
# profile, a vector of the wrong dimension in an import, an unreadable
# import line (line 3 of 5), and a bad line after several full batches (the
# import checks every line before writing any).
set -u
. "$(dirname "$0")/../support/e2e.sh"
e2e_init bad-input

# The state: what export shows, and everything the SQL dump shows.
snapshot() {
    { r export --vectors | sha256sum; sqlite3 "$db" .dump | sha256sum; } 2>&1
}

# bad NAME WORDS... -- COMMAND...: non-zero exit, one stderr line "remem: "
# holding every word (case-insensitive), store unchanged and intact.
bad() {
    local name=$1; shift
    local words=()
    while [ "$1" != "--" ]; do words+=("$1"); shift; done
    shift
    local before after rc
    before=$(snapshot)
    "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -ne 0 ] || fail "$name: exit 0"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$name: stderr is not one line: $(cat "$tmp/err")"
    grep -q '^remem: ' "$tmp/err" || fail "$name: stderr: $(cat "$tmp/err")"
    for w in "${words[@]}"; do
        grep -qiF -- "$w" "$tmp/err" || fail "$name: message lacks \"$w\": $(cat "$tmp/err")"
    done
    after=$(snapshot)
    [ "$before" = "$after" ] || fail "$name: the store changed"
    [ "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok ] || fail "$name: integrity_check"
    echo "ok: $name: $(cat "$tmp/err")"
}

# ---- a store with some life in it ----
python3 - "$tmp/seed.jsonl" <<'EOF'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(40):
        f.write(json.dumps({"id": f"s{i}", "ns": "agent:ada" if i % 2 else "agent:bob",
                            "text": f"seed memory {i} about topic {i % 7}",
                            "kind": ["observation", "decision", "lesson"][i % 3],
                            "importance": (i % 10) / 10,
                            "created_at": 1700000000000 + i * 3600000,
                            "metadata": {"reward": (i % 5) / 4, "project": "acme"}}) + "\n")
EOF
r --quiet import "$tmp/seed.jsonl" || fail "seed import"
r add --ns agent:ada --text "Maya prefers blue-green deployments" --id maya >/dev/null || fail "add"
r update maya --text "Maya prefers canary releases" >/dev/null || fail "update"
r invalidate s3 --by maya >/dev/null || fail "invalidate"
r recall --ns agent:ada --query "topic 3" >/dev/null || fail "a touching recall"
[ "$(r --json stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["memories"])')" = 41 ] ||
    fail "the seeded store does not hold 41 memories"
[ "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok ] || fail "seeded store integrity"

# ---- filters ----
bad "malformed filter JSON" filter JSON -- \
    r recall --ns agent:ada --query "topic" --filter '{"kind": '
bad "filter not an object" filter -- \
    r recall --ns agent:ada --query "topic" --filter '[1,2]'
bad "unknown operator" filter "unknown operator" '$regexx' -- \
    r recall --ns agent:ada --query "topic" --filter '{"kind":{"$regexx":"dec.*"}}'
bad "unknown operator nested" '$gtx' -- \
    r recall --ns agent:ada --query "topic" --filter '{"$and":[{"importance":{"$gtx":0.5}}]}'
bad "bad operand" '$in' -- \
    r recall --ns agent:ada --query "topic" --filter '{"kind":{"$in":"decision"}}'

# ---- profiles ----
bad "unknown profile" "unknown profile" "nope" "generative-agents" -- \
    r recall --ns agent:ada --query "topic" --profile nope
bad "unknown profile (profiles)" "unknown profile" "nope" -- r profiles nope

# ---- imports ----
printf '%s\n' '{"text":"fine one","ns":"agent:ada"}' \
    '{"text":"wrong size","ns":"agent:ada","vector":[1,2,3]}' >"$tmp/dim.jsonl"
bad "vector of the wrong dimension" vector 3 384 "dim.jsonl:2" "nothing was imported" -- \
    r import "$tmp/dim.jsonl"
printf '%s\n' '{"text":"line one"}' '{"text":"line two"}' '{"text": line three is not JSON' \
    '{"text":"line four"}' '{"text":"line five"}' >"$tmp/line3.jsonl"
bad "unreadable import line" "line3.jsonl:3" JSON "nothing was imported" -- \
    r import --ns agent:ada "$tmp/line3.jsonl"
bad "unreadable import line from stdin" "stdin:3" JSON -- \
    sh -c "'$bin' --db '$db' import --ns agent:ada - < '$tmp/line3.jsonl'"
# A bad line after two full batches: the check pass finds it before any
# batch is written.
python3 - "$tmp/late.jsonl" <<'EOF'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(2500):
        f.write(json.dumps({"id": f"late{i}", "text": f"late line {i}"}) + "\n")
    f.write(json.dumps({"id": "bad", "text": "importance out of range", "importance": 7}) + "\n")
    f.write(json.dumps({"id": "after", "text": "after the bad one"}) + "\n")
EOF
bad "bad line after full batches" "late.jsonl:2501" importance -- \
    r import --ns agent:ada --batch 1000 "$tmp/late.jsonl"
printf '%s\n' '{"text":"no namespace anywhere"}' >"$tmp/nons.jsonl"
bad "import line without a namespace" ns "nons.jsonl:1" -- r import "$tmp/nons.jsonl"
printf '%s\n' '{"text":"x","ns":"a","created_at":"last tuesday"}' >"$tmp/time.jsonl"
bad "import line with a bad time" created_at -- r import "$tmp/time.jsonl"
printf '%s\n' '{"text":"x","ns":"a","tier":"medium"}' >"$tmp/tier.jsonl"
bad "import line with an unknown tier" medium "tier.jsonl:1" -- r import "$tmp/tier.jsonl"
# What only the engine refuses (an unknown tier, an empty id, a namespace
# too long) is found by the check pass too, also after full batches.
python3 - "$tmp/late2.jsonl" <<'EOF'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(2500):
        f.write(json.dumps({"id": f"late{i}", "text": f"late line {i}"}) + "\n")
    f.write(json.dumps({"id": "bad", "text": "a tier no one knows", "tier": "medium"}) + "\n")
EOF
bad "unknown tier after full batches" "late2.jsonl:2501" medium "nothing was imported" -- \
    r import --ns agent:ada --batch 1000 "$tmp/late2.jsonl"
printf '%s\n' '{"text":"fine"}' '{"id":"","text":"an empty id"}' >"$tmp/emptyid.jsonl"
bad "import line with an empty id" "emptyid.jsonl:2" id -- r import --ns a "$tmp/emptyid.jsonl"
python3 -c 'import json; print(json.dumps({"ns": "n" * 300, "text": "x"}))' >"$tmp/longns.jsonl"
bad "import line with a namespace too long" "longns.jsonl:1" namespace -- r import "$tmp/longns.jsonl"
head -c 3000 /dev/urandom >"$tmp/binary.jsonl"
bad "binary garbage" "binary.jsonl" -- r import --ns agent:ada "$tmp/binary.jsonl"

# ---- single writes ----
bad "metadata not JSON" metadata -- r add --ns agent:ada --text "x" --meta '{bad'
bad "metadata not an object" metadata object -- r add --ns agent:ada --text "x" --meta '[1]'
bad "links not ids" links -- r add --ns agent:ada --text "x" --links '[1,2]'
bad "unknown tier" medium -- r add --ns agent:ada --text "x" --tier medium
bad "importance out of range" importance -- r add --ns agent:ada --text "x" --importance 1.5
bad "update with bad metadata" metadata -- r update maya --meta '"a string"'
bad "update of a missing id" nope -- r update nope --importance 0.2
bad "invalidate a missing id" nope -- r invalidate nope
bad "purge a missing id" nope -- r forget nope --purge
bad "ambiguous-free get of a missing id" nope -- r get nope

[ $fails -eq 0 ] || { echo "bad_input: $fails failures"; exit 1; }
echo "bad_input: ok"
