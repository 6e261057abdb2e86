#!/usr/bin/env bash
# serve_api.sh: every route of `remem serve` over real HTTP, on a free
# loopback port with a temporary store: the success cases, then the
# refusals (malformed JSON, unknown fields, unknown route and method,
# oversized and chunked bodies, wrong Content-Type, bad filter, profile and
# vector dimension, a batch with one bad memory, a foreign Host), each
# followed by a check that the store is exactly as before. Also: MCP
# sessions on /mcp, --max-body, and the refusal of a non-loopback address
# without keys.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
exec python3 - "$root" <<'EOF'
import json, subprocess, sys, urllib.parse
sys.path.insert(0, sys.argv[1] + "/tests/e2e")
from serve_util import *

srv = Server()
try:
    check(any("loopback only" in l for l in srv.banner), "banner says loopback only without keys")
    check(any(l.startswith("try: curl") for l in srv.banner), "banner prints a first curl")

    # ---- server routes -------------------------------------------------
    st, h = srv.json("GET", "/healthz")
    check(st == 200 and h["status"] == "ok", "GET /healthz")
    st, hd, body = srv.request("HEAD", "/healthz")
    check(st == 200 and body == b"", "HEAD /healthz: 200 without a body")
    st, doc = srv.json("GET", "/openapi.json")
    check(st == 200 and doc["openapi"].startswith("3.") and "/v1/recall" in doc["paths"],
          "GET /openapi.json is an OpenAPI 3 document")
    with open(sys.argv[1] + "/docs/openapi.json") as f:
        check(json.load(f) == doc, "served document equals docs/openapi.json")

    # ---- writing -------------------------------------------------------
    NS = "agent:bolton"
    base = "/v1/namespaces/" + NS
    st, r = srv.json("POST", base + "/memories",
                     {"text": "the kettle is in the left cupboard", "metadata": {"room": "kitchen"},
                      "importance": 0.4})
    check(st == 201 and r["outcome"] == "added" and r["ns"] == NS, "add one: 201 added")
    kettle = r["id"]
    st, r = srv.json("POST", base + "/memories", {"text": "The kettle is in the  left cupboard"})
    check(st == 200 and r["outcome"] == "duplicate" and r["id"] == kettle,
          "same normalised text: 200 duplicate, same id")
    st, r = srv.json("POST", base + "/memories", {"id": "keys", "text": "the car keys hang by the door",
                                                  "metadata": {"room": "hall"}})
    check(st == 201 and r["id"] == "keys", "add with a caller id")
    st, r = srv.json("POST", base + "/memories", {"id": "keys", "text": "the car keys hang on the hook by the door",
                                                  "metadata": {"room": "hall"}})
    check(st == 200 and r["outcome"] == "upserted", "same caller id again: upserted")
    st, r = srv.json("POST", base + "/memories:batch",
                     {"memories": [{"text": "Bolton likes his tea strong", "kind": "reflection"},
                                   {"id": "plan1", "text": "buy milk tomorrow morning", "kind": "plan",
                                    "metadata": {"room": "kitchen"}}]})
    check(st == 201 and r["count"] == 2 and r["ids"][1] == "plan1", "batch of two: 201 with ids")
    st, r = srv.json("POST", "/v1/namespaces/" + urllib.parse.quote("proj/x", safe="") + "/memories",
                     {"id": "p1", "text": "a namespace with a slash"})
    check(st == 201, "namespace with '/' sent as %2F")
    st, r = srv.json("GET", "/v1/namespaces/proj%2Fx/memories/p1")
    check(st == 200 and r["ns"] == "proj/x", "get from the %2F namespace")
    st, r = srv.json("GET", "/v1/namespaces/agent%3Abolton/memories/keys")
    check(st == 200 and r["ns"] == NS and "hook" in r["text"], "percent-encoded ':' in the path")
    st, r = srv.json("POST", base + "/memories:batch", {"memories": []})
    check(st == 200 and r["count"] == 0, "empty batch")

    # ---- reading -------------------------------------------------------
    st, m = srv.json("GET", base + "/memories/" + kettle)
    check(st == 200 and m["text"] == "the kettle is in the left cupboard" and
          m["metadata"] == {"room": "kitchen"} and m["duplicate_count"] == 1, "get one")
    st, res = srv.json("POST", "/v1/recall", {"namespaces": [NS], "text": "where is the kettle?",
                                              "k": 3, "touch": False})
    hits = res["hits"] if st == 200 else []
    check(st == 200 and hits and hits[0]["id"] == kettle, "recall ranks the kettle first")
    comps = {"relevance", "similarity", "lexical", "bm25", "recency", "importance", "context", "lanes"}
    check(all("score" in x and comps <= set(x["components"]) for x in hits),
          "every hit carries its score and every component")
    check(all(k in res for k in ("profile", "now", "candidates", "took_ms")), "result header fields")
    st, res = srv.json("POST", "/v1/recall", {"namespaces": NS, "text": "kitchen things", "touch": False,
                                              "filter": {"room": {"$eq": "kitchen"}}})
    check(st == 200 and res["hits"] and all(x["metadata"]["room"] == "kitchen" for x in res["hits"]),
          "recall with a filter object (and a lone namespace string)")
    st, res = srv.json("POST", "/v1/recall", {"namespaces": [NS], "text": "tea", "profile": "stream",
                                              "w_importance": 0.9, "w_context": 0.1, "tiers": ["short", "long"],
                                              "now": "2030-01-01T00:00:00Z", "touch": False})
    check(st == 200 and res["profile"] == "stream" and res["now"].startswith("2030-01-01"),
          "recall with a profile, overrides, tiers and now")
    st, emb = srv.json("POST", "/v1/embed", {"texts": ["hello world", "kettle"]})
    check(st == 200 and len(emb["vectors"]) == 2 and len(emb["vectors"][0]) == emb["dim"], "embed")
    st, res = srv.json("POST", "/v1/recall", {"namespaces": [NS], "vector": emb["vectors"][1], "k": 2,
                                              "touch": False})
    check(st == 200 and len(res["hits"]) >= 1, "recall by vector")
    before_touch = srv.json("GET", base + "/memories/" + kettle)[1]["access_count"]
    srv.json("POST", "/v1/recall", {"namespaces": [NS], "text": "kettle cupboard", "k": 1})
    after_touch = srv.json("GET", base + "/memories/" + kettle)[1]["access_count"]
    check(after_touch == before_touch + 1, "recall touches by default, touch:false does not")

    st, m = srv.json("PATCH", base + "/memories/keys", {"importance": 0.9, "metadata": {"room": "hall", "v": 2}})
    check(st == 200 and m == {"id": "keys", "ns": NS, "outcome": "updated"},
          "PATCH answers the write's shape, no stored content: %s" % m)
    m = srv.json("GET", base + "/memories/keys")[1]
    check(abs(m["importance"] - 0.9) < 1e-6 and m["metadata"]["v"] == 2, "PATCH changed the memory")
    st, m = srv.json("POST", base + "/memories/keys:invalidate", {"superseded_by": "plan1", "reason": "moved"})
    check(st == 200 and m == {"id": "keys", "ns": NS, "outcome": "invalidated", "superseded_by": "plan1"},
          "invalidate with a body: %s" % m)
    m = srv.json("GET", base + "/memories/keys")[1]
    check(m["invalidated_at"] and m["superseded_by"] == "plan1", "invalidate hid the memory")
    st, res = srv.json("POST", "/v1/recall", {"namespaces": [NS], "text": "car keys door hook", "touch": False})
    check(st == 200 and "keys" not in [x["id"] for x in res["hits"]], "an invalidated memory leaves recall")
    st, res = srv.json("POST", "/v1/recall", {"namespaces": [NS], "text": "car keys door hook", "touch": False,
                                              "include_invalid": True})
    check(st == 200 and "keys" in [x["id"] for x in res["hits"]], "include_invalid brings it back")
    st, m = srv.json("POST", base + "/memories/" + kettle + ":invalidate")
    check(st == 200 and m["outcome"] == "invalidated" and m["superseded_by"] is None,
          "invalidate without a body")
    st, hist = srv.json("GET", base + "/memories/keys/history")
    ops = [e["op"] for e in hist] if st == 200 else []
    check(ops[:1] == ["add"] and "update" in ops and ops[-1] == "invalidate", "history: %s" % ops)
    check(any(e["op"] == "update" and e["actor"] == "http" for e in hist), "history records the actor")

    st, r = srv.json("GET", "/v1/memories/plan1")
    check(st == 200 and r["ns"] == NS, "find by id alone")
    st, r = srv.json("GET", "/v1/namespaces")
    counts = {e["ns"]: e["count"] for e in r["namespaces"]} if st == 200 else {}
    check(counts.get(NS) == 4 and counts.get("proj/x") == 1, "namespaces with counts: %s" % counts)
    st, r = srv.json("GET", base + "/stats")
    check(st == 200 and r["memories"] == 4, "namespace stats")
    st, r = srv.json("GET", "/v1/stats")
    check(st == 200 and r["memories"] == 5, "store stats")
    st, hd, body = srv.request("GET", base + "/export")
    lines = [json.loads(l) for l in body.decode().splitlines()]
    check(st == 200 and hd["content-type"].startswith("application/x-ndjson") and len(lines) == 4 and
          {l["ns"] for l in lines} == {NS}, "export a namespace as JSONL")
    st, _, body = srv.request("GET", base + "/export?vectors=true")
    lines = [json.loads(l) for l in body.decode().splitlines()]
    check(st == 200 and all(len(l["vector"]) == emb["dim"] for l in lines), "export with vectors")
    st, _, body = srv.request("GET", "/v1/export")
    check(st == 200 and len(body.decode().splitlines()) == 5, "export the whole store")
    st, r = srv.json("GET", "/v1/profiles")
    names = [p["name"] for p in r["profiles"]] if st == 200 else []
    check("default" in names and "stream" in names, "profiles")
    st, r = srv.json("GET", "/v1/profiles/stream")
    check(st == 200 and isinstance(r, dict), "one profile")

    # ---- forgetting ----------------------------------------------------
    st, r = srv.json("DELETE", base + "/memories/plan1")
    check(st == 200 and r == {"id": "plan1", "ns": NS, "outcome": "archived", "purged": False},
          "forget archives: %s" % r)
    check(srv.json("GET", base + "/memories/plan1")[1]["tier"] == "archived", "archived tier")
    st, r = srv.json("DELETE", base + "/memories/plan1?purge=true")
    check(st == 200 and r["outcome"] == "purged" and r["purged"] is True, "forget with purge")
    check(srv.json("GET", base + "/memories/plan1")[0] == 404, "purged memory is gone")
    st, hist = srv.json("GET", base + "/memories/plan1/history")
    check(st == 200 and hist[-1]["op"] == "delete", "history survives a purge")
    st, r = srv.json("DELETE", "/v1/namespaces/proj%2Fx")
    check(st == 200 and r["deleted"] == 1, "clear a namespace")

    # ---- metrics -------------------------------------------------------
    st, hd, body = srv.request("GET", "/metrics")
    text = body.decode()
    check(st == 200 and hd["content-type"].startswith("text/plain"), "GET /metrics")
    check('remem_http_requests_total{route="/v1/recall",method="POST",status="200"}' in text,
          "metrics count requests by route template and status")
    check('remem_http_request_duration_seconds_bucket{route="/v1/recall",method="POST",le="+Inf"}' in text,
          "latency histogram")
    check('remem_memories{namespace="agent:bolton"} 3' in text, "memories per namespace")

    # ---- MCP sessions over /mcp ----------------------------------------
    acc = {"Accept": "application/json, text/event-stream"}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "serve_api", "version": "1"}}}
    st, hd, body = srv.request("POST", "/mcp", init, headers=acc)
    sid = hd.get("mcp-session-id")
    check(st == 200 and sid and json.loads(body)["result"]["protocolVersion"], "MCP initialize issues a session")
    h = dict(acc, **{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"})
    st, _, body = srv.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=h)
    tools = [t["name"] for t in json.loads(body)["result"]["tools"]] if st == 200 else []
    check("recall" in tools and "memory_add" in tools, "MCP tools/list in the session")
    st, _, _ = srv.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
                           headers=dict(acc, **{"Mcp-Session-Id": "nope"}))
    check(st == 404, "unknown MCP session: 404")
    st, _, _ = srv.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
                           headers=dict(h, **{"MCP-Protocol-Version": "1999-01-01"}))
    check(st == 400, "unsupported MCP-Protocol-Version: 400")
    check(srv.request("GET", "/mcp")[0] == 405, "GET /mcp: 405 (no SSE stream)")
    check(srv.request("DELETE", "/mcp", headers=h)[0] == 204, "DELETE /mcp ends the session")
    st, _, _ = srv.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 4, "method": "tools/list"}, headers=h)
    check(st == 404, "an ended session: 404")

    # ---- refusals leave the store unchanged -----------------------------
    snap = snapshot(srv)

    def refused(what, status, code, method, path, body=None, **kw):
        st, hd, data = srv.request(method, path, body, **kw)
        try:
            parsed = json.loads(data)
        except ValueError:
            parsed = None
        check(is_error(st, parsed, status, code), "%s: %d %s (got %d %s)" %
              (what, status, code or "", st, data[:160].decode(errors="replace")))
        check(snapshot(srv) == snap, "  ... and the store is unchanged")
        return hd

    refused("malformed JSON", 400, "REMEM_EPARSE", "POST", base + "/memories", '{"text": "x",')
    refused("malformed recall", 400, "REMEM_EPARSE", "POST", "/v1/recall", "{namespaces:")
    refused("body not an object", 400, "REMEM_EPARSE", "POST", base + "/memories", '["x"]')
    refused("empty body", 400, "REMEM_EPARSE", "POST", base + "/memories", "")
    refused("unknown field", 400, "REMEM_EINVAL", "POST", base + "/memories", {"txt": "x"})
    refused("missing text", 400, "REMEM_EINVAL", "POST", base + "/memories", {"kind": "plan"})
    refused("ns in body differs from path", 400, "REMEM_EINVAL", "POST", base + "/memories",
            {"ns": "other", "text": "x"})
    refused("importance out of range", 400, "REMEM_EINVAL", "POST", base + "/memories",
            {"text": "x", "importance": 7})
    refused("wrong vector dimension", 400, "REMEM_EDIM", "POST", base + "/memories",
            {"text": "x", "vector": [0.1, 0.2, 0.3]})
    refused("batch with a bad memory", 400, None, "POST", base + "/memories:batch",
            {"memories": [{"text": "fine"}, {"kind": "no text"}]})
    st, r = srv.json("POST", base + "/memories:batch", {"memories": [{"text": "fine"}, {"text": ""}]})
    check(st == 400 and r["error"].get("index") == 1, "batch error names the index")
    refused("unknown route", 404, "REMEM_ENOROUTE", "GET", "/v1/nothing/here")
    refused("unknown route under /v1/namespaces", 404, "REMEM_ENOROUTE", "GET", base + "/memories/x/y/z")
    hd = refused("method not allowed", 405, "REMEM_EMETHOD", "PUT", base + "/memories/" + kettle, {"text": "x"})
    check(hd.get("allow") == "GET, PATCH, DELETE", "405 lists the allowed methods: %s" % hd.get("allow"))
    st, r = srv.json("POST", "/v1/recall", {"namespaces": [NS], "text": "kettle " * 150000, "k": 3, "touch": False})
    check(st == 200, "a 1 MB query is answered: %d" % st)
    big = {"text": "x" * (9 << 20)}
    refused("oversized body", 413, "REMEM_ETOOLARGE", "POST", base + "/memories", big)
    refused("oversized chunked body", 413, "REMEM_ETOOLARGE", "POST", base + "/memories",
            iter([json.dumps(big).encode()]))
    refused("wrong Content-Type", 415, "REMEM_EMEDIA", "POST", base + "/memories", '{"text":"x"}',
            ctype="text/plain")
    refused("form Content-Type", 415, "REMEM_EMEDIA", "POST", "/v1/recall", "text=x",
            ctype="application/x-www-form-urlencoded")
    refused("bad filter", 400, "REMEM_EFILTER", "POST", "/v1/recall",
            {"namespaces": [NS], "text": "x", "filter": {"room": {"$regexx": "k"}}})
    refused("unknown profile", 400, "REMEM_EPROFILE", "POST", "/v1/recall",
            {"namespaces": [NS], "text": "x", "profile": "nope"})
    refused("recall without text or vector", 400, "REMEM_EINVAL", "POST", "/v1/recall", {"namespaces": [NS]})
    refused("recall without namespaces", 400, "REMEM_EINVAL", "POST", "/v1/recall", {"text": "x"})
    refused("patch of a missing memory", 404, "REMEM_ENOTFOUND", "PATCH", base + "/memories/nope",
            {"importance": 0.5})
    refused("patch with nothing", 400, "REMEM_EINVAL", "PATCH", base + "/memories/keys", {})
    refused("patch with a bad type", 400, "REMEM_EINVAL", "PATCH", base + "/memories/keys", {"text": 5})
    refused("invalidate a missing memory", 404, "REMEM_ENOTFOUND", "POST", base + "/memories/nope:invalidate")
    refused("forget a missing memory", 404, "REMEM_ENOTFOUND", "DELETE", base + "/memories/nope")
    refused("bad purge flag", 400, "REMEM_EINVAL", "DELETE", base + "/memories/keys?purge=maybe")
    refused("unknown profile by name", 404, "REMEM_EPROFILE", "GET", "/v1/profiles/nope")
    refused("foreign Host without keys", 403, "REMEM_EFORBIDDEN", "POST", base + "/memories",
            {"text": "x"}, headers={"Host": "attacker.example"})
    refused("embedded NUL in a path part", 400, "REMEM_EINVAL", "GET", base + "/memories/a%00b")

    st = srv.stop()
    check(st == 0, "SIGTERM: exit 0")
finally:
    srv.kill()

# A second server on the same store with a small --max-body.
srv = Server(db=srv.db, args=["--max-body", "200", "--threads", "2"])
try:
    st, r = srv.json("POST", "/v1/namespaces/small/memories", {"text": "short enough"})
    check(st == 201, "--max-body 200: a small body passes")
    st, r = srv.json("POST", "/v1/namespaces/small/memories", {"text": "y" * 300})
    check(is_error(st, r, 413, "REMEM_ETOOLARGE"), "--max-body 200: 300 bytes get 413")
    st, _, body = srv.request("GET", "/v1/namespaces/agent:bolton/export")
    check(st == 200 and len(body.decode().splitlines()) == 3, "the first server's writes are there")
    st = srv.stop(signal.SIGINT)
    check(st == 0, "SIGINT: exit 0 (got %s; the server said: %s)" % (st, srv.log_text()[-600:]))
finally:
    srv.kill()

# Bounded concurrency and the idle timeout: --max-connections 2 --timeout 2.
import socket, time
srv = Server(db=srv.db, args=["--max-connections", "2", "--timeout", "2"])
try:
    idle = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(2)]
    time.sleep(0.3)
    third = socket.create_connection(("127.0.0.1", srv.port))
    third.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    third.settimeout(1)
    try:
        early = third.recv(100)
    except OSError:
        early = b""
    check(early == b"", "a connection over --max-connections waits (not served while both slots are held)")
    t0 = time.time()
    third.settimeout(6)
    try:
        late = third.recv(100)
    except OSError:
        late = b""
    check(late.startswith(b"HTTP/1.1 200"), "... and is served once the idle ones time out (%.1f s)"
          % (time.time() - t0))
    third.close()
    closed = []
    for s in idle:
        s.settimeout(2)
        try:
            closed.append(s.recv(10) == b"")
        except OSError:
            closed.append(True)
        s.close()
    check(all(closed), "idle connections are closed after --timeout")
    time.sleep(0.3)
    check(srv.json("GET", "/healthz")[0] == 200, "and new connections are served again")
    # an export whose client goes away mid-stream does not hurt the server
    c = socket.create_connection(("127.0.0.1", srv.port))
    c.sendall(b"GET /v1/export?vectors=true HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    c.recv(64)
    c.close()
    time.sleep(0.3)
    check(srv.json("GET", "/healthz")[0] == 200, "an export cut short by its client leaves the server well")
    check(srv.stop() == 0, "clean stop")
finally:
    srv.kill()

p = subprocess.run([BIN, "--db", srv.db, "serve", "--listen", "0.0.0.0:0"], capture_output=True,
                   text=True, timeout=30)
check(p.returncode == 1 and "loopback" in p.stderr, "non-loopback --listen without keys is refused: %s"
      % p.stderr.strip())
finish()
EOF
