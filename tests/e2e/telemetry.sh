#!/usr/bin/env bash
# telemetry.sh: issue 11's acceptance check 4 (docs/telemetry.md), against
# the stand-in OTLP receiver (tests/support/otlp_receiver.py; no real
# collector runs here):
#   - the CLI, then `remem serve` over HTTP, with OTEL_EXPORTER_OTLP_ENDPOINT
#     at the receiver: episode add, episode recall, prune (an old episode
#     and a near-duplicate cluster) and summarize with the LLM stand-in; the
#     receiver sees seed 003's five span names with their attributes
#     (memory.retention_enforce and memory.summarize as children of
#     memory.prune), remem.add / remem.recall, a GenAI "chat" span with
#     gen_ai.* attributes, the metrics, and not one bad payload;
#   - the receiver stopped (the endpoint a closed port): the medians of N
#     recalls of a server exporting to the dead port and of one with
#     telemetry off are alike (generous margin: the machine is shared), and
#     the dead one's /metrics shows remem_telemetry_spans_dropped_total
#     rising.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
export REMEM_EMBEDDER=hash
exec python3 - "$root" <<'PY'
import json, os, re, socket, statistics, subprocess, sys, tempfile, time
root = sys.argv[1]
sys.path.insert(0, root + "/tests/e2e")
sys.path.insert(0, root + "/tests/support")
from serve_util import *
from llm_standin import LlmStandin

BIN = os.environ["REMEM_BIN"]
tmp = tempfile.mkdtemp(prefix="remem-telemetry-")
db = os.path.join(tmp, "s.db")
arch = os.path.join(tmp, "arch")
for k in [k for k in os.environ if k.startswith("OTEL_")]:
    del os.environ[k]


class Receiver:
    def __init__(self, name):
        self.port_file = os.path.join(tmp, name + ".port")
        self.out = os.path.join(tmp, name + ".jsonl")
        self.proc = subprocess.Popen([sys.executable, root + "/tests/support/otlp_receiver.py",
                                      "--port-file", self.port_file, "--out", self.out])
        deadline = time.time() + 20
        while not os.path.exists(self.port_file):
            if time.time() > deadline or self.proc.poll() is not None:
                raise RuntimeError("the OTLP receiver did not start")
            time.sleep(0.02)
        self.port = int(open(self.port_file).read())
        self.url = "http://127.0.0.1:%d" % self.port

    def records(self):
        if not os.path.exists(self.out):
            return []
        return [json.loads(l) for l in open(self.out) if l.strip()]

    def spans(self):
        out = []
        for r in self.records():
            if r["path"] == "/v1/traces" and r["ok"]:
                for rs in r["body"]["resourceSpans"]:
                    svc = {a["key"]: a["value"] for a in rs["resource"]["attributes"]}
                    for ss in rs["scopeSpans"]:
                        for s in ss["spans"]:
                            s["attrs"] = {a["key"]: list(a["value"].values())[0]
                                          for a in s.get("attributes", [])}
                            s["service"] = svc.get("service.name", {}).get("stringValue")
                            out.append(s)
        return out

    def metric_names(self):
        names = set()
        for r in self.records():
            if r["path"] == "/v1/metrics" and r["ok"]:
                for rm in r["body"]["resourceMetrics"]:
                    for sm in rm["scopeMetrics"]:
                        names |= {m["name"] for m in sm["metrics"]}
        return names

    def bad(self):
        return [r for r in self.records() if not r["ok"]]

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


rx = Receiver("rx")
tel = dict(os.environ, OTEL_EXPORTER_OTLP_ENDPOINT=rx.url, OTEL_BSP_SCHEDULE_DELAY="100",
           OTEL_SERVICE_NAME="remem-e2e", OTEL_EXPORTER_OTLP_HEADERS="x-remem-test=yes")


def cli(*args, env=tel):
    p = subprocess.run([BIN, "--db", db, *args, "--json"], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        print("command failed:", args, p.stderr)
    return json.loads(p.stdout) if p.returncode == 0 and p.stdout.strip() else None


def meta(project, task, lang, ts):
    return json.dumps({"taskID": task, "projectID": project, "language": lang, "timestamp": ts,
                       "modelUsed": "m-1", "tokensIn": 11, "tokensOut": 22,
                       "generationOutcome": "accepted", "filesChanged": ["a.py"]})


# ---- the CLI ----
t0 = time.time()
cli("episode", "add", "--ns", "e", "--prompt", "read a json config file", "--output",
    "json.load(f)", "--meta", meta("alpha", "a1", "python", "2020-01-01T00:00:00Z"))
for i, ts in enumerate(["2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z"]):
    cli("episode", "add", "--ns", "e", "--prompt", "parse the json settings file now",
        "--output", "json.load(open(path)) # %d" % i, "--meta", meta("alpha", "c%d" % i, "python", ts))
r = cli("episode", "recall", "--ns", "e", "--query", "json config", "--project", "alpha",
        "--min-similarity", "0")
check(r is not None and r["numResults"] >= 1, "CLI episode recall answers")
now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
rep = cli("prune", "--ns", "e", "--retention-days", "90", "--similarity-threshold", "0.5",
          "--archive-location", arch, "--strategy", "heuristic")
check(rep is not None and rep["reasons"]["age"] >= 1 and rep["clustersCreated"] >= 1,
      "prune archives the old episode and makes a cluster: %s" % (rep and rep.get("text")))
# each CLI process flushes its spans as it exits


def spans_named(rxr, name, pred=lambda s: True, wait=5):
    deadline = time.time() + wait
    while True:
        got = [s for s in rxr.spans() if s["name"] == name and pred(s)]
        if got or time.time() > deadline:
            return got
        time.sleep(0.05)


st = spans_named(rx, "memory.store_episode", lambda s: s["attrs"].get("taskID") == "a1")
check(len(st) == 1, "memory.store_episode from the CLI")
if st:
    a = st[0]["attrs"]
    check(a.get("episodeID") == "alpha_a1_1577836800000" and a.get("projectID") == "alpha"
          and a.get("language") == "python" and a.get("storeBackend") == "sqlite"
          and a.get("modelUsedForEmbedding", "").startswith("hash") and "embeddingTimeMs" in a
          and a.get("tokensIn") == "11" and a.get("generationOutcome") == "accepted",
          "memory.store_episode attributes: %s" % sorted(a))
    check(st[0]["service"] == "remem-e2e", "OTEL_SERVICE_NAME is the resource's service.name")
    adds = [s for s in rx.spans() if s["name"] == "remem.add"
            and s["traceId"] == st[0]["traceId"] and s.get("parentSpanId") == st[0]["spanId"]]
    check(len(adds) == 1 and adds[0]["attrs"].get("remem.namespace") == "e",
          "remem.add is a child of memory.store_episode")
re_ = spans_named(rx, "memory.retrieve_episodes")
check(len(re_) == 1 and all(k in re_[0]["attrs"] for k in
                            ("queryTimeMs", "numResultsReturned", "avgSimilarity", "projectID")),
      "memory.retrieve_episodes with queryTimeMs, numResultsReturned, avgSimilarity, projectID")
rc = spans_named(rx, "remem.recall")
check(rc and all(k in rc[0]["attrs"] for k in ("remem.namespace", "remem.k", "remem.profile",
                                               "remem.hits", "remem.took_ms")),
      "remem.recall with namespace, k, profile, hits, took")
pr = spans_named(rx, "memory.prune")
check(len(pr) == 1, "memory.prune from the CLI")
if pr:
    a = pr[0]["attrs"]
    check(all(k in a for k in ("episodesRemovedCount", "episodesArchivedCount",
                               "clustersCreatedCount", "durationMs"))
          and int(a["episodesRemovedCount"]) == rep["removedCount"]
          and int(a["clustersCreatedCount"]) == rep["clustersCreated"],
          "memory.prune's counts are the PruneReport's")
    kids = lambda n: [s for s in rx.spans() if s["name"] == n
                      and s.get("parentSpanId") == pr[0]["spanId"]
                      and s["traceId"] == pr[0]["traceId"]]
    ret = kids("memory.retention_enforce")
    # seed 003's attribute names: episodesArchived, episodesDeleted, durationMs
    check(len(ret) == 1 and int(ret[0]["attrs"].get("episodesArchived", -1)) == rep["reasons"]["age"] + rep["reasons"]["count"]
          and "durationMs" in ret[0]["attrs"] and "episodesDeleted" in ret[0]["attrs"],
          "memory.retention_enforce, a child of memory.prune, with seed 003's attribute names")
    sm = kids("memory.summarize")
    check(len(sm) == rep["clustersCreated"] and all(
        int(s["attrs"].get("episodesSummarizedCount", 0)) >= 2 and "summarizationTimeMs" in s["attrs"]
        and s["attrs"].get("modelUsedForSummarization") for s in sm),
          "memory.summarize for each cluster, a child of memory.prune")
hdr = [r for r in rx.records() if r["headers"].get("x-remem-test") == "yes"]
check(len(hdr) == len(rx.records()) and hdr, "OTEL_EXPORTER_OTLP_HEADERS sent on every request")
names = rx.metric_names()
check({"memory.episodes_stored_total", "memory.episodes_in_index",
       "memory.embedding_size_distribution", "remem.recall.duration",
       "remem.maintenance.runs", "remem.cache.bytes", "remem.cache.budget",
       "remem.cache.namespaces", "remem.cache.hit_ratio", "remem.cache.loads",
       "remem.cache.evictions"} <= names, "metrics exported: %s" % sorted(names))

# ---- summarize with the LLM stand-in: memory.summarize and a GenAI chat span ----
with LlmStandin(tmp, default_reply=json.dumps({"summary": "The memories describe reading JSON files."})) as llm:
    env = dict(tel, REMEM_LLM_URL=llm.url, REMEM_LLM_MODEL="stand-in-model")
    for i in range(3):
        cli("add", "--ns", "s", "--text", "note %d about json files" % i, "--tier", "long", env=env)
    r = cli("summarize", "--ns", "s", "--count", "3", env=env)
    check(r is not None and r.get("llm"), "summarize used the LLM stand-in")
ms = spans_named(rx, "memory.summarize", lambda s: s["attrs"].get("remem.op") == "summarize")
check(len(ms) == 1 and ms[0]["attrs"].get("modelUsedForSummarization") == "stand-in-model"
      and ms[0]["attrs"].get("episodesSummarizedCount") == "3",
      "summarize is memory.summarize with the model and the count")
chat = spans_named(rx, "chat stand-in-model")
check(chat and chat[0]["kind"] == 3 and chat[0]["attrs"].get("gen_ai.operation.name") == "chat"
      and chat[0]["attrs"].get("gen_ai.request.model") == "stand-in-model"
      and "gen_ai.usage.input_tokens" in chat[0]["attrs"]
      and "gen_ai.usage.output_tokens" in chat[0]["attrs"]
      and ms and chat[0].get("parentSpanId") == ms[0]["spanId"],
      "the LLM call: a client span with GenAI attributes, a child of memory.summarize")
print("CLI part: %.1f s" % (time.time() - t0))

# ---- remem serve ----
srv = Server(db=db, env={k: v for k, v in tel.items() if k.startswith("OTEL_")})
try:
    st_, b = srv.json("POST", "/v1/episode/add", {"ns": "h", "prompt": "sort a list", "output":
                      "sorted(x)", "meta": json.loads(meta("gamma", "g1", "python", "2020-02-01T00:00:00Z"))})
    check(st_ == 200, "HTTP episode add")
    st_, b = srv.json("POST", "/v1/episode/recall", {"ns": "h", "query": "sort", "project": "gamma",
                                                     "min_similarity": 0})
    check(st_ == 200, "HTTP episode recall")
    # the server archives where its configuration says (a request names no path)
    st_, b = srv.json("POST", "/v1/prune", {"ns": "h", "retention_days": 30})
    check(st_ == 200 and b["removedCount"] == 1, "HTTP prune")
    svc = lambda s: s["attrs"].get("remem.namespace") == "h"
    for n in ("memory.store_episode", "memory.retrieve_episodes", "memory.prune",
              "memory.retention_enforce"):
        check(spans_named(rx, n, svc), "%s from remem serve" % n)
    st_, _, text = srv.request("GET", "/metrics")
    text = text.decode()
    check(st_ == 200 and re.search(r"^memory_episodes_stored_total \d", text, re.M)
          and "remem_telemetry_spans_dropped_total" in text
          and "memory_embedding_size_distribution_bucket" in text
          and re.search(r"^remem_telemetry_spans_exported_total [1-9]", text, re.M),
          "/metrics shows the episode counters and the telemetry counts")
finally:
    srv.stop()
seen = {s["name"] for s in rx.spans()}
five = {"memory.store_episode", "memory.retrieve_episodes", "memory.prune",
        "memory.retention_enforce", "memory.summarize"}
check(five <= seen, "the five seed span names seen: %s" % sorted(five - seen))
check(not rx.bad(), "no bad payloads: %s" % [r["problems"][:3] for r in rx.bad()][:3])
check(len(rx.records()) > 0, "the receiver got %d requests" % len(rx.records()))
rx.stop()

# ---- the collector down: recall latency unchanged, spans dropped and counted ----
s = socket.socket()
s.bind(("127.0.0.1", 0))
dead_port = s.getsockname()[1]
s.close()
dead = Server(db=db, env={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:%d" % dead_port,
                          "OTEL_BSP_SCHEDULE_DELAY": "50"})
off = Server(db=db, env={"OTEL_SDK_DISABLED": "true"})
try:
    def dropped():
        _, _, t = dead.request("GET", "/metrics")
        m = re.search(r"^remem_telemetry_spans_dropped_total (\d+)", t.decode(), re.M)
        return int(m.group(1)) if m else -1
    before = dropped()
    q = {"ns": "e", "query": "json settings", "project": "alpha", "min_similarity": 0}
    for sv in (dead, off):  # warm both caches
        sv.json("POST", "/v1/episode/recall", q)
    times = {"dead": [], "off": []}
    for i in range(40):
        for name, sv in (("dead", dead), ("off", off)) if i % 2 else (("off", off), ("dead", dead)):
            a = time.perf_counter()
            st_, _ = sv.json("POST", "/v1/episode/recall", q)
            times[name].append(time.perf_counter() - a)
    md, mo = statistics.median(times["dead"]), statistics.median(times["off"])
    print("recall median: collector down %.2f ms, telemetry off %.2f ms" % (md * 1e3, mo * 1e3))
    check(md <= mo * 2 + 0.005, "recall latency unchanged with the collector down (%.2f vs %.2f ms)"
          % (md * 1e3, mo * 1e3))
    deadline = time.time() + 10
    while dropped() <= before and time.time() < deadline:
        time.sleep(0.05)
    after = dropped()
    check(after > before and after > 0, "remem_telemetry_spans_dropped_total rises (%d -> %d)"
          % (before, after))
    _, _, t = off.request("GET", "/metrics")
    check(re.search(r"^remem_telemetry_spans_dropped_total 0$", t.decode(), re.M) is not None,
          "telemetry off: nothing started, nothing dropped")
finally:
    dead.stop()
    off.stop()
finish()
PY
