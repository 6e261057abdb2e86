#!/usr/bin/env bash
# serve_heap.sh: `remem serve` says which allocator it runs on and what its
# heap holds, and gives back the pages a churning namespace cache frees
# (server/heap.c), against a real server on a real SQLite file:
#   1. /metrics names the allocator: jemalloc when the binary links it (the
#      default build), glibc's malloc otherwise;
#   2. 300 namespaces of 10 memories recalled from 4 threads under a 2 MB
#      cache budget: the cache evicts, and the bytes the allocator reports
#      allocated are at least the bytes the cache accounts for;
#   3. a few seconds after the churn stops, the allocator holds at most the
#      allocated bytes plus a quarter (and 16 MB of slack): what evictions
#      freed went back to the system;
#   4. the server's answers through all this are 200s;
#   5. a namespace larger than the whole budget answers, and each of its
#      loads is counted as oversized (stats and /metrics), the small ones
#      never;
#   6. /metrics has the cache's series from the first scrape, before any
#      load (the budget, zero loads and evictions), and after the churn
#      they are the loads, evictions, namespaces and bytes `stats` gives.
# Under a sanitizer the allocator is the sanitizer's and neither jemalloc's
# nor glibc's figures describe it: 2 and 3 report SKIP there.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
exec python3 - "$root" <<'EOF'
import json, os, re, subprocess, sys, threading, time
sys.path.insert(0, sys.argv[1] + "/tests/e2e")
from serve_util import *

N_NS, PER_NS = 300, 10
tmp, db = scratch_store("remem-heap-")
words = ("kettle garden harbour violin ledger meadow lantern orchard compass "
         "pebble ribbon thimble walnut beacon canyon").split()
with open(os.path.join(tmp, "m.jsonl"), "w") as f:
    for n in range(N_NS):
        for i in range(PER_NS):
            t = " ".join(words[(n * 7 + i * 3 + k) % len(words)] for k in range(12))
            f.write(json.dumps({"ns": "u:%03d" % n, "text": "%s note %d of user %d" % (t, i, n)}) + "\n")
    # One namespace that alone outgrows the 2 MB budget (~4 KB a memory).
    for i in range(1500):
        f.write(json.dumps({"ns": "big", "text": "%s big note %d" % (words[i % len(words)], i)}) + "\n")
rc, out, err = cli_for(db)("--embedder", "hash", "import", os.path.join(tmp, "m.jsonl"))
check(rc == 0, "import of %d memories in %d namespaces (%s)" % (N_NS * PER_NS, N_NS, err.strip()[-200:]))

libs = subprocess.run(["ldd", BIN], capture_output=True, text=True).stdout
sanitized = "libasan" in libs or "libubsan" in libs
want = "jemalloc" if "libjemalloc" in libs else "glibc"

srv = Server(db=db, args=["--embedder", "hash", "--threads", "4", "--cache-mb", "2"])
try:
    def metrics():
        st, _, body = srv.request("GET", "/metrics")
        assert st == 200, st
        text = body.decode()
        def val(name):
            m = re.search(r"^%s (\d+)$" % name, text, re.M)
            return int(m.group(1)) if m else None
        m = re.search(r'^remem_heap_info\{allocator="([^"]*)"\} 1$', text, re.M)
        return (m.group(1) if m else None, val("remem_heap_allocated_bytes"),
                val("remem_heap_held_bytes"))

    def cache_series():
        st, _, body = srv.request("GET", "/metrics")
        assert st == 200, st
        return {m.group(1): float(m.group(2)) for m in
                re.finditer(r"^remem_cache_(\w+) ([0-9.e+-]+)$", body.decode(), re.M)}

    c0 = cache_series()
    check(c0.get("budget") == 2 << 20 and c0.get("loads_total") == 0
          and c0.get("evictions_total") == 0 and c0.get("oversized_loads_total") == 0
          and c0.get("namespaces") == 0
          and "bytes" in c0 and "hit_ratio" in c0,
          "/metrics shows the cache before its first load: %s" % c0)

    name, alloc0, held0 = metrics()
    check(name is not None and name.startswith(want),
          "/metrics names the allocator: %r (the binary links %s)" % (name, want))

    statuses = []
    def worker(k):
        for r in range(3):
            for n in range(k, N_NS, 4):
                st, _ = srv.json("POST", "/v1/recall",
                                 {"ns": "u:%03d" % n, "query": words[(n + r) % len(words)], "k": 5})
                statuses.append(st)
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads: t.start()
    for t in threads: t.join()
    check(len(statuses) == 3 * N_NS and all(s == 200 for s in statuses),
          "%d recalls from 4 threads, all 200 (%s)" % (len(statuses), sorted(set(statuses))))
    _, stats = srv.json("GET", "/v1/stats")
    cache = stats["cache"]
    check(cache["evictions"] > 0 and cache["bytes"] <= cache["budget"],
          "the 2 MB budget held and evicted: %d evictions, %d of %d bytes" %
          (cache["evictions"], cache["bytes"], cache["budget"]))
    # Counters and gauges are exact once the four threads are done (the
    # gauges are read from the cache's totals at each scrape).
    check(cache["oversized_loads"] == 0, "no small namespace counted as oversized")
    c1 = cache_series()
    check(c1.get("loads_total") == cache["loads"] and c1.get("evictions_total") == cache["evictions"]
          and c1.get("namespaces") == cache["namespaces"] and c1.get("bytes") == cache["bytes"]
          and 0 <= c1.get("hit_ratio", -1) <= 1,
          "/metrics after the churn agrees with stats: %s against %s" % (c1, cache))
    big = [srv.json("POST", "/v1/recall", {"ns": "big", "query": "kettle note", "k": 3})
           for _ in range(2)]
    _, stats = srv.json("GET", "/v1/stats")
    c2 = cache_series()
    check(all(st == 200 and len(a["hits"]) == 3 for st, a in big)
          and stats["cache"]["oversized_loads"] == 2 and c2.get("oversized_loads_total") == 2
          and stats["cache"]["bytes"] <= stats["cache"]["budget"],
          "a namespace over the whole budget answers, and its two loads count as oversized: %s"
          % stats["cache"])
    if sanitized:
        print("SKIP: the heap's figures under a sanitizer's allocator")
    else:
        _, alloc1, held1 = metrics()
        check(alloc1 is not None and alloc1 >= cache["bytes"],
              "the allocator's allocated bytes (%s) cover the cache's accounted %d" %
              (alloc1, cache["bytes"]))
        held = None
        for _ in range(40):   # the allocator's decay (1 s) or glibc's trim (5 s)
            time.sleep(0.25)
            _, alloc, held = metrics()
            if held <= alloc * 1.25 + (16 << 20):
                break
        check(held is not None and held <= alloc * 1.25 + (16 << 20),
              "after the churn, held %d bytes against %d allocated: the freed pages went back"
              % (held, alloc))
finally:
    srv.stop()
finish()
EOF
