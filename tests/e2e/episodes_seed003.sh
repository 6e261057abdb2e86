#!/usr/bin/env bash
# episodes_seed003.sh: seed 003's episodes on the CLI, as the audit of
# issue 20 tried them:
#   1. an identical prompt/output added under project beta is beta's own
#      episode, and `episode recall --project acme` still lists acme's;
#   2. a fresh process writes while the http embedder's server is down,
#      once the store records the model's dimension (no probe at open):
#      the episode is stored, pending its vector.
set -u
. "$(dirname "$0")/../support/e2e.sh"
e2e_init episodes_seed003

# ---- 1: projects stay apart ----
pair=(--prompt "sort a list of numbers" --output "sorted(xs)")
r episode add --ns coder "${pair[@]}" --meta '{"taskID":"t1","projectID":"acme"}' > "$tmp/a1" \
    || fail "episode add (acme): $(cat "$tmp/a1")"
r --json episode add --ns coder "${pair[@]}" --meta '{"taskID":"t2","projectID":"beta"}' > "$tmp/b1" \
    || fail "episode add (beta)"
grep -q '"outcome":"added"' "$tmp/b1" && grep -q '"id":"beta_t2_' "$tmp/b1" \
    || fail "the same pair under beta is not beta's own episode: $(cat "$tmp/b1")"
r --json episode recall --ns coder --query "sort a list of numbers" --project acme \
    --min-similarity 0 > "$tmp/ra"
grep -q '"id":"acme_t1_' "$tmp/ra" && ! grep -q 'beta_' "$tmp/ra" \
    || fail "--project acme does not list acme's episode alone: $(cat "$tmp/ra")"
[ $fails -eq 0 ] && echo "ok - duplicate folding stays inside one project"

# ---- 2: a fresh process writes while the embedder is down ----
cat > "$tmp/emb.py" <<'PY'
# an OpenAI-compatible embeddings stand-in: 16 numbers from each text's length
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class H(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [{"index": i, "embedding": [float((len(t) + j) % 7 + 1) for j in range(16)]}
                for i, t in enumerate(texts)]
        out = json.dumps({"data": data}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)
    def log_message(self, *a):
        pass
s = HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_port))
s.serve_forever()
PY
python3 "$tmp/emb.py" "$tmp/port" & pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 1 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
url="http://127.0.0.1:$(cat "$tmp/port")/v1"
h() { "$bin" --db "$tmp/http.db" --embedder http --embed-url "$url" --embed-model stand-in "$@"; }
h episode add --ns coder --prompt "parse a csv file" --output "csv.reader(f)" \
    --meta '{"taskID":"t1","projectID":"acme"}' > "$tmp/h1" 2>&1 || fail "add with the server up: $(cat "$tmp/h1")"
kill $pid; wait $pid 2>/dev/null
h episode add --ns coder --prompt "write a csv file" --output "csv.writer(f)" \
    --meta '{"taskID":"t2","projectID":"acme"}' > "$tmp/h2" 2>&1 \
    || fail "a fresh process cannot write while the embedder is down: $(cat "$tmp/h2")"
h --json stats --ns coder > "$tmp/st" 2>&1
grep -q '"memories":2' "$tmp/st" && grep -q '"pending_embeddings":1' "$tmp/st" \
    || fail "the episode written during the outage is not stored pending: $(cat "$tmp/st")"
[ $fails -eq 0 ] && echo "ok - a fresh process writes while the http embedder is down"
[ $fails -eq 0 ] || exit 1
