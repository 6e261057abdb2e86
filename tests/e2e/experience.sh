#!/usr/bin/env bash
# experience.sh: seed 000 end to end (issue 10, acceptance check 1) on the
# CLI, HTTP, MCP and Python:
#   - decisions are stored with the seed's exact text (reward to 2 places,
#     the first 100 characters of the reasoning, not bytes);
#   - `decision similar` builds the situation query (title + the three
#     lowest metrics), takes 2n candidates, drops reward < 0.05 and keeps
#     the best n: the expected order is computed here from the embedder's
#     own vectors (Python's db.embed), and the same answer comes from every
#     face;
#   - feedback (stored at fb_{episode}, replaced by a second one, kept in
#     history) shows up in `fewshot` byte for byte;
#   - stats give total_memories, average_reward and by_action_type;
#   - hydrate twice adds once (CLI with FILE..., HTTP with the contents).
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
export REMEM_EMBEDDER=hash
exec python3 - "$root" <<'PY'
import json, math, os, subprocess, sys, tempfile
root = sys.argv[1]
sys.path.insert(0, root + "/tests/e2e")
sys.path.insert(0, root + "/bindings/python")
from serve_util import *
import remem

tmp, db = scratch_store("remem-exp-")
BIN = os.environ["REMEM_BIN"]
cli = cli_for(db)
def cli_json(*args):
    rc, out, err = cli(*args, "--json")
    check(rc == 0, "remem %s: %s" % (" ".join(args[:2]), err.strip()))
    return json.loads(out) if rc == 0 else {}

# ---- decisions with the seed's exact text ----
reasoning = "Réponse rapide: " + "é" * 120  # 136 characters, more bytes
decisions = [
    ("Friday 6PM", "communicate", "relationships", 0.72,
     {"relationships.romantic": 55, "mental_wellbeing.stress_level": 80},
     "A quick call prevents relationship erosion during high-stress periods.", "ep_1"),
    ("Friday 6PM workload", "negotiate", "career", 0.01, {}, "Asked for more time.", "ep_2"),
    ("Friday 6PM stress", "rest", "mental_wellbeing", 0.04, {}, "Slept early.", "ep_3"),
    ("Monday budget review", "plan", "finances", 0.905, {}, "Made a spreadsheet.", "ep_4"),
    ("The Perfect Storm", "delegate", "career", 0.38, {}, reasoning, "ep_5"),
    ("career.workload crunch", "negotiate", "career", 0.55, {}, "Moved the deadline.", "ep_6"),
    ("Weekend trip", "rest", "physical_health", 0.2, {}, "A walk in the hills.", ""),
]
def seed_text(t, a, d, r, why):
    return f"{t} Action: {a} Domain: {d} Reward: {r:.2f} {why[:100]}"
ids = []
for (t, act, d, r, m, why, ep) in decisions:
    args = ["decision", "add", "--ns", "x", "--title", t, "--action", act, "--domain", d,
            "--reward", str(r), "--reasoning", why] + (["--metrics", json.dumps(m)] if m else []) \
           + (["--episode", ep] if ep else [])
    a = cli_json(*args)
    check(a.get("stored_text") == seed_text(t, act, d, r, why), "decision add: %r" % a.get("stored_text"))
    g = cli_json("memory", "get", "--ns", "x", a.get("id", "?")).get("memory", {})
    check(g.get("text") == seed_text(t, act, d, r, why) and g.get("kind") == "decision"
          and g["metadata"]["reasoning"] == why and g["metadata"].get("episode_id", "") == ep
          and g["metadata"]["metrics"] == m and g["metadata"]["action"] == act,
          "decision %s stored with the exact text, kind decision, the full record" % t)
    ids.append(a.get("id"))
rc, out, err = cli("decision", "add", "--ns", "p", "--title", "Friday 6PM", "--action", "rest",
                   "--domain", "health", "--reward", "0.675", "--reasoning", reasoning)
check(rc == 0 and out == seed_text("Friday 6PM", "rest", "health", 0.675, reasoning) + "\n",
      "decision add prints the stored text: %r" % out)

# ---- similar: the expected order by hand ----
metrics = {"career.workload": 90, "mental_wellbeing.stress_level": 85,
           "finances.savings": 95, "relationships.romantic": 99}
query = "Friday 6PM mental_wellbeing.stress_level:85 career.workload:90 finances.savings:95"
with remem.open(db, embedder="hash") as h:
    vecs = h.embed([query] + [seed_text(t, a, d, r, why) for (t, a, d, r, m, why, ep) in decisions])
def cos(u, v):
    nu = math.sqrt(sum(x * x for x in u)); nv = math.sqrt(sum(x * x for x in v))
    return sum(x * y for x, y in zip(u, v)) / (nu * nv) if nu and nv else 0.0
ranked = sorted(range(len(decisions)), key=lambda i: -cos(vecs[0], vecs[i + 1]))
def expected(n):
    return [ids[i] for i in ranked[:2 * n] if decisions[i][3] >= 0.05][:n]
check(decisions[ranked[0]][3] < 0.05 and decisions[ranked[1]][3] < 0.05,
      "the two nearest decisions are the low-reward ones (the 2n cap is visible at n=1)")
for n in (1, 2, 3, 4):
    a = cli_json("decision", "similar", "--ns", "x", "--title", "Friday 6PM",
                 "--metrics", json.dumps(metrics), "--n", str(n))
    got = [d["id"] for d in a.get("results", [])]
    check(a.get("query") == query, "the situation query: %r" % a.get("query"))
    check(got == expected(n), "n=%d: %s, expected %s" % (n, got, expected(n)))
    check(all(set(d) >= {"action", "domain", "reward", "reasoning", "similarity_score"}
              for d in a.get("results", [])), "each result carries the seed's fields")

# ---- feedback and the few-shot block ----
rc, out, err = cli("feedback", "add", "--ns", "x", "--episode", "ep_1", "--rating", "5",
                   "--improved", "relationships,mental_wellbeing", "--worsened", "career",
                   "--notes", "First notes.", "--hours", "2.5")
check(rc == 0, "feedback add: %s" % err.strip())
fb = cli_json("feedback", "add", "--ns", "x", "--episode", "ep_1", "--rating", "8",
              "--notes", "Partner appreciated the transparency.")
check(fb.get("id") == "fb_ep_1" and fb.get("outcome") == "replaced",
      "a second feedback replaces the first: %s" % fb)
rc, out, err = cli("history", "--ns", "x", "fb_ep_1", "--json")
check(rc == 0 and "First notes." in out and len(json.loads(out)["history"]) == 2,
      "history keeps the first feedback")
rc, out, err = cli("fewshot", "--ns", "x", "--title", "Friday 6PM", "--metrics",
                   json.dumps(metrics), "--n", "3")
exp_ids = expected(3)
lines = ["--- PAST EXPERIENCE & HUMAN VERIFICATION ---"]
for i in exp_ids:
    t, a, d, r, m, why, ep = decisions[ids.index(i)]
    lines.append(f"- Action Taken: [{a.upper()}] on {d.upper()}")
    lines.append(f"Agent's Initial Reasoning: {why}")
    if ep == "ep_1":
        lines.append("HUMAN FEEDBACK: Rated 8/10. Notes: Partner appreciated the transparency.")
want_block = "\n".join(lines)
check(rc == 0 and out == want_block + "\n", "fewshot prints the seed's block byte for byte:\n%s" % out)
check(any(decisions[ids.index(i)][6] == "ep_1" for i in exp_ids) and "HUMAN FEEDBACK" in out,
      "the block carries the feedback")

# ---- stats ----
st = cli_json("stats", "--ns", "x")
avg = round(sum(d[3] for d in decisions) / len(decisions), 3)
by = {}
for d in decisions:
    by[d[1]] = by.get(d[1], 0) + 1
check(st.get("total_memories") == len(decisions) and abs(st.get("average_reward", -1) - avg) < 1e-9
      and st.get("by_action_type") == by, "stats: %s" % {k: st.get(k) for k in
      ("total_memories", "average_reward", "by_action_type")})
rc, out, err = cli("stats", "--ns", "x")
check("decisions: %d, average reward %.3f" % (len(decisions), avg) in out, "stats text")

# ---- hydrate twice adds once (CLI) ----
pre1 = os.path.join(tmp, "preseeded_memory.json")
pre2 = os.path.join(tmp, "preseeded_memory_p1.json")
json.dump({"decisions": {"ids": ["seed_1", "seed_2"],
           "documents": ["Friday 6PM Action: negotiate Domain: career Reward: 0.72 Talked.", None],
           "metadatas": [{"conflict_title": "Friday 6PM", "action_type": "negotiate",
                          "target_domain": "career", "reward": 0.72, "reasoning": "Talked.",
                          "episode_id": ""},
                         {"conflict_title": "Storm", "action_type": "communicate",
                          "target_domain": "relationships", "reward": 0.5, "reasoning": "Called.",
                          "episode_id": "ep_9"}],
           "embeddings": [[0.0], [0.0]]}}, open(pre1, "w"))
json.dump([{"title": "Weekend", "action": "rest", "domain": "health", "reward": 0.4}], open(pre2, "w"))
a = cli_json("hydrate", "--ns", "h", pre1, pre2)
check(a.get("hydrated") == 3 and a.get("skipped") is False, "hydrate adds 3: %s" % a)
a = cli_json("hydrate", "--ns", "h", pre1, pre2)
check(a.get("hydrated") == 0 and a.get("skipped") is True, "hydrate again adds nothing: %s" % a)
check(cli_json("stats", "--ns", "h").get("total_memories") == 3, "3 decisions after two hydrations")

# ---- the same on HTTP, MCP and Python ----
srv = Server(db=db, args=["--tools", "all"])
try:
    body = {"ns": "x", "title": "Friday 6PM", "metrics": metrics, "n": 3}
    st_, a = srv.json("POST", "/v1/decision/similar", body)
    check(st_ == 200 and [d["id"] for d in a["results"]] == expected(3), "HTTP decision/similar")
    st_, a = srv.json("POST", "/v1/fewshot", body)
    check(st_ == 200 and a["text"] == want_block, "HTTP fewshot, byte for byte")
    st_, _, raw = srv.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                              "params": {"name": "fewshot", "arguments": body}})
    res = json.loads(raw)["result"]
    check(res.get("structuredContent", {}).get("text") == want_block, "MCP fewshot")
    st_, a = srv.json("POST", "/v1/decision/add", {"ns": "y", "title": "T", "action": "rest",
                      "domain": "d", "reward": 0.125, "reasoning": "x" * 150, "episode": "e1"})
    check(st_ == 200 and a["stored_text"] == "T Action: rest Domain: d Reward: 0.12 " + "x" * 100,
          "HTTP decision/add stores the exact text: %s" % a)
    st_, a = srv.json("POST", "/v1/feedback/add", {"ns": "y", "episode": "e1", "rating": 11})
    check(st_ == 400 and "rating" in a["error"]["message"], "a rating of 11 is refused")
    files = [json.load(open(pre1)), json.load(open(pre2))]
    st_, a = srv.json("POST", "/v1/hydrate", {"ns": "h2", "files": files})
    check(st_ == 200 and a["hydrated"] == 3, "HTTP hydrate: %s" % a)
    st_, a = srv.json("POST", "/v1/hydrate", {"ns": "h2", "files": files})
    check(st_ == 200 and a["hydrated"] == 0 and a["skipped"], "HTTP hydrate again adds nothing")
    st_, a = srv.json("GET", "/v1/namespaces/h2/stats")
    check(st_ == 200 and a.get("total_memories") == 3 and a.get("by_action_type") ==
          {"negotiate": 1, "communicate": 1, "rest": 1}, "HTTP stats: %s" % a)
    check(srv.stop() == 0, "clean stop")
finally:
    srv.kill()
with remem.open(db, embedder="hash") as h:
    a = h.call("fewshot", ns="x", title="Friday 6PM", metrics=metrics, n=3)
    check(a["text"] == want_block, "Python fewshot")
    t = h.call("trajectory.add", ns="x", task="flight_crisis_task_main", route="rebook_premium",
               reward=2.5, summary={"milestones_hit": ["m1"], "steps": 8})
    check(t["stored_text"] == "Task: flight_crisis_task_main Route: rebook_premium Reward: 2.50 Hits: 1",
          "Python trajectory.add")
rc, out, err = cli("trajectory", "similar", "--ns", "x", "--domain", "flight_crisis", "--world",
                   '{"lounge_access": true, "flight_rebooked": false}', "--json")
a = json.loads(out) if rc == 0 else {}
check(a.get("query") == "TaskDomain: flight_crisis flight_rebooked:False lounge_access:True"
      and a["results"][0]["route"] == "rebook_premium", "trajectory similar: %s" % a)
rc, out, err = cli("feedback", "similar", "--ns", "x", "--text", "partner transparency", "--json")
a = json.loads(out) if rc == 0 else {}
check(rc == 0 and a["results"][0]["id"] == "fb_ep_1", "feedback similar")

# ---- first-use hydration from the configuration (remem.yaml beside the store) ----
cdir = os.path.join(tmp, "cfg")
os.makedirs(os.path.join(cdir, "seeds"))
json.dump(json.load(open(pre1)), open(os.path.join(cdir, "seeds", "preseeded_memory.json"), "w"))
json.dump(json.load(open(pre2)), open(os.path.join(cdir, "seeds", "preseeded_memory_p1.json"), "w"))
open(os.path.join(cdir, "remem.yaml"), "w").write(
    'policies:\n  "advisor:*":\n    hydrate: [seeds/preseeded_memory.json, seeds/preseeded_memory_p1.json]\n')
cdb = os.path.join(cdir, "store.db")
srv = Server(db=cdb, args=["--tools", "all"])
try:
    st_, a = srv.json("POST", "/v1/fewshot", {"ns": "advisor:ada", "title": "Friday 6PM"})
    check(st_ == 200 and "[NEGOTIATE] on CAREER" in a.get("text", ""),
          "the server hydrates advisor:ada on first use: %s" % a)
    st_, a = srv.json("POST", "/v1/decision/add", {"ns": "advisor:bo", "title": "T", "action": "rest",
                      "domain": "d", "reward": 0.3})
    check(st_ == 200, "a first decision.add in advisor:bo")
    for ns, want in (("advisor:ada", 3), ("advisor:bo", 4)):
        st_, a = srv.json("GET", "/v1/namespaces/%s/stats" % ns)
        check(st_ == 200 and a.get("total_memories") == want,
              "%s holds %d decisions (hydrated once): %s" % (ns, want, a.get("total_memories")))
    st_, a = srv.json("POST", "/v1/fewshot", {"ns": "other", "title": "Friday 6PM"})
    check(st_ == 200 and a.get("text") == "", "a namespace without the policy is not hydrated")
    check(srv.stop() == 0, "clean stop")
    srv = Server(db=cdb, args=["--tools", "all"])  # a restart: the namespaces already hold decisions
    st_, a = srv.json("POST", "/v1/fewshot", {"ns": "advisor:ada", "title": "Friday 6PM"})
    st_, a = srv.json("GET", "/v1/namespaces/advisor:ada/stats")
    check(a.get("total_memories") == 3, "a restart hydrates nothing again")
    check(srv.stop() == 0, "clean stop")
finally:
    srv.kill()
os.remove(os.path.join(cdir, "seeds", "preseeded_memory_p1.json"))
p = subprocess.run([BIN, "--db", cdb, "fewshot", "--ns", "advisor:cy", "--title", "x"],
                   capture_output=True, text=True)
check(p.returncode != 0 and "preseeded_memory_p1.json" in p.stderr,
      "a missing hydrate file is an error naming it: %s" % p.stderr.strip())
finish()
PY
