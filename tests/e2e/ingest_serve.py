"""ingest_serve.py: conversations in through `remem serve`, with the LLM
stand-in answering slowly (tests/support/llm_standin.py).

- POST /v1/ingest with "background": true answers 202 with the job once
  the messages are stored; GET-like status (POST /v1/ingest/status) shows
  it pending, then done.
- Four background ingests of three chunks each are accepted; the server is
  killed (SIGKILL) while the ingest thread is in the middle of them; a new
  server on the same store finishes every job: each namespace ends with
  exactly its three facts (one per chunk, each fact's text unique), none
  folded into a duplicate (a chunk written twice would fold), every job
  done, the queue empty, and no extraction asked twice for a chunk whose
  facts were committed.
- A full queue (--ingest-queue 1 while one job waits on a slow model)
  refuses the next background ingest with 503 and Retry-After, having
  written nothing.
- The same transcript again adds nothing and asks the model nothing.
(A chunk's facts resemble the chunk before's, so each chunk after the first
also asks the consolidation, answered "nothing to change".)
"""
import json
import os
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from serve_util import Server, check, finish  # noqa: E402
from llm_standin import LlmStandin  # noqa: E402

NS = ["t:%d" % i for i in range(4)]


def conversation(ns):
    return [{"role": "user" if k % 2 == 0 else "assistant", "name": "Ada" if k % 2 == 0 else "Bo",
             "content": "%s turn %d: a line about nothing much" % (ns, k)} for k in range(6)]


def rules(delay):
    out = [{"match": "New facts have arrived", "delay_ms": delay,
            "reply": json.dumps({"facts": [], "memories": []})}]
    for ns in NS:
        for chunk in range(3):
            out.append({"match": "%s turn %d:" % (ns, chunk * 2), "delay_ms": delay,
                        "reply": json.dumps({"facts": [{"text": "Fact %s of %s, chunk %d." %
                                                        ("xyz"[chunk], ns, chunk), "sources": [1]}]})})
    return out


def pending(srv):
    st, body = srv.json("POST", "/v1/ingest/pending", {})
    return body.get("count") if st == 200 else None


def facts_of(srv, ns):
    st, body = srv.json("POST", "/v1/recall", {"namespaces": [ns], "text": "Fact chunk", "k": 50,
                                             "filter": {"kind": "fact"}})
    if st != 200:
        st, body = srv.json("POST", "/v1/recall", {"ns": ns, "query": "Fact chunk", "k": 50,
                                                 "filter": {"kind": "fact"}})
    return body.get("hits", []) if st == 200 else None


def main():
    tmp = tempfile.mkdtemp(prefix="remem-ingest-")
    db = os.path.join(tmp, "store.db")
    with LlmStandin(tmp, rules=rules(1200)) as llm:
        env = {"REMEM_LLM_URL": llm.url, "REMEM_LLM_MODEL": "stand-in"}
        srv = Server(db=db, env=env)
        jobs = {}
        for ns in NS:
            st, body = srv.json("POST", "/v1/ingest", {"ns": ns, "messages": conversation(ns),
                                                        "chunk": 2, "background": True})
            check(st == 202 and body.get("status") == "pending" and body.get("job"),
                  "background ingest %s answered 202 with its job (%s %s)" % (ns, st, body))
            jobs[ns] = body.get("job") if isinstance(body, dict) else None
        st, body = srv.json("POST", "/v1/ingest/status", {"ns": NS[3], "job": jobs[NS[3]]})
        check(st == 200 and body.get("status") == "pending",
              "ingest.status says pending while the thread works (%s)" % body)
        # let the thread get into the jobs: a few chunks done, not all
        deadline = time.time() + 30
        while time.time() < deadline and len(llm.requests()) < 3:
            time.sleep(0.1)
        srv.kill()  # SIGKILL
        asked_before = len(llm.requests())
        check(0 < asked_before < 12, "killed in the middle (%d of 12 extractions asked)" %
              asked_before)

        llm.set_rules(rules(50))
        srv = Server(db=db, env=env)
        deadline = time.time() + 90
        while time.time() < deadline and pending(srv) != 0:
            time.sleep(0.3)
        check(pending(srv) == 0, "after the restart the queue empties")
        for ns in NS:
            st, body = srv.json("POST", "/v1/ingest/status", {"ns": ns, "job": jobs[ns]})
            check(st == 200 and body.get("status") == "done" and body.get("chunks_done") == 3,
                  "%s: job done, 3 of 3 chunks (%s)" % (ns, body))
            hits = facts_of(srv, ns) or []
            texts = sorted(h.get("text") or h.get("memory", {}).get("text") for h in hits)
            want = sorted("Fact %s of %s, chunk %d." % ("xyz"[c], ns, c) for c in range(3))
            check(texts == want, "%s: exactly its three facts (%s)" % (ns, texts))
            dups = [h for h in hits if (h.get("duplicate_count") or
                                        h.get("memory", {}).get("duplicate_count") or 0) > 0]
            check(not dups, "%s: no fact written twice" % ns)
        # each chunk's extraction: asked again only when it had not committed
        asked = {}
        for r in llm.requests():
            msgs = (r.get("body") or {}).get("messages") or [{}]
            text = msgs[-1].get("content", "")
            if "Write down the facts" not in text:
                continue
            for ns in NS:
                for c in range(3):
                    if "%s turn %d:" % (ns, c * 2) in text:
                        asked[(ns, c)] = asked.get((ns, c), 0) + 1
        check(all(asked.get((ns, c), 0) >= 1 for ns in NS for c in range(3)) and
              max(asked.values()) <= 2,
              "every chunk asked, none more than once after its facts were committed (%s)" %
              sorted(asked.values()))

        # the same transcript again: nothing new, no call
        n = len(llm.requests())
        st, body = srv.json("POST", "/v1/ingest", {"ns": NS[0], "messages": conversation(NS[0]),
                                                    "chunk": 2})
        check(st == 200 and body.get("added") == 0 and len(llm.requests()) == n,
              "the same messages again add nothing and ask nothing (%s)" % body)
        srv.stop()

        # a full queue refuses before writing anything
        llm.set_rules([{"match": "", "delay_ms": 4000, "reply": '{"facts": []}'}])
        srv = Server(db=db, env=env, args=["--ingest-queue", "1"])
        st, body = srv.json("POST", "/v1/ingest", {"ns": "q:1", "messages": conversation("q:1"),
                                                    "background": True})
        check(st == 202, "first background ingest accepted (%s)" % st)
        status, headers, data = srv.request("POST", "/v1/ingest", {
            "ns": "q:2", "messages": conversation("q:2"), "background": True})
        check(status == 503 and headers.get("retry-after"),
              "a full queue: 503 with Retry-After (%s %s)" % (status, data[:120]))
        st, body = srv.json("GET", "/v1/namespaces")
        names = [n.get("ns") or n.get("name") for n in (body or {}).get("namespaces", [])] \
            if isinstance(body, dict) else []
        check("q:2" not in names, "the refused ingest wrote nothing")
        st, _, metrics = srv.request("GET", "/metrics")
        check(b"remem_ingest_jobs_pending" in metrics and b"remem_ingest_queue_limit 1" in metrics,
              "/metrics shows the ingest queue")
        srv.kill()
    finish()


main()
