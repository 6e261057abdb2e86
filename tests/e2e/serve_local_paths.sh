#!/usr/bin/env bash
# serve_local_paths.sh: no file location comes from a request. Every
# argument that names a folder or a store file (archive_location of
# archive, restore, archive.list, prune, maintain; store of eval.lessons)
# is marked "x-local" in its operation's schema; over HTTP it is refused
# with 400 naming it, as an MCP tool (over /mcp and over `remem mcp`) it is
# a tool error naming it, and nothing is created where it pointed, while
# the CLI still takes it. Then the archive's recovery: it walks only
# remem's own YYYY/MM/DD layout, so a .part file behind a symbolic link or
# in a folder of another name survives, and the id list a killed prune
# left behind is removed.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
exec python3 - "$root" <<'EOF'
import json, os, shutil, subprocess, sys, tempfile
sys.path.insert(0, sys.argv[1] + "/tests/e2e")
from serve_util import *

os.environ["REMEM_EMBEDDER"] = "hash"
tmp = tempfile.mkdtemp(prefix="remem-localpaths-")
keys_path = os.path.join(tmp, "keys.json")
KADM, KREAD = "secret-admin-1", "secret-read-a-2"
with open(keys_path, "w") as f:
    json.dump({"keys": [hash_key(KADM, "operator", ["*"], ["admin"]),
                        hash_key(KREAD, "reader", ["a:*"], ["read"])]}, f)
WANT = {("archive", "archive_location"), ("restore", "archive_location"),
        ("archive.list", "archive_location"), ("prune", "archive_location"),
        ("maintain", "archive_location"), ("eval.lessons", "store")}
evil = os.path.join(tmp, "evil")

def args_for(op, arg, where):
    a = {"ns": "a:x", arg: where}
    if op == "eval.lessons":
        a = {"waves": 1, arg: where}
    if op == "archive":
        a["ids"] = ["m1"]
    if op == "restore":
        a["all"] = True
    return a

srv = Server(args=["--keys", keys_path, "--tools", "all"])
try:
    st, r = srv.json("GET", "/v1/operations", key=KADM)
    marked = {(o["name"], k) for o in r["operations"]
              for k, p in o["schema"].get("properties", {}).items() if p.get("x-local")}
    check(WANT <= marked, "the schemas mark every path argument x-local (missing %s)" % (WANT - marked))
    msg = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    st, r = srv.json("POST", "/mcp", msg, key=KADM)
    by_name = {t["name"]: t for t in r["result"]["tools"]}
    tools = {op: by_name[op.replace(".", "_")] for op, _ in WANT if op.replace(".", "_") in by_name}
    for op, arg in sorted(WANT):
        where = os.path.join(evil, "http-" + op)
        st, r = srv.json("POST", "/v1/" + op.replace(".", "/"), args_for(op, arg, where), key=KADM)
        check(st == 400 and arg + ":" in json.dumps(r),
              "HTTP %s with %s: 400 naming it (%s %s)" % (op, arg, st, json.dumps(r)[:160]))
        check(not os.path.exists(where), "HTTP %s: nothing made at %s" % (op, where))
        t = tools.get(op, {})
        check(arg not in t.get("inputSchema", {}).get("properties", {}),
              "MCP tool of %s does not offer %s" % (op, arg))
        where = os.path.join(evil, "mcp-" + op)
        msg = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": t.get("name", op), "arguments": args_for(op, arg, where)}}
        st, r = srv.json("POST", "/mcp", msg, key=KADM)
        res = r.get("result", {}) if isinstance(r, dict) else {}
        check(res.get("isError") is True and arg + ":" in json.dumps(res),
              "MCP %s with %s: a tool error naming it (%s)" % (op, arg, json.dumps(r)[:160]))
        check(not os.path.exists(where), "MCP %s: nothing made at %s" % (op, where))
    # A read key scoped to a:* cannot point archive.list anywhere.
    st, r = srv.json("POST", "/v1/archive/list", {"ns": "a:x", "archive_location": "/etc"}, key=KREAD)
    check(st == 400, "a read key's archive.list at /etc: 400 (%s)" % st)
finally:
    srv.stop()
    srv.kill()

# remem mcp over stdio: the same refusal.
_, db = scratch_store("remem-localpaths-stdio-")
where = os.path.join(evil, "stdio")
lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                     "clientInfo": {"name": "t", "version": "1"}}},
         {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
          "params": {"name": tools["prune"]["name"] if "prune" in tools else "prune",
                     "arguments": {"ns": "a:x", "archive_location": where}}}]
p = subprocess.run([BIN, "--db", db, "mcp", "--tools", "admin"], input="".join(json.dumps(l) + "\n" for l in lines),
                   capture_output=True, text=True, timeout=60)
answers = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
res = answers[-1].get("result", {}) if answers else {}
check(res.get("isError") is True and "archive_location:" in json.dumps(res),
      "remem mcp: prune with archive_location is a tool error naming it (%s)" % json.dumps(res)[:160])
check(not os.path.exists(where), "remem mcp: nothing made at %s" % where)

# The CLI, the store owner's own command line, still takes it.
cli = cli_for(db)
mine = os.path.join(tmp, "mine")
rc, out, err = cli("prune", "--ns", "a:x", "--archive-location", mine)
check(rc == 0 and os.path.isdir(mine), "the CLI's prune --archive-location works (%d %s)" % (rc, err))

# Recovery walks only YYYY/MM/DD, never a link or another folder.
arch = db + ".archive"
outside = os.path.join(tmp, "outside")
os.makedirs(os.path.join(outside, "01", "01"))
os.makedirs(os.path.join(arch, "junk"))
os.makedirs(os.path.join(arch, "2026", "01", "01"))
victims = [os.path.join(outside, "01", "01", "victim.part"),
           os.path.join(outside, "01", "01", "victim.jsonl.zst.settle"),
           os.path.join(arch, "junk", "victim.part")]
for v in victims:
    open(v, "w").write("not remem's\n")
os.symlink(outside, os.path.join(arch, "2025"))
os.symlink(os.path.join(outside, "01", "01", "victim.part"), os.path.join(arch, "2026", "01", "01", "x.part"))
mine_part = os.path.join(arch, "2026", "01", "01", "y.jsonl.zst.part")
open(mine_part, "w").write("a crash's leftover\n")
dead = os.path.join(arch, ".prune-ids-999999.part")
open(dead, "w").write("m1\n")
rc, out, err = cli("archive", "list", "--ns", "a:x")
check(rc == 0, "archive list runs recovery (%d %s)" % (rc, err))
for v in victims:
    check(os.path.exists(v), "recovery left %s alone" % v.replace(tmp, "TMP"))
check(not os.path.exists(mine_part), "recovery removed the .part file in the layout")
check(not os.path.exists(dead), "recovery removed a dead prune's id list")
shutil.rmtree(tmp, ignore_errors=True)
shutil.rmtree(os.path.dirname(db), ignore_errors=True)
finish()
EOF
