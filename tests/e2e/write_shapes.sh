#!/usr/bin/env bash
# write_shapes.sh: one answer shape per write on every face. The same add,
# duplicate add, update, invalidate and forget are made through the CLI
# (--json), over HTTP and through the MCP tools (structuredContent), each on
# its own store with the same caller ids; the JSON texts must be identical
# (they all come from remem_write_result_json). Generated ids differ, so a
# duplicate is compared with its own face's first id.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
export REMEM_EMBEDDER=hash
exec python3 - "$root" <<'PY'
import json, os, subprocess, sys, tempfile
sys.path.insert(0, sys.argv[1] + "/tests/e2e")
from serve_util import *

tmp = tempfile.mkdtemp(prefix="remem-shapes-")
NS = "agent:shapes"
T1, T2 = "Maya prefers blue-green deployments", "the kettle is in the left cupboard"

def cli(*args):
    out = subprocess.run([BIN, "--db", os.path.join(tmp, "cli.db"), "--json"] + list(args),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()

faces = {}
gen = cli("add", "--ns", NS, "--text", T2)
faces["cli"] = [cli("add", "--ns", NS, "--id", "m1", "--text", T1),
                cli("add", "--ns", NS, "--text", T2),
                cli("update", "--ns", NS, "m1", "--importance", "0.9"),
                cli("invalidate", "--ns", NS, "m1", "--by", "m2", "--reason", "changed"),
                cli("forget", "--ns", NS, "m1"),
                cli("forget", "--ns", NS, "m1", "--purge")]
gen_cli = json.loads(gen)["id"]

srv = Server()
try:
    B = "/v1/namespaces/" + NS
    def http(method, path, body=None):
        st, _, data = srv.request(method, path, body)
        assert st < 300, (st, data)
        return data.decode()
    gen_http = json.loads(http("POST", B + "/memories", {"text": T2}))["id"]
    faces["http"] = [http("POST", B + "/memories", {"id": "m1", "text": T1}),
                     http("POST", B + "/memories", {"text": T2}),
                     http("PATCH", B + "/memories/m1", {"importance": 0.9}),
                     http("POST", B + "/memories/m1:invalidate", {"superseded_by": "m2", "reason": "changed"}),
                     http("DELETE", B + "/memories/m1"),
                     http("DELETE", B + "/memories/m1?purge=true")]
    def tool(name, args):
        st, _, data = srv.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                                   "params": {"name": name, "arguments": args}})
        r = json.loads(data)["result"]
        assert not r.get("isError"), r
        return json.dumps(r["structuredContent"], separators=(",", ":"))
    NS2 = NS + ":mcp"
    gen_mcp = json.loads(tool("memory_add", {"ns": NS2, "text": T2}))["id"]
    faces["mcp"] = [tool("memory_add", {"ns": NS2, "id": "m1", "text": T1}),
                    tool("memory_add", {"ns": NS2, "text": T2}),
                    tool("memory_update", {"ns": NS2, "id": "m1", "importance": 0.9}),
                    tool("memory_invalidate", {"ns": NS2, "id": "m1", "superseded_by": "m2", "reason": "changed"}),
                    tool("memory_forget", {"ns": NS2, "id": "m1"}),
                    tool("memory_forget", {"ns": NS2, "id": "m1", "purge": True})]
finally:
    srv.stop()
    srv.kill()

norm = {"cli": lambda t: t.replace(gen_cli, "GEN"),
        "http": lambda t: t.replace(gen_http, "GEN"),
        "mcp": lambda t: t.replace(gen_mcp, "GEN").replace(NS2, NS)}
ops = ["add", "duplicate add", "update", "invalidate", "forget", "forget --purge"]
for i, op in enumerate(ops):
    texts = {f: norm[f](faces[f][i]) for f in faces}
    check(len(set(texts.values())) == 1, "%s: the same JSON on every face: %s" % (op, texts))
check(faces["cli"][0] == '{"id":"m1","ns":"%s","outcome":"added"}' % NS, "the add shape: " + faces["cli"][0])
finish()
PY
