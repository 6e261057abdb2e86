#!/usr/bin/env bash
# seed000_names.sh: seed 000's own field names work on every operation of
# its workflow (issue 20, fix 6): decision.add takes conflict_title /
# action_type / target_domain / metrics_snapshot, feedback.add takes
# OutcomeFeedback's overall_effectiveness, domains_improved,
# domains_worsened, unexpected_effects and resolution_time_hours, and the
# similar decisions carry action_type / target_domain beside remem's names.
# An argument given under both names is refused and writes nothing.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
export REMEM_EMBEDDER=hash
exec python3 - "$root" <<'PY'
import json, sys
root = sys.argv[1]
sys.path.insert(0, root + "/tests/e2e")
sys.path.insert(0, root + "/bindings/python")
from serve_util import *
import remem

tmp, path = scratch_store("remem-seed000-")
db = remem.connect(path, embedder="hash")
def call(op, **a):
    try:
        return db.call(op, **a), None
    except remem.RememError as e:
        return None, str(e)

r, err = call("decision.add", ns="ls", conflict_title="Friday 6PM", action_type="communicate",
              target_domain="relationships", reward=0.72,
              metrics_snapshot={"relationships.romantic": 55}, episode_id="ep_12345",
              reasoning="A quick call prevents relationship erosion during high-stress periods.")
check(err is None, "decision.add with seed 000's names: %s" % err)
r, err = call("decision.similar", ns="ls", conflict_title="Friday 6PM",
              current_metrics={"mental_wellbeing.stress_level": 85}, n=3)
check(err is None and r["results"], "decision.similar with seed 000's names: %s" % err)
if r and r["results"]:
    h = r["results"][0]
    check(h.get("action_type") == "communicate" and h.get("target_domain") == "relationships"
          and h.get("action") == "communicate", "results carry action_type/target_domain: %s" % h)

r, err = call("feedback.add", ns="ls", episode_id="ep_12345", overall_effectiveness=8,
              domains_improved=["relationships", "mental_wellbeing"], domains_worsened=[],
              unexpected_effects="Partner called back and offered help with finances.",
              resolution_time_hours=2.5)
check(err is None, "feedback.add with OutcomeFeedback's names: %s" % err)
if err is None:
    m = db.call("memory.get", ns="ls", id="fb_ep_12345")["memory"]["metadata"]
    check(m.get("rating") == 8 and m.get("hours") == 2.5 and m.get("improved") ==
          ["relationships", "mental_wellbeing"] and m.get("notes", "").startswith("Partner"),
          "feedback stored under remem's names: %s" % m)

r, err = call("trajectory.add", ns="ls", task_id="flight_crisis_task_main", route_taken="rebook_premium",
              total_reward=2.5, trajectory_summary={"milestones_hit": ["m1"], "steps": 8})
check(err is None, "trajectory.add with seed 000's names: %s" % err)

before = db.call("stats", ns="ls")
r, err = call("feedback.add", ns="ls", episode="ep_2", episode_id="ep_2", rating=3)
check(err is not None and "episode_id" in err and "episode" in err,
      "both names at once is an error naming them: %s" % err)
check(db.call("stats", ns="ls") == before, "a refused call writes nothing")
rc, out, err = cli_for(path)("feedback", "add", "--ns", "ls", "--episode", "ep_9",
                             "--overall-effectiveness", "7")
check(rc == 0, "the CLI takes the seed's names as flags too: %s" % err.strip())
db.close()
finish()
PY
