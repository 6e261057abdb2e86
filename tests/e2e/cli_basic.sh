#!/usr/bin/env bash
# cli_basic.sh: the remem command end to end on a temporary store: --help on
# every command of `remem --help`; add then recall --json with every score
# component, the score recomputed from the profile's published weights (and
# for the stream profile from its fixed formula, with --created and --now
# making recency exact); get, update, invalidate, forget (archive and
# purge), history, stats, namespaces, clear, export | import round trip,
# reindex, profiles and demo; exit codes (0 ok, 1 failure, 2 usage) and
# failures as one line "remem: ..." on stderr.
set -u
. "$(dirname "$0")/../support/e2e.sh"
e2e_init cli-basic
# The hash embedder, named, so no "auto" note joins stderr.
# json EXPR: evaluates a Python expression over the JSON document on stdin
# (bound to j) and prints the result.
json() { python3 -c 'import json,sys; j=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

# expect_fail CODE WORDS... -- COMMAND...: exit status CODE, nothing on
# stdout, exactly one stderr line starting "remem: " that has every word.
expect_fail() {
    local code=$1; shift
    local words=()
    while [ "$1" != "--" ]; do words+=("$1"); shift; done
    shift
    "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    [ "$rc" -eq "$code" ] || fail "exit $rc, expected $code: $*"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "stderr is not one line: $* -> $(cat "$tmp/err")"
    grep -q '^remem: ' "$tmp/err" || fail "stderr does not start with 'remem: ': $(cat "$tmp/err")"
    [ -s "$tmp/out" ] && fail "stdout not empty on failure: $*"
    for w in "${words[@]}"; do
        grep -qF -- "$w" "$tmp/err" || fail "message lacks \"$w\": $(cat "$tmp/err")"
    done
}

# expect_ok COMMAND...: exit 0 and an empty stderr; stdout kept in $tmp/out.
expect_ok() {
    "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    [ "$rc" -eq 0 ] || fail "exit $rc: $* -> $(cat "$tmp/err")"
    [ -s "$tmp/err" ] && fail "stderr not empty: $* -> $(cat "$tmp/err")"
    return 0
}

# ---- --help everywhere ----
expect_ok "$bin" --help
grep -q '^usage: remem' "$tmp/out" || fail "remem --help has no usage line"
cmds=$(awk '/^commands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{on=0}' "$tmp/out")
[ "$(echo "$cmds" | wc -w)" -ge 16 ] || fail "remem --help lists too few commands: $cmds"
for c in add import recall get update invalidate forget history stats namespaces clear \
         export reindex profiles eval demo; do
    echo "$cmds" | grep -qx "$c" || fail "remem --help does not list $c"
done
for c in $cmds; do
    "$bin" --db "$db" "$c" --help >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] || fail "remem $c --help exits $rc"
    grep -qi 'usage' "$tmp/out" || fail "remem $c --help prints no usage"
done
[ -e "$db" ] && fail "--help created the store"
"$bin" >/dev/null 2>&1; [ $? -eq 2 ] || fail "remem without a command should exit 2"
expect_fail 2 "frobnicate" -- "$bin" frobnicate
expect_ok "$bin" --version
grep -q '^remem [0-9]' "$tmp/out" || fail "--version"

# ---- add, recall --json ----
expect_ok r add --ns agent:ada --text "The payment service needs a load test before each release" \
    --kind lesson --importance 0.8 --meta '{"project":"pay","reward":0.5}'
id1=$(cat "$tmp/out")
[[ $id1 =~ ^[0-9A-Z]{26}$ ]] || fail "add printed \"$id1\", not a generated id"
expect_ok r add --ns agent:ada --text "Lunch today is vegetarian pizza" --id lunch
[ "$(cat "$tmp/out")" = lunch ] || fail "add --id printed $(cat "$tmp/out")"
expect_ok r --json add --ns agent:ada --text "Maya prefers blue-green deployments" --id maya \
    --created 2024-01-01T00:00:00Z --importance 0.6
# Write answers have one shape on every face (docs/server.md, "Write answers").
[ "$(cat "$tmp/out")" = '{"id":"maya","ns":"agent:ada","outcome":"added"}' ] ||
    fail "add --json: $(cat "$tmp/out")"
expect_ok r --json get maya
[ "$(json 'j["memory"]["created_at"]' <"$tmp/out")" = 2024-01-01T00:00:00.000Z ] || fail "add --created"
expect_ok r --json add --ns agent:ada --text "the payment service needs a LOAD test  before each release"
[ "$(cat "$tmp/out")" = "{\"id\":\"$id1\",\"ns\":\"agent:ada\",\"outcome\":\"duplicate\"}" ] ||
    fail "duplicate add: $(cat "$tmp/out")"

expect_ok r profiles --json
cp "$tmp/out" "$tmp/profiles.json"
expect_ok r recall --json --ns agent:ada --query "load test the payment service" --no-touch
cp "$tmp/out" "$tmp/recall.json"
python3 - "$tmp/recall.json" "$tmp/profiles.json" "$id1" <<'EOF' || fail "recall --json"
import json, sys
res = json.load(open(sys.argv[1]))
prof = {p["name"]: p for p in json.load(open(sys.argv[2]))}
assert res["profile"] == "default", res["profile"]
hits = res["hits"]
assert hits and hits[0]["id"] == sys.argv[3], [h["id"] for h in hits]
assert len(hits) == 3 and res["candidates"] == 3, res
w = prof["default"]["weights"]
scores = [h["score"] for h in hits]
assert scores == sorted(scores, reverse=True), scores
for h in hits:
    c = h["components"]
    for key in ("relevance", "similarity", "lexical", "bm25", "recency", "importance", "lanes"):
        assert key in c, (key, c)
    for key in ("relevance", "lexical", "recency", "importance"):
        assert 0 <= c[key] <= 1, (key, c)
    assert abs(c["relevance"] - max(0, c["similarity"])) < 1e-6, c
    want = (w["relevance"] * c["relevance"] + w["lexical"] * c["lexical"]
            + w["recency"] * c["recency"] + w["importance"] * c["importance"]
            + w.get("context", 0) * c.get("context", 0) + w.get("entity", 0) * c.get("entity", 0))
    assert abs(h["score"] - want) < 1e-5, (h["score"], want, c)
top = hits[0]
assert top["kind"] == "lesson" and top["importance"] == 0.8 and top["metadata"]["reward"] == 0.5
assert "lexical" in top["components"]["lanes"] and top["components"]["lexical"] == 1.0
EOF

# The stream profile at a fixed time: one half-life (7 days) after creation.
expect_ok r recall --json --ns agent:ada --query "blue-green deployments" --profile stream \
    --now 2024-01-08T00:00:00Z --no-touch --filter '{"importance":{"$gte":0.6,"$lt":0.7}}'
python3 - "$tmp/out" <<'EOF' || fail "recall --profile stream: $(cat "$tmp/out")"
import json, sys
res = json.load(open(sys.argv[1]))
assert res["profile"] == "stream" and res["now"] == "2024-01-08T00:00:00.000Z", res
[h] = res["hits"]
c = h["components"]
assert h["id"] == "maya"
assert abs(c["recency"] - 0.5) < 1e-9, c
assert abs(c["importance"] - 0.6) < 1e-9, c
want = 0.4 * max(0, c["similarity"]) + 0.3 * 0.5 + 0.3 * 0.6
assert abs(h["score"] - want) < 1e-6, (h["score"], want)
EOF

# Text output, then a touching recall.
expect_ok r recall --ns agent:ada --query "pizza for lunch" --k 1
grep -q "agent:ada/lunch" "$tmp/out" || fail "recall text output: $(cat "$tmp/out")"
grep -q "relevance .* lexical .* recency .* importance" "$tmp/out" || fail "recall text lacks components"
expect_ok r --json get lunch
[ "$(json 'j["memory"]["access_count"]' <"$tmp/out")" = 1 ] || fail "recall did not touch: $(cat "$tmp/out")"

# A query from a file or stdin, of more than one argument can carry: the
# head decides, so 1 MB of "pizza for lunch" finds what the words find.
python3 -c 'import sys; sys.stdout.write("pizza for lunch " * 65536)' >"$tmp/q1mb.txt"
expect_ok r recall --ns agent:ada --query-file "$tmp/q1mb.txt" --k 1 --no-touch
grep -q "agent:ada/lunch" "$tmp/out" || fail "recall --query-file: $(cat "$tmp/out")"
expect_ok r recall --ns agent:ada --query-file - --k 1 --no-touch <"$tmp/q1mb.txt"
grep -q "agent:ada/lunch" "$tmp/out" || fail "recall --query-file -: $(cat "$tmp/out")"
printf 'pizza \377 lunch' >"$tmp/bad.txt"
expect_fail 2 "--query-file" "not valid UTF-8" -- r recall --ns agent:ada --query-file "$tmp/bad.txt"
expect_fail 2 "cannot open" -- r recall --ns agent:ada --query-file "$tmp/nonexistent"

# ---- get, update, invalidate, forget, history ----
expect_ok r get maya
grep -q "Maya prefers blue-green deployments" "$tmp/out" || fail "get text: $(cat "$tmp/out")"
expect_ok r --json update maya --text "Maya now prefers canary releases" --importance 0.9 --actor maya
[ "$(cat "$tmp/out")" = '{"id":"maya","ns":"agent:ada","outcome":"updated"}' ] ||
    fail "update --json: $(cat "$tmp/out")"
expect_ok r --json get maya
[ "$(json 'j["memory"]["text"], j["memory"]["importance"]' <"$tmp/out")" = "('Maya now prefers canary releases', 0.9)" ] ||
    fail "update: $(cat "$tmp/out")"
expect_ok r add --ns agent:ada --id maya2 --text "Maya wants canary releases with a 5% step"
expect_ok r --json invalidate maya --by maya2 --reason superseded
[ "$(cat "$tmp/out")" = \
  '{"id":"maya","ns":"agent:ada","outcome":"invalidated","superseded_by":"maya2"}' ] ||
    fail "invalidate --json: $(cat "$tmp/out")"
expect_ok r --json get maya
[ "$(json 'j["memory"]["superseded_by"], j["memory"]["invalidated_at"] is not None' <"$tmp/out")" = "('maya2', True)" ] ||
    fail "invalidate: $(cat "$tmp/out")"
expect_ok r --json recall --ns agent:ada --query "Maya canary releases" --no-touch
ids=$(json '",".join(h["id"] for h in j["hits"])' <"$tmp/out")
[[ ,$ids, == *,maya2,* && ,$ids, != *,maya,* ]] || fail "invalidated memory recalled: $ids"
expect_ok r --json recall --ns agent:ada --query "Maya canary releases" --no-touch --include-invalid
[[ ,$(json '",".join(h["id"] for h in j["hits"])' <"$tmp/out"), == *,maya,* ]] ||
    fail "--include-invalid does not show it"
expect_ok r --json forget lunch
[ "$(cat "$tmp/out")" = '{"id":"lunch","ns":"agent:ada","outcome":"archived","purged":false}' ] ||
    fail "forget --json: $(cat "$tmp/out")"
expect_ok r --json get lunch
[ "$(json 'j["memory"]["tier"]' <"$tmp/out")" = archived ] || fail "forget did not archive"
expect_ok r --json recall --ns agent:ada --query "pizza for lunch" --no-touch
[[ ,$(json '",".join(h["id"] for h in j["hits"])' <"$tmp/out"), != *,lunch,* ]] ||
    fail "archived memory recalled"
expect_ok r update lunch --tier long
expect_ok r forget lunch --purge
expect_fail 1 "get" "lunch" -- r get lunch
expect_ok r --json history lunch
python3 - "$tmp/out" <<'EOF' || fail "history after purge: $(cat "$tmp/out")"
import json, sys
h = json.load(open(sys.argv[1]))["history"]
assert [x["op"] for x in h] == ["add", "archive", "restore", "delete"], h
raw = open(sys.argv[1]).read()
assert "pizza" not in raw, "the text survived the purge"
EOF
expect_ok r history maya
[ "$(wc -l <"$tmp/out")" -eq 3 ] || fail "history text: $(cat "$tmp/out")"
grep -q "update .*by maya" "$tmp/out" || fail "history lacks the actor: $(cat "$tmp/out")"
# The invalidation's reason reads as a reason, not as someone.
grep -q "invalidate  reason: superseded" "$tmp/out" || fail "history reason: $(cat "$tmp/out")"
grep -q "by superseded" "$tmp/out" && fail "history shows the reason as an actor: $(cat "$tmp/out")"

# ---- stats, namespaces, export, import, reindex, clear ----
expect_ok r add --ns agent:bob --text "Bob keeps the spare keys"
expect_ok r --json stats
[ "$(json 'j["memories"], j["by_namespace"], j["invalidated"]' <"$tmp/out")" = \
  "(4, {'agent:ada': 3, 'agent:bob': 1}, 1)" ] || fail "stats: $(cat "$tmp/out")"
expect_ok r stats
grep -q "^memories: 4" "$tmp/out" || fail "stats text: $(cat "$tmp/out")"
expect_ok r --json namespaces
[ "$(json '[(x["ns"], x["count"], x["model"]) for x in j["namespaces"]]' <"$tmp/out")" = \
  "[('agent:ada', 3, 'hash-v1-384'), ('agent:bob', 1, 'hash-v1-384')]" ] ||
    fail "namespaces: $(cat "$tmp/out")"

expect_ok r export --vectors
cp "$tmp/out" "$tmp/export.jsonl"
[ "$(wc -l <"$tmp/export.jsonl")" -eq 4 ] || fail "export wrote $(wc -l <"$tmp/export.jsonl") lines"
"$bin" --db "$tmp/copy.db" import "$tmp/export.jsonl" >"$tmp/out" 2>"$tmp/err" ||
    fail "import: $(cat "$tmp/err")"
grep -q "imported 4 memories: 4 added, 0 replaced, 0 duplicates" "$tmp/out" ||
    fail "import output: $(cat "$tmp/out")"
# A byte-order mark is skipped; duplicates and replaced ids are told apart
# from new memories.
printf '\xef\xbb\xbf{"ns":"bom","text":"first line after a BOM"}\n{"ns":"bom","id":"k","text":"two"}\n' \
    >"$tmp/bom.jsonl"
expect_ok r import "$tmp/bom.jsonl"
grep -q "imported 2 memories: 2 added, 0 replaced, 0 duplicates" "$tmp/out" ||
    fail "import with a BOM: $(cat "$tmp/out")"
printf '{"ns":"bom","text":"First line after a  BOM"}\n{"ns":"bom","id":"k","text":"two, again"}\n{"ns":"bom","text":"new"}\n' \
    >"$tmp/again.jsonl"
expect_ok r --json import "$tmp/again.jsonl"
[ "$(cat "$tmp/out")" = '{"imported":3,"added":1,"replaced":1,"duplicates":1}' ] ||
    fail "import counts: $(cat "$tmp/out")"
expect_ok r clear --ns bom --yes
"$bin" --db "$tmp/copy.db" export --vectors --out "$tmp/export2.jsonl" --quiet ||
    fail "export --out"
python3 - "$tmp/export.jsonl" "$tmp/export2.jsonl" <<'EOF' || fail "export | import round trip"
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
assert len(a) == len(b) == 4
for x, y in zip(a, b):
    vx, vy = x.pop("vector"), y.pop("vector")
    assert len(vx) == len(vy) == 384 and max(abs(p - q) for p, q in zip(vx, vy)) < 1e-6
    # An import is an add: these describe the life of the row, not the memory.
    for k in ("updated_at", "accessed_at", "access_count", "invalidated_at",
              "superseded_by", "duplicate_count"):
        x.pop(k); y.pop(k)
    assert x == y, (x, y)
EOF
"$bin" --db "$tmp/copy.db" --json import "$tmp/export.jsonl" >"$tmp/out" 2>&1 &&
    [ "$(json 'j["imported"]' <"$tmp/out")" = 4 ] || fail "re-import: $(cat "$tmp/out")"
[ "$("$bin" --db "$tmp/copy.db" --json stats | json 'j["memories"]')" = 4 ] ||
    fail "re-importing the same ids is not an upsert"
expect_ok r export --ns agent:bob
[ "$(wc -l <"$tmp/out")" -eq 1 ] && ! grep -q '"vector"' "$tmp/out" || fail "export --ns"
echo '{"text":"from stdin"}' | "$bin" --db "$db" --quiet import --ns agent:bob - ||
    fail "import from stdin"
expect_ok r reindex
grep -q "reindexed with hash-v1-384" "$tmp/out" || fail "reindex: $(cat "$tmp/out")"
expect_ok r --json recall --ns agent:bob --query "spare keys" --no-touch
[ "$(json 'j["hits"][0]["text"]' <"$tmp/out")" = "Bob keeps the spare keys" ] || fail "recall after reindex"
expect_fail 1 "--yes" -- r clear --ns agent:bob
expect_ok r --json clear --ns agent:bob --yes
[ "$(json 'j["deleted"]' <"$tmp/out")" = 2 ] || fail "clear: $(cat "$tmp/out")"
expect_ok r --json namespaces
[ "$(json 'len(j["namespaces"])' <"$tmp/out")" = 1 ] || fail "namespaces after clear: $(cat "$tmp/out")"

# ---- profiles, demo ----
expect_ok r profiles
for p in default generative-agents metaverse stream replay episodes; do
    grep -q "^$p " "$tmp/out" || fail "profiles lacks $p"
done
[ "$(json 'sorted(p["name"] for p in j)' <"$tmp/profiles.json")" = \
  "['default', 'episodes', 'generative-agents', 'metaverse', 'replay', 'stream']" ] ||
    fail "profiles --json"
expect_ok r profiles metaverse
[ "$(wc -l <"$tmp/out")" -eq 1 ] && grep -q "min_score 0.35" "$tmp/out" || fail "profiles metaverse"
expect_fail 1 "nope" -- r profiles nope
expect_ok "$bin" --db "$tmp/demo.db" demo
grep -q "score" "$tmp/out" && [ "$(wc -l <"$tmp/out")" -gt 10 ] || fail "demo output: $(head "$tmp/out")"
expect_ok "$bin" --db "$tmp/demo.db" --json demo
[ "$(json '(j["embedder"]["name"], [s["step"] for s in j["steps"]][-3:], len(j["steps"][-2]["result"]["hits"]) > 0)' \
     <"$tmp/out")" = "('hash', ['recall', 'recall', 'history'], True)" ] || fail "demo --json: $(head -c 300 "$tmp/out")"
[ "$("$bin" --db "$tmp/demo.db" --json stats | json 'j["memories"] > 0')" = True ] ||
    fail "demo left no memories"

# ---- usage errors (2) and failures (1) ----
expect_fail 2 "--bogus" -- r add --ns a --text x --bogus
expect_fail 2 "--ns" -- r add --text x
expect_fail 2 "--text" -- r add --ns a
expect_fail 1 "importance" -- r add --ns a --text x --importance 2
expect_fail 1 "metadata" -- r add --ns a --text x --meta '[1]'
expect_fail 1 "query: missing" -- r recall --ns agent:ada
expect_fail 1 "k: 0 is below the minimum of 1" -- r recall --ns agent:ada --query x --k 0
expect_fail 1 "now: \"yesterday\" is not a valid time" -- r recall --ns agent:ada --query x --now yesterday
expect_fail 1 "no memory" "nope" -- r get nope
expect_fail 1 "nothing to change" -- r update maya
expect_fail 1 "nope" -- r invalidate nope
expect_fail 1 "nope" -- r forget nope --purge
expect_fail 1 "history" "nope" -- r history nope
expect_fail 1 "cannot open" -- r import "$tmp/missing.jsonl"
expect_fail 1 "medium" -- r recall --ns agent:ada --query x --tiers short,medium
expect_fail 1 "no store at" "$tmp/no/such/dir/x.db" -- "$bin" --db "$tmp/no/such/dir/x.db" stats
# Read commands (and changes of what exists) on a mistyped --db fail naming
# the path and create nothing.
for c in "stats" "namespaces" "export" "get x" "history x" "recall --ns a --query x" \
         "update x --importance 0.5" "invalidate x" "forget x" "clear --ns a --yes"; do
    # shellcheck disable=SC2086
    expect_fail 1 "no store at" "$tmp/typo.db" -- "$bin" --db "$tmp/typo.db" $c
    [ -e "$tmp/typo.db" ] && { fail "$c created $tmp/typo.db"; rm -f "$tmp/typo.db"*; }
done
# The "auto" embedder's note: said when a store is created and by stats,
# not on every command, so a failure is one line.
(
    unset REMEM_EMBEDDER
    "$bin" --db "$tmp/auto.db" add --ns a --text "first" >/dev/null 2>"$tmp/err.create"
    "$bin" --db "$tmp/auto.db" get nope >/dev/null 2>"$tmp/err.get"
    "$bin" --db "$tmp/auto.db" add --ns a --text "second" >/dev/null 2>"$tmp/err.add"
    "$bin" --db "$tmp/auto.db" stats >/dev/null 2>"$tmp/err.stats"
)
if grep -q "note:" "$tmp/err.create"; then  # no MiniLM model here: auto chose hash
    grep -q "note:" "$tmp/err.stats" || fail "stats does not say which embedder auto chose"
fi
[ "$(wc -l <"$tmp/err.get")" -eq 1 ] || fail "a failure printed more than one line: $(cat "$tmp/err.get")"
[ -s "$tmp/err.add" ] && fail "add on an existing store printed: $(cat "$tmp/err.add")"
echo "not a database, just text" >"$tmp/junk.db"
expect_fail 1 "junk.db" -- "$bin" --db "$tmp/junk.db" stats

# The README's eval example runs on what the repository holds.
root=$(cd "$(dirname "$0")/../.." && pwd)
expect_ok "$bin" --db "$tmp/eval.db" eval locomo "$root/tests/data/locomo-sample.json" --k 10
grep -q "all .*4$" "$tmp/out" || fail "eval on the sample: $(cat "$tmp/out")"
grep -q "tests/data/locomo-sample.json" "$root/README.md" || fail "README's eval example moved"
grep -q "\.\./shared" "$root/README.md" && fail "README points outside the repository"

[ $fails -eq 0 ] || { echo "cli_basic: $fails failures"; exit 1; }
echo "cli_basic: ok"
