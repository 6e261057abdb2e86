#!/usr/bin/env bash
# lifecycle_seed001.sh: acceptance check 1 of issue 9, seed 001 (the
# metaverse generative agent) end to end over the CLI and HTTP, with the
# LLM stand-in (tests/support/llm_standin.py) playing the model:
#   - a personality file loaded as static memories (CLI), loaded again:
#     nothing doubled;
#   - 30 events with hand-made vectors and ages; `migrate` with stm_size 20
#     moves exactly the 10 oldest, to long when importance > 0.35, else to
#     archived (HTTP), as this script computes;
#   - recall with the metaverse profile: static (never decaying), then short, then long, the
#     0.35 threshold, and every score equal to 1/(1+d) + 0.25 * 0.995^whole hours
#     (d the squared L2 distance, Chroma's "l2" space)
#     + 0.25 * importance computed here;
#   - reflect (CLI) with the stand-in: insights linked to the real ids of
#     the statements they cite (an invented number dropped);
#   - summarize (HTTP): fewer long-term memories, the summary links its
#     sources, the sources restored with unarchive;
#   - plan (HTTP) stored as kind plan in long-term memory with links; a
#     garbage answer writes nothing.
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
from serve_util import *
from llm_standin import LlmStandin

tmp = tempfile.mkdtemp(prefix="remem-seed001-")
db = os.path.join(tmp, "s.db")
BIN = os.environ["REMEM_BIN"]
NS = "agent:ava"

standin = LlmStandin(tmp, rules=[])
os.environ["REMEM_LLM_URL"] = standin.url
os.environ["REMEM_LLM_MODEL"] = "stand-in-model"

def cli(*args):
    p = subprocess.run([BIN, "--db", db, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr

def cli_json(*args):
    rc, out, err = cli(*args, "--json")
    if rc:
        print("   cli %s: %s" % (args[:2], err.strip()))
    return json.loads(out) if rc == 0 else None

def get(srv, i):
    st, g = srv.json("POST", "/v1/memory/get", {"ns": NS, "id": i})
    return st, (g.get("memory", {}) if st == 200 else g)

def count(tier):
    rc, out, _ = cli("stats", "--ns", NS, "--json")
    return json.loads(out)["by_tier"].get(tier, 0) if rc == 0 else -1

# ---- static memory ----
person = {"identity": {"name": "Ava", "age": 34, "profession": "blacksmith"},
          "long_term_goals": ["forge the finest sword in the village", "train an apprentice"],
          "societal_rules": ["never steal", "greet the elders"],
          "environment": {"home": "the forge by the river"},
          "trust_scores": {"Bob": 0.8, "Eve": 0.2}}
pfile = os.path.join(tmp, "ava.json")
json.dump(person, open(pfile, "w"))
a = cli_json("static", "load", "--ns", NS, "--file", pfile)
check(a and a["memories"] == 10 and a["added"] == 10, "static load: 10 static memories")
a = cli_json("static", "load", "--ns", NS, "--file", pfile)
check(a and a["unchanged"] == 10 and count("static") == 10, "static load again: nothing doubled")

# ---- 30 events, hand-made vectors: cosine c to the query axis ----
DIM = 384
def vec(c):
    v = [0.0] * DIM
    v[5] = c
    v[17] = math.sqrt(max(0.0, 1 - c * c))
    return v

now = int(time.time() * 1000)
HOUR = 3600000
events = []
for i in range(30):
    c = [0.9, 0.5, -0.2, 0.7, 0.1][i % 5]
    imp = [0.2, 0.5, 0.8, 0.3, 0.9, 0.1][i % 6]
    if i in (10, 11):
        c, imp = -1.0, 0.0      # old, unrelated and mundane: below 0.35
    if i == 12:
        c, imp = 0.0, 0.1       # just above it (1/3 + a little recency + 0.025)
    events.append({"id": "ev%02d" % i, "ns": NS, "text": "event %d at the forge" % i,
                   "importance": imp, "created_at": now - (30 - i) * 50 * HOUR,
                   "vector": vec(c), "c": c})
jl = os.path.join(tmp, "events.jsonl")
with open(jl, "w") as f:
    for e in events:
        f.write(json.dumps({k: v for k, v in e.items() if k != "c"}) + "\n")
rc, out, err = cli("import", jl)
check(rc == 0 and count("short") == 30, "30 events in short-term memory")

srv = Server(db=db, args=["--tools", "all"])
try:
    # ---- migration: stm_size 20 ----
    st, m = srv.json("POST", "/v1/migrate", {"ns": NS, "stm_size": 20})
    oldest = sorted(events, key=lambda e: e["created_at"])[:10]
    want_long = [e["id"] for e in oldest if e["importance"] > 0.35]
    want_arch = [e["id"] for e in oldest if e["importance"] <= 0.35]
    check(st == 200 and m["to_long"] == want_long and m["to_archived"] == want_arch,
          "migrate moves the 10 oldest: %d to long, %d to archived" % (len(want_long), len(want_arch)))
    check(count("short") == 20 and count("long") == len(want_long)
          and count("archived") == len(want_arch), "tier counts after migration")
    tier = {e["id"]: "short" for e in events}
    for i in want_long: tier[i] = "long"
    for i in want_arch: tier[i] = "archived"

    # ---- recall: metaverse profile, by hand ----
    qnow = int(time.time() * 1000)
    st, r = srv.json("POST", "/v1/recall", {"namespaces": [NS], "vector": vec(1.0),
                     "profile": "metaverse", "k": 100, "now": qnow, "touch": False})
    hits = r["hits"] if st == 200 else []
    order = [h["tier"] for h in hits]
    rank = {"static": 0, "short": 1, "long": 2}
    check(order == sorted(order, key=lambda t: rank[t]) and order[0] == "static",
          "recall: static first, then short, then long")
    def by_hand(c, created, imp):
        d = max(0.0, 2 - 2 * c)  # squared L2, as Chroma's "l2" space
        hours = (qnow - created) // HOUR  # seed 001: the first hour is at full recency
        return 1 / (1 + d) + 0.25 * 0.995 ** hours + 0.25 * imp
    ok, n_ev = True, 0
    for h in hits:
        if h["id"].startswith("ev"):
            e = events[int(h["id"][2:])]
            want = by_hand(e["c"], e["created_at"], e["importance"])
            n_ev += 1
        else:
            # a static memory: its raw cosine is reported; it never decays
            s = h["components"]
            want = 1 / (1 + max(0.0, 2 - 2 * s["similarity"])) + 0.25 * 1.0 + 0.25 * 1.0
        if abs(h["score"] - want) > 1e-4:
            ok = False
            print("   %s: score %.6f, by hand %.6f" % (h["id"], h["score"], want))
    check(all(h["components"]["recency"] == 1 for h in hits if h["tier"] == "static"),
          "static memories never decay (recency 1)")
    check(ok, "every score is 1/(1+squared L2) + 0.25 * 0.995^whole hours + 0.25 * importance")
    below = [e["id"] for e in events if tier[e["id"]] != "archived"
             and by_hand(e["c"], e["created_at"], e["importance"]) < 0.35]
    got = {h["id"] for h in hits}
    check(below and not (set(below) & got) and "ev12" in got
          and n_ev == sum(1 for e in events if tier[e["id"]] != "archived") - len(below),
          "the 0.35 threshold leaves out %s and keeps ev12" % below)
    check(not any(tier.get(h["id"]) == "archived" for h in hits), "archived memories are out of recall")

    # ---- reflection with the stand-in ----
    standin.set_rules([
        {"match": "salient high-level questions", "reply": '{"questions": ["What does Ava do at the forge?"]}'},
        {"match": "high-level insights", "reply": "Here you go:\n```json\n{\"insights\": [{\"insight\": \"Ava spends her days at the forge\", \"evidence\": [1, \"2\", 99]}]}\n```"},
    ])
    a = cli_json("reflect", "--ns", NS)
    reqs = standin.requests()
    ask = [q for q in reqs if "high-level insights" in q["body"]["messages"][-1]["content"]]
    check(a and a.get("method") == "llm" and len(a["reflections"]) == 1, "reflect stores one insight")
    if a and ask:
        prompt = ask[-1]["body"]["messages"][-1]["content"]
        lines = [l for l in prompt.split("\n") if l[:1].isdigit() and ". " in l]
        shown = [l.split(". ", 1)[1] for l in lines]
        rc, out, _ = cli("export", "--ns", NS)
        text_to_id = {m["text"]: m["id"] for m in map(json.loads, out.splitlines())}
        r0 = a["reflections"][0]
        want_links = [text_to_id.get(shown[0]), text_to_id.get(shown[1])]
        st, g = get(srv, r0["id"])
        check(st == 200 and g["kind"] == "reflection" and abs(g["importance"] - 0.95) < 1e-12,
              "the reflection: kind reflection, importance 0.95")
        real = all(get(srv, i)[0] == 200 for i in g["links"])
        check(len(g["links"]) == 2 and real and g["links"] == want_links,
              "its links are the real ids of statements 1 and 2; the invented 99 is dropped")
        check(a.get("ignored_evidence") == 1 and a["llm"]["model"] == "stand-in-model"
              and a["llm"]["prompt_tokens"] > 0, "the answer names the model, tokens, ignored numbers")

    # ---- the LLM down, slow or talking nonsense: a named cause, nothing written ----
    def snapshot_counts():
        rc, out, _ = cli("stats", "--ns", NS, "--json")
        return json.loads(out)["by_tier"] if rc == 0 else None
    before = snapshot_counts()
    for rules, what in (([{"match": "", "status": 500, "reply": "model overloaded"}], "a 500"),
                        ([{"match": "", "truncate": True, "reply": '{"questions": ["q"]}'}], "a truncated answer"),
                        ([{"match": "", "reply": "I would rather not answer in JSON."}], "prose without JSON")):
        standin.set_rules(rules)
        st, e = srv.json("POST", "/v1/reflect", {"ns": NS})
        st2, e2 = srv.json("POST", "/v1/summarize", {"ns": NS, "count": 2})
        check(st == 502 and st2 == 502 and e["error"]["message"].startswith("reflect")
              and e2["error"]["message"].startswith("summarize") and snapshot_counts() == before,
              "reflect and summarize with %s: 502 naming the cause, nothing written" % what)
    rc, out, err = cli("reflect", "--ns", NS, "--method", "extractive", "--json")
    check(rc == 0 and json.loads(out).get("fallback") == "extractive",
          "--method extractive uses the named fallback even with an LLM")

    # ---- summarise-and-forget ----
    long_before = count("long")
    standin.set_rules([{"match": "Summarise", "reply": '{"summary": "Ava had a run of days at the forge."}'}])
    st, s = srv.json("POST", "/v1/summarize", {"ns": NS, "count": 3})
    check(st == 200 and len(s["sources"]) == 3 and count("long") == long_before - 3 + 1,
          "summarize: three long-term memories become one summary")
    st, g = get(srv, s.get("id", "-"))
    check(st == 200 and g["kind"] == "summary" and g["links"] == s["sources"]
          and g["text"] == "Ava had a run of days at the forge.", "the summary links its sources")
    st, u = srv.json("POST", "/v1/unarchive", {"ns": NS, "ids": s["sources"]})
    check(st == 200 and count("long") == long_before + 1, "the sources are restored to long-term")

    # ---- planning ----
    standin.set_rules([{"match": "short plan", "reply": '{"plan": ["heat the iron", "forge the blade", "sell it at the market"]}'}])
    st, p = srv.json("POST", "/v1/plan", {"ns": NS, "goal": "sell a sword at the market", "k": 5})
    check(st == 200 and p["plan"].startswith("Plan for: sell a sword at the market\n1. heat the iron"),
          "plan: the model's steps")
    st, g = get(srv, p.get("id", "-"))
    check(st == 200 and g["kind"] == "plan" and g["tier"] == "long" and len(g["links"]) == 5,
          "the plan is stored in long-term memory with links to its 5 memories of context")
    n_long = count("long")
    standin.set_rules([{"match": "", "raw": "<html>not an API</html>"}])
    st, e = srv.json("POST", "/v1/plan", {"ns": NS, "goal": "anything"})
    check(st == 502 and count("long") == n_long, "a garbage answer: 502, nothing written (%s)" % e)
    # ---- the same operations over MCP ----
    st, _, body = srv.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                              "params": {"name": "migrate", "arguments": {"ns": NS, "stm_size": 20, "dry_run": True}}})
    sc = json.loads(body).get("result", {}).get("structuredContent", {}) if st == 200 else {}
    check(sc.get("dry_run") is True and sc.get("short_before") == count("short"),
          "MCP tool migrate answers as HTTP does")
finally:
    srv.stop()
    standin.stop()

# ---- and from Python ----
sys.path.insert(0, root + "/bindings/python")
import remem
pdb = remem.open(db)
try:
    r = pdb.call("static.load", ns=NS, file=person)
    check(r["unchanged"] == 10, "Python db.call('static.load'): the same file, nothing doubled")
    try:
        pdb.call("summarize", ns=NS, count=1)
        check(False, "Python: a bad argument is refused")
    except remem.RememError as e:
        check("count" in str(e), "Python: a bad argument is refused naming it (%s)" % e)
finally:
    pdb.close()

# Without an LLM, planning refuses with the exact message.
del os.environ["REMEM_LLM_URL"]
rc, out, err = cli("plan", "--ns", NS, "--goal", "x")
check(rc != 0 and "planning needs an LLM: set REMEM_LLM_URL" in err, "no LLM: plan refused")
finish()
PY
