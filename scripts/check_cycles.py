#!/usr/bin/env python3
"""check_cycles.py: no two files of remem call each other in a circle.

The layering check (check_layers.sh) looks at #includes between folders;
this one looks at calls between files, from the compiled objects: for each
object under BUILD/obj, the symbols it needs (nm's U) and the ones it
defines (T, D, B, R). File A calls file B when B defines a symbol A needs.
A strongly connected group of two or more files is a circle, printed with
the symbols that close it; the exit status is then 1. A circle means two
files that cannot be understood, tested or replaced one without the other:
move the shared piece down into a file both call (as error.c, row.c,
common.c and route_table.c were).

    scripts/check_cycles.py [BUILD]     (default: build)
"""
import glob
import os
import subprocess
import sys

build = sys.argv[1] if len(sys.argv) > 1 else "build"
objs = sorted(glob.glob(os.path.join(build, "obj", "**", "*.o"), recursive=True))
objs = [o for o in objs if "/obj/tests/" not in o]  # test support is not remem
if not objs:
    sys.exit("check_cycles: no objects under %s/obj (build first)" % build)

defs, needs = {}, {}
for o in objs:
    out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
    d, u = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == "U":
            u.add(f[1])
        elif len(f) == 3 and f[1] in "TDBR":
            d.add(f[2])
    defs[o], needs[o] = d, u
owner = {s: o for o, ds in defs.items() for s in ds}
calls = {o: {owner[s] for s in needs[o] if owner.get(s, o) != o} for o in objs}

# Tarjan's strongly connected components, iteratively.
index, low, on, stack, groups, counter = {}, {}, set(), [], [], [0]
for root in objs:
    if root in index:
        continue
    work = [(root, iter(sorted(calls[root])))]
    index[root] = low[root] = counter[0]; counter[0] += 1
    stack.append(root); on.add(root)
    while work:
        v, it = work[-1]
        w = next(it, None)
        if w is not None:
            if w not in index:
                index[w] = low[w] = counter[0]; counter[0] += 1
                stack.append(w); on.add(w)
                work.append((w, iter(sorted(calls[w]))))
            elif w in on:
                low[v] = min(low[v], index[w])
            continue
        work.pop()
        if work:
            low[work[-1][0]] = min(low[work[-1][0]], low[v])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop(); on.discard(w); group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

name = lambda o: os.path.relpath(o, os.path.join(build, "obj"))[:-2] + ".c"
for g in groups:
    print("files calling each other in a circle: " + " ".join(name(o) for o in g))
    for a in g:
        for b in g:
            if b in calls[a]:
                syms = sorted(s for s in needs[a] if owner.get(s) == b)
                print("    %s -> %s (%s)" % (name(a), name(b), ", ".join(syms[:4])))
if groups:
    sys.exit(1)
print("check_cycles: %d files, no circles" % len(objs))
