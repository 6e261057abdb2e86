#!/usr/bin/env bash
# ops_faces.sh: every library operation (remem_ops()) is on every face with
# the same arguments, checks and answers:
#   - the list: `remem --help`, GET /v1/operations, MCP tools/list and
#     Python's remem.operations() name the same operations;
#   - one call (memory.get) gives the same answer from the CLI (--json),
#     HTTP (POST /v1/memory/get), MCP (tools/call memory_get) and Python
#     (db.call and db.memory_get);
#   - the same bad arguments (an unknown key, a wrong type, a missing
#     required one) are refused by each face with the library's message,
#     and an operation the key has no right for is refused (403 / a tool
#     error) before anything runs.
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

tmp, db = scratch_store("remem-ops-")
BIN = os.environ["REMEM_BIN"]
cli = cli_for(db)

rc, out, _ = cli("add", "--ns", "t:a", "--id", "m1", "--text", "the deploy failed on a full disk",
                 "--meta", '{"host":"web-2"}')
check(rc == 0, "a memory to read")

ops = [o["name"] for o in remem.operations()]
check("memory.get" in ops, "Python lists the operations (%d)" % len(ops))
rc, helptext, _ = cli("--help")
check(all(("  " + o.replace(".", " ") + " ") in helptext for o in ops if o != "get"),
      "remem --help lists every operation")

keys = os.path.join(tmp, "keys.json")
json.dump({"keys": [hash_key("adm", "operator", ["*"], ["admin"]),
                    hash_key("other", "other", ["u:*"], ["read", "write"])]}, open(keys, "w"))
srv = Server(db=db, args=["--keys", keys, "--tools", "all"])
try:
    st, r = srv.json("GET", "/v1/operations", key="adm")
    check(st == 200 and [o["name"] for o in r["operations"]] == ops,
          "GET /v1/operations lists the same operations in the same order")
    st, _, body = srv.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, key="adm")
    tools = [t["name"] for t in json.loads(body)["result"]["tools"]]
    check(all(o.replace(".", "_") in tools for o in ops), "MCP lists every operation as a tool")

    args = {"ns": "t:a", "id": "m1"}
    rc, out, err = cli("memory", "get", "--ns", "t:a", "m1", "--json")
    a_cli = json.loads(out) if rc == 0 else None
    st, a_http = srv.json("POST", "/v1/memory/get", args, key="adm")
    st2, _, body = srv.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                               "params": {"name": "memory_get", "arguments": args}}, key="adm")
    a_mcp = json.loads(body)["result"].get("structuredContent")
    srv.stop()
    with remem.open(db, embedder="hash") as h:
        a_py = h.call("memory.get", **args)
        a_py2 = h.memory_get(ns="t:a", id="m1")
    check(a_cli is not None and a_cli["memory"]["metadata"] == {"host": "web-2"}, "CLI answers")
    check(st == 200 and a_http == a_cli, "HTTP gives the CLI's answer")
    check(a_mcp == a_cli, "MCP gives the CLI's answer")
    check(a_py == a_cli and a_py2 == a_cli, "Python gives the CLI's answer")

    srv = Server(db=db, args=["--keys", keys, "--tools", "all"])
    bad = [({"ns": "t:a", "id": "m1", "bogus": 1}, ["--bogus", "1"], "bogus: unknown argument"),
           ({"ns": "t:a", "id": 7}, None, "id: expected string, got an integer"),
           ({"ns": "t:a"}, [], "id: is required")]
    for a, flags, msg in bad:
        st, r = srv.json("POST", "/v1/memory/get", a, key="adm")
        check(st == 400 and msg in r["error"]["message"], "HTTP refuses %s: %s" % (a, r))
        st, _, body = srv.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                   "params": {"name": "memory_get", "arguments": a}}, key="adm")
        res = json.loads(body)["result"]
        check(res.get("isError") is True and msg in res["content"][0]["text"], "MCP refuses %s" % a)
        try:
            with remem.open(db, embedder="hash") as h:
                h.call("memory.get", **a)
            check(False, "Python refuses %s" % a)
        except remem.RememError as e:
            check(msg in str(e), "Python refuses %s: %s" % (a, e))
        if flags is not None:
            rc, _, err = cli("memory", "get", "--ns", "t:a", *(["m1"] if "id" in a else []), *flags)
            check(rc != 0 and (msg in err or "--bogus" in err or "id is required" in err),
                  "the CLI refuses %s: %s" % (flags, err.strip()))
    st, r = srv.json("POST", "/v1/memory/get", {"ns": "t:a", "id": "m1"}, key="other")
    check(st == 403, "a key for other namespaces gets 403, not the memory")
    st, _, body = srv.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                               "params": {"name": "memory_get", "arguments": {"ns": "t:a", "id": "m1"}}},
                              key="other")
    text = body.decode()
    check("isError" in text and "the deploy failed" not in text, "... and a tool error over MCP")
    st, r = srv.json("GET", "/v1/memory/get", key="adm")
    check(st == 405, "GET on an operation is 405 (got %d)" % st)
    st, r = srv.json("POST", "/v1/no/such/op", {}, key="adm")
    check(st == 404, "an unknown operation is 404")
    check(srv.stop() == 0, "clean stop")
finally:
    srv.kill()
finish()
PY
