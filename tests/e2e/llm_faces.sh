#!/usr/bin/env bash
# llm_faces.sh: the LLM operations end to end, against the LLM stand-in
# (tests/support/llm_standin.py) on a free loopback port:
#   - issue 9 check 1's /v1/rate part: seed 001's prompt arrives verbatim
#     (built here with the seed's own Python expression) and a rating of 7
#     is stored as 0.7, with the explanation in metadata; the same op from
#     the CLI, MCP and Python;
#   - check 3: the LLM down, slow (timeout), answering 500 or garbage:
#     `remem rate` and POST /v1/rate fail naming the cause (HTTP 502) and
#     the store's export is unchanged; with no LLM the fallback is named;
#   - check 4: consolidate over HTTP: an exact duplicate makes no LLM
#     request, INVALIDATE sets superseded_by with both memories kept (get
#     and history), NOOP writes nothing;
#   - auto-rate in `remem serve`: the add answers before the (slow) model
#     does, and the importance is filled in when the rating arrives;
#   - /metrics counts calls and tokens per operation; `remem llm check`.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
export REMEM_EMBEDDER=hash
command -v python3 >/dev/null || { echo "SKIP: llm_faces: no python3"; exit 77; }
exec python3 - "$root" <<'PY'
import json, os, subprocess, sys, tempfile, time
root = sys.argv[1]
sys.path.insert(0, root + "/tests/e2e")
sys.path.insert(0, root + "/tests/support")
sys.path.insert(0, root + "/bindings/python")
from serve_util import *
from llm_standin import LlmStandin

BIN = os.environ["REMEM_BIN"]
tmp = tempfile.mkdtemp(prefix="remem-llm-")
db = os.path.join(tmp, "s.db")
conf = os.path.join(tmp, "remem.yaml")
with open(conf, "w") as f:
    f.write('llm:\n  timeout_ms: 800\n  retries: 0\npolicies:\n  "auto:*":\n    auto_rate: true\n')
# the server's: a longer time limit, so that the auto-rater's slow model
# (1.5 s) answers in time even on a loaded machine
conf_srv = os.path.join(tmp, "serve.yaml")
with open(conf_srv, "w") as f:
    f.write('llm:\n  timeout_ms: 3000\n  retries: 0\npolicies:\n  "auto:*":\n    auto_rate: true\n')


def seed_prompt(memory):
    # seed 001, character for character (its Python concatenation)
    return ("On the scale of 1 to 10, where 1 is purely mundane "
            "(e.g., brushing teeth, making bed) and 10 is extremely poignant "
            "(e.g., a break-up, college acceptance, life), rate the likely poignancy of the "
            f"following piece of memory.\nMemory: {memory}\n"
            "Provide just your rating a single number rating:<fill_in> and a explanation in JSON format like this: "
            '{"explanation": ...,"rating":.. }'
            "provide only 1 json")


def cli(*args, env=None):
    p = subprocess.run([BIN, "--db", db, "--config", conf, *args], capture_output=True,
                       text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def export():
    rc, out, err = cli("export")
    assert rc == 0, err
    return out


def last_prompt(s):
    reqs = s.requests()
    return reqs[-1]["body"]["messages"][-1]["content"] if reqs else None


s = LlmStandin(tmp, rules=[
    {"match": "Memory: I was accepted to college",
     "reply": "Sure!\n```json\n{\"explanation\": \"a life-changing event\", \"rating\": 7}\n```"},
    {"match": "Memory: The ship sank", "reply": "{\"rating\": \"9\", \"explanation\": \"a disaster\"}",
     "delay_ms": 600},
    {"match": "Memory: I ate toast", "reply": "Rating: 2/10"},
])
env = dict(os.environ, REMEM_LLM_URL=s.url, REMEM_LLM_MODEL="standin-7b")
down_env = dict(os.environ, REMEM_LLM_URL="http://127.0.0.1:9/v1")
noenv = {k: v for k, v in os.environ.items() if k != "REMEM_LLM_URL"}
srv = None
try:
    rc, out, err = cli("llm", "check", env=env)
    check(rc == 0 and "answered in" in out, "remem llm check: " + (out or err).strip())
    rc, out, err = cli("llm", "check", env=down_env)
    check(rc != 0 and "refused" in err, "remem llm check, LLM down: " + err.strip())
    rc, out, err = cli("llm", "check", env=noenv)
    check(rc != 0 and "REMEM_LLM_URL" in err, "remem llm check, no LLM: " + err.strip())

    rc, mid, _ = cli("add", "--ns", "a:x", "--text", "I was accepted to college")
    mid = mid.strip()
    rc2, mtoast, _ = cli("add", "--ns", "a:x", "--text", "I ate toast", "--kind", "decision")
    mtoast = mtoast.strip()
    check(rc == 0 and rc2 == 0, "two memories to rate")

    # ---- check 3 from the CLI: down, slow, 500, garbage ----
    before = export()
    for rules, cause, e in [
            (None, "refused", down_env),
            ([{"delay_ms": 2500, "reply": "7"}], "timed out", env),
            ([{"status": 500, "reply": "model overloaded"}], "model overloaded", env),
            ([{"raw": "<html>It works!</html>"}], "not JSON", env),
            ([{"reply": "I cannot rate memories."}], "no number", env)]:
        saved = None
        if rules is not None:
            saved = json.load(open(s.rules_path))
            s.set_rules(rules)
        rc, out, err = cli("rate", "--ns", "a:x", mid, env=e)
        check(rc != 0 and cause in err and err.startswith("remem: rate: "),
              "remem rate fails naming the cause (%s): %s" % (cause, err.strip()[:120]))
        check(export() == before, "... and the store is unchanged")
        if saved is not None:
            s.set_rules(saved)
    rc, out, err = cli("rate", "--ns", "a:x", mtoast, "--json", env=noenv)
    a = json.loads(out) if rc == 0 else {}
    check(a.get("fallback") == "kind_default" and abs(a.get("importance", 0) - 0.9) < 1e-9,
          "no LLM: rate names its fallback (kind_default, 0.9 for a decision)")

    # ---- the server: /v1/rate, MCP, /v1/llm/check, /metrics ----
    srv = Server(db=db, args=["--config", conf_srv, "--tools", "all"], env={"REMEM_LLM_URL": s.url,
                                                       "REMEM_LLM_MODEL": "standin-7b"})
    st, r = srv.json("POST", "/v1/rate", {"ns": "a:x", "id": mid})
    check(st == 200 and r.get("rating") == 7 and r.get("importance") == 0.7,
          "POST /v1/rate: rating 7, importance 0.7 (%s %s)" % (st, r))
    check(last_prompt(s) == seed_prompt("I was accepted to college"),
          "the stand-in received seed 001's prompt verbatim")
    check(s.requests()[-1]["body"].get("model") == "standin-7b", "... for the configured model")
    check(r.get("llm", {}).get("model") == "standin-7b" and r["llm"].get("prompt_tokens", 0) > 0,
          "the answer names the model and the tokens")
    st, m = srv.json("GET", "/v1/namespaces/a:x/memories/" + mid)
    check(st == 200 and m.get("importance") == 0.7 and
          m.get("metadata", {}).get("rating", {}).get("explanation") == "a life-changing event",
          "stored: importance 0.7, the explanation in metadata.rating")

    st, _, body = srv.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                              "params": {"name": "rate",
                                         "arguments": {"text": "I ate toast"}}})
    res = json.loads(body).get("result", {})
    sc = res.get("structuredContent") or {}
    check(st == 200 and abs(sc.get("importance", 0) - 0.2) < 1e-9,
          "MCP tool rate: 'Rating: 2/10' read as 0.2 (%s)" % str(res)[:160])

    st, r = srv.json("POST", "/v1/llm/check", {})
    check(st == 200 and r.get("ok") is True and r.get("ms", -1) >= 0, "POST /v1/llm/check")

    before = export()
    s.set_rules([{"status": 500, "reply": "model overloaded"}])
    st, r = srv.json("POST", "/v1/rate", {"ns": "a:x", "id": mid})
    check(st == 502 and "model overloaded" in json.dumps(r), "POST /v1/rate, LLM 500: 502 naming it")
    s.set_rules([{"delay_ms": 4000, "reply": "7"}])
    st, r = srv.json("POST", "/v1/rate", {"ns": "a:x", "id": mid})
    check(st == 502 and "timed out" in json.dumps(r), "POST /v1/rate, LLM slow: 502, timed out")
    s.set_rules([{"raw": "garbage"}])
    st, r = srv.json("POST", "/v1/rate", {"ns": "a:x", "id": mid})
    check(st == 502 and "not JSON" in json.dumps(r), "POST /v1/rate, garbage: 502")
    check(export() == before, "... and the store is unchanged")

    # ---- consolidate (check 4) ----
    s.set_rules([
        {"match": "New fact: Bob works at Initech now",
         "reply": "{\"items\": [{\"i\": 1, \"action\": \"INVALIDATE\"}], \"new\": \"ADD\"}"},
        {"match": "New fact: Bob is employed at Initech",
         "reply": "{\"items\": [{\"i\": 1, \"action\": \"NOOP\"}], \"new\": \"NOOP\"}"}])
    st, r = srv.json("POST", "/v1/namespaces/c:x/memories", {"text": "Bob works at Acme"})
    old = r.get("id")
    n0 = len(s.requests())
    st, r = srv.json("POST", "/v1/consolidate", {"ns": "c:x", "text": "bob works at  ACME"})
    check(st == 200 and r.get("outcome") == "duplicate" and r.get("id") == old and
          len(s.requests()) == n0, "consolidate: an exact duplicate folds with no LLM request")
    st, r = srv.json("POST", "/v1/consolidate",
                     {"ns": "c:x", "text": "Bob works at Initech now", "threshold": 0.05})
    new = r.get("id")
    check(st == 200 and r.get("outcome") == "added" and new and
          r["actions"][0] == {"id": old, "action": "INVALIDATE", "superseded_by": new},
          "consolidate: a contradiction invalidates the old memory (%s)" % r)
    st, m = srv.json("GET", "/v1/namespaces/c:x/memories/" + old)
    check(st == 200 and m.get("superseded_by") == new and m.get("invalidated_at"),
          "the old memory is kept, superseded_by the new one")
    st, h = srv.json("GET", "/v1/namespaces/c:x/memories/%s/history" % old)
    check(st == 200 and "invalidate" in json.dumps(h), "its history has the invalidation")
    before = export()
    st, r = srv.json("POST", "/v1/consolidate",
                     {"ns": "c:x", "text": "Bob is employed at Initech", "threshold": 0.05})
    check(st == 200 and r.get("outcome") == "noop" and export() == before,
          "consolidate: NOOP writes nothing")

    # ---- auto-rate in serve: the add answers first ----
    s.set_rules([{"match": "Memory: The ship sank", "delay_ms": 1500,
                  "reply": "{\"rating\": \"9\", \"explanation\": \"a disaster\"}"}])
    t0 = time.time()
    st, r = srv.json("POST", "/v1/namespaces/auto:1/memories", {"text": "The ship sank"})
    took = time.time() - t0
    aid = r.get("id")
    check(st in (200, 201) and took < 1.5, "auto-rate: the add answers in %.2f s, before the model" % took)
    st, m = srv.json("GET", "/v1/namespaces/auto:1/memories/" + aid)
    check(m.get("importance") == 0.5, "... with the kind's default at first")
    imp = None
    for _ in range(200):
        st, m = srv.json("GET", "/v1/namespaces/auto:1/memories/" + aid)
        imp = m.get("importance")
        if imp == 0.9:
            break
        time.sleep(0.1)
    check(imp == 0.9, "... and 0.9 once the rating arrives (%s)" % imp)

    st, _, body = srv.request("GET", "/metrics")
    text = body.decode()
    check('remem_llm_calls_total{op="rate"}' in text and
          'remem_llm_prompt_tokens_total{op="rate"}' in text and
          'remem_llm_completion_tokens_total{op="consolidate"}' in text,
          "/metrics counts LLM calls and tokens per operation")
    srv.stop()
    srv = None

    # ---- Python ----
    s.set_rules([{"match": "Memory: I ate toast", "reply": "{\"rating\": 3}"}])
    import remem
    with remem.open(db, embedder="hash", llm_url=s.url, llm_model="py-model") as h:
        a = h.call("rate", ns="a:x", id=mtoast)
    check(a.get("importance") == 0.3 and a.get("rating") == 3 and
          a.get("llm", {}).get("model") == "py-model",
          "Python: remem.open(llm_url=..., llm_model=...) and db.call('rate')")
finally:
    if srv:
        srv.kill()
    s.stop()
finish()
PY
