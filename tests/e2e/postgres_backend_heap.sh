#!/usr/bin/env bash
# postgres_backend_heap.sh: loading namespaces from PostgreSQL does not make
# the PostgreSQL server process give its heap back and take it again at
# every statement (src/store/postgres.c, raise_trim_threshold). A load of
# ten rows grows the server process's glibc heap by ~136 KB and frees it;
# past 128 KB free glibc returns the top of the heap with brk, and the next
# load takes it back: two brk calls, page faults and TLB flushes per load,
# a third of PostgreSQL's CPU per recall in the tenant benchmark
# (bench/README.md). Counted here with strace on the server process that
# serves `remem serve`'s one worker: 600 recalls of namespaces not in the
# cache (a 1 MB budget over 200 namespaces of 10 memories, recalled in
# turn), at most 10 brk calls in all (2 with the fix; 42 before it, and
# two a load under the benchmark's load).
# SKIP (77) where PostgreSQL cannot be started, where strace is missing or
# may not trace the server's processes.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/support/e2e.sh"
e2e_init pg-backend-heap
command -v strace >/dev/null || { echo "SKIP: strace is not installed"; exit 77; }
. "$root/tests/support/pg_env.sh"
pg_need
db=$(pg_newdb)

python3 - > "$tmp/m.jsonl" <<'PY'
import json, random
rnd = random.Random(17)
syll = "ka lo mi ne ru sa ti vo be da fe gu hi jo ku".split()
words = ["".join(rnd.choice(syll) for _ in range(rnd.randint(2, 4))) for _ in range(3000)]
for n in range(200):
    for i in range(10):
        t = " ".join(rnd.choice(words) for _ in range(45))
        print(json.dumps({"ns": "u%03d" % n, "text": "%s note %d of user %d" % (t, i, n)}))
PY
r import --batch 200 "$tmp/m.jsonl" >/dev/null || fail "import"

export PG_DB=$db REMEM_BIN=$bin STRACE_OUT=$tmp/brk.txt
python3 - "$root" <<'PY'
import os, subprocess, sys, time
sys.path.insert(0, sys.argv[1] + "/tests/e2e")
from serve_util import Server, check, finish

uri = os.environ["PG_DB"]
srv = Server(db=uri, args=["--embedder", "hash", "--threads", "1", "--cache-mb", "1"])
try:
    def recall(n):
        st, r = srv.json("POST", "/v1/recall", {"ns": "u%03d" % n, "query": "harbour lantern", "k": 3})
        return st
    for n in range(5):
        recall(n)   # the worker's connection is open and warm
    pids = subprocess.run(
        ["psql", "-Atq", uri, "-c",
         "SELECT pid FROM pg_stat_activity WHERE application_name = 'remem'"
         " AND datname = current_database() AND pid <> pg_backend_pid()"],
        capture_output=True, text=True).stdout.split()
    check(len(pids) >= 1, "the server's PostgreSQL connections: %s" % pids)
    _, st0 = srv.json("GET", "/v1/stats")
    args = ["strace", "-q", "-e", "trace=brk", "-o", os.environ["STRACE_OUT"]]
    for p in pids:
        args += ["-p", p]
    tracer = subprocess.Popen(args, stderr=subprocess.PIPE)
    time.sleep(1.0)
    if tracer.poll() is not None:
        print("SKIP: strace may not trace PostgreSQL's processes here: %s" %
              tracer.stderr.read().decode(errors="replace").strip()[:200])
        srv.stop()
        sys.exit(77)
    statuses = [recall((n * 37) % 200) for n in range(600)]
    time.sleep(0.3)
    tracer.terminate()
    tracer.wait()
    _, st1 = srv.json("GET", "/v1/stats")
    loads = st1["cache"]["loads"] - st0["cache"]["loads"]
    check(all(s == 200 for s in statuses), "600 recalls answered 200")
    check(loads >= 550, "the recalls loaded their namespaces from PostgreSQL: %d loads" % loads)
    with open(os.environ["STRACE_OUT"]) as f:
        brk = [l for l in f if "brk(" in l]
    check(len(brk) <= 10,
          "PostgreSQL's server process kept its heap: %d brk calls over %d loads" % (len(brk), loads))
finally:
    srv.stop()
finish()
PY
st=$?
[ $st = 77 ] && exit 77
exit $(( fails > 0 || st != 0 ))
