#!/usr/bin/env bash
# mcp_http.sh: MCP over the streamable HTTP transport, end to end: the
# official MCP TypeScript SDK client (tests/mcp/client.mjs) against /mcp of
# a real `remem serve` on a free loopback port, then SIGTERM and a clean
# exit. The server prints "listening on http://127.0.0.1:PORT" when ready.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=${REMEM_BIN:-$root/build/remem}
tmp=$(mktemp -d)
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

# The whole script is the node client: without node it is skipped (exit 77,
# counted as a skip by tests/run.sh), never passed.
if ! command -v node >/dev/null; then
    echo "SKIP: mcp_http: node is not installed (scripts/deps.sh installs it)"
    exit 77
fi
if [ ! -d "$root/tests/mcp/node_modules/@modelcontextprotocol/sdk" ]; then
    (cd "$root/tests/mcp" && npm ci --no-audit --no-fund >&2)
fi

"$bin" serve --db "${REMEM_TEST_DB:-$tmp/http.db}" --listen 127.0.0.1:0 --tools memory > "$tmp/log" 2>&1 &
pid=$!
url=
for _ in $(seq 1 100); do
    url=$(grep -o 'listening on http://[0-9.]*:[0-9]*' "$tmp/log" | head -n1 | sed 's/^listening on //') || true
    [ -n "$url" ] && break
    kill -0 "$pid" 2>/dev/null || { echo "remem serve died:"; cat "$tmp/log"; exit 1; }
    sleep 0.1
done
[ -n "$url" ] || { echo "remem serve did not say where it listens:"; cat "$tmp/log"; exit 1; }
echo "server at $url"

node "$root/tests/mcp/client.mjs" http "$url/mcp"

# A notification alone is accepted with 202 and no body, as the transport
# asks; a malformed body is a JSON-RPC parse error.
code=$(curl -s -o "$tmp/body" -w '%{http_code}' -X POST "$url/mcp" \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","method":"notifications/initialized"}')
[ "$code" = 202 ] || { echo "a notification got HTTP $code"; cat "$tmp/body"; exit 1; }
echo "ok - a notification gets 202"
curl -s -X POST "$url/mcp" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -d '{"jsonrpc":' > "$tmp/body" || true
grep -q -- '-32700' "$tmp/body" || { echo "a malformed body got:"; cat "$tmp/body"; exit 1; }
echo "ok - a malformed body gets a JSON-RPC parse error"

kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=
[ "$status" -eq 0 ] || { echo "remem serve exited $status after SIGTERM:"; cat "$tmp/log"; exit 1; }
echo "ok - remem serve stops cleanly on SIGTERM"
