"""The metaverse generative agents' memory system (memory_system/) on remem.

    from remem.compat.generative import ChromaMemory, MemoryEntry
    memory = ChromaMemory("Ava")      # static memory from agent_personalities/Ava.json
    memory.add_to_stm(MemoryEntry(doc="Bob greeted me at the forge",
                                  metadata={"importance_score": 6}))
    memory.query_memory("who visited the forge?")
    memory.migrate_stm2ltm(); memory.reflect_from_recent_memory()
    memory.summarize_and_forget(); memory.plan_from_memory("finish the sword")

The tiers static / short / long are remem's; the agent is a namespace,
stored in db_path/<agent_name>/remem.db beside a remem.yaml (written on
first use when missing) whose policy is the seed's: the metaverse profile
(1.0 relevance as 1/(1+squared L2) + 0.25 recency + 0.25 importance,
threshold 0.35, static then short then long), stm_size and threshold,
and with them the seed's tier rules (no insert into long-term, static
memory immutable, the most important migrate, reflection from short-term;
docs/lifecycle.md). Each method is one operation: memory.add, recall,
migrate, summarize, reflect, plan, static.load, rate. Rating, reflection,
summaries and plans ask the LLM the handle is given (llm_url=... or
$REMEM_LLM_URL); without one rating and summaries fall back as remem
documents and planning is refused.
"""

from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union

import remem

__all__ = ["MemoryEntry", "Memory", "RememMemory", "ChromaMemory"]


@dataclass
class MemoryEntry:
    """One document: doc (the memory text), metadata (importance_score on
    the seed's 1-10 scale, or importance in [0, 1]; timestamp as ISO text or epoch
    milliseconds, anything else kept) and an id (an entry with the id of
    an existing one overwrites it)."""
    doc: str
    metadata: Dict[str, Any] = field(default_factory=dict)
    id: Optional[str] = None


class Memory(ABC):
    """The abstract memory class: what every backend implements."""

    @abstractmethod
    def add_to_stm(self, entry: Union[MemoryEntry, Dict[str, Any]]) -> str: ...

    @abstractmethod
    def query_memory(self, prompt: str, top_k: Optional[int] = None,
                     threshold: Optional[float] = None) -> List[Dict[str, Any]]: ...

    @abstractmethod
    def migrate_stm2ltm(self) -> Dict[str, Any]: ...

    @abstractmethod
    def summarize_and_forget(self) -> Dict[str, Any]: ...

    @abstractmethod
    def reflect_from_recent_memory(self) -> Dict[str, Any]: ...

    @abstractmethod
    def plan_from_memory(self, goal: str) -> str: ...

    @abstractmethod
    def load_personality(self, path: Optional[str] = None) -> Dict[str, Any]: ...


def _policy(stm_size: int, threshold: float, top_k: int) -> str:
    return ("# the seed's policy (remem.compat.generative)\n"
            "profile: metaverse\n"
            f"stm_size: {int(stm_size)}\nthreshold: {float(threshold)}\ntop_k: {int(top_k)}\n")


class RememMemory(Memory):
    """An agent's static, short-term and long-term memory."""

    def __init__(self, agent_name: str, db_path: str = "./database/mem_test",
                 personality_path: str = "./agent_personalities", *, stm_size: int = 20,
                 threshold: float = 0.35, top_k: int = 10, embedder: Optional[str] = "hash",
                 db: Optional["remem.Remem"] = None, **options: Any):
        self.agent_name = agent_name
        self.ns = agent_name
        self.threshold = threshold
        self.top_k = top_k
        self.personality_path = personality_path
        if db is not None:
            self.db = db
        else:
            folder = os.path.join(db_path, agent_name)
            os.makedirs(folder, exist_ok=True)
            config = os.path.join(folder, "remem.yaml")
            if not os.path.exists(config):
                with open(config, "w", encoding="utf-8") as f:
                    f.write(_policy(stm_size, threshold, top_k))
            self.db = remem.connect(os.path.join(folder, "remem.db"), embedder=embedder,
                                    config=config, **options)
        if os.path.exists(self._personality_file()):
            self.load_personality()

    def _personality_file(self, path: Optional[str] = None) -> str:
        return path or os.path.join(self.personality_path, f"{self.agent_name}.json")

    # -- static memory --------------------------------------------------------
    def load_personality(self, path: Optional[str] = None) -> Dict[str, Any]:
        """Load agent_personalities/<agent_name>.json into static memory
        (again: only what changed is written)."""
        with open(self._personality_file(path), encoding="utf-8") as f:
            return self.db.call("static.load", ns=self.ns, file=json.load(f))

    # -- short-term memory ----------------------------------------------------
    def add_to_stm(self, entry: Union[MemoryEntry, Dict[str, Any]]) -> str:
        """Add an event to short-term memory; returns its id."""
        if isinstance(entry, dict):
            entry = MemoryEntry(doc=entry.get("doc", entry.get("document", "")),
                                metadata=dict(entry.get("metadata") or {}), id=entry.get("id"))
        meta = dict(entry.metadata or {})
        args: Dict[str, Any] = dict(ns=self.ns, text=entry.doc, tier="short")
        if entry.id:
            args["id"] = entry.id
        score = meta.pop("importance_score", None)
        if score is not None:  # the seed's 1-10 rating; remem's importance is 0-1
            args["importance"] = float(score) / 10
        elif "importance" in meta:
            args["importance"] = float(meta.pop("importance"))
        ts = meta.pop("timestamp", None)
        if ts is not None:
            args["created_at"] = ts
        if meta:
            args["metadata"] = meta
        return self.db.call("memory.add", **args).get("id", "")

    # -- querying -------------------------------------------------------------
    def query_memory(self, prompt: str, top_k: Optional[int] = None,
                     threshold: Optional[float] = None) -> List[Dict[str, Any]]:
        """The memories whose score passes the threshold (0.35), static
        first, then short-term, then long-term: doc, metadata, score,
        memory_type (the tier) and the score's parts."""
        r = self.db.call("recall", ns=self.ns, query=prompt, profile="metaverse",
                         k=top_k or self.top_k,
                         min_score=self.threshold if threshold is None else threshold)
        return [{"id": h.get("id"), "doc": h.get("text"), "metadata": h.get("metadata") or {},
                 "score": h.get("score"), "memory_type": h.get("tier"),
                 "components": h.get("components")} for h in r.get("hits", [])]

    # -- lifecycle ------------------------------------------------------------
    def migrate_stm2ltm(self) -> Dict[str, Any]:
        """Move the short-term memories beyond stm_size out: the oldest and
        most important to long-term when above the threshold, the others
        to archived."""
        return self.db.call("migrate", ns=self.ns)

    def summarize_and_forget(self) -> Dict[str, Any]:
        """Summarise the least important long-term memories into one (its
        sources archived, restorable)."""
        return self.db.call("summarize", ns=self.ns)

    def reflect_from_recent_memory(self) -> Dict[str, Any]:
        """Insights from recent short-term memories, stored as reflections
        linked to their evidence."""
        return self.db.call("reflect", ns=self.ns)

    def plan_from_memory(self, goal: str) -> str:
        """A short plan for goal from what the agent remembers, stored in
        long-term memory; its text."""
        return self.db.call("plan", ns=self.ns, goal=goal).get("plan", "")

    def rate_importance(self, memory: str) -> Dict[str, Any]:
        """The seed's /rate: the LLM's 1-10 poignancy rating of a text
        (rating, importance = rating / 10, explanation)."""
        return self.db.call("rate", ns=self.ns, text=memory)

    def close(self) -> None:
        self.db.close()


# The seed's implementation class, by its own name.
ChromaMemory = RememMemory
