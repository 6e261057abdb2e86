#!/usr/bin/env bash
# serve_openapi.sh: the OpenAPI document and the server cannot drift apart.
#   - GET /openapi.json serves exactly docs/openapi.json;
#   - every path and method in the document reaches a route of the running
#     server (never "no route" 404 nor 405);
#   - the route table in server/route_table.c and the document list the same
#     (method, path) pairs, both ways;
#   - the document is sound: every $ref resolves, operationIds are unique,
#     every {param} of a path is declared as a path parameter;
#   - every operation of the table has its own path (POST /v1/a/b) whose
#     request is the operation's schema, and the document is what
#     tools/gen_openapi.py writes from the table (no drift);
#   - an OpenAPI 3.1 validator from npm (tests/openapi/package.json) finds
#     it valid (SKIP when npm cannot install it).
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
exec python3 - "$root" <<'EOF'
import json, re, sys
root = sys.argv[1]
sys.path.insert(0, root + "/tests/e2e")
from serve_util import *

doc = json.load(open(root + "/docs/openapi.json"))
# An operation's own path: POST /v1/a/b (operationId op_a_b), or a route
# at that very path that names the operation (POST /v1/recall).
per_op = {p for p, ops in doc["paths"].items()
          if ops.get("post", {}).get("operationId", "").startswith("op_") or
          p == "/v1/" + ops.get("post", {}).get("x-operation", "-").replace(".", "/")}
documented = {(m.upper(), p) for p, ops in doc["paths"].items() for m, o in ops.items()
              if not o.get("operationId", "").startswith("op_")}

table = set(re.findall(r'\[R_[A-Z_]+\]\s*=\s*\{"([A-Z]+)",\s*"([^"]+)"',
                       open(root + "/server/route_table.c").read()))
check(len(table) >= 20, "read %d routes from server/route_table.c" % len(table))
for m, p in sorted(table - documented):
    check(False, "route %s %s is not in docs/openapi.json" % (m, p))
for m, p in sorted(documented - table):
    check(False, "docs/openapi.json has %s %s, which no route serves" % (m, p))
check(table == documented, "route table and document list the same %d operations" % len(table))

sys.path.insert(0, root + "/bindings/python")
import remem, subprocess
names = [o["name"] for o in remem.operations()]
check(per_op == {"/v1/" + n.replace(".", "/") for n in names},
      "every operation of the table has its own path (%d)" % len(names))
strip = lambda s: {k: strip(v) for k, v in s.items() if not k.startswith("x-")} \
    if isinstance(s, dict) else [strip(v) for v in s] if isinstance(s, list) else s
bad = [o["name"] for o in remem.operations()
       if doc["paths"]["/v1/" + o["name"].replace(".", "/")]["post"]["requestBody"]["content"]
       ["application/json"]["schema"] != strip(o["schema"])]
check(not bad, "each operation's request is its schema %s" % (bad or ""))
p = subprocess.run([sys.executable, root + "/tools/gen_openapi.py", "--check"], capture_output=True,
                   text=True)
check(p.returncode == 0, "docs/openapi.json is what tools/gen_openapi.py writes: " + p.stdout.strip())
vdir = root + "/tests/openapi"
if subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", vdir],
                  capture_output=True, timeout=300).returncode != 0:
    print("SKIP: openapi 3.1 validator: npm could not install tests/openapi's packages")
else:
    p = subprocess.run(["node", vdir + "/validate.mjs", root + "/docs/openapi.json"],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "valid OpenAPI 3.1 (@seriousme/openapi-schema-validator): %s" %
          (p.stdout + p.stderr).strip()[:600])

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
    fill = {"ns": "t:1", "id": "m1", "name": "default", "operation": "memory/get", "file": "app.js"}
    for path in sorted(per_op):  # served by POST /v1/<operation>: GET is a 405 there
        if list(doc["paths"][path]) != ["post"]:
            continue
        st, r = srv.json("GET", path)
        check(st == 405, "%s is an operation's route (GET answers 405, got %d)" % (path, st))
    for path, ops in sorted(doc["paths"].items()):
        for method in sorted(ops):
            if ops[method].get("operationId", "").startswith("op_"):
                continue
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
