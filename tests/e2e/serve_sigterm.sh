#!/usr/bin/env bash
# serve_sigterm.sh: SIGTERM while several clients stream adds (single and
# batch). The server must exit 0, and every add that got a 2xx must be in
# the store afterwards (checked by id from a fresh server on the same
# file). While it drains, every request sent on an already open (kept-alive)
# connection gets its answer or a 503 with the JSON error, never a dropped
# connection; only new connections are refused once the socket is closed.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
exec python3 - "$root" <<'EOF'
import http.client, json, signal, sys, threading, time
sys.path.insert(0, sys.argv[1] + "/tests/e2e")
from serve_util import *

srv = Server(args=["--threads", "4"])
acked, statuses, lock = [], {}, threading.Lock()
stop = threading.Event()

def writer(t):
    n = 0
    conn = None
    while not stop.is_set():
        reused = conn is not None
        try:
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
            if n % 5 == 4:  # every fifth request a batch of three
                ids = ["t%d-%d-%d" % (t, n, i) for i in range(3)]
                body = {"memories": [{"id": i, "text": "batch memory %s about the weather" % i} for i in ids]}
                path = "/v1/namespaces/load/memories:batch"
            else:
                ids = ["t%d-%d" % (t, n)]
                body = {"id": ids[0], "text": "observation %d of writer %d: the light turned green" % (n, t)}
                path = "/v1/namespaces/load/memories"
            n += 1
            conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
            r = conn.getresponse()
            data = r.read()
            with lock:
                statuses[r.status] = statuses.get(r.status, 0) + 1
                if r.status == 503:
                    try:
                        ok503 = json.loads(data)["error"]["code"] == "REMEM_ESHUTDOWN"
                    except (ValueError, KeyError, TypeError):
                        ok503 = False
                    if not ok503:
                        statuses["503 not JSON"] = statuses.get("503 not JSON", 0) + 1
                if 200 <= r.status < 300:
                    acked.extend(ids)
            if r.getheader("Connection", "").lower() == "close":
                conn.close()
                conn = None
        except (OSError, http.client.HTTPException):
            if conn:
                conn.close()
            conn = None
            with lock:
                # A request on a kept-alive connection dropped unanswered
                # (the server answers each with 503 and Connection: close
                # before it stops); a refused new connection is fine.
                key = "dropped" if reused else "conn"
                statuses[key] = statuses.get(key, 0) + 1
            if stop.wait(0.01):
                break

# Clients idle on a kept-alive connection when the signal comes, then
# asking again shortly after: each must get the 503, not a dropped
# connection (the server used to stop as soon as nothing was in flight).
signalled = threading.Event()
late = []

def idler(t):
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    conn.request("GET", "/healthz")
    conn.getresponse().read()
    signalled.wait()
    time.sleep(0.05 + 0.05 * t)
    try:
        conn.request("GET", "/healthz")
        r = conn.getresponse()
        body = r.read()
        late.append((r.status, json.loads(body)["error"]["code"] if r.status == 503 else None))
    except (OSError, http.client.HTTPException, ValueError, KeyError) as e:
        late.append(("dropped", repr(e)))
    conn.close()

idlers = [threading.Thread(target=idler, args=(t,)) for t in range(4)]
for th in idlers:
    th.start()
threads = [threading.Thread(target=writer, args=(t,)) for t in range(6)]
for th in threads:
    th.start()
time.sleep(2.0)
with lock:
    before = len(acked)
check(before > 20, "clients are streaming adds (%d acknowledged before the signal)" % before)
t0 = time.time()
threading.Timer(0.01, signalled.set).start()
status = srv.stop(signal.SIGTERM)
took = time.time() - t0
time.sleep(0.3)
stop.set()
for th in threads + idlers:
    th.join()
check(len(late) == 4 and all(x == (503, "REMEM_ESHUTDOWN") for x in late),
      "requests on idle kept-alive connections during the drain get the JSON 503: %s" % late)
check(status == 0, "exit status 0 after SIGTERM (took %.2f s)" % took)
check(took < 20, "drained within the grace period")
check("finishing" in "".join(srv.banner) and "stopped" in "".join(srv.banner),
      "the server said it was finishing and stopped")
others = {k: v for k, v in statuses.items() if k not in (200, 201, 503, "conn")}
check(not others, "only 2xx, a JSON 503 while draining, or a refused new connection: %s" % statuses)

srv2 = Server(db=srv.db)
try:
    st, _, body = srv2.request("GET", "/v1/namespaces/load/export")
    stored = {json.loads(l)["id"] for l in body.decode().splitlines()}
    missing = [i for i in acked if i not in stored]
    check(st == 200 and not missing, "all %d acknowledged adds are in the store (%d rows; missing %s)"
          % (len(acked), len(stored), missing[:5]))
    check(len(stored) >= len(acked), "no acknowledged add lost, none invented")
    check(srv2.stop() == 0, "the reopened store serves and stops cleanly")
finally:
    srv2.kill()
finish()
EOF
