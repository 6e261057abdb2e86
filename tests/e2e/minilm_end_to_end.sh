#!/usr/bin/env bash
# minilm_end_to_end.sh: the minilm embedder through the remem command, with
# the fixture model (tests/data/minilm/model: random weights of MiniLM's
# architecture): `remem model pull` from a local HTTP server (python3 -m
# http.server on 127.0.0.1) with the fixture's checksums, a refused pull
# with the official ones, `remem model info`, `remem embed --tokens`, then
# `remem add` / `remem recall` with --embedder minilm, and the auto choice
# falling back to hash (with its note) for a model that is not the official
# one.
set -euo pipefail
bin=${REMEM_BIN:?} root=${REMEM_ROOT:?}
fixture="$root/tests/data/minilm/model"
tmp=$(mktemp -d)
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A local server for the fixture files, on a free port.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
(cd "$fixture" && exec python3 -m http.server "$port" --bind 127.0.0.1 >/dev/null 2>&1) &
server_pid=$!
for _ in $(seq 50); do
    curl -sf "http://127.0.0.1:$port/config.json" >/dev/null 2>&1 && break
    sleep 0.1
done

sums=()
for f in model.safetensors vocab.txt config.json; do
    sums+=(--sha256 "$f=$(sha256sum "$fixture/$f" | cut -d' ' -f1)")
done

# The official checksums refuse the fixture, and nothing is left behind.
if "$bin" --quiet model pull --dir "$tmp/official" --url "http://127.0.0.1:$port" 2>"$tmp/err"; then
    fail "pull accepted files that are not the official model"
fi
grep -q "sha256" "$tmp/err" || fail "no checksum message: $(cat "$tmp/err")"
[ -z "$(ls -A "$tmp/official" 2>/dev/null)" ] || fail "files left after a refused pull: $(ls -A "$tmp/official")"

# With the fixture's checksums the pull installs and verifies.
model="$tmp/models/tiny"
"$bin" --quiet model pull --dir "$model" --url "http://127.0.0.1:$port/" "${sums[@]}"
for f in model.safetensors vocab.txt config.json; do
    cmp -s "$fixture/$f" "$model/$f" || fail "$f differs after pull"
done
"$bin" --json model info --dir "$model" --verify >"$tmp/info.json"
grep -q '"verified": true' "$tmp/info.json" || fail "not verified: $(cat "$tmp/info.json")"
grep -q '"dim": 64' "$tmp/info.json" || fail "wrong dim: $(cat "$tmp/info.json")"
"$bin" model info --dir "$model" | grep -q "verified: yes" || fail "text info"

# Token ids, as the reference tokenizer makes them.
"$bin" --embedder minilm --model-dir "$model" --json embed --tokens "Hello, World!" >"$tmp/embed.json"
python3 - "$tmp/embed.json" <<'EOF'
import json, math, sys
out = json.load(open(sys.argv[1]))
item = out["items"][0]
assert out["embedder"] == "minilm" and out["dim"] == 64, out
assert item["ids"] == [101, 7592, 1010, 2088, 999, 102], item["ids"]
assert item["tokens"] == ["[CLS]", "hello", ",", "world", "!", "[SEP]"], item["tokens"]
assert abs(math.sqrt(sum(v * v for v in item["vector"])) - 1) < 1e-5
EOF

# add / recall end to end with the minilm embedder.
db="$tmp/store.db"
r() { "$bin" --db "$db" --embedder minilm --model-dir "$model" --quiet "$@"; }
r add --ns agent --text "The deploy failed because the database migration timed out" >/dev/null
r add --ns agent --text "Lunch is at noon on Fridays" >/dev/null
r add --ns agent --text "Rollback steps: revert the release, then restore the snapshot" >/dev/null
r --json recall --ns agent --query "Lunch is at noon on Fridays" --k 3 >"$tmp/recall.json"
python3 - "$tmp/recall.json" <<'EOF'
import json, sys
res = json.load(open(sys.argv[1]))
hits = res["hits"]
assert len(hits) == 3, res
assert hits[0]["text"] == "Lunch is at noon on Fridays", hits[0]
EOF
"$bin" --db "$db" --json namespaces | grep -q '"model":"minilm:sha256:' || fail "namespace model id"

# auto: a model that is not the official one is never picked by itself.
"$bin" --db "$tmp/auto.db" --model-dir "$model" add --ns n --text "hello" 2>"$tmp/note" >/dev/null
grep -q "using the hash embedder" "$tmp/note" || fail "no note about the fallback: $(cat "$tmp/note")"
echo "minilm end to end: ok"
