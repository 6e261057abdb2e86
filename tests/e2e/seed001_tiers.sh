#!/usr/bin/env bash
# seed001_tiers.sh: seed 001's tier rules come with its profile (issue 20,
# fix 5). A namespace whose policy names the metaverse profile:
#   - refuses an add straight to tier long ("no way to insert into the LTM
#     directly");
#   - keeps its static memories immutable (update refused; static load is
#     the way to change them);
#   - migrates the oldest *and most important* short-term memories (the
#     most important first, the oldest first among equals);
#   - reflects from short-term memory only;
#   - scores a memory written without an importance on relevance alone
#     (issue 20, fix 4: "if the score is not present ... only relevancy").
# A namespace under remem's default keeps remem's looser rules, and a key
# the file sets wins over the profile's rule.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
export REMEM_EMBEDDER=hash
exec python3 - "$root" <<'PY'
import json, os, sys, time
root = sys.argv[1]
sys.path.insert(0, root + "/tests/e2e")
sys.path.insert(0, root + "/bindings/python")
from serve_util import *
import remem

tmp, path = scratch_store("remem-seed001-tiers-")
cfgp = os.path.join(tmp, "remem.yaml")
open(cfgp, "w").write('policies:\n  "sim:*":\n    profile: metaverse\n    stm_size: 2\n'
                      '  "loose:*":\n    profile: metaverse\n    long_requires_stm: false\n')
db = remem.connect(path, embedder="hash", config=cfgp)
def call(op, **a):
    try:
        return db.call(op, **a), None
    except remem.RememError as e:
        return None, str(e)

# ---- no direct insert into long-term ----
r, err = call("memory.add", ns="sim:ava", text="I won the village prize", tier="long")
check(err is not None and "long" in err, "an add to tier long is refused: %s" % err)
r, err = call("memory.add", ns="loose:ava", text="I won the village prize", tier="long")
check(err is None, "a key the file sets wins over the profile's rule: %s" % err)
r, err = call("memory.add", ns="plain", text="I won the village prize", tier="long")
check(err is None, "remem's default still admits long directly: %s" % err)

# ---- static memory is immutable ----
db.call("static.load", ns="sim:ava", file={"identity": {"name": "Ava"}})
sid = db.call("memory.list", ns="sim:ava", tiers=["static"])["memories"][0]["id"]
r, err = call("memory.update", ns="sim:ava", id=sid, text="Ava is a baker")
check(err is not None and "static" in err, "a static memory cannot be updated: %s" % err)
check(db.call("memory.get", ns="sim:ava", id=sid)["memory"]["text"] != "Ava is a baker",
      "the refused update changed nothing")

# ---- migration: the oldest and most important ----
t0 = int(time.time() * 1000) - 10 * 3600000
imps = [0.2, 0.9, 0.5, 0.9, 0.1]   # oldest first
for i, imp in enumerate(imps):
    db.call("memory.add", ns="sim:ava", id="e%d" % i, text="event %d at the forge" % i,
            importance=imp, created_at=t0 + i * 3600000)
m = db.call("migrate", ns="sim:ava")
# capacity 2: three leave short-term; the most important first (e1 and e3,
# 0.9, the older e1 first), then e2 (0.5); all above 0.35 go to long.
check(m["to_long"] == ["e1", "e3", "e2"] and m["to_archived"] == [] and m.get("order") == "importance",
      "migrate moves the most important, oldest first among equals: %s" % m.get("moved"))
short = sorted(x["id"] for x in db.call("memory.list", ns="sim:ava", tiers=["short"])["memories"])
check(short == ["e0", "e4"], "the least important stay in short-term: %s" % short)
m2 = db.call("migrate", ns="plain", stm_size=1, dry_run=True)
check(m2.get("order") == "oldest", "remem's default migrates the oldest first")

# ---- reflection reads short-term memories only ----
for i in range(3):
    db.call("memory.add", ns="sim:ava", id="s%d" % i, text="Ava hammers a blade at the forge, round %d" % i,
            importance=0.5)
r = db.call("reflect", ns="sim:ava", method="extractive")
links = [l for x in r.get("reflections", []) for l in db.call("memory.get", ns="sim:ava", id=x["id"])["memory"].get("links", [])]
tiers = {l: db.call("memory.get", ns="sim:ava", id=l)["memory"]["tier"] for l in links}
check(links and all(t == "short" for t in tiers.values()),
      "a reflection's evidence is short-term memory only: %s" % tiers)
# ---- a memory without importance: relevance only (metaverse) ----
u = db.call("memory.add", ns="sim:bo", text="a stranger walked past the mill")["id"]
g = db.call("memory.add", ns="sim:bo", text="a stranger bought bread at the mill", importance=0.5)["id"]
mu = db.call("memory.get", ns="sim:bo", id=u)["memory"]
check((mu.get("metadata") or {}).get("rating") == {"fallback": "kind_default"},
      "an add without importance is marked unrated: %s" % mu.get("metadata"))
hits = {h["id"]: h for h in db.call("recall", ns="sim:bo", query="stranger at the mill",
                                    profile="metaverse", min_score=0, touch=False)["hits"]}
hu, hg = hits.get(u, {}), hits.get(g, {})
check(hu and abs(hu["score"] - hu["components"]["relevance"]) < 1e-9,
      "metaverse scores an unrated memory on relevance alone: %s" % hu.get("components"))
cg = hg.get("components", {})
check(hg and abs(hg["score"] - (cg["relevance"] + 0.25 * cg["recency"] + 0.25 * cg["importance"])) < 1e-9,
      "a rated one gets the full formula")
db.call("memory.add", ns="plain", text="a stranger walked past the mill")
mp = [m for m in db.call("memory.list", ns="plain")["memories"] if "stranger" in m["text"]][0]
check(not (mp.get("metadata") or {}).get("rating"), "remem's default marks nothing")
shown = db.call("config.show", ns="sim:ava")
pol = shown.get("policy", shown)
check(pol.get("static_immutable") is True and pol.get("migrate_by_importance") is True
      and pol.get("reflect_short_only") is True and pol.get("long_requires_stm") is True
      and pol.get("mark_unrated") is True,
      "config show names the rules in force")
db.close()
finish()
PY
