#!/usr/bin/env bash
# lessons_faces.sh: seed 002's acceptance checks over the real faces.
#   CLI: the same failure with other numbers and paths gets one
#   fingerprint; a lesson helpful in 3 runs is promoted (its history row
#   says why); one retrieved 3 times without benefit is suppressed and
#   never comes back; auto gives a strong domain no transfer hint and an
#   on-error retrieval at most one; the validation gate reports exactly
#   the four kinds; the timeline's three views; `remem eval lessons`:
#   the pass rate rises from wave 1 to wave 3, the planted harmful lessons
#   end suppressed, contamination 0 in strict-only mode.
#   HTTP: the same operations at POST /v1/lesson/..., the retry cap over
#   HTTP and its counters in /metrics. MCP and Python: the same answers.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
export REMEM_EMBEDDER=hash
exec python3 - "$root" <<'PY'
import json, os, subprocess, sys, tempfile
root = sys.argv[1]
sys.path.insert(0, root + "/tests/e2e")
sys.path.insert(0, root + "/bindings/python")
from serve_util import *
import remem

tmp, db = scratch_store("remem-lessons-")
BIN = os.environ["REMEM_BIN"]
cli = cli_for(db)
def cj(*args):
    rc, out, err = cli(*args, "--json")
    if rc != 0:
        print("  cli %s: %s" % (" ".join(args), err.strip()))
        return None
    return json.loads(out)

# ---- fingerprints ----
e1 = cj("lesson", "event", "--ns", "t", "--domain", "sqlite", "--tool", "run_sqlite", "--channel",
        "hard_failure", "--error", "Error: near line 4: no such table: orders_2023 (/tmp/a/x.db)",
        "--run", "r0", "--step", "1")
e2 = cj("lesson", "event", "--ns", "t", "--domain", "sqlite", "--tool", "run_sqlite", "--channel",
        "hard_failure", "--error", "Error: near line 97: no such table: orders_2024 (/srv/b/y.db)",
        "--run", "r0", "--step", "2")
check(e1 and e2 and e1["fingerprint"] == e2["fingerprint"],
      "the same failure with other numbers and paths: one fingerprint (%s)" % (e1 or {}).get("fingerprint"))
check(e2 and e2["recurrence"] == 1 and e2["reflect"] is True, "a repeated fingerprint asks for reflection")
fp = e1["fingerprint"]
rc, out, _ = cli("lesson", "event", "--ns", "t", "--domain", "sqlite", "--tool", "run_sqlite",
                 "--channel", "hard_failure", "--error", "Error: x")
check(rc == 0 and out.startswith("fp_") and "tool:run_sqlite channel:hard_failure domain:sqlite" in out,
      "without --json the CLI prints the fingerprint and the system tags: " + out.strip())

# ---- promotion over the CLI ----
good = cj("lesson", "add", "--ns", "t", "--domain", "sqlite", "--rule",
          "list the tables with .tables before querying", "--fingerprint", fp, "--tag", "schema",
          "--task-cluster", "reporting", "--session", "s1")["lesson_id"]
for r in ("b1", "b2"):
    cj("lesson", "outcome", "--ns", "t", "--run", r, "--domain", "sqlite", "--result", "fail")
for i in range(3):
    h = cj("lesson", "hints", "--ns", "t", "--domain", "sqlite", "--fingerprint", fp,
           "--policy", "off", "--run", "p%d" % i, "--step", "1")
    check(good in [x["lesson_id"] for x in h["hints"]], "hints return the lesson (run p%d)" % i)
    o = cj("lesson", "outcome", "--ns", "t", "--run", "p%d" % i, "--domain", "sqlite", "--result",
           "pass", "--score", "0.9", "--steps", "3", "--lessons", good)
l = cj("memory", "get", "--ns", "t", good)["memory"]["metadata"]
check(l["status"] == "promoted" and abs(l["utility"] - 0.9) < 1e-9,
      "helpful in 3 runs: promoted (utility %s)" % l.get("utility"))
rc, out, _ = cli("history", "--ns", "t", good)
print("  " + [x for x in out.splitlines() if "promote" in x][-1:][0] if "promote" in out else "")
check(rc == 0 and "promote: utility 0.900 >= 0.20 over 3 relevant runs" in out,
      "the status change is a history row with its reason")

# ---- suppression ----
bad = cj("lesson", "add", "--ns", "t", "--domain", "fluxtool", "--rule",
         "always pass --force", "--fingerprint", "fp_flux")["lesson_id"]
cj("lesson", "outcome", "--ns", "t", "--run", "f0", "--domain", "fluxtool", "--result", "pass")
for i in range(3):
    cj("lesson", "hints", "--ns", "t", "--domain", "fluxtool", "--fingerprint", "fp_flux",
       "--run", "f%d" % (i + 1))
    cj("lesson", "outcome", "--ns", "t", "--run", "f%d" % (i + 1), "--domain", "fluxtool",
       "--result", "fail", "--lessons", bad)
l = cj("memory", "get", "--ns", "t", bad)["memory"]["metadata"]
check(l["status"] == "suppressed", "retrieved 3 times without benefit: suppressed")
for pol in ("off", "auto", "always"):
    h = cj("lesson", "hints", "--ns", "t", "--domain", "fluxtool", "--fingerprint", "fp_flux",
           "--policy", pol)
    check(bad not in [x["lesson_id"] for x in h["hints"]], "... and never returned again (%s)" % pol)

# ---- lanes ----
cj("lesson", "add", "--ns", "t", "--domain", "sqlite", "--rule", "quote keyword identifiers",
   "--fingerprint", fp)
cj("lesson", "add", "--ns", "t", "--domain", "excel", "--rule", "check the sheet exists", "--fingerprint", fp)
cj("lesson", "add", "--ns", "t", "--domain", "grid", "--rule", "reload the board", "--fingerprint", fp)
h = cj("lesson", "hints", "--ns", "t", "--domain", "sqlite", "--fingerprint", fp, "--policy", "auto")
check([x["lane"] for x in h["hints"]] == ["strict", "strict"],
      "auto: a domain with strong strict lessons gets no transfer hint")
h = cj("lesson", "hints", "--ns", "t", "--domain", "newdomain", "--fingerprint", fp, "--policy", "auto")
check([x["lane"] for x in h["hints"]] == ["transfer"],
      "auto, strict lane weak: one transfer hint per on-error retrieval, however many match")
rc, out, _ = cli("lesson", "hints", "--ns", "t", "--domain", "newdomain", "--fingerprint", fp,
                 "--policy", "always")
check(rc == 0 and "[transfer]" in out, "the text labels each hint with its lane")

# ---- the validation gate ----
schema = os.path.join(tmp, "schema.json")
json.dump({"type": "object", "required": ["command", "cwd"],
           "properties": {"command": {"type": "string"}, "cwd": {"type": "string"}},
           "additionalProperties": False}, open(schema, "w"))
v = cj("lesson", "validate", "--schema", schema, "--input", '{"command":"","shell":true}')
kinds = sorted(x["kind"] for x in v["violations"])
check(kinds == ["empty_string", "missing_required", "unknown_key"], "violations as data: %s" % kinds)
v = cj("lesson", "validate", "--schema", schema, "--input", '["ls"]')
check([x["kind"] for x in v["violations"]] == ["wrong_type"], "the wrong top-level type")
v = cj("lesson", "validate", "--schema", schema, "--input", '{"command":"rm -rf /nope ;;(","cwd":"x"}')
check(v["valid"] is True, "never semantics: a nonsense command of the right shape passes")

# ---- timeline ----
rc, out, _ = cli("timeline", "--ns", "t", "--run", "r0")
check(rc == 0 and "step 1:" in out and fp in out, "timeline (attempts) shows steps and fingerprints")
rc, out, _ = cli("timeline", "--ns", "t", "--run", "p0", "--view", "decisions")
check(rc == 0 and "inject " + good + " [strict]" in out, "timeline decisions: " + out.strip().replace("\n", " | "))
s = cj("timeline", "--ns", "t", "--view", "summary")["summary"]
check(s["runs"] == 9 and s["promoted"] >= 1 and s["suppressed"] >= 1, "summary over every run: %s" % s)

# ---- the benchmark ----
ev = cj("eval", "lessons")
modes = {m["policy"]: m for m in ev["modes"]} if ev else {}
for pol, m in modes.items():
    w = m["waves"]
    check(w[0]["pass_rate"] < w[-1]["pass_rate"], "%s: pass rate rises %.2f -> %.2f" %
          (pol, w[0]["pass_rate"], w[-1]["pass_rate"]))
    check(all(p["status"] == "suppressed" for p in m["planted"] if p["role"] == "harmful"),
          "%s: the planted harmful lessons end suppressed" % pol)
check(modes and modes["off"]["contamination"] == 0, "strict-only: contamination 0")
check(modes and all(w["transfer_hints"] == 0 for w in modes["off"]["waves"]), "strict-only: no transfer hint")
rc, out, _ = cli("eval", "lessons")
check(rc == 0 and "strict-only" in out and "auto-transfer" in out and "not a model's" in out,
      "remem eval lessons prints the table")

# ---- HTTP, MCP, Python ----
srv = Server(db=db, args=["--tools", "all"])
try:
    st, r = srv.json("POST", "/v1/lesson/event", {"ns": "t", "domain": "sqlite", "tool": "run_sqlite",
                     "channel": "hard_failure", "error": "Error: near line 12: no such table: orders_1 (/x/y/z.db)"})
    check(st == 200 and r["fingerprint"] == fp, "HTTP: the same fingerprint")
    st, r = srv.json("POST", "/v1/lesson/hints", {"ns": "t", "domain": "sqlite", "fingerprint": fp, "policy": "auto"})
    check(st == 200 and r["hints"][0]["lesson_id"] == good, "HTTP: hints")
    st, r = srv.json("POST", "/v1/lesson/hints", {"ns": "t", "domain": "sqlite", "policy": "sometimes"})
    check(st == 400 and "policy" in r["error"]["message"], "HTTP: a bad policy is refused")
    sch = json.load(open(schema))
    sigs = []
    for i in range(3):
        st, r = srv.json("POST", "/v1/lesson/validate", {"schema": sch, "input": {}, "ns": "t",
                         "run": "h1", "step": 4})
        sigs.append(r.get("signal"))
    check(sigs == ["retry", "retry", "reflect"], "HTTP: the retry cap: %s" % sigs)
    st, _, body = srv.request("GET", "/metrics")
    text = body.decode()
    check("tool_validation_retry_attempts 2" in text and "tool_validation_retry_capped_events 1" in text,
          "/metrics counts the retries and the capped step")
    st, _, body = srv.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                              "params": {"name": "lesson_hints", "arguments": {"ns": "t", "domain": "sqlite",
                                         "fingerprint": fp, "policy": "off"}}})
    res = json.loads(body)["result"]
    check(res["structuredContent"]["hints"][0]["lesson_id"] == good and "[strict]" in res["content"][0]["text"],
          "MCP: lesson_hints")
finally:
    srv.stop()
with remem.open(db, embedder="hash") as h:
    r = h.call("lesson.event", ns="t", domain="sqlite", tool="run_sqlite", channel="no_progress",
               error="Error: near line 5: no such table: orders_9 (/q/r/s.db)")
    check(r["fingerprint"] == fp, "Python: the same fingerprint")
    t = h.call("timeline", ns="t", run="h1")
    check(len(t["timeline"]["steps"]) == 1 and t["timeline"]["steps"][0]["validation"] == "invalid",
          "Python: the timeline of the HTTP run")
finish()
PY
