"""serve_util.py: what the end-to-end tests of `remem serve` share (the
serve_*.sh scripts run python3 with this folder on sys.path).

Server starts the real binary ($REMEM_BIN) on a free loopback port (port 0:
the server prints "listening on http://127.0.0.1:PORT" and flushes) with a
temporary store, and speaks HTTP to it with http.client from the standard
library only, so that a test controls every header and byte it sends
(wrong Content-Type, oversized or chunked bodies, no key).
"""
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

BIN = os.environ.get("REMEM_BIN") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "remem")

failures = 0


def check(cond, what):
    """Report one assertion; the test exits non-zero at the end if any failed."""
    global failures
    if cond:
        print("ok   " + what)
    else:
        failures += 1
        print("FAIL " + what)
    sys.stdout.flush()
    return cond


def finish():
    print("%d failure(s)" % failures)
    sys.exit(1 if failures else 0)


class Server:
    def __init__(self, db=None, args=(), env=None):
        self.tmp = tempfile.mkdtemp(prefix="remem-serve-")
        # REMEM_TEST_DB: the store to serve instead of a fresh file (a fresh
        # PostgreSQL database in tests/e2e/postgres_suite.sh).
        self.db = db or os.environ.get("REMEM_TEST_DB") or os.path.join(self.tmp, "store.db")
        self.log_path = os.path.join(self.tmp, "server.log")
        self.args = list(args)
        self.env = dict(os.environ, **(env or {}))
        self.proc = None
        self.start()

    def start(self):
        self.log = open(self.log_path, "ab")
        listen = [] if "--listen" in self.args else ["--listen", "127.0.0.1:0"]
        cmd = [BIN, "--db", self.db, "serve"] + listen + self.args
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=self.log,
                                     env=self.env)
        deadline = time.time() + 30
        self.port = None
        self.banner = []
        while time.time() < deadline:
            line = self.proc.stdout.readline().decode()
            if not line:
                break
            self.banner.append(line)
            m = re.match(r"listening on http://(?:[0-9.]+|\[[0-9a-f:]+\]):(\d+)$",
                         line.strip())
            if m:
                self.port = int(m.group(1))
                break
        if not self.port:
            self.proc.kill()
            raise RuntimeError("remem serve did not start: %s %s" %
                               ("".join(self.banner), open(self.log_path).read()))
        # Keep draining stdout so the server never blocks on a full pipe.
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for line in self.proc.stdout:
            self.banner.append(line.decode())

    def request(self, method, path, body=None, key=None, ctype="application/json",
                headers=None, timeout=30):
        """(status, headers dict with lowercase names, body bytes). body: a
        dict or list (sent as JSON), text, bytes, or an iterator of bytes
        (sent chunked)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        h = dict(headers or {})
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        if isinstance(body, str):
            body = body.encode()
        if body is not None and ctype:
            h["Content-Type"] = ctype
        if key:
            h["Authorization"] = "Bearer " + key
        try:
            conn.request(method, path, body=body, headers=h)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before the whole body went out: read the answer
        r = conn.getresponse()
        data = r.read()
        out = (r.status, {k.lower(): v for k, v in r.getheaders()}, data)
        conn.close()
        return out

    def json(self, method, path, body=None, key=None, **kw):
        """(status, parsed JSON body or None)."""
        status, _, data = self.request(method, path, body, key, **kw)
        try:
            return status, json.loads(data) if data else None
        except ValueError:
            return status, data.decode(errors="replace")

    def stop(self, sig=signal.SIGTERM, timeout=60):
        """Signal the server; its exit status."""
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        finally:
            self.log.close()

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def log_text(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()


def scratch_store(prefix):
    """A fresh temporary folder and the path of a store in it."""
    tmp = tempfile.mkdtemp(prefix=prefix)
    return tmp, os.path.join(tmp, "s.db")


def cli_for(db):
    """A function that runs the remem command on store db and returns
    (returncode, stdout, stderr)."""
    def cli(*args):
        p = subprocess.run([BIN, "--db", db, *args], capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr
    return cli


def snapshot(srv, key=None):
    """Everything a client can see of the store, to compare before and after
    a refused request: every memory (export), the namespaces and the stats
    (but the file size, which a checkpoint may change, and the process's
    cache figures, which are not the store's)."""
    st, _, export = srv.request("GET", "/v1/export", key=key)
    assert st == 200, st
    _, nss = srv.json("GET", "/v1/namespaces", key=key)
    _, stats = srv.json("GET", "/v1/stats", key=key)
    stats.pop("file_bytes", None)
    stats.pop("cache", None)  # the process's cache counters: every request moves them
    return export, nss, stats


def is_error(status, body, want_status, want_code=None):
    """A JSON error reply {"error":{"code","message"}} with that status."""
    ok = (status == want_status and isinstance(body, dict) and
          isinstance(body.get("error"), dict) and body["error"].get("message"))
    if ok and want_code:
        ok = body["error"].get("code") == want_code
    return bool(ok)


def hash_key(secret, name, patterns, rights):
    """A keys-file entry, made by the binary itself (remem serve --hash-key)."""
    cmd = [BIN, "serve", "--hash-key", secret, "--name", name,
           "--rights", ",".join(rights)]
    for p in patterns:
        cmd += ["--ns", p]
    return json.loads(subprocess.check_output(cmd))
