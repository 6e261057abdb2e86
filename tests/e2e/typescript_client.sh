#!/usr/bin/env bash
# typescript_client.sh: the TypeScript client (bindings/typescript) against
# the remem built here. In the package: `npm ci` (typescript and
# @types/node, pinned by its package-lock.json), the check that
# src/generated/operations.ts is what docs/openapi.json gives (before the
# build, which writes it again), `npm run build` (tsc), then `npm test`
# (node --test), whose tests start `remem serve` ($REMEM_BIN) on a free
# loopback port with a fresh SQLite store. Without node 18+ or npm, or when
# npm cannot install the packages, this is a SKIP.
set -u
. "$(dirname "$0")/../support/e2e.sh"
e2e_init typescript_client
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
dir=$root/bindings/typescript
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "SKIP: typescript_client: node and npm are not installed (scripts/deps.sh test installs them)"
    exit 0
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 18 ]; then
    echo "SKIP: typescript_client: node $major is older than 18 (no global fetch)"
    exit 0
fi
if [ ! -x "$dir/node_modules/.bin/tsc" ] &&
   ! (cd "$dir" && npm ci --no-audit --no-fund > "$tmp/npm.log" 2>&1); then
    tail -n 3 "$tmp/npm.log"
    echo "SKIP: typescript_client: npm could not install typescript and @types/node"
    exit 0
fi
cd "$dir" || exit 1
npm run --silent check-generated > "$tmp/gen.log" 2>&1 \
    || fail "src/generated/operations.ts is stale: $(cat "$tmp/gen.log") (run npm run generate in bindings/typescript)"
npm run --silent build > "$tmp/build.log" 2>&1 || fail "npm run build: $(tail -n 20 "$tmp/build.log")"
if [ $fails -eq 0 ]; then
    REMEM_BIN=$bin npm test > "$tmp/test.log" 2>&1 || fail "npm test: $(grep -E '^not ok|Error|expected|actual' "$tmp/test.log" | head -n 30)"
    grep -E '^# (pass|fail)' "$tmp/test.log"
fi
[ $fails -eq 0 ] && echo "ok - the TypeScript client and seed 003's MemoryAgent pass against remem serve"
[ $fails -eq 0 ] || exit 1
