"""Memory V2 auto-learning (tracks/cli_sqlite) on remem: the runtime hooks
of its end-to-end flow, each one operation of docs/lessons.md.

    from remem.compat.lessons import LessonMemory
    memory = LessonMemory(path="./memory_v2")
    hints = memory.pre_run_retrieval(task="sum the sales", domain="sqlite",
                                     tool="run_sqlite", run="51001")
    check = memory.validate_tool_input(schema, tool_input, run="51001", step=1,
                                       tool="run_sqlite")       # same-step retry signal
    out = memory.on_error(domain="sqlite", tool="run_sqlite", channel="hard_failure",
                          error="no such table: orders", run="51001", step=1)
    out["hints"]                                                 # inject the top hints
    memory.end_of_run(run="51001", domain="sqlite", result="pass", score=1.0, steps=3,
                      candidate_lessons=[{"rule_text": "List the tables first.",
                                          "fingerprints": [out["event"]["fingerprint"]]}])
    memory.timeline(run="51001")

Flow step -> operation: task intake and pre-run retrieval -> lesson.hints
(strict context first, a capped transfer lane); validation gate ->
lesson.validate (retry on the same step, at most 2, then reflect);
runtime failure -> lesson.event (ErrorEvent, fingerprint, system tags)
then lesson.hints with the error (on-error hints); end of run: the
executor's candidate lessons -> lesson.add, the outcome -> lesson.outcome
(utility, promotion, suppression), which also reads candidate lessons
off the run's own records (learn=True: the LLM's reflection on the run's
failures, or without one the deterministic rule fix_after_error, each
failure a later step fixed; never an invented one). The
lesson records carry the seed's
schema (lesson_id, status, rule_text, fingerprints, tags, domain_key,
...). The context key is the domain the caller passes (the adapter's).
"""

from __future__ import annotations

import os
from typing import Any, Dict, Iterable, List, Optional

import remem

__all__ = ["LessonMemory"]


def _some(**args: Any) -> Dict[str, Any]:
    return {k: v for k, v in args.items() if v is not None}


class LessonMemory:
    """Lessons learned from failures, retrieved before a run and on each
    error, updated from each run's outcome. path: a folder (the store is
    path/remem.db); namespace: the lesson store's."""

    def __init__(self, path: str = "./memory_v2", *, namespace: str = "lessons",
                 policy: str = "auto", tool_family: Optional[str] = None,
                 embedder: Optional[str] = "hash",
                 db: Optional["remem.Remem"] = None, **options: Any):
        self.ns = namespace
        self.policy = policy  # retrieval policy: off | auto | always
        self.tool_family = tool_family  # with it, the context key is family:domain
        if db is not None:
            self.db = db
        else:
            os.makedirs(path, exist_ok=True)
            self.db = remem.connect(os.path.join(path, "remem.db"), embedder=embedder, **options)

    # -- 2. pre-run retrieval ----------------------------------------------------
    def pre_run_retrieval(self, task: str, domain: str, tool: Optional[str] = None,
                          tags: Optional[Iterable[str]] = None, run: Optional[str] = None,
                          k: Optional[int] = None) -> List[Dict[str, Any]]:
        """Lessons for a run before its first action, strict lane first."""
        r = self.db.call("lesson.hints", **_some(
            ns=self.ns, tool_family=self.tool_family, domain=domain, task=task, tool=tool,
            tag=list(tags) if tags else None, policy=self.policy, k=k, run=run))
        return r.get("hints", [])

    # -- 3. the step loop ----------------------------------------------------------
    def validate_tool_input(self, schema: Dict[str, Any], tool_input: Any,
                            run: Optional[str] = None, step: Optional[int] = None,
                            tool: Optional[str] = None) -> Dict[str, Any]:
        """The structural validation gate: valid, violations, and the signal
        (retry on the same step, or reflect after the cap)."""
        return self.db.call("lesson.validate", **_some(schema=schema, input=tool_input,
                                                        ns=self.ns, run=run, step=step, tool=tool))

    def emit_error_event(self, domain: str, tool: str, channel: str, error: str,
                         task: Optional[str] = None, session: Optional[str] = None,
                         run: Optional[str] = None, step: Optional[int] = None) -> Dict[str, Any]:
        """Record an ErrorEvent: fingerprint, system tags, recurrence, and
        whether a reflection turn is due."""
        return self.db.call("lesson.event", **_some(
            ns=self.ns, tool_family=self.tool_family, domain=domain, tool=tool, channel=channel,
            error=error, task=task, session=session, run=run, step=step))

    def on_error(self, domain: str, tool: str, channel: str, error: str,
                 task: Optional[str] = None, session: Optional[str] = None,
                 run: Optional[str] = None, step: Optional[int] = None,
                 k: Optional[int] = None) -> Dict[str, Any]:
        """A runtime failure: the ErrorEvent, then the on-error hints to
        inject ({"event": ..., "hints": [...], "reflect": bool})."""
        event = self.emit_error_event(domain, tool, channel, error, task, session, run, step)
        r = self.db.call("lesson.hints", **_some(
            ns=self.ns, tool_family=self.tool_family, domain=domain, task=task, error=error,
            tool=tool, policy=self.policy, k=k, run=run, step=step))
        return {"event": event, "hints": r.get("hints", []), "reflect": bool(event.get("reflect"))}

    # -- 4. end of run -------------------------------------------------------------
    def upsert_lesson(self, rule_text: str, domain: str,
                      fingerprints: Optional[Iterable[str]] = None,
                      tags: Optional[Iterable[str]] = None, task_cluster: Optional[str] = None,
                      source_session_id: Optional[str] = None,
                      conflicts_with: Optional[Iterable[str]] = None) -> Dict[str, Any]:
        """Add a candidate lesson, or unite it into the same rule's record."""
        r = self.db.call("lesson.add", **_some(
            ns=self.ns, tool_family=self.tool_family, domain=domain, rule=rule_text,
            fingerprint=list(fingerprints) if fingerprints else None,
            tag=list(tags) if tags else None, task_cluster=task_cluster,
            session=source_session_id,
            conflicts_with=list(conflicts_with) if conflicts_with else None))
        return r.get("lesson", r)

    def end_of_run(self, run: str, domain: str, result: str, score: Optional[float] = None,
                   steps: Optional[int] = None, lessons: Optional[Iterable[str]] = None,
                   candidate_lessons: Optional[Iterable[Dict[str, Any]]] = None,
                   task_cluster: Optional[str] = None, session: Optional[str] = None,
                   learn: bool = True) -> Dict[str, Any]:
        """The executor's candidate lessons upserted, then the run's outcome:
        utility over the relevant runs, promotion and suppression. learn:
        also the candidates remem draws from the run's own records (the
        LLM's reflection, or the rule fix_after_error), in the answer's
        "learned" list."""
        added = [self.upsert_lesson(c["rule_text"], domain, c.get("fingerprints"), c.get("tags"),
                                    c.get("task_cluster", task_cluster), session,
                                    c.get("conflicts_with"))
                 for c in (candidate_lessons or [])]
        r = self.db.call("lesson.outcome", **_some(
            ns=self.ns, tool_family=self.tool_family, run=run, domain=domain, result=result,
            score=score, steps=steps,
            lessons=list(lessons) if lessons else None, task_cluster=task_cluster,
            session=session, learn=True if learn else None))
        r["learned"] = r.pop("candidate_lessons", [])
        r["candidate_lessons"] = added
        return r

    # -- observability ---------------------------------------------------------------
    def timeline(self, run: Optional[str] = None, view: Optional[str] = None) -> Dict[str, Any]:
        """The run's timeline: attempts, memory decisions or outcome (view)."""
        return self.db.call("timeline", **_some(ns=self.ns, run=run, view=view))

    def list_lessons(self, status: Optional[str] = None,
                     domain: Optional[str] = None) -> List[Dict[str, Any]]:
        r = self.db.call("lesson.list", **_some(
            ns=self.ns, status=status, domain=domain,
            tool_family=self.tool_family if domain else None))
        return r.get("lessons", [])

    def close(self) -> None:
        self.db.close()
