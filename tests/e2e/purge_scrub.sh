#!/usr/bin/env bash
# purge_scrub.sh: `remem forget --purge` is for a user who must be
# forgotten: afterwards nothing of the memory (its text, metadata, links,
# the reason it was invalidated, what superseded it, who updated it) may be
# anywhere in the store's files (rows, history, full-text index segments,
# free pages, WAL); history keeps only that (ns, id) was added, changed and
# deleted, and when. An archived (not purged) memory keeps everything.
set -euo pipefail
R=${REMEM_BIN:?}
export REMEM_EMBEDDER=hash
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
db="$d/p.db"
for i in $(seq 1 200); do echo "{\"text\":\"filler memory number $i about the weather\"}"; done > "$d/fill.jsonl"
$R --db "$db" import --ns u:1 "$d/fill.jsonl" >/dev/null
$R --db "$db" add --ns u:1 --id secret --text "my passport number is zq81xk7730 and I live at Quillon Road" \
    --meta '{"note":"METASECRET42","nested":{"k":"METANEST77"}}' --links '["LINKSECRET31"]' >/dev/null
$R --db "$db" update --ns u:1 secret --meta '{"note":"METASECRET43"}' --actor ACTORSECRET64 >/dev/null
$R --db "$db" invalidate --ns u:1 secret --by SUPERSECRET58 --reason REASONSECRET55 >/dev/null
$R --db "$db" add --ns u:1 --id kept --text "archived note mentioning vorbeck9912" --meta '{"k":"KEPTMETA19"}' >/dev/null
$R --db "$db" forget --ns u:1 kept >/dev/null
secrets=(zq81xk7730 Quillon METASECRET42 METANEST77 METASECRET43 LINKSECRET31 ACTORSECRET64 SUPERSECRET58 REASONSECRET55)
for s in "${secrets[@]}"; do
    grep -q -a "$s" "$db"* || { echo "FAIL: $s was never written?"; exit 1; }
done
$R --db "$db" forget --ns u:1 secret --purge >/dev/null
left=0
for s in "${secrets[@]}"; do
    if f=$(grep -l -a -e "$s" "$db"*); then echo "FAIL: $s still in $f"; left=1; fi
done
[ $left = 0 ] || exit 1
$R --db "$db" get --ns u:1 secret 2>/dev/null && { echo "FAIL: purged memory still gettable"; exit 1; }
h=$($R --db "$db" --json history --ns u:1 secret)
python3 -c '
import json, sys
h = json.loads(sys.argv[1])["history"]
ops = [r["op"] for r in h]
assert ops == ["add", "update", "invalidate", "delete"], ops
for r in h:
    assert r["ns"] == "u:1" and r["id"] == "secret" and r["at"], r
    assert r["before"] is None and r["after"] is None and r["actor"] is None, r
' "$h"
# The archived memory keeps its text and metadata, and is restorable.
$R --db "$db" --json get --ns u:1 kept | grep -q vorbeck9912
$R --db "$db" --json get --ns u:1 kept | grep -q KEPTMETA19
$R --db "$db" --json history --ns u:1 kept | grep -q KEPTMETA19
[ "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok ]
echo "purge_scrub ok"
