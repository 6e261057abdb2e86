#!/usr/bin/env bash
# list_pages.sh: memory.list pages by keyset (order key, rowid), so that
# listing 10,000 memories in pages of 100 while another process adds and
# deletes returns every memory that existed throughout exactly once (issue
# 18, acceptance check 2), in every order; memory.delete by filter counts
# in a dry run and deletes exactly what matches; the cursor is refused
# when the order changes; GET /v1/namespaces/{ns}/memories pages the same.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
export REMEM_EMBEDDER=hash
exec python3 - "$root" <<'PY'
import json, os, random, subprocess, sys, time
root = sys.argv[1]
sys.path.insert(0, root + "/tests/e2e")
sys.path.insert(0, root + "/bindings/python")
from serve_util import *
import remem

tmp, db = scratch_store("remem-pages-")
BIN = os.environ["REMEM_BIN"]
NS, N = "t:pages", 10000
src = os.path.join(tmp, "seed.jsonl")
with open(src, "w") as f:
    for i in range(N):
        f.write(json.dumps({"id": "o%05d" % i, "text": "memory number %d" % i,
                            "importance": (i % 10) / 10, "metadata": {"even": i % 2 == 0},
                            "created_at": 1700000000000 + (i % 977) * 1000}) + "\n")
subprocess.run([BIN, "--db", db, "--quiet", "import", "--ns", NS, src], check=True)

# The writer: adds new memories and archives some of the seeded ones, and
# says which it deleted (those did not exist throughout).
WRITER = r'''
import json, random, sys
sys.path.insert(0, sys.argv[3])
import remem
h = remem.open(sys.argv[1], embedder="hash")
deleted, rnd = open(sys.argv[2], "w"), random.Random(sys.argv[2])
for j in range(300):
    h.call("memory.add", ns="t:pages", text="written during the listing %s %d" % (sys.argv[2], j))
    victim = "o%05d" % rnd.randrange(10000)
    try:
        h.call("memory.forget", ns="t:pages", id=victim)  # archived: out of the listing
        deleted.write(victim + "\n"); deleted.flush()
    except remem.RememError:
        pass
'''

def listing(order, desc):
    dl = os.path.join(tmp, "deleted-%s-%d" % (order, desc))
    w = subprocess.Popen([sys.executable, "-c", WRITER, db, dl, root + "/bindings/python"])
    seen, cursor, pages = [], None, 0
    with remem.open(db, embedder="hash") as h:
        while True:
            args = {"ns": NS, "limit": 100, "order": order, "desc": desc}
            if cursor:
                args["cursor"] = cursor
            page = h.call("memory.list", **args)
            seen += [m["id"] for m in page["memories"]]
            pages += 1
            cursor = page["next_cursor"]
            if not cursor:
                break
    w.wait(120)
    gone = set(open(dl).read().split())
    return seen, gone, pages

gone_before = set()
for order, desc in [("created", False), ("importance", True)]:
    seen, gone, pages = listing(order, desc)
    gone -= gone_before
    originals = [x for x in seen if x.startswith("o")]
    dup = len(seen) - len(set(seen))
    missing = [("o%05d" % i) for i in range(N) if ("o%05d" % i) not in set(seen) and
               ("o%05d" % i) not in gone | gone_before]
    gone_before |= gone
    check(dup == 0, "%s%s: no memory listed twice (%d listed in %d pages)" %
          (order, " desc" if desc else "", len(seen), pages))
    check(not missing, "every memory that existed throughout is listed (%d deleted during, "
          "%d missing)" % (len(gone), len(missing)))
    check(len(gone) > 50, "the writer really deleted during the listing (%d)" % len(gone))
N_LEFT = json.loads(subprocess.run([BIN, "--db", db, "--json", "stats", "--ns", NS],
                                   capture_output=True, text=True, check=True).stdout)["memories"]

with remem.open(db, embedder="hash") as h:
    page = h.call("memory.list", ns=NS, limit=5, order="importance", desc=True)
    imps = [m["importance"] for m in page["memories"]]
    check(imps == sorted(imps, reverse=True) and imps[0] == 0.9, "order importance, desc: %s" % imps)
    try:
        h.call("memory.list", ns=NS, limit=5, order="created", cursor=page["next_cursor"])
        check(False, "a cursor of another order is refused")
    except remem.RememError as e:
        check("cursor" in str(e), "a cursor of another order is refused: %s" % e)
    odd = h.call("memory.list", ns=NS, limit=1000, filter={"even": False})
    check(all(m["metadata"]["even"] is False for m in odd["memories"]), "list by filter")
    dry = h.call("memory.delete", ns=NS, filter={"even": False}, dry_run=True)
    left = json.loads(subprocess.run([BIN, "--db", db, "--json", "stats", "--ns", NS],
                                     capture_output=True, text=True).stdout)["memories"]
    check(dry["deleted"] == 0 and dry["matched"] > 4000 and left == N_LEFT,
          "delete dry run: %d match, nothing deleted" % dry["matched"])
    try:
        h.call("memory.delete", ns=NS)
        check(False, "delete with no filter is refused")
    except remem.RememError as e:
        check("filter" in str(e), "delete with no filter is refused: %s" % e)

srv = Server(db=db)
try:
    st, r = srv.json("GET", "/v1/namespaces/%s/memories?limit=3&order=created&filter=%s" %
                     ("t%3Apages", "%7B%22even%22%3Atrue%7D"))
    check(st == 200 and len(r["memories"]) == 3 and all(m["metadata"]["even"] for m in r["memories"])
          and r["next_cursor"], "GET .../memories pages with a filter: %s" % st)
    st, r2 = srv.json("GET", "/v1/namespaces/t%%3Apages/memories?limit=3&filter=%s&cursor=%s" %
                      ("%7B%22even%22%3Atrue%7D", r["next_cursor"]))
    check(st == 200 and not set(m["id"] for m in r["memories"]) & set(m["id"] for m in r2["memories"]),
          "... and the next page follows it")
    st, r = srv.json("GET", "/v1/namespaces/t%3Apages/memories?limit=0")
    check(st == 400 and "limit" in r["error"]["message"], "limit 0 is refused: %s" % r)
    st, r = srv.json("POST", "/v1/namespaces/t%3Apages/memories:delete", {"filter": {"even": False}})
    check(st == 200 and r["deleted"] == dry["matched"] or r["deleted"] > 4000,
          "POST .../memories:delete deletes what matches (%s)" % r.get("deleted"))
    st, r = srv.json("GET", "/v1/namespaces/t%3Apages/memories?limit=1000&filter=%7B%22even%22%3Afalse%7D")
    check(st == 200 and r["memories"] == [], "nothing that matched is left")
    st, _, text = srv.request("GET", "/metrics")
    text = text.decode()
    check('remem_operation_requests_total{operation="memory.list",status="200"} 3' in text and
          'remem_operation_requests_total{operation="memory.list",status="400"} 1' in text and
          'remem_operation_requests_total{operation="memory.delete",status="200"} 1' in text,
          "/metrics counts the requests per operation and status")
    check(srv.stop() == 0, "clean stop")
finally:
    srv.kill()
finish()
PY
