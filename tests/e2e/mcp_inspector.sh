#!/usr/bin/env bash
# mcp_inspector.sh: the MCP tool sets as a client sees them.
#   1. Over raw stdio (no node needed): the default tools/list is under
#      4 KB, offers the core tools and no admin tool, and no description
#      names a seed; --tools and the config's mcp.tools add groups; an
#      unknown group stops `remem mcp` naming it.
#   2. The MCP Inspector's CLI (npm @modelcontextprotocol/inspector, pinned
#      in tests/mcp_inspector/package.json and installed there) lists, calls
#      and refuses as docs/mcp.md says. Without node or npm, or when the
#      package cannot be installed, this part is a SKIP.
set -u
. "$(dirname "$0")/../support/e2e.sh"
e2e_init mcp_inspector
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
mkdir -p "$tmp/store"
db=$tmp/store/m.db
list='{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
mcp() { "$bin" --db "$db" --embedder hash mcp "$@" 2>"$tmp/err"; }

echo "$list" | mcp > "$tmp/default" || fail "remem mcp failed: $(cat "$tmp/err")"
python3 - "$tmp/default" <<'PY' || fail "the default tool set"
import json, re, sys
raw = open(sys.argv[1]).read().strip()
tools = json.loads(raw)["result"]["tools"]
names = {t["name"] for t in tools}
assert len(raw.encode()) < 4096, "tools/list is %d bytes" % len(raw.encode())
for n in ("recall", "memory_get", "context"):
    assert n in names, (n, names)
assert not names & {"get", "check", "repair", "maintain", "prune", "archive", "cache_save",
                    "llm_check", "eval_lessons"}, names
assert len(tools) <= 9, names
bad = [t["name"] for t in tools if re.search("seed", t["description"], re.I)]
assert not bad, bad
print("ok - default tools/list: %d tools in %d bytes" % (len(tools), len(raw.encode())))
PY
echo "$list" | mcp --tools lessons,admin > "$tmp/more"
grep -q '"lesson_hints"' "$tmp/more" && grep -q '"repair"' "$tmp/more" \
    || fail "--tools lessons,admin does not add lesson_hints and repair"
grep -q '"decision_add"' "$tmp/more" && fail "--tools lessons,admin offers decision_add"
st=0; echo "$list" | mcp --tools memory,levitate > /dev/null || st=$?
[ $st -eq 2 ] && grep -q 'levitate' "$tmp/err" || fail "--tools with an unknown group: exit $st, $(cat "$tmp/err")"
printf 'mcp:\n  tools: experience\n' > "$tmp/store/remem.yaml"
echo "$list" | mcp > "$tmp/conf"
grep -q '"decision_add"' "$tmp/conf" || fail "mcp.tools in the config does not add decision_add"
printf 'mcp:\n  tools: experience,nothing\n' > "$tmp/store/remem.yaml"
st=0; echo "$list" | mcp > /dev/null || st=$?
[ $st -ne 0 ] && grep -q 'nothing' "$tmp/err" || fail "a bad mcp.tools: exit $st, $(cat "$tmp/err")"
rm "$tmp/store/remem.yaml"

# --- the MCP Inspector's CLI --------------------------------------------
dir=$root/tests/mcp_inspector
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "SKIP: mcp_inspector: node and npm are not installed (scripts/deps.sh test installs them)"
elif [ ! -x "$dir/node_modules/.bin/mcp-inspector" ] &&
     ! (cd "$dir" && npm ci --no-audit --no-fund > "$tmp/npm.log" 2>&1); then
    tail -n 3 "$tmp/npm.log"
    echo "SKIP: mcp_inspector: npm could not install @modelcontextprotocol/inspector"
else
    insp() { timeout 120 "$dir/node_modules/.bin/mcp-inspector" --cli "$bin" --db "$db" --embedder hash mcp "$@"; }
    insp --method tools/list > "$tmp/i_list" 2>&1 || fail "inspector tools/list: $(tail -n 3 "$tmp/i_list")"
    python3 -c 'import json,sys; t=[x["name"] for x in json.load(open(sys.argv[1]))["tools"]]; assert "recall" in t and "check" not in t, t' \
        "$tmp/i_list" || fail "inspector: the default list"
    insp --method tools/call --tool-name memory_add --tool-arg ns=agent:ada \
        --tool-arg "text=The user drinks green tea every morning" > "$tmp/i_add" 2>&1 \
        || fail "inspector: memory_add failed: $(tail -n 3 "$tmp/i_add")"
    id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["structuredContent"]["id"])' "$tmp/i_add")
    insp --method tools/call --tool-name recall --tool-arg "query=what does the user drink" \
        --tool-arg ns=agent:ada > "$tmp/i_recall" 2>&1 || fail "inspector: recall failed"
    grep -q "$id" "$tmp/i_recall" || fail "inspector: recall does not find the memory"
    insp --method tools/call --tool-name memory_get --tool-arg ns=agent:ada --tool-arg "id=$id" \
        > "$tmp/i_get" 2>&1 && grep -q 'green tea' "$tmp/i_get" || fail "inspector: memory_get"
    # refused: a tool of a group not offered, and a bad argument
    insp --method tools/call --tool-name check > "$tmp/i_check" 2>&1 && fail "inspector: check was not refused"
    grep -q 'tool group "admin"' "$tmp/i_check" || fail "inspector: the refusal does not name the group: $(cat "$tmp/i_check")"
    insp --method tools/call --tool-name memory_get --tool-arg ns=agent:ada > "$tmp/i_bad" 2>&1
    grep -q '"isError": true' "$tmp/i_bad" && grep -q 'id' "$tmp/i_bad" || fail "inspector: a missing id is not an isError result"
    # with --tools admin the same call runs
    timeout 120 "$dir/node_modules/.bin/mcp-inspector" --cli "$bin" --db "$db" --embedder hash mcp --tools admin \
        --method tools/call --tool-name check > "$tmp/i_check2" 2>&1 || fail "inspector: check with --tools admin: $(tail -n 3 "$tmp/i_check2")"
    [ $fails -eq 0 ] && echo "ok - the MCP Inspector lists, calls and refuses as documented"
fi
[ $fails -eq 0 ] || exit 1
