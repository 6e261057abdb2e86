"""LifeStack's episodic memory (agent/memory.py) on remem.

    from remem.compat.lifestack import LifeStackMemory, OutcomeFeedback
    memory = LifeStackMemory(path="./lifestack_memory")

The three collections (decisions, trajectories, feedback) are remem
memories of kind decision, trajectory and feedback in one namespace; each
method is one operation (decision.add, decision.similar, fewshot,
trajectory.add, trajectory.similar, feedback.add, stats, hydrate: see
docs/experience.md), called with the seed's own argument names, which the
operations accept as they are. Results come back as the seed returns
them: dicts with action_type, target_domain, reward, reasoning,
similarity_score, ...

Hydration on first use: when the namespace holds no decision yet, the
first call loads data/preseeded_memory*.json (the seed's partitioned
files, relative to the working directory; `preseed` names others) with
the hydrate operation. The embedder is remem's (hash by default here, as
the seed's fallback; embedder="minilm" for all-MiniLM-L6-v2).
"""

from __future__ import annotations

import glob
import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import remem

__all__ = ["LifeStackMemory", "OutcomeFeedback"]


@dataclass
class OutcomeFeedback:
    """Human outcome feedback on an episode (core/feedback.py's fields)."""
    episode_id: str
    overall_effectiveness: int
    domains_improved: List[str] = field(default_factory=list)
    domains_worsened: List[str] = field(default_factory=list)
    unexpected_effects: str = ""
    resolution_time_hours: Optional[float] = None


class LifeStackMemory:
    """Decisions, trajectories and human feedback, replayed as few-shot
    context. path: a folder; the store is path/remem.db (an in-memory
    store when the folder cannot be made, as the seed falls back to an
    in-memory client)."""

    def __init__(self, path: str = "./lifestack_memory", *, namespace: str = "lifestack",
                 preseed: str = "data/preseeded_memory*.json", embedder: Optional[str] = "hash",
                 db: Optional["remem.Remem"] = None, **options: Any):
        self.namespace = namespace
        self._preseed = preseed
        self._hydrated = False
        if db is not None:
            self.db = db
            return
        try:
            os.makedirs(path, exist_ok=True)
            self.db = remem.connect(os.path.join(path, "remem.db"), embedder=embedder, **options)
        except (OSError, remem.RememError):
            self.db = remem.connect(":memory:", embedder=embedder, **options)

    # -- hydration ------------------------------------------------------------
    def _call(self, op: str, **args: Any) -> dict:
        if not self._hydrated:
            self._hydrated = True
            files = sorted(glob.glob(self._preseed)) if self._preseed else []
            if files:
                contents = []
                for f in files:
                    with open(f, encoding="utf-8") as fh:
                        contents.append(json.load(fh))
                self.db.call("hydrate", ns=self.namespace, files=contents)
        return self.db.call(op, ns=self.namespace, **args)

    # -- decisions --------------------------------------------------------------
    def store_decision(self, conflict_title: str, action_type: str, target_domain: str,
                       reward: float, metrics_snapshot: Optional[Dict[str, float]] = None,
                       reasoning: str = "", episode_id: str = "") -> str:
        """Store one step's decision; returns its id. The stored text is
        f"{conflict_title} Action: {action_type} Domain: {target_domain}
        Reward: {reward:.2f} {reasoning[:100]}"."""
        args: Dict[str, Any] = dict(conflict_title=conflict_title, action_type=action_type,
                                    target_domain=target_domain, reward=reward,
                                    reasoning=reasoning or "")
        if metrics_snapshot:
            args["metrics_snapshot"] = metrics_snapshot
        if episode_id:
            args["episode_id"] = episode_id
        return self._call("decision.add", **args)["id"]

    def retrieve_similar(self, conflict_title: str, current_metrics: Optional[Dict[str, float]] = None,
                         n: int = 3) -> List[Dict[str, Any]]:
        """The past decisions most like the situation: 2n candidates by
        cosine similarity, reward >= 0.05, the best n."""
        args: Dict[str, Any] = dict(conflict_title=conflict_title, n=n)
        if current_metrics:
            args["current_metrics"] = current_metrics
        return self._call("decision.similar", **args)["results"]

    def build_few_shot_prompt(self, conflict_title: str,
                              current_metrics: Optional[Dict[str, float]] = None, n: int = 3) -> str:
        """The "--- PAST EXPERIENCE & HUMAN VERIFICATION ---" block ("" when
        nothing is similar)."""
        args: Dict[str, Any] = dict(conflict_title=conflict_title, n=n)
        if current_metrics:
            args["current_metrics"] = current_metrics
        return self._call("fewshot", **args)["text"]

    # -- trajectories -----------------------------------------------------------
    def store_trajectory(self, task_id: str, route_taken: str, total_reward: float,
                         trajectory_summary: Optional[Dict[str, Any]] = None) -> str:
        """Store an episode's trajectory; returns its id."""
        args: Dict[str, Any] = dict(task_id=task_id, route_taken=route_taken,
                                    total_reward=total_reward)
        if trajectory_summary is not None:
            args["trajectory_summary"] = trajectory_summary
        return self._call("trajectory.add", **args)["id"]

    def retrieve_similar_trajectories(self, task_domain: str,
                                      current_world: Optional[Dict[str, Any]] = None,
                                      n: int = 3) -> List[Dict[str, Any]]:
        """The trajectories most like f"TaskDomain: {task_domain} " plus the
        three most stressed world values."""
        args: Dict[str, Any] = dict(task_domain=task_domain, n=n)
        if current_world:
            args["current_world"] = current_world
        return self._call("trajectory.similar", **args)["results"]

    # -- feedback ------------------------------------------------------------------
    def store_feedback(self, feedback: OutcomeFeedback) -> str:
        """Store human feedback at f"fb_{episode_id}" (a second one for the
        episode replaces the first); returns the id."""
        args: Dict[str, Any] = dict(episode_id=feedback.episode_id,
                                    overall_effectiveness=int(feedback.overall_effectiveness),
                                    domains_improved=list(feedback.domains_improved or []),
                                    domains_worsened=list(feedback.domains_worsened or []))
        if feedback.unexpected_effects:
            args["unexpected_effects"] = feedback.unexpected_effects
        if feedback.resolution_time_hours is not None:
            args["resolution_time_hours"] = float(feedback.resolution_time_hours)
        return self._call("feedback.add", **args)["id"]

    # -- stats ----------------------------------------------------------------------
    def get_stats(self) -> Dict[str, Any]:
        """{"total_memories", "average_reward", "by_action_type"} over the
        decisions."""
        s = self._call("stats")
        return {k: s[k] for k in ("total_memories", "average_reward", "by_action_type") if k in s}

    def close(self) -> None:
        self.db.close()
