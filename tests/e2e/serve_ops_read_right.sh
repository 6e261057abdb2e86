#!/usr/bin/env bash
# serve_ops_read_right.sh: an operation whose answer shows what others
# stored needs the read right as well as the write right. reflect (the
# insights' text), summarize (the summary) and lesson.hints (the rules)
# are tried over HTTP and MCP with a write-only key on a namespace holding
# another writer's secret text: each is refused (403, a tool error) and
# nothing of the secret comes back, and the store is unchanged; a key with
# read and write runs each of them.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
exec python3 - "$root" <<'PY'
import json, os, sys, tempfile
sys.path.insert(0, sys.argv[1] + "/tests/e2e")
from serve_util import *

tmp = tempfile.mkdtemp(prefix="remem-opsright-")
keys_path = os.path.join(tmp, "keys.json")
KW, KRW, KADM = "secret-w-1", "secret-rw-2", "secret-adm-3"
with open(keys_path, "w") as f:
    json.dump({"keys": [hash_key(KW, "writer", ["t:*"], ["write"]),
                        hash_key(KRW, "both", ["t:*"], ["read", "write"]),
                        hash_key(KADM, "operator", ["*"], ["admin"])]}, f)
NS, SECRET = "t:one", "SECRETRULE7731"

CALLS = [("reflect", {"ns": NS, "method": "extractive"}),
         ("summarize", {"ns": NS, "method": "extractive", "count": 2}),
         ("lesson.hints", {"ns": NS, "domain": "sqlite", "task": "orders table query"})]

def seed(srv):
    for i in range(6):
        st, r = srv.json("POST", "/v1/namespaces/%s/memories" % NS,
                         {"text": "the orders table %s holds row %d" % (SECRET, i), "importance": 0.2,
                          "tier": "long"},
                         key=KADM)
        assert st in (200, 201), (st, r)
    st, r = srv.json("POST", "/v1/lesson/add",
                     {"ns": NS, "domain": "sqlite", "rule": "query the orders table %s" % SECRET},
                     key=KADM)
    assert st == 200, (st, r)

def mcp(srv, key, name, args):
    msg = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": name.replace(".", "_"), "arguments": args}}
    st, _, body = srv.request("POST", "/mcp", msg, key=key)
    return st, body.decode(errors="replace")

srv = Server(args=["--keys", keys_path, "--tools", "all"])
try:
    seed(srv)
    st, ops = srv.json("GET", "/v1/operations", None, key=KADM)
    rights = {o["name"]: o["right"] for o in ops["operations"]} if isinstance(ops, dict) else \
             {o["name"]: o["right"] for o in ops}
    before = snapshot(srv, key=KADM)
    for op, args in CALLS:
        check(rights.get(op) == "read+write", "%s declares the read+write right (%s)" % (op, rights.get(op)))
        st, _, data = srv.request("POST", "/v1/" + op.replace(".", "/"), args, key=KW)
        text = data.decode(errors="replace")
        check(st == 403 and SECRET not in text,
              "write-only HTTP %s: 403, nothing stored comes back (%d %s)" % (op, st, text[:160]))
        st, text = mcp(srv, KW, op, args)
        res = json.loads(text).get("result", {})
        check(res.get("isError") is True and SECRET not in text,
              "write-only MCP %s: a tool error, nothing stored comes back (%s)" % (op, text[:160]))
    after = snapshot(srv, key=KADM)
    check(after == before, "the write-only key changed nothing")
    for op, args in CALLS:
        st, r = srv.json("POST", "/v1/" + op.replace(".", "/"), args, key=KRW)
        check(st == 200, "a read+write key runs %s (%d %s)" % (op, st, str(r)[:160]))
finally:
    srv.stop()
    srv.kill()
finish()
PY
