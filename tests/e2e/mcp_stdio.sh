#!/usr/bin/env bash
# mcp_stdio.sh: `remem mcp` over stdio, end to end.
# First the raw transport (one JSON-RPC message per line in, one response
# per line out, notifications unanswered, a malformed line answered with a
# parse error and the server going on, exit 0 at end of input); then the
# official MCP TypeScript SDK client (tests/mcp/client.mjs) spawning the
# real binary, as Claude Desktop or an agent framework would.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=${REMEM_BIN:-$root/build/remem}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- the raw transport --------------------------------------------------
printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  '' \
  '{"jsonrpc":"2.0","id":2,"method":' \
  '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_add","arguments":{"ns":"sh","text":"the raw transport works"}}}' \
  '{"jsonrpc":"2.0","id":4,"method":"ping"}' \
  > "$tmp/in"
status=0
"$bin" mcp --db "${REMEM_TEST_DB:-$tmp/raw.db}" < "$tmp/in" > "$tmp/out" 2> "$tmp/err" || status=$?
[ "$status" -eq 0 ] || { echo "remem mcp exited $status at end of input"; cat "$tmp/err"; exit 1; }
python3 - "$tmp/out" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().split("\n")
assert lines[-1] == "", "output must end with a newline"
msgs = [json.loads(l) for l in lines[:-1]]
assert [m.get("id") for m in msgs] == [1, None, 3, 4], [m.get("id") for m in msgs]
assert msgs[0]["result"]["protocolVersion"] == "2025-06-18", msgs[0]
assert msgs[0]["result"]["serverInfo"]["name"] == "remem", msgs[0]
assert msgs[1]["error"]["code"] == -32700, msgs[1]
assert msgs[2]["result"]["structuredContent"]["outcome"] == "added", msgs[2]
assert msgs[3]["result"] == {}, msgs[3]
print("ok - raw stdio transport: %d responses, parse error answered, notification not" % len(msgs))
PY
grep -q '^{' "$tmp/err" && { echo "JSON leaked onto stderr"; exit 1; }

# The memory written over stdio is in the store: a second process finds it.
id=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().split("\n")[2])["result"]["structuredContent"]["id"])' "$tmp/out")
printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_get","arguments":{"ns":"sh","id":"%s"}}}\n' "$id" \
  | "$bin" mcp --db "${REMEM_TEST_DB:-$tmp/raw.db}" 2>/dev/null | grep -q 'the raw transport works' \
  || { echo "the remembered memory is not in the store"; exit 1; }
echo "ok - the memory remembered over stdio is in the store"

# --- the official SDK client ---------------------------------------------
# Without node this part is a skip (tests/run.sh counts it), never a pass.
if ! command -v node >/dev/null; then
    echo "SKIP: mcp_stdio sdk client: node is not installed (scripts/deps.sh installs it)"
    exit 0
fi
cd "$root/tests/mcp"
if [ ! -d node_modules/@modelcontextprotocol/sdk ]; then
    npm ci --no-audit --no-fund >&2
fi
node client.mjs stdio "$bin" "$tmp/sdk.db"
