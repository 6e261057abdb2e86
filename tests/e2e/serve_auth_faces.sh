#!/usr/bin/env bash
# serve_auth_faces.sh: HTTP and MCP make the same access decision for every
# operation. Fifteen keys (read, write, admin, each on "*", "a:*", "[!b]*",
# "?*" and "?") call every operation of the table (GET /v1/operations)
# through POST /v1/<operation> and through its MCP tool, naming no
# namespace, "a:x", "b:y" or "c". Each call carries an argument no schema
# knows, so an allowed call is refused by the argument check (400, or a
# tool error that is not "access denied") and changes nothing; a denied one
# is 403, or the tool error "access denied". The two faces must agree on
# every call, and an operation that names no namespace is allowed only to
# a key on exactly "*" (a glob that matches the text "*" is not store-wide)
# with admin, or with the operation's own right when it only reads.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
exec python3 - "$root" <<'EOF'
import json, os, sys, tempfile
sys.path.insert(0, sys.argv[1] + "/tests/e2e")
from serve_util import *

tmp = tempfile.mkdtemp(prefix="remem-authfaces-")
keys_path = os.path.join(tmp, "keys.json")
PATTERNS = ["*", "a:*", "[!b]*", "?*", "?"]
RIGHTS = ["read", "write", "admin"]
keys, entries = {}, []
for pi, pat in enumerate(PATTERNS):
    for right in RIGHTS:
        secret = "secret-%d-%s" % (pi, right)
        keys[secret] = (pat, right)
        entries.append(hash_key(secret, "k%d%s" % (pi, right), [pat], [right]))
with open(keys_path, "w") as f:
    json.dump({"keys": entries}, f)
NSS = [None, "a:x", "b:y", "c"]

srv = Server(args=["--keys", keys_path, "--tools", "all"])
try:
    admin = "secret-0-admin"
    st, r = srv.json("GET", "/v1/operations", key=admin)
    ops = [o["name"] for o in r["operations"]]
    reads_only = {o["name"]: (o["hints"]["read_only"], o["right"]) for o in r["operations"]}
    check(len(ops) >= 30, "the table lists %d operations" % len(ops))
    msg = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    st, r = srv.json("POST", "/mcp", msg, key=admin)
    names = {t["name"] for t in r["result"]["tools"]}
    tool_of = {o: o.replace(".", "_") for o in ops if o.replace(".", "_") in names}
    check(all(o in tool_of for o in ops), "every operation is an MCP tool")

    def http_allows(key, op, args):
        st, r = srv.json("POST", "/v1/" + op.replace(".", "/"), args, key=key)
        return st != 403, st

    def mcp_allows(key, op, args):
        msg = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": tool_of[op], "arguments": args}}
        st, r = srv.json("POST", "/mcp", msg, key=key)
        res = r.get("result", {}) if isinstance(r, dict) else {}
        text = json.dumps(res)
        return not (res.get("isError") and "access denied" in text), text[:160]

    disagree, wrong_global, odd, calls = [], [], [], 0
    for op in ops:
        for ns in NSS:
            args = {"zz_not_an_argument": 1}
            if ns is not None:
                args["ns"] = ns
            for key, (pat, right) in keys.items():
                h, hs = http_allows(key, op, args)
                m, mt = mcp_allows(key, op, args)
                calls += 1
                if h and hs != 400:
                    odd.append("%s ns=%s: HTTP %s" % (op, ns, hs))
                if h != m:
                    disagree.append("%s ns=%s key %s on %s: HTTP %s (%s), MCP %s (%s)" %
                                    (op, ns, right, pat, h, hs, m, mt))
                ro, op_right = reads_only[op]
                may = pat == "*" and (right == "admin" or (ro and right == op_right))
                if ns is None and (h or m) and not may:
                    wrong_global.append("%s with no ns: %s key on %s allowed" % (op, right, pat))
    check(not disagree, "HTTP and MCP agree on %d calls (%d disagree: %s)" %
          (calls, len(disagree), disagree[:5]))
    check(not odd, "every allowed HTTP call was refused by the argument check, 400 (%s)" % odd[:5])
    check(not wrong_global, "an operation naming no namespace needs admin on \"*\", or its own "
          "right there when it only reads (%d not: %s)" %
          (len(wrong_global), wrong_global[:5]))
    # The glob keys are real namespace keys: "[!b]*" writes a:x, not b:y.
    k = "secret-2-write"
    check(http_allows(k, "decision.add", {"ns": "a:x", "zz": 1})[0] and
          not http_allows(k, "decision.add", {"ns": "b:y", "zz": 1})[0],
          "a write key on [!b]* may write a:x and not b:y")
finally:
    srv.stop()
    srv.kill()
finish()
EOF
