#!/usr/bin/env bash
# purge_scrub.sh: `remem forget --purge` is for a user who must be
# forgotten: afterwards the text must not be anywhere in the store's files
# (rows, full-text index segments, free pages, WAL), only a text-less
# history row remains; an archived (not purged) memory keeps its text.
set -euo pipefail
R=${REMEM_BIN:?}
export REMEM_EMBEDDER=hash
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
db="$d/p.db"
for i in $(seq 1 200); do echo "{\"text\":\"filler memory number $i about the weather\"}"; done > "$d/fill.jsonl"
$R --db "$db" import --ns u:1 "$d/fill.jsonl" >/dev/null
$R --db "$db" add --ns u:1 --id secret --text "my passport number is zq81xk7730 and I live at Quillon Road" >/dev/null
$R --db "$db" add --ns u:1 --id kept --text "archived note mentioning vorbeck9912" >/dev/null
$R --db "$db" forget --ns u:1 kept >/dev/null
grep -q zq81xk7730 "$db"* || { echo "FAIL: the secret was never written?"; exit 1; }
$R --db "$db" forget --ns u:1 secret --purge >/dev/null
if grep -l -a -e zq81xk7730 -e Quillon "$db"*; then echo "FAIL: purged text still in the files above"; exit 1; fi
$R --db "$db" get --ns u:1 secret 2>/dev/null && { echo "FAIL: purged memory still gettable"; exit 1; }
h=$($R --db "$db" --json history --ns u:1 secret)
python3 -c 'import json,sys; h=json.loads(sys.argv[1]); ops=[r["op"] for r in h]; assert ops==["add","delete"], ops; assert all("text" not in (r["before"] or {}) and "text" not in (r["after"] or {}) for r in h), h' "$h"
# The archived memory keeps its text and is restorable.
$R --db "$db" --json get --ns u:1 kept | grep -q vorbeck9912
[ "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok ]
echo "purge_scrub ok"
