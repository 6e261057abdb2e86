#!/usr/bin/env python3
"""agent_loop.py: an agent that remembers, with remem's Python binding.

The loop every memory-backed agent runs: before each step, recall what
matters for the situation at hand; act; write down what was observed and,
after a failure, the lesson learned. The "agent" here is a few rules instead
of an LLM so that the run is deterministic and needs no network: a support
bot answering tickets for a small web shop. Its first attempts fail for
reasons it writes down as lessons; later tickets recall those lessons and go
right. The simulated clock advances one hour per step, and every recall gets
that time (now=), so recency scores are the same on every run.

    python3 examples/agent_loop.py [STORE]      (default: a temporary file)

Each step prints what was recalled with its score and components, and the
run ends with a summary line the end-to-end test checks.
"""

import datetime
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bindings", "python"))
import remem  # noqa: E402

NS = "agent:support-bot"
START = 1735725600000  # 2025-01-01T10:00:00Z
HOUR = 3600 * 1000
PROFILE = "default"  # hybrid meaning + keywords; try "stream" or "generative-agents"

# What the agent knows from the start (static tier: never decays).
BRIEFING = [
    "Orders ship from the Lyon warehouse, usually within two working days",
    "Answer politely and sign every reply with the shop's name, Kaffeeklatsch",
]

# The tickets, in order. "needs" is what a correct answer must do; the
# agent only knows it once a failure taught it (the environment's verdict
# says so).
TICKETS = [
    {"text": "Customer wants a refund of 250 euros for a broken espresso machine",
     "topic": "refund", "needs": "escalate"},
    {"text": "Where is my order? It was placed five days ago", "topic": "shipping",
     "needs": "tracking"},
    {"text": "Customer asks for a refund of 30 euros, the mug arrived chipped",
     "topic": "refund", "needs": "refund"},
    {"text": "My parcel has not arrived yet, order placed a week ago", "topic": "shipping",
     "needs": "tracking"},
    {"text": "Refund request of 180 euros for a grinder that stopped working",
     "topic": "refund", "needs": "escalate"},
    {"text": "Order still not delivered after ten days, customer is upset",
     "topic": "shipping", "needs": "tracking"},
]

# Lessons the environment teaches after a wrong answer.
LESSONS = {
    "escalate": "Lesson: a refund over 100 euros must be escalated to a supervisor, "
                "never refunded directly",
    "tracking": "Lesson: for a late order or missing parcel, send the tracking link from "
                "the carrier first, before apologising",
}


def decide(ticket, hits):
    """The agent's policy: follow a recalled lesson or briefing rule that
    speaks to this ticket; otherwise the naive default."""
    for h in hits:
        t = h.text.lower()
        if "escalated" in t:
            if ticket["topic"] == "refund" and any(
                    int(w) > 100 for w in ticket["text"].split() if w.isdigit()):
                return "escalate", h
        if "tracking link" in t and ticket["topic"] == "shipping":
            return "tracking", h
    return ("refund" if ticket["topic"] == "refund" else "apologise"), None


def run(path):
    solved = 0
    used_lessons = 0
    with remem.open(path, embedder="hash") as db:
        db.add_many([{"text": t, "kind": "static", "importance": 0.9,
                      "created_at": START - HOUR} for t in BRIEFING], ns=NS)
        for step, ticket in enumerate(TICKETS, 1):
            now = START + step * HOUR
            print(f"\nstep {step} ({remem_time(now)}): {ticket['text']}")
            # Two recalls: the situation's context, and the best lesson for it
            # (a filter on kind keeps lessons from being crowded out by the
            # growing stream of observations).
            hits = db.recall(ticket["text"], ns=NS, k=3, now=now, profile=PROFILE)
            lessons = db.recall(ticket["text"], ns=NS, k=1, now=now, profile=PROFILE,
                                filter={"kind": "lesson"})
            for label, found in (("recalled", hits), ("lesson  ", lessons)):
                for h in found:
                    print(f"  {label} {h.score:.3f} [{h.memory.kind}] {h.text}")
                    print(f"           relevance {h.relevance:.3f}  lexical {h.lexical:.3f}"
                          f"  recency {h.recency:.3f}  importance {h.importance:.2f}")
            action, because = decide(ticket, list(lessons) + list(hits))
            ok = action == ticket["needs"]
            solved += ok
            if because is not None and because.memory.kind == "lesson":
                used_lessons += 1
            print(f"  action: {action}" + (f" (because: {because.text[:60]}...)" if because else "")
                  + f" -> {'resolved' if ok else 'FAILED'}")
            db.add(NS, f"Ticket '{ticket['text']}' answered with {action}: "
                       f"{'resolved' if ok else 'failed'}",
                   kind="observation", importance=0.3 if ok else 0.6,
                   metadata={"topic": ticket["topic"], "reward": 1.0 if ok else 0.0},
                   created_at=now)
            if not ok:
                mid, outcome = db.add(NS, LESSONS[ticket["needs"]], kind="lesson",
                                      importance=0.95, metadata={"topic": ticket["topic"]},
                                      created_at=now, with_outcome=True)
                print(f"  learned: {LESSONS[ticket['needs']]} ({outcome} as {mid})")
        lessons = db.recall("lesson", ns=NS, filter={"kind": "lesson"}, now=now, touch=False)
        print(f"\n{solved}/{len(TICKETS)} tickets resolved; "
              f"{used_lessons} answers followed a recalled lesson; "
              f"{len(lessons)} lessons in memory")
    return solved, used_lessons


def remem_time(ms):
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        run(sys.argv[1])
    else:
        with tempfile.TemporaryDirectory() as d:
            run(os.path.join(d, "agent.db"))
