#!/usr/bin/env bash
# serve_hardening.sh: what a hostile or careless client found in remem serve
# (issue 8), each kept fixed, each refusal checked to change nothing (the
# export, the namespaces, the stats and the SQL dump's hash before and after
# are equal):
#   - request framing: Content-Length twice (equal or not), Content-Length
#     with Transfer-Encoding, Transfer-Encoding twice, Host twice, HTTP/1.1
#     without Host: 400 with the JSON error, sent over raw sockets;
#   - path captures: %zz (bad percent-encoding), %00, %ff (not UTF-8) in a
#     namespace or an id: 400 naming the field, nothing written;
#   - /v1/embed: its own right (403 without it), 100,000 texts refused with
#     413 naming the limit, and the server's RSS back within 10% of before
#     after a run of large requests;
#   - a busy port is reported as "ADDR:PORT is already in use".
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
exec python3 - "$root" <<'EOF'
import json, os, socket, subprocess, sys, tempfile, time
sys.path.insert(0, sys.argv[1] + "/tests/e2e")
from serve_util import *


def raw(port, data, timeout=5):
    """Send bytes on a fresh connection; (status, parsed JSON body or text)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(data)
    out = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
    except socket.timeout:
        pass
    s.close()
    head, _, body = out.partition(b"\r\n\r\n")
    try:
        status = int(head.split(b" ")[1])
    except (IndexError, ValueError):
        return None, out
    try:
        return status, json.loads(body)
    except ValueError:
        return status, body.decode(errors="replace")


def dump_hash(db):
    """The SQL dump of the store (every table, history)."""
    import hashlib
    return hashlib.sha256(subprocess.check_output(["sqlite3", db, ".dump"])).hexdigest()


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


tmp = tempfile.mkdtemp(prefix="remem-hardening-")
keys_path = os.path.join(tmp, "keys.json")
KW, KE = "secret-rw-1", "secret-embed-2"
with open(keys_path, "w") as f:
    json.dump({"keys": [hash_key(KW, "rw", ["*"], ["read", "write"]),
                        hash_key(KE, "embedder", ["*"], ["embed"])]}, f)

# ---- framing and paths, without keys (loopback) --------------------------
srv = Server()
try:
    st, r = srv.json("POST", "/v1/namespaces/n/memories", {"id": "m1", "text": "the kettle is in the cupboard"})
    check(st == 201, "a memory to protect")
    before = snapshot(srv)
    dump0 = dump_hash(srv.db)
    body = b'{"text":"smuggled in"}'
    post = (b"POST /v1/namespaces/n/memories HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nConnection: close\r\n")
    cases = [
        ("Content-Length twice, different", post + b"Content-Length: %d\r\nContent-Length: 5\r\n\r\n" % len(body) + body,
         "Content-Length"),
        ("Content-Length twice, equal", post + b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n" % (len(body), len(body)) + body,
         "Content-Length"),
        ("Content-Length with Transfer-Encoding",
         post + b"Content-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n" % (len(body), len(body)) + body + b"\r\n0\r\n\r\n",
         "Transfer-Encoding"),
        ("Transfer-Encoding twice",
         post + b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n",
         "Transfer-Encoding"),
        ("HTTP/1.1 without Host",
         b"POST /v1/namespaces/n/memories HTTP/1.1\r\nContent-Type: application/json\r\nConnection: close\r\n"
         b"Content-Length: %d\r\n\r\n" % len(body) + body, "Host"),
        ("Host twice",
         post + b"Host: example.com\r\nContent-Length: %d\r\n\r\n" % len(body) + body, "Host"),
        ("GET without Host", b"GET /v1/namespaces HTTP/1.1\r\nConnection: close\r\n\r\n", "Host"),
    ]
    for what, data, word in cases:
        st, r = raw(srv.port, data)
        check(is_error(st, r, 400, "REMEM_EINVAL") and word in r["error"]["message"],
              "%s: 400 JSON naming %s (%s %s)" % (what, word, st, r))
    check(snapshot(srv) == before and dump_hash(srv.db) == dump0,
          "after the refused framings: export and SQL dump unchanged")
    st, r = raw(srv.port, b"GET /healthz HTTP/1.0\r\n\r\n")
    check(st == 200, "HTTP/1.0 without Host is still served (%s)" % st)
    st, r = raw(srv.port, post + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    check(st == 201, "one Content-Length and one Host: served (%s %s)" % (st, r))
    srv.json("DELETE", "/v1/namespaces/n/memories/" + r["id"] + "?purge=true")
    # Not quite: the purge leaves a history row; compare memories only.
    after = snapshot(srv)
    check(after[0] == before[0], "no refused request wrote a memory")

    before = snapshot(srv)
    dump0 = dump_hash(srv.db)
    for what, path, field in [
            ("%zz in the namespace", "/v1/namespaces/a%zzb/memories", "namespace"),
            ("a trailing % in the namespace", "/v1/namespaces/ab%25%/memories", "namespace"),
            ("%ff in the namespace", "/v1/namespaces/a%ffb/memories", "namespace"),
            ("an overlong UTF-8 form in the namespace", "/v1/namespaces/a%c0%afb/memories", "namespace"),
            ("%00 in the namespace", "/v1/namespaces/a%00b/memories", "namespace"),
            ("%ff in the id", "/v1/namespaces/n/memories/x%ff", "id")]:
        method = "POST" if path.endswith("/memories") else "PATCH"
        st, r = srv.json(method, path, {"text": "bad path"} if method == "POST" else {"importance": 0.1})
        check(is_error(st, r, 400, "REMEM_EINVAL") and ("the %s in the path" % field) in r["error"]["message"],
              "%s: 400 naming the %s (%s %s)" % (what, field, st, r))
    check(snapshot(srv) == before and dump_hash(srv.db) == dump0,
          "after the refused paths: export and SQL dump unchanged")
    st, r = srv.json("POST", "/v1/namespaces/caf%C3%A9/memories", {"text": "valid UTF-8 is fine"})
    check(st == 201, "valid UTF-8 in a namespace is accepted")
    srv.json("DELETE", "/v1/namespaces/caf%C3%A9")
    check(snapshot(srv)[0] == before[0], "refused paths changed nothing")
finally:
    srv.stop()
    srv.kill()

# ---- the busy port --------------------------------------------------------
busy = socket.socket()
busy.bind(("127.0.0.1", 0))
busy.listen(1)
port = busy.getsockname()[1]
p = subprocess.run([BIN, "--db", os.path.join(tmp, "busy.db"), "serve", "--listen", "127.0.0.1:%d" % port],
                   capture_output=True, text=True, timeout=30)
check(p.returncode == 1 and ("127.0.0.1:%d is already in use" % port) in p.stderr and "port 0" not in p.stderr,
      "a busy port is named: %s" % p.stderr.strip())
busy.close()

# ---- /v1/embed: a right of its own, bounded, memory given back -----------
srv = Server(args=["--keys", keys_path])
try:
    st, r = srv.json("POST", "/v1/embed", {"texts": ["hello"]}, key=KW)
    check(is_error(st, r, 403, "REMEM_EFORBIDDEN") and "embed" in r["error"]["message"],
          "a read/write key without the embed right: 403 (%s)" % st)
    st, r = srv.json("POST", "/v1/embed", {"texts": ["hello", "world"]}, key=KE)
    check(st == 200 and len(r["vectors"]) == 2, "the embed key embeds")
    # Warm up as the end does (every worker thread's allocator arena sees
    # a full request), so that "before" and "after" differ only by what
    # the refused requests left behind.
    warm = {"texts": ["some text %d" % i for i in range(256)]}
    for _ in range(12):
        srv.json("POST", "/v1/embed", warm, key=KE)
    rss0 = rss_kb(srv.proc.pid)
    t0 = time.time()
    st, r = srv.json("POST", "/v1/embed", {"texts": ["w%d" % i for i in range(100000)]}, key=KE)
    check(is_error(st, r, 413, "REMEM_ETOOLARGE") and "256 texts" in r["error"]["message"] and
          time.time() - t0 < 5, "100,000 texts: 413 naming the limit of 256 texts (%s)" % st)
    st, r = srv.json("POST", "/v1/embed", {"texts": ["x" * 2000] * 200}, key=KE)
    check(is_error(st, r, 413, "REMEM_ETOOLARGE") and "bytes of text" in r["error"]["message"],
          "400 KB of text: 413 naming the byte limit (%s)" % st)
    st, r = srv.json("POST", "/v1/embed", {"texts": ["t"] * 300}, key=KE)
    check(is_error(st, r, 413), "301 to 100,000 texts are all refused")
    for _ in range(10):
        st, r = srv.json("POST", "/v1/embed", {"texts": ["some text %d" % i for i in range(256)]}, key=KE)
    check(st == 200 and len(r["vectors"]) == 256, "256 texts, the limit, are embedded")
    time.sleep(0.5)
    rss1 = rss_kb(srv.proc.pid)
    # AddressSanitizer's allocator keeps freed memory in quarantine: RSS
    # says nothing there, so the figure is checked on ordinary builds.
    asan = b"libasan" in subprocess.run(["ldd", BIN], capture_output=True).stdout
    if asan:
        print("skip RSS check under AddressSanitizer (%d kB -> %d kB)" % (rss0, rss1))
    else:
        check(rss1 <= rss0 * 1.10, "RSS back within 10%% of before: %d kB -> %d kB" % (rss0, rss1))
finally:
    srv.stop()
    srv.kill()
finish()
EOF
