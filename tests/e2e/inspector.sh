#!/usr/bin/env bash
# inspector.sh: the inspector at /ui (docs/inspector.md) in a real browser.
#   1. Without node: /ui and its files are served from the binary with their
#      types, an unknown file is a JSON 404, the page needs no key but every
#      API call it makes does.
#   2. Debian's chromium, headless through puppeteer-core (pinned in
#      tests/inspector/package.json, installed there by npm ci), drives the
#      page against a real `remem serve --keys` filled here
#      (tests/inspector/drive.mjs): every view's rows and numbers read from
#      the DOM equal what the API answers, recall's bars sum to each hit's
#      score, a read key scoped to one namespace sees no other. Screenshots
#      of each view at 1280x800 go to build/inspector-*.png.
#   3. `--no-ui`, and `serve: {ui: false}` in the configuration, turn it off.
#   Without node, npm or chromium, or when npm cannot install, part 2 is a
#   SKIP.
set -u
. "$(dirname "$0")/../support/e2e.sh"
. "$(dirname "$0")/../support/llm_standin.sh"
e2e_init inspector
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
out=${REMEM_BUILD:-$root/build}
srv_pid=
cleanup() { [ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null; standin_stop; rm -rf "$tmp"; }
trap cleanup EXIT

# ---- the store: two namespaces, history, links, lessons, an archive ----
python3 - "$tmp/ada.jsonl" <<'PY'
import json, sys
rooms = ["kitchen", "hall", "garden"]
with open(sys.argv[1], "w") as f:
    for i in range(1, 61):
        room = rooms[i % 3]
        f.write(json.dumps({"id": "m%02d" % i, "text": "observation %d: the kettle was seen in the %s" % (i, room)
                            if i % 4 == 0 else "observation %d: a quiet moment in the %s" % (i, room),
                            "kind": "observation", "metadata": {"room": room},
                            "created_at": "2026-01-01T00:%02d:00Z" % (i - 1)}) + "\n")
    f.write(json.dumps({"id": "r1", "text": "the kettle lives in the kitchen", "kind": "reflection",
                        "links": ["m04", "m08"], "importance": 0.9,
                        "created_at": "2026-01-01T01:30:00Z"}) + "\n")
    f.write(json.dumps({"id": "r2", "text": "the hall is quiet", "kind": "reflection", "links": ["m01"],
                        "created_at": "2026-01-01T01:31:00Z"}) + "\n")
PY
r import --ns agent:ada "$tmp/ada.jsonl" > /dev/null 2>"$tmp/err" || fail "import: $(cat "$tmp/err")"
r memory update --ns agent:ada m04 --importance 0.8 > /dev/null 2>&1 || fail "update m04"
for t in "bob likes tea" "bob walks the dog" "bob's kettle is blue"; do
    r add --ns agent:bob --text "$t" > /dev/null 2>&1 || fail "add to agent:bob"
done
r archive --ns agent:ada --ids '["m01"]' > /dev/null 2>"$tmp/err" || fail "archive: $(cat "$tmp/err")"
r prune --ns agent:ada > /dev/null 2>"$tmp/err" || fail "prune: $(cat "$tmp/err")"
lsn=$(r --json lesson add --ns agent:ada --domain sqlite --rule "quote identifiers with double quotes" 2>/dev/null |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["lesson_id"])')
r lesson add --ns agent:ada --domain shell --rule "check the exit status" > /dev/null 2>&1
for i in 1 2 3; do
    res=pass; [ $i = 2 ] && res=fail
    r lesson outcome --ns agent:ada --run run-$i --domain sqlite --result $res --steps $i \
        --args "{\"lessons\":[\"$lsn\"]}" > /dev/null 2>&1 || fail "lesson outcome run-$i"
done

# ---- keys: an admin over every namespace, a reader of agent:bob ----
keys=$tmp/keys.json
admin=$("$bin" serve --new-key --keys "$keys" --name admin --ns '*' --rights admin 2>/dev/null)
reader=$("$bin" serve --new-key --keys "$keys" --name bob --ns 'agent:bob' --rights read 2>/dev/null)
[ -n "$admin" ] && [ -n "$reader" ] || fail "making the keys"

serve() { # extra options...; sets $url and $srv_pid
    "$bin" --db "$db" serve --listen 127.0.0.1:0 --keys "$keys" "$@" > "$tmp/serve.out" 2>"$tmp/serve.err" &
    srv_pid=$!
    url=
    for _ in $(seq 1 100); do
        url=$(sed -n 's/^listening on //p' "$tmp/serve.out")
        [ -n "$url" ] && break; sleep 0.1
    done
    [ -n "$url" ] || fail "remem serve did not start: $(cat "$tmp/serve.err")"
}
stop() { kill "$srv_pid" 2>/dev/null; wait "$srv_pid" 2>/dev/null; srv_pid=; }
get() { curl -s -o "$tmp/body" -w '%{http_code} %{content_type}' "$url$1"; }

standin_start "$tmp" || fail "the LLM stand-in"
REMEM_LLM_URL=$standin_url REMEM_LLM_MODEL=standin-7b serve

# ---- 1. the files, from the binary ----
[ "$(get /ui)" = "200 text/html; charset=utf-8" ] && grep -q '/ui/app.js' "$tmp/body" \
    || fail "/ui is not the page: $(get /ui)"
[ "$(get /ui/app.js)" = "200 text/javascript; charset=utf-8" ] && cmp -s "$tmp/body" "$root/server/ui/app.js" \
    || fail "/ui/app.js is not server/ui/app.js"
[ "$(get /ui/app.css)" = "200 text/css; charset=utf-8" ] || fail "/ui/app.css"
[ "$(get /ui/chart.js)" = "200 text/javascript; charset=utf-8" ] && grep -q 'Chart.js v' "$tmp/body" \
    || fail "/ui/chart.js is not Chart.js"
st=$(get /ui/..%2Fkeys.json)
[ "${st%% *}" = 404 ] && grep -q '"REMEM_ENOROUTE"' "$tmp/body" || fail "an unknown file: $st $(cat "$tmp/body")"
st=$(get /v1/namespaces)
[ "${st%% *}" = 401 ] || fail "the API without a key answered $st"
curl -s -o /dev/null -X POST "$url/v1/rate" -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' \
    -d '{"ns":"agent:ada","id":"m02"}' || fail "rate (for the LLM token counts)"
[ $fails -eq 0 ] && echo "ok - /ui, app.js, app.css and chart.js come from the binary; unknown files are 404"

# ---- 2. the page in chromium ----
dir=$root/tests/inspector
chromium=$(command -v chromium || command -v chromium-browser || true)
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "SKIP: inspector: node and npm are not installed (scripts/deps.sh test installs them)"
elif [ -z "$chromium" ]; then
    echo "SKIP: inspector: chromium is not installed (scripts/deps.sh test installs it)"
elif [ ! -d "$dir/node_modules/puppeteer-core" ] &&
     ! (cd "$dir" && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund > "$tmp/npm.log" 2>&1); then
    tail -n 3 "$tmp/npm.log"
    echo "SKIP: inspector: npm could not install puppeteer-core"
else
    mkdir -p "$out"
    timeout 300 node "$dir/drive.mjs" "$url" "$admin" "$reader" agent:bob agent:ada "$out" "$chromium" \
        > "$tmp/drive.log" 2>&1 || fail "the inspector in chromium"
    sed 's/^/    /' "$tmp/drive.log"
    for v in namespaces timeline memory recall lessons maintenance; do
        [ -s "$out/inspector-$v.png" ] || fail "no screenshot of the $v view"
    done
fi
stop

# ---- --no-ui ----
serve --no-ui
st=$(get /ui)
[ "${st%% *}" = 404 ] && grep -q 'no-ui' "$tmp/body" || fail "--no-ui: /ui answered $st $(cat "$tmp/body")"
st=$(get /ui/app.js)
[ "${st%% *}" = 404 ] || fail "--no-ui: /ui/app.js answered $st"
st=$(curl -s -o /dev/null -w '%{http_code}' "$url/v1/namespaces" -H "Authorization: Bearer $admin")
[ "$st" = 200 ] || fail "--no-ui: the API answered $st"
stop
# ---- serve.ui: false in the configuration ----
printf 'serve:\n  ui: false\n' > "$tmp/remem.yaml"
"$bin" --db "$db" --config "$tmp/remem.yaml" serve --listen 127.0.0.1:0 --keys "$keys" > "$tmp/serve.out" 2>"$tmp/serve.err" &
srv_pid=$!
for _ in $(seq 1 100); do url=$(sed -n 's/^listening on //p' "$tmp/serve.out"); [ -n "$url" ] && break; sleep 0.1; done
st=$(get /ui)
[ "${st%% *}" = 404 ] && grep -q 'serve.ui' "$tmp/body" || fail "serve.ui false: /ui answered $st $(cat "$tmp/body")"
grep -q '/ui in a browser' "$tmp/serve.out" && fail "serve.ui false: the banner still points at /ui"
stop
rm -f "$tmp/remem.yaml"
[ $fails -eq 0 ] && echo "ok - --no-ui and serve.ui: false turn the page off and leave the API"
exit $((fails > 0))
