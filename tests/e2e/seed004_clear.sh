#!/usr/bin/env bash
# seed004_clear.sh: seed 004's clear_memories() of every agent (issue 20,
# fix 9): a pattern clears every namespace it matches from Python's
# db.clear as from the CLI, and over HTTP a key scoped to some namespaces
# that clears "*" clears the namespaces it may administer, and nothing
# else; a key without the admin right is still refused.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
export REMEM_EMBEDDER=hash
exec python3 - "$root" <<'PY'
import json, os, sys
root = sys.argv[1]
sys.path.insert(0, root + "/tests/e2e")
sys.path.insert(0, root + "/bindings/python")
from serve_util import *
import remem

tmp, path = scratch_store("remem-seed004-clear-")
db = remem.connect(path, embedder="hash")
for ns in ("agent:President", "agent:SecDef", "other"):
    db.add(ns, "memory of " + ns)
check(db.clear("agent:*") == 2, "db.clear('agent:*') deletes both agents' memories")
check([x["ns"] for x in db.call("namespaces")["namespaces"]] == ["other"], "other namespaces kept")
db.add("agent:President", "again")
n = db.clear("*")
check(n == 2, "db.clear('*') deletes every namespace's memories: %d" % n)
check(db.call("namespaces")["namespaces"] == [], "nothing left")
db.close()

keys = os.path.join(tmp, "keys.json")
json.dump({"keys": [hash_key("k-agents", "agents", ["agent:*"], ["read", "write", "admin"]),
                    hash_key("k-writer", "writer", ["agent:*"], ["read", "write"]),
                    hash_key("k-all", "all", ["*"], ["read", "write", "admin"])]}, open(keys, "w"))
srv = Server(db=path, args=["--keys", keys])
try:
    for ns in ("agent:a", "agent:b", "other"):
        srv.json("POST", "/v1/memory/add", {"ns": ns, "text": "m " + ns}, key="k-all")
    st, r = srv.json("POST", "/v1/clear", {"ns": "*", "yes": True}, key="k-writer")
    check(st == 403, "a key without the admin right may not clear: %s" % st)
    st, r = srv.json("POST", "/v1/clear", {"ns": "*", "yes": True, "within": ["*"]}, key="k-agents")
    check(st == 200 and r.get("deleted") == 2 and
          sorted(x["ns"] for x in r.get("namespaces", [])) == ["agent:a", "agent:b"],
          "a scoped key clearing * clears the namespaces it may administer: %s %s" % (st, r))
    st, r = srv.json("GET", "/v1/namespaces", key="k-all")
    check([x["ns"] for x in r.get("namespaces", [])] == ["other"], "other namespaces are untouched: %s" % r)
finally:
    srv.stop()
finish()
PY
