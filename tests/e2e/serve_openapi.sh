#!/usr/bin/env bash
# serve_openapi.sh: the OpenAPI document and the server cannot drift apart.
#   - GET /openapi.json serves exactly docs/openapi.json;
#   - every path and method in the document reaches a route of the running
#     server (never "no route" 404 nor 405);
#   - the route table in server/route_table.c and the document list the same
#     (method, path) pairs, both ways;
#   - the document is sound: every $ref resolves, operationIds are unique,
#     every {param} of a path is declared as a path parameter.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
exec python3 - "$root" <<'EOF'
import json, re, sys
root = sys.argv[1]
sys.path.insert(0, root + "/tests/e2e")
from serve_util import *

doc = json.load(open(root + "/docs/openapi.json"))
documented = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}

table = set(re.findall(r'\[R_[A-Z_]+\]\s*=\s*\{"([A-Z]+)",\s*"([^"]+)"',
                       open(root + "/server/route_table.c").read()))
check(len(table) >= 20, "read %d routes from server/route_table.c" % len(table))
for m, p in sorted(table - documented):
    check(False, "route %s %s is not in docs/openapi.json" % (m, p))
for m, p in sorted(documented - table):
    check(False, "docs/openapi.json has %s %s, which no route serves" % (m, p))
check(table == documented, "route table and document list the same %d operations" % len(table))

# soundness of the document
def resolve(ref):
    node = doc
    for part in ref.lstrip("#/").split("/"):
        node = node[part]
    return node
refs = re.findall(r'"\$ref":\s*"([^"]+)"', json.dumps(doc))
bad = []
for r in refs:
    try:
        resolve(r)
    except KeyError:
        bad.append(r)
check(refs and not bad, "all %d $refs resolve %s" % (len(refs), bad or ""))
ids = [op["operationId"] for ops in doc["paths"].values() for op in ops.values()]
check(len(ids) == len(set(ids)), "operationIds are unique")
for path, ops in doc["paths"].items():
    want = set(re.findall(r"\{(\w+)\}", path))
    for m, op in ops.items():
        have = set()
        for prm in op.get("parameters", []):
            prm = resolve(prm["$ref"]) if "$ref" in prm else prm
            if prm["in"] == "path":
                have.add(prm["name"])
        check(want == have, "%s %s declares its path parameters %s" % (m.upper(), path, sorted(want)))

srv = Server()
try:
    st, _, body = srv.request("GET", "/openapi.json")
    check(st == 200 and json.loads(body) == doc, "GET /openapi.json equals docs/openapi.json")
    check(body == open(root + "/docs/openapi.json", "rb").read(),
          "... byte for byte (embedded at build time)")
    srv.json("POST", "/v1/namespaces/t:1/memories", {"id": "m1", "text": "a memory for the walk"})
    fill = {"ns": "t:1", "id": "m1", "name": "default", "operation": "memory/get"}
    for path, ops in sorted(doc["paths"].items()):
        for method in sorted(ops):
            p = re.sub(r"\{(\w+)\}", lambda mt: fill[mt.group(1)], path)
            body = {} if method in ("post", "patch") else None
            if path == "/mcp" and method == "post":
                body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            st, r = srv.json(method.upper(), p, body)
            routed = st != 405 and not (st == 404 and isinstance(r, dict) and
                                        r.get("error", {}).get("code") == "REMEM_ENOROUTE")
            # GET /mcp is documented as a 405 on purpose (no SSE stream)
            if path == "/mcp" and method == "get":
                routed = st == 405 and "SSE" in r["error"]["message"]
            check(routed, "%s %s is served (got %d)" % (method.upper(), path, st))
    check(srv.stop() == 0, "clean stop")
finally:
    srv.kill()
finish()
EOF
