#!/usr/bin/env bash
# memory_off.sh: seed 004's --no-memory and the config file on the CLI and
# over HTTP. A store with memories is used with --no-memory: recall finds
# nothing and says "memory": "off", add/update/forget answer "dropped" and
# change nothing (the store's counts and the memory itself are checked
# after each); a config policy (memory_off for "baseline:*") does the same
# for its namespaces only; --config with a bad file fails naming the file,
# line and key; $REMEM_CONFIG and --config pick the policy recall uses.
# Then `remem serve --no-memory` and `remem serve --config FILE` over HTTP.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
export REMEM_EMBEDDER=hash
unset REMEM_DB REMEM_CONFIG
exec python3 - "$root" <<'EOF'
import json, os, subprocess, sys, tempfile
sys.path.insert(0, sys.argv[1] + "/tests/e2e")
from serve_util import *

tmp = tempfile.mkdtemp(prefix="remem-memoff-")
db = os.path.join(tmp, "store.db")

def cli(*args, ok=True):
    p = subprocess.run([BIN, "--db", db, "--quiet"] + list(args), capture_output=True, text=True)
    if ok and p.returncode != 0:
        print("  command failed:", args, p.stderr)
    return p

def count(ns):
    return json.loads(cli("--json", "stats", "--ns", ns).stdout)["memories"]

# ---- the CLI ------------------------------------------------------------
NS = "agent:President"
r = json.loads(cli("--json", "add", "--ns", NS, "--text", "I decided to deploy a carrier group").stdout)
mid = r["id"]
cli("add", "--ns", "baseline:run1", "--text", "a carrier group memory from before")

p = cli("--no-memory", "--json", "recall", "--ns", NS, "carrier group")
res = json.loads(p.stdout)
check(res["hits"] == [] and res.get("memory") == "off", "--no-memory recall: no hits, memory off")
p = cli("--no-memory", "recall", "--ns", NS, "carrier group")
check("memory is off" in p.stdout, "--no-memory recall in plain text says memory is off")
p = cli("--no-memory", "--json", "add", "--ns", NS, "--text", "a new observation")
check(json.loads(p.stdout) == {"ns": NS, "outcome": "dropped", "memory": "off"},
      "--no-memory add: dropped, memory off, no id")
check(count(NS) == 1, "the dropped add wrote nothing")
p = cli("--no-memory", "--json", "update", "--ns", NS, mid, "--text", "changed")
check(json.loads(p.stdout).get("outcome") == "dropped", "--no-memory update: dropped")
p = cli("--no-memory", "--json", "forget", "--ns", NS, mid)
check(json.loads(p.stdout).get("outcome") == "dropped", "--no-memory forget: dropped")
got = json.loads(cli("--json", "get", "--ns", NS, mid).stdout)["memory"]
check(got["text"] == "I decided to deploy a carrier group" and got["tier"] == "short",
      "the memory is unchanged after the dropped update and forget")
jl = os.path.join(tmp, "in.jsonl")
with open(jl, "w") as f:
    f.write('{"text":"one"}\n{"text":"two"}\n')
p = cli("--no-memory", "--json", "import", "--ns", NS, jl)
check(json.loads(p.stdout) == {"imported": 0, "dropped": 2, "memory": "off"} and count(NS) == 1,
      "--no-memory import: read, dropped, nothing written")
p = cli("--no-memory", "--json", "clear", "--ns", NS, "--yes")
check(json.loads(p.stdout)["outcome"] == "dropped" and count(NS) == 1, "--no-memory clear: dropped")
res = json.loads(cli("--json", "recall", "--ns", NS, "carrier group").stdout)
check(len(res["hits"]) == 1 and "memory" not in res, "without the flag recall finds it again")

# A policy: memory off for baseline:* only.
yaml = os.path.join(tmp, "remem.yaml")
with open(yaml, "w") as f:
    f.write('policies:\n  "baseline:*":\n    memory_off: true\n  "agent:*":\n    profile: stream\n    top_k: 5\n')
res = json.loads(cli("--config", yaml, "--json", "recall", "--ns", "baseline:run1", "carrier").stdout)
check(res["hits"] == [] and res.get("memory") == "off", "policy memory_off: recall empty, memory off")
res = json.loads(cli("--config", yaml, "--json", "recall", "--ns", NS, "carrier").stdout)
check(len(res["hits"]) == 1 and res["profile"] == "stream", "another namespace: on, with its policy's profile")
p = cli("--config", yaml, "--json", "add", "--ns", "baseline:run1", "--text", "dropped by policy")
check(json.loads(p.stdout)["outcome"] == "dropped", "policy memory_off: add dropped")
check(count("baseline:run1") == 1, "nothing written in the memory-off namespace")
# The same file found beside the store, and through $REMEM_CONFIG.
res = json.loads(cli("--json", "recall", "--ns", NS, "carrier").stdout)
check(res["profile"] == "stream", "remem.yaml beside the store is read without --config")
os.rename(yaml, os.path.join(tmp, "other.yaml"))
env = dict(os.environ, REMEM_CONFIG=os.path.join(tmp, "other.yaml"))
p = subprocess.run([BIN, "--db", db, "--json", "recall", "--ns", NS, "carrier"], capture_output=True,
                   text=True, env=env)
check(json.loads(p.stdout)["profile"] == "stream", "$REMEM_CONFIG names the file")
res = json.loads(cli("--json", "recall", "--ns", NS, "carrier").stdout)
check(res["profile"] == "default", "no file: today's default profile")

# config show: the effective policy, its file and patterns.
with open(yaml, "w") as f:
    f.write('top_k: 3\npolicies:\n  "agent:*":\n    profile: stream\n  agent:President:\n    top_k: 7\n')
sh = json.loads(cli("--config", yaml, "--json", "config", "show", "--ns", NS).stdout)
check(sh["file"] == os.path.realpath(yaml) and sh["patterns"] == ["(top level)", "agent:*", NS],
      "config show: the file and the patterns, least specific first")
check(sh["policy"]["profile"] == "stream" and sh["policy"]["top_k"] == 7 and sh["memory"] == "on",
      "config show: the most specific value of each key")
p = cli("--config", yaml, "config", "show", "--ns", "agent:SecDef")
check("top_k: 3" in p.stdout and 'profile: "stream"' in p.stdout and "patterns (top level), agent:*" in p.stdout,
      "config show in plain text")
os.remove(yaml)

bad = os.path.join(tmp, "bad.yaml")
with open(bad, "w") as f:
    f.write("retrieval:\n  top_k: 5\n  relevance_weight: high\n")
p = cli("--config", bad, "stats", ok=False)
check(p.returncode != 0 and bad in p.stderr and
      "line 3: retrieval.relevance_weight: expected a number, got \"high\"" in p.stderr,
      "--config with a wrong type fails naming file, line and key")
with open(bad, "w") as f:
    f.write("retrieval:\n  top_k: 5\nreflektion:\n  enabled: true\n")
p = cli("--config", bad, "stats", ok=False)
check(p.returncode != 0 and "line 3: reflektion: unknown key" in p.stderr,
      "--config with an unknown key fails naming line and key")
p = cli("--config", os.path.join(tmp, "missing.yaml"), "stats", ok=False)
check(p.returncode != 0 and "missing.yaml" in p.stderr, "--config with a missing file fails")

# ---- MCP over stdio -----------------------------------------------------
def mcp(*args, calls):
    msgs = ['{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}']
    for i, (tool, a) in enumerate(calls, 1):
        msgs.append(json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                                "params": {"name": tool, "arguments": a}}))
    p = subprocess.run([BIN, "--db", db, "--quiet"] + list(args) + ["mcp"], input="\n".join(msgs) + "\n",
                       capture_output=True, text=True)
    out = {}
    for line in p.stdout.splitlines():
        o = json.loads(line)
        out[o.get("id")] = o.get("result", {})
    return out
out = mcp("--no-memory", calls=[("memory_add", {"ns": NS, "text": "told over mcp"}),
                               ("recall", {"ns": [NS], "query": "carrier group"}),
                               ("memory_forget", {"ns": NS, "id": mid})])
check(out[1].get("structuredContent", {}).get("outcome") == "dropped" and
      "Memory is off" in out[1]["content"][0]["text"], "mcp --no-memory: memory_add dropped, said in text")
check(out[2].get("structuredContent", {}).get("memory") == "off" and
      "Memory is off" in out[2]["content"][0]["text"], "mcp --no-memory: recall empty, memory off")
check(out[3].get("structuredContent", {}).get("outcome") == "dropped", "mcp --no-memory: memory_forget dropped")
check(count(NS) == 1 and json.loads(cli("--json", "get", "--ns", NS, mid).stdout)["memory"]["tier"] == "short",
      "nothing was written over MCP")

# ---- HTTP ---------------------------------------------------------------
srv = Server(db=db, args=["--no-memory"])
try:
    check(any("memory is off" in l for l in srv.banner), "serve --no-memory: the banner says so")
    st, res = srv.json("POST", "/v1/recall", {"namespaces": [NS], "text": "carrier group"})
    check(st == 200 and res["hits"] == [] and res.get("memory") == "off",
          "serve --no-memory: recall empty, memory off")
    st, r = srv.json("POST", "/v1/namespaces/" + NS + "/memories", {"text": "over http"})
    check(st in (200, 202) and r.get("outcome") == "dropped" and r.get("memory") == "off",
          "serve --no-memory: add dropped")
    st, r = srv.json("POST", "/v1/namespaces/" + NS + "/memories:batch",
                     {"memories": [{"text": "one"}, {"text": "two"}]})
    check(st == 200 and r == {"ids": [None, None], "count": 0, "outcome": "dropped", "memory": "off"},
          "serve --no-memory: a batch dropped")
    st, r = srv.json("DELETE", "/v1/namespaces/" + NS)
    check(st == 200 and r.get("outcome") == "dropped" and r.get("deleted") == 0,
          "serve --no-memory: clearing a namespace is dropped")
    st, r = srv.json("DELETE", "/v1/namespaces/" + NS + "/memories/" + mid)
    check(st == 200 and r.get("outcome") == "dropped", "serve --no-memory: forget dropped")
finally:
    srv.stop()
check(count(NS) == 1, "nothing was written through the server")

with open(yaml, "w") as f:
    f.write('policies:\n  "baseline:*":\n    memory_off: true\n')
srv = Server(db=db, args=["--config", yaml])
try:
    st, res = srv.json("POST", "/v1/recall", {"namespaces": ["baseline:run1"], "text": "carrier"})
    check(st == 200 and res["hits"] == [] and res.get("memory") == "off",
          "serve --config: the policy's memory_off over HTTP")
    st, sh = srv.json("POST", "/v1/config/show", {"ns": "baseline:x"})
    check(st == 200 and sh["memory"] == "off" and sh["patterns"] == ["baseline:*"],
          "POST /v1/config/show: the namespace's policy")
    st, res = srv.json("POST", "/v1/recall", {"namespaces": [NS, "baseline:run1"], "text": "carrier"})
    check(st == 200 and len(res["hits"]) == 1 and res.get("memory") == "partly off",
          "serve --config: a mixed query leaves the off namespace out and says so")
finally:
    srv.stop()
subprocess.run(["rm", "-rf", tmp])
finish()
EOF
