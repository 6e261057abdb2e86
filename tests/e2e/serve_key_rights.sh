#!/usr/bin/env bash
# serve_key_rights.sh: "write alone does not read", and "read alone does not
# write", table-driven. A write-only key and a read-only key, both scoped to
# the namespace that holds a memory with a secret text and secret metadata,
# are each tried on every route of the server (the table is checked against
# docs/openapi.json, so a new route cannot be left out) and every MCP tool:
#   - no answer to the write-only key holds the stored text, metadata or the
#     stored memory's generated id (a duplicate add answers "accepted",
#     not "duplicate" with the existing id);
#   - every write of the read-only key is refused and the store (export,
#     namespaces, stats, seen by an admin key) is unchanged afterwards.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
exec python3 - "$root" <<'EOF'
import json, os, sys, tempfile
sys.path.insert(0, sys.argv[1] + "/tests/e2e")
from serve_util import *

tmp = tempfile.mkdtemp(prefix="remem-rights-")
keys_path = os.path.join(tmp, "keys.json")
KW, KR, KADM = "secret-write-1", "secret-read-2", "secret-admin-3"
with open(keys_path, "w") as f:
    json.dump({"keys": [hash_key(KW, "writer", ["t:*"], ["write"]),
                        hash_key(KR, "reader", ["t:*"], ["read"]),
                        hash_key(KADM, "operator", ["*"], ["admin"])]}, f)
TEXT, META = "the vault code is SECRETTEXT4242", "SECRETMETA4242"
NS = "t:one"
B = "/v1/namespaces/" + NS

# Every route: (method, template, concrete path, body). {ns}/{id} name the
# secret memory or one the test makes; the table must cover the document.
def routes(mid, other):
    return [
        ("GET", "/healthz", "/healthz", None),
        ("GET", "/metrics", "/metrics", None),
        ("GET", "/openapi.json", "/openapi.json", None),
        ("GET", "/ui", "/ui", None),
        ("GET", "/ui/{file}", "/ui/app.js", None),
        ("GET", "/mcp", "/mcp", None),
        ("DELETE", "/mcp", "/mcp", None),
        ("POST", "/mcp", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        ("GET", "/v1/profiles", "/v1/profiles", None),
        ("GET", "/v1/profiles/{name}", "/v1/profiles/default", None),
        ("POST", "/v1/embed", "/v1/embed", {"texts": [TEXT]}),
        ("POST", "/v1/recall", "/v1/recall", {"namespaces": [NS], "text": "vault code"}),
        ("GET", "/v1/namespaces", "/v1/namespaces", None),
        ("GET", "/v1/namespaces/{ns}/stats", B + "/stats", None),
        ("GET", "/v1/stats", "/v1/stats", None),
        ("POST", "/v1/namespaces/{ns}/memories", B + "/memories", {"text": TEXT}),  # a duplicate
        ("POST", "/v1/namespaces/{ns}/memories:batch", B + "/memories:batch",
         {"memories": [{"text": TEXT}, {"id": other, "text": "a new one"}]}),
        ("GET", "/v1/namespaces/{ns}/memories/{id}", B + "/memories/" + mid, None),
        ("GET", "/v1/namespaces/{ns}/memories", B + "/memories?limit=5", None),
        ("POST", "/v1/namespaces/{ns}/memories:delete", B + "/memories:delete",
         {"filter": {"tag": META}, "dry_run": True}),
        ("PATCH", "/v1/namespaces/{ns}/memories/{id}", B + "/memories/" + mid, {"importance": 0.9}),
        ("POST", "/v1/namespaces/{ns}/memories/{id}:invalidate", B + "/memories/" + mid + ":invalidate",
         {"reason": "rotated"}),
        ("GET", "/v1/namespaces/{ns}/memories/{id}/history", B + "/memories/" + mid + "/history", None),
        ("GET", "/v1/memories/{id}", "/v1/memories/" + mid, None),
        ("GET", "/v1/namespaces/{ns}/export", B + "/export", None),
        ("GET", "/v1/export", "/v1/export", None),
        ("DELETE", "/v1/namespaces/{ns}/memories/{id}", B + "/memories/" + mid, None),
        ("GET", "/v1/operations", "/v1/operations", None),
        ("POST", "/v1/{operation}", "/v1/memory/get", {"ns": NS, "id": mid}),
        ("DELETE", "/v1/namespaces/{ns}", B, None),
    ]

doc = json.load(open(sys.argv[1] + "/docs/openapi.json"))
# an operation's own path (POST /v1/a/b) is tried as /v1/{operation}
documented = {(m.upper(), p) for p, v in doc["paths"].items() for m in v
              if m in ("get", "post", "patch", "delete", "put") and
              not v[m].get("operationId", "").startswith("op_")}
tabled = {(m, t) for m, t, _, _ in routes("x", "y")}
check(documented == tabled, "the table covers every documented route (missing %s)" % (documented - tabled))

def mcp_calls(mid):
    return [("memory_add", {"ns": NS, "text": TEXT}),
            ("recall", {"query": "vault code", "ns": NS}),
            ("recall", {"query": "vault code"}),
            ("memory_get", {"ns": NS, "id": mid}),
            ("memory_update", {"ns": NS, "id": mid, "importance": 0.8}),
            ("memory_invalidate", {"ns": NS, "id": mid, "reason": "rotated"}),
            ("memory_forget", {"ns": NS, "id": mid}),
            ("namespaces", {})]

def mcp(srv, key, name, args):
    msg = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": args}}
    st, _, body = srv.request("POST", "/mcp", msg, key=key)
    return st, body.decode(errors="replace")

srv = Server(args=["--keys", keys_path, "--tools", "memory"])
try:
    def seed():
        st, r = srv.json("POST", B + "/memories", {"text": TEXT, "metadata": {"tag": META}}, key=KADM)
        assert st in (200, 201), (st, r)
        return r["id"]

    # ---- the write-only key ------------------------------------------------
    for method, tmpl, path, body in routes("__ID__", "w-new"):
        mid = seed()
        path = path.replace("__ID__", mid)
        st, _, data = srv.request(method, path, body, key=KW)
        text = data.decode(errors="replace")
        # The stored id counts as content unless the caller named it itself.
        asked = path + json.dumps(body)
        leaks = [w for w in (TEXT, "SECRETTEXT", META, mid) if w in text and (w != mid or w not in asked)]
        check(not leaks, "write-only %s %s: %d, nothing stored comes back%s" %
              (method, tmpl, st, (" (LEAKS %s: %s)" % (leaks, text[:200])) if leaks else ""))
        if method == "POST" and tmpl == "/v1/namespaces/{ns}/memories":
            r = json.loads(text)
            check(st == 202 and r == {"ns": NS, "outcome": "accepted"},
                  "write-only duplicate add: 202 accepted, no id: %s" % r)
        srv.json("DELETE", B, key=KADM)  # a fresh secret for the next route
    for name, args in mcp_calls("__ID__"):
        mid = seed()
        args = json.loads(json.dumps(args).replace("__ID__", mid))
        st, text = mcp(srv, KW, name, args)
        leaks = [w for w in (TEXT, "SECRETTEXT", META, mid)
                 if w in text and (w != mid or w not in json.dumps(args))]
        check(st == 200 and not leaks, "write-only MCP %s: nothing stored comes back%s" %
              (name, (" (LEAKS %s: %s)" % (leaks, text[:300])) if leaks else ""))
        if name == "memory_add":
            sc = json.loads(text)["result"]["structuredContent"]
            check(sc == {"ns": NS, "outcome": "accepted"},
                  "write-only MCP memory_add of a stored text: accepted: %s" % sc)
        srv.json("DELETE", B, key=KADM)

    # ---- the read-only key ---------------------------------------------------
    mid = seed()
    before = snapshot(srv, key=KADM)
    writes = {"POST /v1/namespaces/{ns}/memories", "POST /v1/namespaces/{ns}/memories:batch",
              "PATCH /v1/namespaces/{ns}/memories/{id}", "POST /v1/namespaces/{ns}/memories/{id}:invalidate",
              "DELETE /v1/namespaces/{ns}/memories/{id}", "DELETE /v1/namespaces/{ns}",
              "POST /v1/namespaces/{ns}/memories:delete"}
    for method, tmpl, path, body in routes(mid, "r-new"):
        if tmpl == "/v1/embed":
            continue  # not a store write: the embed right, tried above
        st, r = srv.json(method, path, body, key=KR)
        if method + " " + tmpl in writes:
            check(is_error(st, r, 403, "REMEM_EFORBIDDEN"), "read-only %s %s: 403 (%s)" % (method, tmpl, st))
        else:
            check(st < 500, "read-only %s %s: %d" % (method, tmpl, st))
    for name, args in mcp_calls(mid):
        st, text = mcp(srv, KR, name, args)
        res = json.loads(text).get("result", {})
        if name in ("memory_add", "memory_update", "memory_invalidate", "memory_forget"):
            check(res.get("isError") is True and "no write right" in text,
                  "read-only MCP %s: a tool error" % name)
        elif "ns" not in args:  # store-wide: the key is on t:*, not "*"
            check(res.get("isError") is True and "over every namespace" in text and TEXT not in text,
                  "read-only MCP %s naming no namespace: store-wide, a tool error" % name)
        else:
            check(not res.get("isError"), "read-only MCP %s reads" % name)
    after = snapshot(srv, key=KADM)
    # Reads touch (access_count); compare what a write would change.
    strip = lambda e: "\n".join(json.dumps({k: v for k, v in json.loads(l).items()
                                            if k not in ("accessed_at", "access_count")}, sort_keys=True)
                                for l in e.decode().splitlines())
    check(strip(after[0]) == strip(before[0]) and after[1] == before[1] and after[2] == before[2],
          "the read-only key changed nothing")
finally:
    srv.stop()
    srv.kill()
finish()
EOF
