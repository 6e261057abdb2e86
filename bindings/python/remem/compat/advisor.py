"""GaddisAI's per-agent memory stream (src/memory/memory_store.py) on remem.

    from remem.compat.advisor import MemoryStore
    memory_store = MemoryStore(config_path="./config/memory.yaml",
                               persist_directory="./data/chroma")
    print(f"Total memories: {memory_store.get_memory_count()}")
    print(f"President memories: {memory_store.get_memory_count('President')}")
    memory_store.clear_memories(agent_role="President")

Each agent's stream is the namespace agent:{role}. The seed's
config/memory.yaml is a remem configuration as it is (its retrieval
weights are the stream profile, decay.half_life_days its half-life,
reflection.observation_threshold the automatic reflection), read for the
agent:* namespaces; the store is persist_directory/remem.db. Retrieval,
the injection block with its timestamps, reflection, counts and clearing
are the operations recall, context, reflect, stats and clear
(docs/lifecycle.md). use_memory=False is the seed's --no-memory.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

import remem

__all__ = ["MemoryStore"]

PREFIX = "agent:"


class MemoryStore:
    """Observations and reflections per agent, retrieved by 0.4 relevance
    + 0.3 recency + 0.3 importance (or what the config file says)."""

    def __init__(self, config_path: str = "./config/memory.yaml",
                 persist_directory: str = "./data/chroma", *, use_memory: bool = True,
                 embedder: Optional[str] = "hash", db: Optional["remem.Remem"] = None,
                 **options: Any):
        self.config_path = config_path
        self.persist_directory = persist_directory
        if db is not None:
            self.db = db
            return
        os.makedirs(persist_directory, exist_ok=True)
        config = config_path if config_path and os.path.exists(config_path) else None
        self.db = remem.connect(os.path.join(persist_directory, "remem.db"), embedder=embedder,
                                config=config, no_memory=not use_memory, **options)

    @staticmethod
    def _ns(agent_role: str) -> str:
        return PREFIX + agent_role

    # -- writing --------------------------------------------------------------
    def add_memory(self, agent_role: str, content: str, memory_type: str = "observation",
                   importance: Optional[float] = None,
                   metadata: Optional[Dict[str, Any]] = None) -> str:
        """Store one memory (kind observation or reflection; without an
        importance, the kind's: decisions 0.9, reflections 0.95); returns
        its id."""
        args: Dict[str, Any] = dict(ns=self._ns(agent_role), text=content, kind=memory_type)
        if importance is not None:
            args["importance"] = importance
        if metadata:
            args["metadata"] = metadata
        return self.db.call("memory.add", **args).get("id", "")

    def add_observation(self, agent_role: str, content: str, importance: Optional[float] = None,
                        metadata: Optional[Dict[str, Any]] = None) -> str:
        return self.add_memory(agent_role, content, "observation", importance, metadata)

    def generate_reflection(self, agent_role: str) -> List[Dict[str, Any]]:
        """Reflect on the agent's recent memories now; the stored reflections."""
        return self.db.call("reflect", ns=self._ns(agent_role)).get("reflections", [])

    # -- reading --------------------------------------------------------------
    def retrieve_memories(self, agent_role: str, query: str,
                          top_k: Optional[int] = None) -> List[Dict[str, Any]]:
        """The agent's memories that matter to query, best first: content,
        memory_type, importance, timestamp (ISO), score and its parts."""
        args: Dict[str, Any] = dict(ns=self._ns(agent_role), query=query)
        if top_k:
            args["k"] = top_k
        hits = self.db.call("context", format="plain", **args).get("hits", [])
        return [{"id": h.get("id"), "content": h.get("text"), "memory_type": h.get("kind"),
                 "importance": h.get("importance"), "timestamp": h.get("created_at"),
                 "score": h.get("score"), "components": h.get("components")} for h in hits]

    def format_memories_for_prompt(self, agent_role: str, query: str,
                                   top_k: Optional[int] = None) -> str:
        """The "## Your Relevant Memories from Past Deliberations" block
        ("" when the agent remembers nothing relevant)."""
        args: Dict[str, Any] = dict(ns=self._ns(agent_role), query=query)
        if top_k:
            args["k"] = top_k
        return self.db.call("context", format="stream", **args).get("text", "")

    def get_memory_count(self, agent_role: Optional[str] = None) -> int:
        """How many memories the agent holds; without a role, all agents."""
        if agent_role is not None:
            return int(self.db.call("stats", ns=self._ns(agent_role)).get("memories", 0))
        spaces = self.db.call("namespaces").get("namespaces", [])
        return sum(int(s.get("count", 0)) for s in spaces if s.get("ns", "").startswith(PREFIX))

    # -- clearing -------------------------------------------------------------
    def clear_memories(self, agent_role: Optional[str] = None) -> int:
        """Delete the agent's memories, or every agent's; how many."""
        ns = self._ns(agent_role) if agent_role is not None else PREFIX + "*"
        return int(self.db.call("clear", ns=ns, yes=True).get("deleted", 0))

    def close(self) -> None:
        self.db.close()
