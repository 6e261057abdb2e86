#!/usr/bin/env bash
# serve_recall_text.sh: a recall's answer over HTTP is the library's own
# text (remem_result_to_json), the same bytes `remem --json recall` prints:
# the server sends the engine's JSON as it is, without parsing it and
# writing it again (which gave 17-digit reals, 0.71999999999999997 for
# 0.72, and cost two parses and two writes of every answer).
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
exec python3 - "$root" <<'PYEOF'
import json, re, subprocess, sys
sys.path.insert(0, sys.argv[1] + "/tests/e2e")
from serve_util import *

NS = "answers"
srv = Server(args=["--threads", "2"])
mems = [{"id": "m%d" % i, "text": "note %d: Caroline took the %s train to Boston for the %s meeting" %
         (i, ["early", "late", "night"][i % 3], ["budget", "design", "hiring"][i % 5 % 3]),
         "importance": round(0.1 + 0.035 * i, 3)} for i in range(24)]
st, _ = srv.json("POST", "/v1/namespaces/%s/memories:batch" % NS, {"memories": mems})
check(st in (200, 201), "24 memories added (%s)" % st)
query = {"namespaces": [NS], "text": "Caroline's train to the budget meeting", "k": 8,
         "touch": False, "now": "2030-01-01T00:00:00Z"}
st, hdr, body = srv.request("POST", "/v1/recall", query)
check(st == 200 and hdr.get("content-type", "").startswith("application/json"),
      "recall answers 200 with JSON (%s)" % st)
res = json.loads(body)
check(len(res["hits"]) == 8, "eight hits")

cli = subprocess.run([os.environ["REMEM_BIN"], "--db", srv.db, "--embedder", "hash", "--json",
                      "recall", "--ns", NS, "--query", query["text"], "--k", "8",
                      "--touch", "false", "--now", query["now"]],
                     capture_output=True, timeout=60)
check(cli.returncode == 0, "the CLI recalls too: %s" % cli.stderr.decode()[-300:])
took = re.compile(rb'"took_ms":[-0-9.e+]+')
a = took.sub(b'"took_ms":0', body.strip())
b = took.sub(b'"took_ms":0', cli.stdout.strip())
check(a == b, "the HTTP body is the library's text, byte for byte:\n%s\n%s" % (a[:300], b[:300]))
long_reals = re.findall(rb'[0-9]\.[0-9]{12,}', body)
check(not long_reals, "no real written with 17 digits: %s" % long_reals[:3])
srv.stop()
import shutil
shutil.rmtree(srv.tmp, ignore_errors=True)
finish()
PYEOF
