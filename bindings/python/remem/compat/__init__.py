"""remem.compat: the seed memory systems' own Python APIs over remem.

Each module is a thin layer over remem's operations with the class names,
method names, argument names, defaults and return shapes its system's
documentation writes, so that code written for it switches to remem by
changing an import (docs/compat.md):

    lifestack   LifeStackMemory, OutcomeFeedback  (LifeStack episodic memory)
    generative  MemoryEntry, Memory, ChromaMemory (generative-agents tiers)
    lessons     LessonMemory                      (Memory V2 auto-learning)
    advisor     MemoryStore                       (per-agent memory stream)

No module holds logic of its own beyond naming and shapes: every number,
ranking and text comes from an operation (db.call), as on every other
face.
"""

__all__ = ["lifestack", "generative", "lessons", "advisor"]
