#!/usr/bin/env bash
# postgres_recall_round_trips.sh: a recall of a namespace that is not
# cached costs ONE round trip to PostgreSQL (issue 17): its namespace row,
# its newest history seq and its rows in a single statement; the recall's
# touches (last access) are buffered and written later, never in the way
# of a read. Counted from the server's own statement log, as
# postgres_round_trips.sh does for adds: a PostgreSQL 15 of its own runs
# with log_statement = 'all', where each "statement: ..." (a simple query)
# or "execute ..." (one extended-protocol statement) line is one round trip.
# Also: the answers equal SQLite's for the same memories, a cached
# namespace's recall is one round trip too, and the touches reach the
# database (at the server's exit).
# SKIP (77) where PostgreSQL cannot be installed or started.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/support/e2e.sh"
e2e_init pg-recall-round-trips
. "$root/tests/support/pg_env.sh"
pg_need_logged
db=$(pg_newdb)

# Five namespaces of three memories each (one import, one batch).
python3 - > "$tmp/m.jsonl" <<'PY'
import json
for n in range(5):
    for t in ("the ferry to island %d leaves at noon" % n,
              "a lighthouse keeper on island %d paints boats" % n,
              "the market of island %d sells figs" % n):
        print(json.dumps({"ns": "c%d" % n, "text": t}))
PY
r import --batch 100 "$tmp/m.jsonl" >/dev/null || fail "import"

# The same answers as SQLite's, for the same memories (fixed ids and
# times): each CLI recall is a new process, so every namespace is read cold
# (on PostgreSQL in the one statement; updated_at is each import's
# time, so left out), in the default and stream
# profiles, one namespace and several, with a filter.
python3 - > "$tmp/same.jsonl" <<'PY'
import json
words = "ferry island noon lighthouse keeper boats market figs harbour storm".split()
for i in range(240):
    t = " ".join(words[(i * k) % len(words)] for k in (1, 3, 7)) + " note %d" % i
    print(json.dumps({"ns": "s%d" % (i % 3), "id": "m%d" % i, "text": t,
                      "created_at": 1700000000000 + i * 3600000,
                      "importance": (i % 10) / 10, "metadata": {"n": i % 4}}))
PY
lite=$tmp/lite.db
"$bin" --db "$lite" import --batch 100 "$tmp/same.jsonl" >/dev/null || fail "import into SQLite"
r import --batch 100 "$tmp/same.jsonl" >/dev/null || fail "import into PostgreSQL"
now=1710000000000
strip='s/"took_ms":[0-9.e-]*,//; s/"updated_at":"[^"]*",//g' # the time taken; the import's time
for q in "ferry island" "storm harbour keeper" "figs"; do
    for args in "--ns s0" "--ns s1 --ns s2" "--ns s0 --ns s1 --ns s2 --profile stream" "--ns s2 --filter {\"n\":1}"; do
        # shellcheck disable=SC2086
        a=$("$bin" --db "$lite" --json recall $args --query "$q" --now $now --touch false --k 8 | sed "$strip")
        # shellcheck disable=SC2086
        b=$(r --json recall $args --query "$q" --now $now --touch false --k 8 | sed "$strip")
        case $a in *'"hits":[{'*) ;; *) fail "no hits on SQLite for $q ($args): $a" ;; esac
        [ "$a" = "$b" ] || fail "recall '$q' ($args) differs: SQLite $a / PostgreSQL $b"
    done
done

export PG_LOG=$pg_own/log PG_DB=$db REMEM_BIN=$bin
python3 - "$root" <<'PY'
import json, os, re, subprocess, sys, time
sys.path.insert(0, sys.argv[1] + "/tests/e2e")
from serve_util import Server, check, finish

log, uri = os.environ["PG_LOG"], os.environ["PG_DB"]

def lines():
    with open(log, errors="replace") as f:
        return f.readlines()

def statements(since, ns):
    """The round trips logged after line `since` by the connection that
    read namespace ns (the one whose statement had ns as its parameter:
    the server's other handles open their connections when they like),
    after a short wait: the backend writes its log as it runs."""
    time.sleep(0.3)
    new = lines()[since:]
    pids = {re.match(r"\[(\d+)\]", l).group(1) for l in new
            if "parameters: $1 = '%s'" % ns in l and l.startswith("[")}
    if len(pids) != 1:
        return ["(no single connection read %s: %s)" % (ns, sorted(pids))] * 99
    pid = pids.pop()
    return [l.rstrip() for l in new
            if l.startswith("[%s]" % pid) and re.search(r"LOG:  (statement|execute)", l)]

def recall(srv, ns, query, touch=True):
    return srv.json("POST", "/v1/recall",
                    {"namespaces": [ns], "text": query, "k": 3, "touch": touch})

def is_flush(l):  # the buffered touches' UPDATE, due once a second
    return "UPDATE memories m SET accessed_at" in l

srv = Server(db=uri, args=["--threads", "1", "--embedder", "hash"])
try:
    st, body = recall(srv, "c0", "ferry")  # the connection opens, the schema is checked
    check(st == 200, "a first recall answers (%s)" % st)
    t0, flushes = time.time(), 0
    for n in (1, 2, 3):
        mark = len(lines())
        st, body = recall(srv, "c%d" % n, "ferry island %d" % n)
        got = statements(mark, "c%d" % n)
        print("cold recall of c%d: %d round trip(s)" % (n, len(got)))
        for l in got:
            print("    " + l[:160])
        check(st == 200 and ("ferry to island %d" % n) in json.dumps(body),
              "the cold recall of c%d finds its memory" % n)
        reads = [l for l in got if not is_flush(l)]
        flushes += len(got) - len(reads)
        check(len(reads) == 1, "a cold recall reads in one round trip (got %d)" % len(reads))
        check(len(got) - len(reads) <= 1, "at most one touch flush rides on a recall")
    # Touches are written at most once a second (per connection), each
    # flush one round trip.
    check(flushes <= 1 + int(time.time() - t0), "touch flushes: %d" % flushes)
    # With touches waiting (c1..c3's), a recall that does not touch is its
    # read alone: the rows it loads carry the waiting touches instead.
    mark = len(lines())
    st, body = recall(srv, "c4", "ferry island 4", touch=False)
    got = statements(mark, "c4")
    print("cold recall of c4, touches waiting: %d round trip(s)" % len(got))
    for l in got:
        print("    " + l[:160])
    check(st == 200 and "ferry to island 4" in json.dumps(body), "the cold recall of c4 finds its memory")
    check(len(got) == 1, "a cold recall with touches waiting is one round trip (got %d)" % len(got))
    mark = len(lines())
    st, body = recall(srv, "c2", "figs market", touch=False)
    got = statements(mark, "c2")
    print("cached recall of c2: %d round trip(s)" % len(got))
    check(st == 200 and "sells figs" in json.dumps(body), "the cached recall finds its memory")
    check(len(got) == 1, "a cached recall is one round trip (got %d)" % len(got))
finally:
    srv.stop()
# The touches were buffered; the server's exit writes them.
out = subprocess.run(["psql", uri, "-Atc",
                      "SELECT count(*) FROM memories WHERE ns IN ('c1','c2','c3') AND access_count > 0"],
                     capture_output=True, text=True)
check(out.returncode == 0 and int(out.stdout.strip() or 0) >= 3,
      "the recalls' touches reached the database (%s)" % out.stdout.strip())
finish()
PY
st=$?
[ "$fails" = 0 ] && [ "$st" = 0 ] && echo "ok"
exit $(( fails > 0 || st != 0 ))
