#!/usr/bin/env python3
"""bench_episode_limit.py: what seed 003's count trigger costs an add.

episode.add counts the project's episodes (from the namespace's cache)
when the namespace holds more memories than maxEpisodesPerProject, to
prune at once when the project passes it. This times adds into a
namespace of N episodes over 10 projects (each below the limit, so no
prune runs) with the check (max_episodes_per_project 1000) and without
it (0, the baseline), in alternating rounds in the same process, and
prints the ratio.

Usage: LD_LIBRARY_PATH=build python3 bench/bench_episode_limit.py [N]
"""
import os, shutil, sys, tempfile, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "bindings", "python"))
import remem  # noqa: E402

n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
d = tempfile.mkdtemp(prefix="remem-bench-")
db = remem.Remem(os.path.join(d, "s.db"), embedder="hash")
seq = 0


def add(project, maxep):
    global seq
    seq += 1
    db.call("episode.add", ns="e", prompt="prompt %d about things" % seq, output="output %d" % seq,
            meta={"taskID": "t%d" % seq, "projectID": project}, max_episodes_per_project=maxep)


for i in range(n):
    add("p%d" % (i % 10), 0)
ms = {0: [], 1000: []}
for rnd in range(4):
    for maxep in (0, 1000):
        t = time.perf_counter()
        for i in range(200):
            add("p%d" % (i % 10), maxep)
        ms[maxep].append((time.perf_counter() - t) / 200 * 1000)
best = {k: min(v) for k, v in ms.items()}
print("episode.add into %d episodes: %.3f ms without the count check, %.3f ms with it: "
      "ratio %.2f" % (n, best[0], best[1000], best[1000] / best[0]))
db.close()
shutil.rmtree(d)
