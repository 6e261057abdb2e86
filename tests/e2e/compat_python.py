"""compat_python.py: seeds 000, 001, 002 and 004 as their builders wrote
them, on remem.compat (run by compat_python.sh). Each section pastes the
seed document's code examples, changing only the import or the
constructor, and checks what the document says they print or return."""
import json, os, re, sys, tempfile

root = sys.argv[1]
sys.path.insert(0, root + "/tests/e2e")
sys.path.insert(0, root + "/tests/support")
sys.path.insert(0, root + "/bindings/python")
from serve_util import check, finish
from llm_standin import LlmStandin
import remem

tmp = tempfile.mkdtemp(prefix="remem-compat-")
os.chdir(tmp)

# ======================================================================
# seed 000: LifeStack's episodic memory
# ======================================================================
from remem.compat.lifestack import LifeStackMemory, OutcomeFeedback  # was: agent.memory, core.feedback

# hydration on first use: the seed's three partitioned files
os.makedirs("data")
for i in range(3):
    json.dump({"decisions": {"ids": ["pre%d" % i], "metadatas": [{
        "conflict_title": "Monday budget review %d" % i, "action_type": "plan",
        "target_domain": "finances", "reward": 0.6, "reasoning": "Made a spreadsheet.",
        "episode_id": "", "personality_type": "unknown"}]}}, open("data/preseeded_memory_p%d.json" % i, "w"))

memory = LifeStackMemory(path="./lifestack_memory")
# Persistent ChromaDB; falls back to in-memory client on path failure
check(os.path.exists("./lifestack_memory/remem.db"), "000: LifeStackMemory(path=...) persists in the folder")
open("not_a_folder", "w").write("x")
fallback = LifeStackMemory(path="./not_a_folder/sub")
check(fallback.db.path == ":memory:", "000: a path that cannot be used falls back to memory")

memory.store_decision(
conflict_title="Friday 6PM",
action_type="communicate",
target_domain="relationships",
reward=0.72,
metrics_snapshot={"relationships.romantic": 55, "mental_wellbeing.stress_level": 80},
reasoning="A quick call prevents relationship erosion during high-stress periods."
)
st = memory.get_stats()
check(st["total_memories"] == 4, "000: the first use hydrated data/preseeded_memory*.json (3) before the decision: %s" % st)
conflict_title, action_type, target_domain, reward = "Friday 6PM", "communicate", "relationships", 0.72
reasoning = "A quick call prevents relationship erosion during high-stress periods."
want = f"{conflict_title} Action: {action_type} Domain: {target_domain} Reward: {reward:.2f} {reasoning[:100]}"
texts = [m["text"] for m in memory.db.call("memory.list", ns=memory.namespace, kinds=["decision"])["memories"]]
check(want in texts, "000: the stored text is the seed's f-string")

memory.store_decision(conflict_title="The Perfect Storm deadline", action_type="rest",
                      target_domain="career", reward=0.01, reasoning="Gave up.")
similar = memory.retrieve_similar(
conflict_title="The Perfect Storm",
current_metrics={"career.workload": 90, "mental_wellbeing.stress_level": 85},
n=3
)
check(isinstance(similar, list) and 0 < len(similar) <= 3, "000: retrieve_similar returns at most n")
check(all({"action_type", "target_domain", "reward", "reasoning", "similarity_score"} <= set(r) for r in similar),
      "000: each result has action_type, target_domain, reward, reasoning, similarity_score")
check(all(r["reward"] >= 0.05 for r in similar), "000: results are filtered to reward >= 0.05")
check(similar == sorted(similar, key=lambda r: -r["similarity_score"]), "000: best first by similarity")

memory.store_decision(conflict_title="Friday 6PM", action_type="communicate", target_domain="relationships",
                      reward=0.8, reasoning="A quick call prevents relationship erosion during high-stress periods.",
                      episode_id="ep_12345")
feedback = OutcomeFeedback(
episode_id="ep_12345",
overall_effectiveness=8,
domains_improved=["relationships", "mental_wellbeing"],
domains_worsened=[],
unexpected_effects="Partner called back and offered help with finances.",
resolution_time_hours=2.5
)
memory.store_feedback(feedback)
fb = memory.db.call("memory.get", ns=memory.namespace, id="fb_ep_12345")["memory"]
check(fb["kind"] == "feedback", "000: feedback stored at doc ID f\"fb_{episode_id}\"")

current_metrics = {"relationships.romantic": 55}
few_shot = memory.build_few_shot_prompt("Friday 6PM", current_metrics)
lines = few_shot.split("\n")
check(lines[0] == "--- PAST EXPERIENCE & HUMAN VERIFICATION ---", "000: few-shot header: %r" % lines[:1])
check("- Action Taken: [COMMUNICATE] on RELATIONSHIPS" in lines, "000: - Action Taken: [COMMUNICATE] on RELATIONSHIPS")
check(any(l.startswith("Agent's Initial Reasoning: A quick call prevents relationship erosion") for l in lines),
      "000: Agent's Initial Reasoning: ...")
check("HUMAN FEEDBACK: Rated 8/10. Notes: Partner called back and offered help with finances." in lines,
      "000: HUMAN FEEDBACK: Rated 8/10. Notes: ... %s" % few_shot)

memory.store_trajectory(
task_id="flight_crisis_task_main",
route_taken="rebook_premium",
total_reward=2.5,
trajectory_summary={"milestones_hit": ["m1"], "steps": 8}
)
similar_trajectories = memory.retrieve_similar_trajectories(
task_domain="flight_crisis",
current_world={"lounge_access": True, "flight_rebooked": False},
n=3
)
check(len(similar_trajectories) == 1 and similar_trajectories[0]["route"] == "rebook_premium"
      and "similarity_score" in similar_trajectories[0], "000: the trajectory comes back")

stats = memory.get_stats()
# {"total_memories": 145, "average_reward": 0.623, "by_action_type": {"communicate": 38, ...}}
check(set(stats) == {"total_memories", "average_reward", "by_action_type"} and stats["total_memories"] == 6
      and stats["by_action_type"]["communicate"] == 2, "000: get_stats: %s" % stats)
check(abs(stats["average_reward"] - round((0.6 * 3 + 0.72 + 0.01 + 0.8) / 6, 3)) < 1e-9, "000: average_reward")
memory.close()
again = LifeStackMemory(path="./lifestack_memory")
check(again.get_stats()["total_memories"] == 6, "000: a second start hydrates nothing more")
again.close()

# ======================================================================
# seed 004: GaddisAI's memory stream
# ======================================================================
from remem.compat.advisor import MemoryStore  # was: from memory.memory_store import MemoryStore
os.makedirs("config")
open("config/memory.yaml", "w").write("""retrieval:
  top_k: 5  # Retrieve 5 memories per agent
  relevance_weight: 0.4
  recency_weight: 0.3
  importance_weight: 0.3

reflection:
  observation_threshold: 10  # Reflect every 10 observations
  enabled: true

decay:
  half_life_days: 7  # Memories decay 50% every 7 days
""")
memory_store = MemoryStore(
    config_path="./config/memory.yaml",
    persist_directory="./data/chroma"
)
memory_store.add_memory("President", "I decided to deploy carrier strike group on question 'Should we deploy "
                        "troops to Indo-Pacific?'. I gave most weight to SecDef.", memory_type="decision")
memory_store.add_memory("President", "I recommended diplomatic engagement on North Korea issue")
memory_store.add_memory("SecDef", "I recommended deploying a carrier strike group to the Indo-Pacific")
memory_store.add_memory("President", "Bolton's recommendations have led to unintended escalation in 3 of 5 cases",
                        memory_type="reflection")
import io, contextlib
out = io.StringIO()
with contextlib.redirect_stdout(out):
    print(f"Total memories: {memory_store.get_memory_count()}")
    print(f"President memories: {memory_store.get_memory_count('President')}")
    print(f"SecDef memories: {memory_store.get_memory_count('SecDef')}")
check(out.getvalue() == "Total memories: 4\nPresident memories: 3\nSecDef memories: 1\n",
      "004: the statistics example prints %r" % out.getvalue())
block = memory_store.format_memories_for_prompt("President", "China is increasing naval activity near Taiwan. What should we do?")
bl = block.split("\n")
check(bl[0] == "## Your Relevant Memories from Past Deliberations", "004: the injection block's header")
check(any(re.match(r"- \[[A-Z][a-z]+ \d{1,2}, \d{4} at \d\d:\d\d [AP]M\] I decided to deploy carrier strike group", l) for l in bl),
      "004: - [Month D, YYYY at HH:MM PM] memory")
check(any(re.match(r"\*\*\[REFLECTION\]\*\* \([A-Z][a-z]+ \d{1,2}, \d{4}\)$", l) for l in bl)
      and "  Bolton's recommendations have led to unintended escalation in 3 of 5 cases" in bl,
      "004: **[REFLECTION]** (date) and its indented text")
mems = memory_store.retrieve_memories("President", "deploy troops to the Indo-Pacific")
check(mems and mems[0]["importance"] == 0.9 and len(mems) <= 5,
      "004: presidential decisions = 0.9 importance, top_k 5: %s" % [(m["content"][:20], m["importance"]) for m in mems])
refl = [m for m in mems if m["memory_type"] == "reflection"]
check(all(m["importance"] == 0.95 for m in refl), "004: reflections = 0.95")
# Clear all memories
memory_store.clear_memories(agent_role="President")
check(memory_store.get_memory_count("President") == 0 and memory_store.get_memory_count("SecDef") == 1,
      "004: clear_memories(agent_role=\"President\") clears that agent only")
memory_store.add_memory("President", "I decided again")
memory_store.clear_memories()
check(memory_store.get_memory_count() == 0, "004: clear_memories() clears every agent")
off = MemoryStore(config_path="./config/memory.yaml", persist_directory="./data/off", use_memory=False)
off.add_memory("President", "not kept")
check(off.get_memory_count() == 0 and off.format_memories_for_prompt("President", "x") == "",
      "004: --no-memory: nothing stored, no block")
memory_store.close(); off.close()

# ======================================================================
# seed 001: the metaverse generative agents (with the LLM stand-in)
# ======================================================================
standin = LlmStandin(tmp, rules=[])
os.environ["REMEM_LLM_URL"] = standin.url
os.environ["REMEM_LLM_MODEL"] = "stand-in-model"
from remem.compat.generative import ChromaMemory, MemoryEntry, Memory  # was: memory_system
os.makedirs("agent_personalities")
json.dump({"identity": {"name": "Ava", "age": 34, "profession": "blacksmith"},
           "long_term_goals": ["forge the finest sword in the village"],
           "societal_rules": ["never steal"], "environment": {"home": "the forge by the river"},
           "trust_scores": {"Bob": 0.8}}, open("agent_personalities/Ava.json", "w"))
ava = ChromaMemory("Ava", stm_size=3)
check(isinstance(ava, Memory), "001: ChromaMemory is a Memory")
check(os.path.exists("./database/mem_test/Ava/remem.db"), "001: ./database/mem_test/<agent_name>")
static = ava.db.call("memory.list", ns="Ava", tiers=["static"])["memories"]
check(len(static) == 7, "001: personality loaded into static memory: %d" % len(static))
t0 = 1764000000000
events = [("Bob greeted me at the forge", 3), ("I finished the mayor's sword", 9),
          ("It rained all morning", 1), ("Eve stole my hammer", 8), ("I sold two horseshoes", 4)]
for i, (doc, score) in enumerate(events):
    ava.add_to_stm(MemoryEntry(doc=doc, metadata={"importance_score": score, "timestamp": t0 + i * 3600000}))
hits = ava.query_memory("who came to the forge?")
order = [h["memory_type"] for h in hits]
rank = {"static": 0, "short": 1, "long": 2}
check(order and order == sorted(order, key=rank.get) and order[0] == "static",
      "001: Static Memory -> Short-Term Memory -> Long-Term Memory")
check(all(h["score"] >= 0.35 for h in hits), "001: only scores above the 0.35 threshold")
try:
    ava.db.call("memory.add", ns="Ava", text="straight to LTM", tier="long")
    check(False, "001: no way to insert into the LTM directly")
except remem.RememError as e:
    check("long" in str(e), "001: no way to insert into the LTM directly")
m = ava.migrate_stm2ltm()
check(len(m["to_long"]) == 2 and m["to_archived"] == [] and m.get("order") == "importance",
      "001: migrate_stm2ltm moves the oldest and most important above the threshold: %s" % m.get("moved"))
moved_text = sorted(x["text"] for x in ava.db.call("memory.list", ns="Ava", tiers=["long"])["memories"])
check(moved_text == ["Eve stole my hammer", "I finished the mayor's sword"], "001: the most important went to LTM: %s" % moved_text)
try:
    ava.db.call("memory.update", ns="Ava", id=static[0]["id"], text="changed")
    check(False, "001: static memory is immutable")
except remem.RememError:
    check(True, "001: static memory is immutable")
standin.set_rules([{"match": "poignancy", "reply": '{"explanation": "a break-up", "rating": 9}'}])
r = ava.rate_importance("Eve left the village for good")
check(r.get("rating") == 9 and abs(r.get("importance") - 0.9) < 1e-9, "001: /rate: a 1-10 rating")
reqs = standin.requests()
check(reqs and "On the scale of 1 to 10, where 1 is purely mundane" in reqs[-1]["body"]["messages"][-1]["content"],
      "001: the seed's rating prompt")
standin.set_rules([
    {"match": "salient high-level questions", "reply": '{"questions": ["What happens at the forge?"]}'},
    {"match": "high-level insights", "reply": '{"insights": [{"insight": "Ava\'s forge draws visitors", "evidence": [1, 2]}]}'},
])
rf = ava.reflect_from_recent_memory()
check(rf.get("method") == "llm" and len(rf.get("reflections", [])) == 1, "001: reflect_from_recent_memory stores a reflection")
standin.set_rules([{"match": "Write a short plan", "reply": "Here is my plan:\n1. Light the fire\n2. Finish the blade\n3. Deliver it"}])
plan = ava.plan_from_memory("deliver the mayor's sword")
check(plan.startswith("Plan for: deliver the mayor's sword") and "3. Deliver it" in plan,
      "001: plan_from_memory (a numbered list in prose is a plan): %r" % plan)
check(any(x["kind"] == "plan" for x in ava.db.call("memory.list", ns="Ava", tiers=["long"])["memories"]),
      "001: the plan is added to LTM")
standin.set_rules([{"match": "", "reply": '{"summary": "Ava made and lost things at her forge."}'}])
s = ava.summarize_and_forget()
check(s.get("id") and s.get("method") == "llm", "001: summarize_and_forget condenses LTM with the LLM: %s" % s.get("text"))
ava.close()
standin.stop()
del os.environ["REMEM_LLM_URL"], os.environ["REMEM_LLM_MODEL"]  # 002 below: no model

# ======================================================================
# seed 002: Memory V2 runtime hooks
# ======================================================================
from remem.compat.lessons import LessonMemory
mem = LessonMemory(path="./memory_v2")
check(mem.pre_run_retrieval(task="count the orders", domain="sqlite", tool="run_sqlite", run="51001") == [],
      "002: cold start: no lesson before the first run")
v = mem.validate_tool_input({"type": "object", "required": ["sql"], "additionalProperties": False},
                            {"query": "select 1"}, run="51001", step=1, tool="run_sqlite")
check(v["valid"] is False and v["signal"] == "retry", "002: the validation gate asks for a same-step retry")
err = mem.on_error(domain="sqlite", tool="run_sqlite", channel="hard_failure",
                   error="no such table: orders", run="51001", step=1)
mem.validate_tool_input({"type": "object", "required": ["sql"]}, {"sql": ".tables"},
                        run="51001", step=2, tool="run_sqlite")
check(err["event"]["fingerprint"].startswith("fp_") and "tool:run_sqlite" in err["event"]["tags"],
      "002: ErrorEvent with fingerprint and system tags")
end = mem.end_of_run(run="51001", domain="sqlite", result="fail", score=0.2, steps=5,
                     candidate_lessons=[{"rule_text": "List the tables with .tables before querying one.",
                                         "fingerprints": [err["event"]["fingerprint"]]}])
check(end["candidate_lessons"][0]["status"] == "candidate", "002: end-of-run upserts candidate lessons")
check([l["rule_text"] for l in end["learned"]] ==
      ['After "no such table: orders" from run_sqlite, what worked next (step 2): {"sql":".tables"}'],
      "002: end-of-run self-reflection from the run's timeline: %s" % end["learned"])
err2 = mem.on_error(domain="sqlite", tool="run_sqlite", channel="hard_failure",
                    error="no such table: orders", run="51101", step=1)
check("List the tables with .tables before querying one." in [h["rule_text"] for h in err2["hints"]]
      and err2["hints"][0]["lane"] == "strict", "002: on-error hints inject the lesson (strict lane)")
other = mem.pre_run_retrieval(task="draw a grid", domain="grid", tool="run_grid", run="51102")
check(all(h["lane"] != "strict" for h in other), "002: no strict cross-domain contamination")
tl = mem.timeline(run="51101")
check("hint" in tl["text"] and "error hard_failure" in tl["text"], "002: the timeline shows error and hint")
mem.close()
finish()
