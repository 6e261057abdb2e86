#!/usr/bin/env bash
# serve_keys.sh: tenant isolation in `remem serve --keys`. Two keys scoped
# to a:* and b:*, each tried against the other's namespaces on every route
# (read, list, count, write, by id, recall, export, stats, metrics, MCP
# tools): each attempt is refused (403) or filtered, and the other's store
# is unchanged afterwards. No key or a wrong key gets 401 everywhere but
# /healthz, /openapi.json and the inspector's files (/ui: no data in them);
# a read-only key cannot write; only admin
# purges and clears; keys files are checked at startup.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
exec python3 - "$root" <<'EOF'
import json, os, subprocess, sys, tempfile
sys.path.insert(0, sys.argv[1] + "/tests/e2e")
from serve_util import *

tmp = tempfile.mkdtemp(prefix="remem-keys-")
keys_path = os.path.join(tmp, "keys.json")
KA, KB, KADM, KRO, KAADM = "secret-a-1", "secret-b-2", "secret-admin-3", "secret-ro-4", "secret-a-admin-5"
entries = [hash_key(KA, "tenant-a", ["a:*"], ["read", "write"]),
           hash_key(KB, "tenant-b", ["b:*"], ["read", "write"]),
           hash_key(KADM, "operator", ["*"], ["admin"]),
           hash_key(KRO, "a-reader", ["a:*"], ["read"]),
           hash_key(KAADM, "a-admin", ["a:*"], ["admin"])]
with open(keys_path, "w") as f:
    json.dump({"keys": entries}, f)
raw = open(keys_path).read()
check(KA not in raw and KB not in raw and all(len(e["sha256"]) == 64 for e in entries),
      "the keys file holds hashes, not secrets")

# Keys may be served on any address; here 0.0.0.0 proves the loopback rule
# is lifted with keys (the test still connects over loopback).
srv = Server(args=["--keys", keys_path, "--listen", "0.0.0.0:0", "--tools", "all"])
try:
    check(any("5 API keys" in l for l in srv.banner), "banner counts the keys")
    # ---- data of both tenants, written by each tenant itself -------------
    data = {"a": ("alpha", KA), "b": ("bravo", KB)}
    for t, (word, key) in data.items():
        for ns in ("%s:one" % t, "%s:two" % t):
            st, r = srv.json("POST", "/v1/namespaces/%s/memories:batch" % ns, key=key, body={"memories": [
                {"id": "%s-1" % t, "text": "%s secret plan number one for %s" % (word, ns)},
                {"id": "shared", "text": "%s shared id memory in %s" % (word, ns)},
                {"id": "%s-3" % t, "text": "%s third memory about the %s project" % (word, ns)},
                {"id": "%s-%s" % (t, ns[2:]), "text": "%s memory only in %s" % (word, ns)}]})
            check(st == 201, "%s writes its own namespace %s" % (t, ns))

    snap = snapshot(srv, KADM)

    # ---- no key, wrong key -----------------------------------------------
    doc = srv.json("GET", "/openapi.json")[1]
    for path, ops in doc["paths"].items():
        for method in ops:
            p = path.replace("{ns}", "a:one").replace("{id}", "a-1").replace("{name}", "stream").replace("{operation}", "memory/get").replace("{file}", "app.js")
            body = {} if method in ("post", "patch") else None
            if path in ("/ui", "/ui/{file}"):  # the inspector's files: no data, public
                st, _, data_ = srv.request(method.upper(), p, body)
                check(st == 200 and b"SECRET" not in data_, "%s %s is public and holds no data" % (method.upper(), path))
                continue
            st, r = srv.json(method.upper(), p, body)
            if path in ("/healthz", "/openapi.json"):
                check(st == 200, "%s %s is public" % (method.upper(), path))
                continue
            check(st == 401, "no key: %s %s -> 401 (got %d)" % (method.upper(), path, st))
            st, hd, _ = srv.request(method.upper(), p, body, key="not-a-key")
            check(st == 401 and "bearer" in hd.get("www-authenticate", "").lower(),
                  "wrong key: %s %s -> 401 with a challenge (got %d)" % (method.upper(), path, st))
    st, _, _ = srv.request("GET", "/v1/namespaces", headers={"Authorization": "Basic " + KA})
    check(st == 401, "a non-Bearer scheme is no key")

    # ---- every route, each tenant against the other ---------------------
    def refused(st, r, what):
        return check(is_error(st, r, 403, "REMEM_EFORBIDDEN"), what + " -> 403 (got %d %s)" % (st, r))

    for me, other in (("a", "b"), ("b", "a")):
        word, key = data[me]
        oword = data[other][0]
        ons = "%s:one" % other
        ob = "/v1/namespaces/" + ons
        oid = "%s-1" % other
        tag = "%s on %s:" % (me, other)
        refused(*srv.json("POST", ob + "/memories", {"text": "planted"}, key), tag + " add")
        refused(*srv.json("POST", ob + "/memories:batch", {"memories": [{"text": "planted"}]}, key), tag + " batch")
        refused(*srv.json("GET", ob + "/memories/" + oid, key=key), tag + " get")
        refused(*srv.json("GET", ob + "/memories/nonexistent", key=key), tag + " get of a missing id (no existence leak)")
        refused(*srv.json("PATCH", ob + "/memories/" + oid, {"text": "changed"}, key), tag + " update")
        refused(*srv.json("POST", ob + "/memories/" + oid + ":invalidate", None, key), tag + " invalidate")
        refused(*srv.json("DELETE", ob + "/memories/" + oid, key=key), tag + " forget")
        refused(*srv.json("DELETE", ob + "/memories/" + oid + "?purge=true", key=key), tag + " purge")
        refused(*srv.json("GET", ob + "/memories/" + oid + "/history", key=key), tag + " history")
        refused(*srv.json("GET", ob + "/stats", key=key), tag + " namespace stats (count)")
        refused(*srv.json("GET", ob + "/export", key=key), tag + " export")
        refused(*srv.json("DELETE", ob, key=key), tag + " clear")
        refused(*srv.json("POST", "/v1/recall", {"namespaces": [ons], "text": oword + " secret plan"}, key),
                tag + " recall")
        refused(*srv.json("POST", "/v1/recall", {"namespaces": ["%s:one" % me, ons], "text": "secret plan"}, key),
                tag + " recall over both")
        refused(*srv.json("GET", "/v1/stats", key=key), tag + " store-wide stats (counts of all)")
        refused(*srv.json("GET", "/v1/export", key=key), tag + " store-wide export")
        # filtered views
        st, r = srv.json("GET", "/v1/namespaces", key=key)
        names = [e["ns"] for e in r["namespaces"]] if st == 200 else []
        check(st == 200 and sorted(names) == ["%s:one" % me, "%s:two" % me],
              tag + " namespace list shows only its own: %s" % names)
        st, _, body = srv.request("GET", "/metrics", key=key)
        text = body.decode()
        check(st == 200 and ('namespace="%s:one"' % me) in text and 'namespace="%s:' % other not in text,
              tag + " /metrics lists only its namespaces")
        st, r = srv.json("GET", "/v1/memories/" + oid, key=key)
        check(st == 404, tag + " find-by-id of the other's id -> 404 (got %d)" % st)
        st, r = srv.json("GET", "/v1/memories/shared", key=key)
        check(st == 409 and "2 namespaces" in r["error"]["message"],
              tag + " an id in both tenants counts only its own namespaces (2, not 4)")
        st, hist = srv.json("GET", "/v1/namespaces/%s:one/memories/shared/history" % me, key=key)
        check(st == 200 and hist and all(e["ns"] == "%s:one" % me and oword not in json.dumps(e)
                                         for e in hist),
              tag + " history of an id both tenants use shows only its own")
        st, _, body = srv.request("GET", "/v1/namespaces/%s:one/export" % me, key=key)
        check(st == 200 and oword not in body.decode() and len(body.decode().splitlines()) == 4,
              tag + " export of its own namespace holds only its own")
        st, r = srv.json("GET", "/v1/memories/%s-one" % me, key=key)
        check(st == 200 and r["ns"].startswith(me + ":"), tag + " find-by-id of its own id")
        # own namespace works, and recall over it never returns the other's
        st, r = srv.json("POST", "/v1/recall", {"namespaces": ["%s:one" % me, "%s:two" % me],
                                                "text": oword + " secret plan", "touch": False}, key)
        check(st == 200 and r["hits"] and all(h["ns"].startswith(me + ":") and oword not in h["text"]
                                                for h in r["hits"]), tag + " own recall stays home")

        # ---- MCP tools with the same key -------------------------------
        def tool(name, args):
            msg = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, "arguments": args}}
            st, _, body = srv.request("POST", "/mcp", msg, key=key,
                                      headers={"Accept": "application/json, text/event-stream"})
            return st, json.loads(body) if body else None
        for name, args in (("memory_add", {"ns": ons, "text": "planted by mcp"}),
                           ("recall", {"ns": [ons], "query": oword + " secret"}),
                           ("memory_get", {"ns": ons, "id": oid}),
                           ("memory_update", {"ns": ons, "id": oid, "text": "changed"}),
                           ("memory_invalidate", {"ns": ons, "id": oid}),
                           ("memory_forget", {"ns": ons, "id": oid, "purge": True})):
            st, r = tool(name, args)
            res = r.get("result", {}) if r else {}
            check(st == 200 and res.get("isError") is True and oword + " secret" not in json.dumps(res),
                  tag + " MCP %s refused" % name)
        # naming no namespace is store-wide: refused to a tenant's key, nothing comes back
        st, r = tool("recall", {"query": oword + " secret plan", "touch": False})
        res = r.get("result", {}) if r else {}
        check(st == 200 and res.get("isError") is True and "access denied" in json.dumps(res) and
              oword + " secret" not in json.dumps(res), tag + " MCP recall naming no namespace refused")
        st, r = tool("recall", {"query": oword + " secret plan", "ns": ["%s:one" % me, "%s:two" % me],
                                "touch": False})
        hits = r["result"].get("structuredContent", {}).get("hits", []) if st == 200 else []
        check(st == 200 and hits and all(h["ns"].startswith(me + ":") for h in hits),
              tag + " MCP recall over its own namespaces stays home")
        st, r = tool("namespaces", {})
        check(st == 200 and r["result"].get("isError") is True and
              ("%s:" % other) not in json.dumps(r["result"]), tag + " MCP namespaces: store-wide, refused")
        st, _, _ = srv.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        check(st == 401, "MCP without a key -> 401")

    check(snapshot(srv, KADM) == snap, "after every cross-tenant attempt the store is unchanged")

    # ---- rights ----------------------------------------------------------
    st, r = srv.json("POST", "/v1/namespaces/a:one/memories", {"text": "reader writes"}, KRO)
    check(is_error(st, r, 403), "read-only key cannot add")
    st, r = srv.json("GET", "/v1/namespaces/a:one/memories/a-1", key=KRO)
    check(st == 200, "read-only key reads")
    st, r = srv.json("DELETE", "/v1/namespaces/a:one/memories/a-3?purge=true", key=KA)
    check(is_error(st, r, 403), "purge needs admin")
    st, r = srv.json("DELETE", "/v1/namespaces/a:two", key=KA)
    check(is_error(st, r, 403), "clear needs admin")
    st, r = srv.json("DELETE", "/v1/namespaces/b:two", key=KAADM)
    check(is_error(st, r, 403), "admin of a:* cannot clear b:*")
    check(snapshot(srv, KADM) == snap, "refused rights change nothing")
    st, r = srv.json("DELETE", "/v1/namespaces/a:one/memories/a-3?purge=true", key=KAADM)
    check(st == 200 and r["purged"], "admin of a:* purges in a:*")
    st, r = srv.json("DELETE", "/v1/namespaces/a:two", key=KAADM)
    check(st == 200 and r["deleted"] == 4, "admin of a:* clears a:two")
    st, r = srv.json("GET", "/v1/stats", key=KADM)
    check(st == 200 and r["by_namespace"].get("b:one") == 4 and r["by_namespace"].get("b:two") == 4,
          "b's memories untouched: %s" % (r.get("by_namespace") if st == 200 else st))
    check(srv.stop() == 0, "SIGTERM: exit 0")
finally:
    srv.kill()

# ---- bad keys files are refused at startup ----------------------------
def start_fails(content, needle):
    path = os.path.join(tmp, "bad.json")
    with open(path, "w") as f:
        f.write(content)
    p = subprocess.run([BIN, "--db", os.path.join(tmp, "x.db"), "serve", "--listen", "127.0.0.1:0",
                        "--keys", path], capture_output=True, text=True, timeout=30)
    check(p.returncode == 1 and needle in p.stderr, "keys file refused (%s): %s" % (needle, p.stderr.strip()))

good = entries[0]
start_fails("{not json", "keys file")
start_fails(json.dumps({"keys": [dict(good, sha256="abc")]}), "64 hex digits")
start_fails(json.dumps({"keys": [dict(good, rights=["read", "root"])]}), "rights[1]")
start_fails(json.dumps({"keys": [dict(good, namespaces=[])]}), "namespaces")
start_fails(json.dumps({"keys": [good, dict(good, name="copy")]}), "same secret")
start_fails(json.dumps({"keys": [dict(good, secret="plain")]}), "unknown field")
start_fails(json.dumps({"keys": []}), "holds no keys")

# ---- --new-key appends an entry and prints its secret once --------------
nk = os.path.join(tmp, "new.json")
p = subprocess.run([BIN, "serve", "--new-key", "--keys", nk, "--name", "ingest", "--ns", "c:*",
                    "--rights", "write"], capture_output=True, text=True, timeout=30)
secret = p.stdout.strip()
saved = json.load(open(nk))["keys"] if p.returncode == 0 else []
p2 = subprocess.run([BIN, "serve", "--new-key", "--keys", nk + ".empty", "--ns", ""],
                    capture_output=True, text=True, timeout=30)
check(p2.returncode == 2 and "empty pattern" in p2.stderr and not os.path.exists(nk + ".empty"),
      "--new-key --ns '' is refused: %s" % p2.stderr.strip())
check(p.returncode == 0 and secret and len(saved) == 1 and secret not in open(nk).read() and
      saved[0]["namespaces"] == ["c:*"] and saved[0]["rights"] == ["write"], "--new-key")
srv = Server(args=["--keys", nk])
try:
    st, r = srv.json("POST", "/v1/namespaces/c:x/memories", {"id": "n1", "text": "from the new key"}, secret)
    check(st == 202 and r == {"id": "n1", "ns": "c:x", "outcome": "accepted"},
          "the new key's secret works (write only: 202 accepted): %s" % r)
    st, r = srv.json("GET", "/v1/namespaces/c:x/memories/n1", key=secret)
    check(st == 403, "a write-only key cannot read back")
finally:
    srv.stop()
    srv.kill()
finish()
EOF
