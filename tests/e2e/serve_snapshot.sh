#!/usr/bin/env bash
# serve_snapshot.sh: `remem serve` and the namespace snapshots
# (docs/architecture.md, "Namespace caches and their snapshots"). A server
# loads a namespace by a scan, saves its snapshot on request (POST
# /v1/cache/save) and again when it shuts down gracefully (SIGTERM); the
# next server on the file adopts the snapshot (its stats say
# "source": "snapshot") and answers a recall exactly as a server with
# snapshots off (REMEM_SNAPSHOTS=0), which scans.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
exec python3 - "$root" <<'PYEOF'
import os, sys
sys.path.insert(0, sys.argv[1] + "/tests/e2e")
from serve_util import *

NS = "snapshots"
env = {"REMEM_SNAPSHOT_MIN": "20"}
srv = Server(args=["--threads", "1"], env=env)
snap = srv.db + "-snap/" + NS.encode().hex() + ".snap"
mems = [{"id": "m%d" % i, "text": "memory %d: the %s deploy of the kafka server on day %d" %
         (i, ["green", "blue", "red"][i % 3], i % 7)} for i in range(60)]
st, _ = srv.json("POST", "/v1/namespaces/%s/memories:batch" % NS, {"memories": mems})
check(st in (200, 201), "60 memories added (%s)" % st)
query = {"namespaces": [NS], "text": "blue kafka deploy", "k": 10, "touch": False,
         "now": "2030-01-01T00:00:00Z"}

def answers(s):
    st, res = s.json("POST", "/v1/recall", query)
    check(st == 200 and res["hits"], "recall answers (%s)" % st)
    return [(h["id"], h["score"]) for h in res["hits"]]

def source(s):
    st, o = s.json("GET", "/v1/namespaces/%s/stats" % NS)
    return (o or {}).get("cache", {}).get("source") if st == 200 else None

first = answers(srv)
check(source(srv) == "scan", "the first server scanned the namespace")
st, o = srv.json("POST", "/v1/cache/save", {"ns": NS})
check(st == 200 and o.get("saved") is True and os.path.exists(snap),
      "cache.save wrote the snapshot: %s %s" % (st, o))
os.unlink(snap)
check(srv.stop() == 0, "the server stopped cleanly")
check(os.path.exists(snap), "the graceful shutdown wrote the snapshot again")

srv2 = Server(db=srv.db, args=["--threads", "1"], env=env)
second = answers(srv2)
check(source(srv2) == "snapshot", "the next server adopted the snapshot")
check(second == first, "and answers as the first one did")
check(srv2.stop() == 0, "the second server stopped cleanly")

srv3 = Server(db=srv.db, args=["--threads", "1"], env=dict(env, REMEM_SNAPSHOTS="0"))
third = answers(srv3)
check(source(srv3) == "scan", "with REMEM_SNAPSHOTS=0 the namespace is scanned")
check(third == second, "and the answers are the same")
srv3.stop()
import shutil
for s in (srv, srv2, srv3):
    shutil.rmtree(s.tmp, ignore_errors=True)
finish()
PYEOF
