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
#     error) before anything runs;
#   - every core verb (memory.add, add_batch, get, list, update,
#     invalidate, forget, delete, history, recall, stats, namespaces,
#     clear, export, import, lesson.list) gives the same answer and the
#     same refusal on the CLI (remem <words> --args JSON), HTTP (POST
#     /v1/<op>), MCP (tools/call) and Python (db.call);
#   - no face reads a memory's fields or a query by hand: cli/, server/ and mcp/
#     call none of the library's per-verb functions outside the few files
#     allowed below (the streaming import, the demo and benchmark
#     programs, find-by-id).
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
# ---- the faces read arguments only through the table ----
verbs='remem_(add|add_batch|update|invalidate|forget|history|query_parse|recall|recall_json|clear|stats|namespaces|export|memory_init|patch_init|query_init)\('
allowed='^(cli/cmd_demo\.c|cli/cmd_eval\.c|cli/cmd_io\.c|server/maintain\.c|server/export\.c|server/reply\.c):'
hand=$(cd "$root" && grep -nE "$verbs" cli/*.c server/*.c mcp/*.c | grep -vE "$allowed" || true)
if [ -n "$hand" ]; then
    echo "FAIL a face calls a verb by hand instead of through the operations table:"
    echo "$hand"
    exit 1
fi
echo "ok   cli/, server/ and mcp/ call no verb by hand (outside the streaming import/export, demo, eval)"
# the import's streaming path takes its flags from the import operation's schema
grep -q 'remem_op_find("import")' "$root/cli/cmd_io.c" && grep -q 'remem_op_find("export")' "$root/cli/cmd_io.c" ||
    { echo "FAIL import/export do not read their flags by the operations' schemas"; exit 1; }
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

# ---- every core verb on every face ----
import re
VOLATILE = {"took_ms", "now", "accessed_at", "access_count", "file_bytes"}
def norm(v, face=None):
    if isinstance(v, dict):
        return {k: norm(x, face) for k, x in v.items() if k not in VOLATILE}
    if isinstance(v, list):
        return [norm(x, face) for x in v]
    if isinstance(v, str) and face:
        return v.replace(face, "FACE")
    if isinstance(v, float):  # a score's last digit may differ from one load of the cache to the next
        return round(v, 5)
    return v

def via_cli(name, args):
    rc, out, err = cli(*name.split("."), "--args", json.dumps(args), "--json")
    if rc == 0 and name == "export":  # the command streams the lines themselves
        lines = [json.loads(l) for l in out.splitlines() if l.strip()]
        return "ok", {"memories": lines, "count": len(lines)}
    if rc == 0:
        return "ok", json.loads(out)
    lines = [l for l in err.splitlines() if l.startswith("remem: ") and "note:" not in l]
    return "error", lines[-1][len("remem: "):] if lines else err

def via_http(srv, name, args):
    st, r = srv.json("POST", "/v1/" + name.replace(".", "/"), args, key="adm")
    return ("ok", r) if st == 200 else ("error", r["error"]["message"])

def via_mcp(srv, name, args):
    st, _, body = srv.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                              "params": {"name": name.replace(".", "_"), "arguments": args}}, key="adm")
    msg = json.loads(body)
    if "error" in msg:  # a protocol error (an unknown tool): a face that refuses for the wrong reason
        return "error", "JSON-RPC %s" % msg["error"]
    res = msg["result"]
    if res.get("isError"):
        return "error", res["content"][0]["text"]
    return "ok", res.get("structuredContent")

def via_py(name, args):
    try:
        with remem.open(db, embedder="hash") as h:
            return "ok", h.call(name, **args)
    except remem.RememError as e:
        return "error", str(e)

def all_faces(name, args, face_args=None):
    """Each face's (kind, answer); face_args(face) gives per-face arguments
    for a write (its own id), else args for all."""
    out = {}
    srv = Server(db=db, args=["--keys", keys, "--tools", "all"])
    try:
        for face in ("cli", "http", "mcp", "python"):
            a = face_args(face) if face_args else args
            out[face] = (via_cli(name, a) if face == "cli" else via_http(srv, name, a) if face == "http"
                         else via_mcp(srv, name, a) if face == "mcp" else via_py(name, a))
        srv.stop()
    finally:
        srv.kill()
    return out

def same_answer(name, got, face_ids=False):
    kinds = {f: r[0] for f, r in got.items()}
    if not check(set(kinds.values()) == {"ok"}, "%s: every face answers %s" % (name, kinds)):
        print("     ", {f: str(r[1])[:200] for f, r in got.items()})
        return
    answers = {f: json.dumps(norm(r[1], f if face_ids else None), sort_keys=True) for f, r in got.items()}
    check(len(set(answers.values())) == 1, "%s: the same answer on every face" % name) or \
        print("     ", answers)

def same_refusal(name, args, words):
    got = all_faces(name, args)
    # the CLI names a missing required argument as the flag to type
    flag = "--" + words.split(":")[0].replace("_", "-") + " is required" \
        if words.endswith(": is required") else words
    ok = all(r[0] == "error" and (words in r[1] or (f == "cli" and flag in r[1]))
             for f, r in got.items())
    check(ok, "%s refuses %s on every face with %r" % (name, json.dumps(args)[:80], words)) or \
        print("     ", got)

rc, out, err = cli("lesson", "add", "--ns", "t:a", "--domain", "sqlite", "--rule", "list the tables first")
check(rc == 0, "a lesson to list")
READS = [("memory.get", {"ns": "t:a", "id": "m1"}),
         ("memory.list", {"ns": "t:a", "limit": 5}),
         ("memory.history", {"ns": "t:a", "id": "m1"}),
         ("recall", {"ns": "t:a", "query": "deploy disk", "touch": False}),
         ("stats", {"ns": "t:a"}),
         ("namespaces", {}),
         ("export", {"ns": "t:a"}),
         ("lesson.list", {"ns": "t:a"}),
         ("memory.delete", {"ns": "t:a", "filter": {"host": "web-2"}, "dry_run": True})]
for name, args in READS:
    same_answer(name, all_faces(name, args))

WRITES = [("memory.add", lambda f: {"ns": "t:w", "id": "w-" + f, "text": "written by " + f,
                                    "metadata": {"face": f}, "ttl": "7d"}),
          ("memory.update", lambda f: {"ns": "t:w", "id": "w-" + f, "importance": 0.7}),
          ("memory.invalidate", lambda f: {"ns": "t:w", "id": "w-" + f, "reason": "replaced"}),
          ("memory.forget", lambda f: {"ns": "t:w", "id": "w-" + f}),
          ("memory.add_batch", lambda f: {"ns": "t:w", "memories": [{"id": "b-" + f, "text": "batch " + f}]}),
          ("import", lambda f: {"ns": "t:w", "lines": json.dumps({"id": "i-" + f, "text": "imported " + f})}),
          ("memory.delete", lambda f: {"ns": "t:w", "filter": {"$contains": "batch " + f}}),
          ("clear", lambda f: {"ns": "t:c-" + f, "yes": True})]
for name, fa in WRITES:
    same_answer(name, all_faces(name, None, fa), face_ids=True)

REFUSALS = [("memory.add", {"ns": "t:w"}, "text: is required"),
            ("memory.add", {"ns": "t:w", "text": "x", "txt": "y"}, "txt: unknown argument"),
            ("memory.add", {"ns": "t:w", "text": "x", "importance": 2}, "importance: 2 is above the maximum 1"),
            ("memory.add", {"ns": "t:w", "text": "x", "ttl": "soon"}, "ttl: \"soon\" is neither a duration"),
            ("memory.add_batch", {"ns": "t:w", "memories": [{"text": "a"}, {"txt": "b"}]}, "memories[1]"),
            ("memory.update", {"ns": "t:a", "id": "m1"}, "nothing to change"),
            ("memory.get", {"ns": "t:a", "id": "nope"}, "memory.get: no memory"),
            ("memory.list", {"ns": "t:a", "limit": 0}, "limit: 0 is below the minimum 1"),
            ("memory.list", {"ns": "t:a", "cursor": "bogus"}, "cursor: not a cursor"),
            ("memory.delete", {"ns": "t:a"}, "give a filter, kinds or tiers"),
            ("recall", {"ns": "t:a", "query": "x", "k": 1001}, "k: 1001 is above the limit of 1000"),
            ("recall", {"ns": "t:a"}, "query: missing"),
            ("clear", {"ns": "t:a"}, "confirm with yes"),
            ("import", {"ns": "t:w", "lines": '{"txt":"q"}'}, "memories[0]: text: missing or empty")]
with remem.open(db, embedder="hash") as h:
    before = json.dumps(h.call("export"), sort_keys=True)
for name, args, words in REFUSALS:
    same_refusal(name, args, words)
with remem.open(db, embedder="hash") as h:
    check(json.dumps(h.call("export"), sort_keys=True) == before, "the refusals changed nothing")
finish()
PY
