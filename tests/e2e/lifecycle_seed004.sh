#!/usr/bin/env bash
# lifecycle_seed004.sh: acceptance check 2 of issue 9, seed 004 (one
# memory stream per advisor) end to end, with seed 004's config/memory.yaml
# as remem.yaml beside the store, verbatim, and the LLM stand-in
# (tests/support/llm_standin.py) answering the reflection:
#   - agent:President fed over the CLI, agent:SecDef over HTTP: no
#     reflection after 9 observations, one after the 10th (automatic:
#     reflection.observation_threshold 10), importance 0.95, linked to real
#     observations; the reflection does not count towards the next one;
#   - the ranking is 0.4 relevance + 0.3 recency (half-life 7 days) + 0.3
#     importance, top 5, each score computed here;
#   - `remem context --format stream` prints seed 004's block byte for
#     byte (CLI), and the same text over HTTP, MCP and Python;
#   - counts per agent; clearing one agent leaves the other;
#   - --no-memory: context and recall return nothing and say so.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
export REMEM_EMBEDDER=hash
command -v python3 >/dev/null || exit 77
exec python3 - "$root" <<'PY'
import json, math, os, subprocess, sys, tempfile, time
root = sys.argv[1]
sys.path.insert(0, root + "/tests/e2e")
sys.path.insert(0, root + "/tests/support")
sys.path.insert(0, root + "/bindings/python")
from serve_util import *
from llm_standin import LlmStandin

tmp = tempfile.mkdtemp(prefix="remem-seed004-")
db = os.path.join(tmp, "s.db")
BIN = os.environ["REMEM_BIN"]
os.environ.pop("REMEM_CONFIG", None)
# seed 004's config/memory.yaml, as written there
open(os.path.join(tmp, "remem.yaml"), "w").write("""retrieval:
  top_k: 5  # Retrieve 5 memories per agent
  relevance_weight: 0.4
  recency_weight: 0.3
  importance_weight: 0.3

reflection:
  observation_threshold: 10  # Reflect every 10 observations
  enabled: true

decay:
  half_life_days: 7  # Memories decay 50% every 7 days
""")
standin = LlmStandin(tmp, rules=[
    {"match": "salient high-level questions", "reply": '{"questions": ["Whose advice has worked?"]}'},
    {"match": "high-level insights", "reply": '{"insights": [{"insight": "I tend to follow SecDef on deployments", "evidence": [1, 2, 3]}]}'},
])
os.environ["REMEM_LLM_URL"] = standin.url

def cli(*args):
    p = subprocess.run([BIN, "--db", db, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr

def kinds(ns):
    rc, out, _ = cli("stats", "--ns", ns, "--json")
    return json.loads(out).get("by_kind", {}) if rc == 0 else {}

DIM = 384
def vec(c):
    v = [0.0] * DIM
    v[5] = c
    v[17] = math.sqrt(max(0.0, 1 - c * c))
    return v

HOUR = 3600000
now = int(time.time() * 1000)
cos = [0.9, 0.2, 0.6, 0.95, 0.4, 0.8, 0.1, 0.7, 0.5, 0.3]
ages = [200, 10, 50, 400, 30, 100, 5, 150, 20, 300]   # hours before now
imps = [0.9, 0.5, 0.9, 0.6, 0.9, 0.5, 0.9, 0.6, 0.9, 0.5]

# ---- agent:President over the CLI: ten observations with hand-made vectors ----
for i in range(10):
    line = json.dumps({"id": "p%d" % i, "ns": "agent:President", "kind": "observation",
                       "text": "I decided on question %d, giving most weight to SecDef" % i,
                       "importance": imps[i], "created_at": now - ages[i] * HOUR,
                       "vector": vec(cos[i])})
    p = subprocess.run([BIN, "--db", db, "import", "-"], input=line + "\n",
                       capture_output=True, text=True)
    if p.returncode:
        print("   import:", p.stderr.strip())
    if i == 8:
        check(kinds("agent:President").get("reflection", 0) == 0, "no reflection after 9 observations")
k = kinds("agent:President")
check(k.get("reflection") == 1 and k.get("observation") == 10,
      "after the 10th observation one reflection exists (automatic)")
rc, out, _ = cli("export", "--ns", "agent:President")
refl = [m for m in map(json.loads, out.splitlines()) if m["kind"] == "reflection"] if rc == 0 else []
refl = refl[0] if refl else {}
check(abs(refl.get("importance", 0) - 0.95) < 1e-12 and len(refl.get("links") or []) == 3
      and all(l.startswith("p") for l in refl["links"]),
      "the reflection: importance 0.95, linked to 3 real observations")

# ---- agent:SecDef over HTTP, seed 004's memories ----
srv = Server(db=db)
try:
    def add(ns, text, created, kind="observation", imp=None):
        body = {"text": text, "kind": kind, "created_at": created}
        if imp is not None: body["importance"] = imp
        st, r = srv.json("POST", "/v1/namespaces/%s/memories" % ns, body)
        return st
    st1 = add("agent:SecDef", "I recommended diplomatic engagement on North Korea issue", "2025-11-02T14:30:00Z")
    st2 = add("agent:SecDef", "I decided to pursue military deterrence after Mattis convinced me", "2025-11-01T10:15:00Z")
    st3 = add("agent:SecDef", "Bolton's recommendations have led to unintended escalation in 3 of 5 cases",
              "2025-11-03T09:00:00Z", kind="reflection")
    check(st1 == st2 == st3 == 201 or st1 == st2 == st3 == 200, "SecDef's memories over HTTP")
    st, r = srv.json("GET", "/v1/namespaces/agent:SecDef/stats")

    # ---- ranking by hand (President, query along the axis) ----
    st, r = srv.json("POST", "/v1/recall", {"namespaces": ["agent:President"], "vector": vec(1.0),
                                            "now": now, "touch": False})
    hits = r.get("hits", [])
    check(st == 200 and r.get("profile") == "stream" and len(hits) == 5,
          "recall uses the policy: profile stream, top_k 5")
    def by_hand(c, age_h, imp):
        return 0.4 * max(0.0, c) + 0.3 * 0.5 ** (age_h / 168.0) + 0.3 * imp
    want = []
    for i in range(10):
        want.append((by_hand(cos[i], ages[i], imps[i]), "p%d" % i))
    for h in [h for h in hits if not h["id"].startswith("p")]:
        c = h["components"]
        want.append((0.4 * max(0.0, c["similarity"]) + 0.3 * c["recency"] + 0.3 * 0.95, h["id"]))
    want.sort(key=lambda t: -t[0])
    got = [(h["score"], h["id"]) for h in hits]
    ok = [g[1] for g in got] == [w[1] for w in want[:5]] and all(
        abs(g[0] - w[0]) < 1e-5 for g, w in zip(got, want))
    if not ok:
        print("   got ", got); print("   want", want[:5])
    check(ok, "ranking = 0.4 relevance + 0.3 * 0.5^(hours/168) + 0.3 importance, best 5")

    # ---- the stream block, byte for byte ----
    block = ("## Your Relevant Memories from Past Deliberations\n"
             "\n"
             "- [November 2, 2025 at 02:30 PM] I recommended diplomatic engagement on North Korea issue\n"
             "- [November 1, 2025 at 10:15 AM] I decided to pursue military deterrence after Mattis convinced me\n"
             "\n"
             "**[REFLECTION]** (November 3, 2025)\n"
             "  Bolton's recommendations have led to unintended escalation in 3 of 5 cases\n")
    q = ["--ns", "agent:SecDef", "--query", "North Korea diplomatic engagement",
         "--now", "2025-11-04T12:00:00Z", "--touch=false"]
    rc, out, err = cli("context", *q, "--format", "stream")
    check(rc == 0 and out in (block, block + "\n"), "remem context --format stream prints seed 004's block")
    if out not in (block, block + "\n"):
        print(repr(out), err)
    args = {"ns": "agent:SecDef", "query": "North Korea diplomatic engagement",
            "now": "2025-11-04T12:00:00Z", "touch": False}
    st, r = srv.json("POST", "/v1/context", args)
    check(st == 200 and r["text"] == block and len(r["hits"]) == 3, "POST /v1/context: the same block and the hits")
    st, _, body = srv.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                              "params": {"name": "context", "arguments": args}})
    sc = json.loads(body).get("result", {}).get("structuredContent", {}) if st == 200 else {}
    check(sc.get("text") == block, "MCP tool context: the same block")
finally:
    srv.stop()

import remem
pdb = remem.open(db)
try:
    r = pdb.call("context", **{k: v for k, v in args.items()})
    check(r["text"] == block, "Python db.call('context'): the same block")
finally:
    pdb.close()

# ---- SecDef's 10th observation triggers its own reflection, not the President's ----
# (its hand-written reflection restarted the count: 9 more, then the 10th)
for i in range(9):
    cli("add", "--ns", "agent:SecDef", "--text", "SecDef observation %d on the Pacific" % i)
check(kinds("agent:SecDef").get("reflection") == 1, "SecDef: 9 observations since its reflection, no new one")
cli("add", "--ns", "agent:SecDef", "--text", "SecDef observation 9 on the Pacific")
check(kinds("agent:SecDef").get("reflection") == 2, "SecDef: the 10th observation adds a reflection")

# ---- counts per agent; clearing one leaves the other ----
rc, out, _ = cli("namespaces", "--json")
counts = {n["ns"]: n["count"] for n in json.loads(out)["namespaces"]} if rc == 0 else {}
check(counts.get("agent:President") == 11 and counts.get("agent:SecDef") == 14,
      "counts per agent: President 11, SecDef 14 (%s)" % counts)
rc, out, err = cli("clear", "--ns", "agent:President", "--yes")
rc2, out, _ = cli("namespaces", "--json")
counts = {n["ns"]: n["count"] for n in json.loads(out)["namespaces"]} if rc2 == 0 else {}
check(rc == 0 and "agent:President" not in counts and counts.get("agent:SecDef") == 14,
      "clearing President leaves SecDef")

# ---- memory off ----
rc, out, err = cli("--no-memory", "context", *q, "--json")
r = json.loads(out) if rc == 0 else {}
check(r.get("text") == "" and r.get("hits") == [] and r.get("memory") == "off",
      "--no-memory: context is empty and says memory is off")
standin.stop()
finish()
PY
