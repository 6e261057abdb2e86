#!/usr/bin/env bash
# check_layers.sh: the layering of docs/architecture.md, checked on every
# #include of the library and the faces. Arrows point down only:
#
#   faces   cli/ server/ mcp/ bindings/   see include/remem.h, their own
#           folder, and another face's entry header (server.h, mcp.h: the
#           command starts the server and the MCP loop), never an internal
#           header of the library or of another face
#   engine  src/engine/ src/score/        may include parts and util
#   parts   src/store/ src/index/ ...     may include other parts and util,
#           never the engine
#   util    src/util/                     includes nothing else of remem
#
# Besides these rules it reports include cycles between folders (a part
# that includes a part that includes it back), and any folder under src/
# that the table does not place: a new folder is one line below.
#   scripts/check_layers.sh [ROOT]     exit 0 when clean, 1 with a list
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
python3 - <<'PY'
import os, re, sys

# ---- the table: folder -> layer (and, for faces, the headers other faces
# may include). A new folder is one line here. Sub-folders belong to theirs
# (src/embed/minilm is src/embed).
FOLDERS = """
cli          face
server       face    server.h
mcp          face    mcp.h
bindings     face
src/engine   engine
src/score    engine
src/lifecycle engine
src/experience engine
src/lessons  engine
src/ingest   engine
src/maintenance engine
src/prompt   engine
src/store    part
src/index    part
src/lexical  part
src/embed    part
src/filter   part
src/text     part
src/lexical  part
src/net      part
src/llm      part
src/config   part
src/telemetry part
src/util     util
include      public
"""
# layer -> the layers it may include (its own folder is always allowed).
LAYERS = {
    "face":   {"public", "face-entry"},
    "engine": {"public", "engine", "part", "util"},
    "part":   {"public", "part", "util"},
    "util":   set(),
    "public": set(),
}

folders, entries = {}, {}
for line in FOLDERS.strip().splitlines():
    f = line.split()
    folders[f[0]] = f[1]
    entries[f[0]] = set(f[2:])

def folder_of(path):
    for f in sorted(folders, key=len, reverse=True):
        if path == f or path.startswith(f + "/"):
            return f
    return None

problems = []
# Every folder under src/ must be placed.
for d in sorted(os.listdir("src")):
    if os.path.isdir(os.path.join("src", d)) and f"src/{d}" not in folders:
        problems.append(f"src/{d}/: not in the layer table of scripts/check_layers.sh "
                        "(add one line: its layer)")

inc_re = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')
def resolve(src, name, quoted):
    cands = []
    if quoted:
        cands.append(os.path.normpath(os.path.join(os.path.dirname(src), name)))
    cands += [os.path.join("src", name), os.path.join("include", name)]
    for c in cands:
        if os.path.isfile(c):
            return c
    return None  # a system header

edges = {}
for top in folders:
    if not os.path.isdir(top):
        continue
    for dp, _, files in os.walk(top):
        for fn in files:
            if not fn.endswith((".c", ".h")):
                continue
            src = os.path.join(dp, fn)
            sf = folder_of(src)
            layer = folders[sf]
            with open(src, encoding="utf-8", errors="replace") as fh:
                for no, line in enumerate(fh, 1):
                    m = inc_re.match(line)
                    if not m:
                        continue
                    tgt = resolve(src, m.group(2), m.group(1) == '"')
                    if not tgt:
                        continue
                    tf = folder_of(tgt)
                    close = '"' if m.group(1) == '"' else ">"
                    where = f"{src}:{no}: #include {m.group(1)}{m.group(2)}{close}"
                    if tf is None:
                        problems.append(f"{where}: {tgt} is in no layer of the table")
                        continue
                    if tf == sf:
                        continue
                    edges.setdefault(sf, set()).add(tf)
                    tl = folders[tf]
                    if layer == "face":
                        ok = tl == "public" or (
                            tl == "face" and os.path.basename(tgt) in entries[tf])
                        why = ("a face includes only include/remem.h, its own folder and "
                               "another face's entry header")
                    else:
                        ok = tl in LAYERS[layer]
                        why = f"{'an' if layer == 'engine' else 'a'} {layer} may include " + (
                            ", ".join(sorted(LAYERS[layer])) or "nothing else of remem")
                    if not ok:
                        problems.append(f"{where}: {layer} {sf}/ includes {tl} {tf}/ ({why})")

# Cycles between folders.
seen_cycles = set()
def dfs(node, path, on_path):
    for nxt in sorted(edges.get(node, ())):
        if nxt in on_path:
            cyc = path[path.index(nxt):] + [nxt]
            key = frozenset(cyc)
            if key not in seen_cycles:
                seen_cycles.add(key)
                problems.append("include cycle between folders: " + " -> ".join(cyc))
            continue
        dfs(nxt, path + [nxt], on_path | {nxt})
for start in sorted(edges):
    dfs(start, [start], {start})

if problems:
    print("layering check failed (docs/architecture.md):")
    for p in problems:
        print("  " + p)
    sys.exit(1)
n = sum(len(v) for v in edges.values())
print(f"layers ok: {len(edges)} folders, {n} folder-to-folder include arrows, all pointing down, no cycles")
PY
