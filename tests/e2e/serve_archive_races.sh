#!/usr/bin/env bash
# serve_archive_races.sh: archive, restore and prune called at once on one
# server, over one archive folder, never fail for a reason of their own
# making. Three clients archive and restore memories of their own (in one
# namespace) and three prune and restore episodes of their own (a
# namespace each) in a loop: no answer may be a 500 ("rename ....pending:
# No such file") or a 404 for a memory the client itself just archived,
# every prune removes exactly its namespace's episodes and its report file
# lists exactly removedCount ids (two prunes never share an id list), no
# prune's id list is left behind, and every memory ends live, once.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
exec python3 - "$root" <<'EOF'
import glob, json, os, sys, threading
sys.path.insert(0, sys.argv[1] + "/tests/e2e")
from serve_util import *

ROUNDS, IDS, EPISODES = 8, 5, 40
srv = Server(env={"REMEM_EMBEDDER": "hash"}, args=["--threads", "8"])
problems, lock = [], threading.Lock()
episode_ids = [set() for _ in range(3)]

def problem(what):
    with lock:
        problems.append(what)

def op(name, body):
    st, r = srv.json("POST", "/v1/" + name.replace(".", "/"), body, timeout=120)
    return st, r

def archiver(t):
    ids = ["m%d_%d" % (t, j) for j in range(IDS)]
    for rnd in range(ROUNDS):
        st, r = op("archive", {"ns": "t:a", "ids": ids})
        if st != 200 or sorted(r.get("archived", [])) != sorted(ids):
            problem("archive %d/%d: %s %s" % (t, rnd, st, json.dumps(r)[:200]))
        for i in ids:
            st, r = op("restore", {"ns": "t:a", "id": i})
            if st != 200 or r.get("restored") != 1:
                problem("restore %s round %d: %s %s" % (i, rnd, st, json.dumps(r)[:200]))

def pruner(t):
    ns = "p:%d" % t
    for rnd in range(ROUNDS):
        st, r = op("prune", {"ns": ns, "now": "2100-01-01T00:00:00Z", "retention_days": 1,
                             "strategy": "none"})
        if st != 200 or r.get("removedCount") != EPISODES:
            problem("prune %s round %d: %s %s" % (ns, rnd, st, json.dumps(r)[:200]))
        elif r.get("report"):
            rep = json.load(open(r["report"]))
            if len(rep["episodesRemoved"]) != rep["removedCount"] or \
                    set(rep["episodesRemoved"]) != episode_ids[t]:
                problem("prune %s round %d: the report lists %d ids for %d removed (%s)" %
                        (ns, rnd, len(rep["episodesRemoved"]), rep["removedCount"],
                         rep["episodesRemoved"][:3]))
        st, r = op("restore", {"ns": ns, "all": True})
        if st != 200 or r.get("restored") != EPISODES:
            problem("restore all %s round %d: %s %s" % (ns, rnd, st, json.dumps(r)[:200]))

try:
    for t in range(3):
        st, r = srv.json("POST", "/v1/namespaces/t:a/memories:batch",
                         {"memories": [{"id": "m%d_%d" % (t, j), "text": "memory %d of client %d" % (j, t)}
                                       for j in range(IDS)]})
        assert st in (200, 201), (st, r)
        for j in range(EPISODES):
            st, r = op("episode.add", {"ns": "p:%d" % t, "prompt": "task %d of %d" % (j, t),
                                       "output": "output %d %d %s" % (j, t, "x" * j),
                                       "meta": {"taskID": "t%d" % j, "projectID": "proj%d" % t}})
            assert st == 200, (st, r)
            episode_ids[t].add(r["id"])
    threads = [threading.Thread(target=archiver, args=(t,)) for t in range(3)] + \
              [threading.Thread(target=pruner, args=(t,)) for t in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    check(not problems, "%d archive/restore/prune calls at once, none failed spuriously (%d did: %s)" %
          (ROUNDS * (3 * (1 + IDS) + 3 * 2), len(problems), problems[:4]))
    st, r = srv.json("GET", "/v1/namespaces")
    counts = {n["ns"]: n["count"] for n in r["namespaces"]}
    want = {"t:a": 3 * IDS, "p:0": EPISODES, "p:1": EPISODES, "p:2": EPISODES}
    check(all(counts.get(k) == v for k, v in want.items()),
          "every memory is live again, once (%s)" % counts)
    arch = srv.db + ".archive"
    check(not glob.glob(os.path.join(arch, ".prune-ids-*")), "no prune id list is left behind")
    rc, out, err = cli_for(srv.db)("check")
    check(rc == 0, "remem check is clean (%s)" % (out + err)[-200:])
finally:
    srv.stop()
    srv.kill()
finish()
EOF
