#!/usr/bin/env bash
# sqlite_row_size.sh: a memory's SQLite row holds no normalised copy of its
# text (its hash finds duplicates, which are compared by their text), so
# two rows of ~250 characters share a 4 KB page and a namespace's load
# reads half the pages; duplicates are folded all the same, against rows
# written both ways (a store from before keeps its copies).
set -u
. "$(dirname "$0")/../support/e2e.sh"
e2e_init sqlite_row_size
command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 is not installed"; exit 0; }
[ -n "${REMEM_TEST_DB:-}" ] && { echo "SKIP: a SQLite test (REMEM_TEST_DB is set)"; exit 0; }
long="Caroline told Melanie about the charity run she joined last weekend, the sunrise over the lake, the friends who cheered at the finish line and how much she wants to paint that morning before the colours fade from her memory"
for i in 0 1 2 3 4 5 6 7 8 9; do
    r add --ns a --text "$long, part $i" >/dev/null || fail "add $i"
done
[ "$(sqlite3 "$db" "SELECT count(*) FROM memories WHERE norm != ''")" = 0 ] ||
    fail "rows keep a normalised copy"
pages=$(sqlite3 "$db" "SELECT count(*) FROM dbstat WHERE name='memories' AND pagetype='leaf'" 2>/dev/null)
if [ -n "$pages" ]; then
    [ "$pages" -le 6 ] || fail "10 rows of $((${#long} + 8)) characters take $pages leaf pages (want <= 6)"
fi
# The same text, spaced and cased otherwise: folded onto the first.
r add --ns a --text "  ${long^^}, PART 3 " >/dev/null || fail "add the duplicate"
[ "$(sqlite3 "$db" "SELECT count(*) FROM memories")" = 10 ] || fail "the duplicate was stored"
[ "$(sqlite3 "$db" "SELECT duplicate_count FROM memories WHERE text LIKE '%part 3'")" = 1 ] ||
    fail "the duplicate was not counted"
# A row written with its copy (as by an earlier remem) is found by it.
sqlite3 "$db" "UPDATE memories SET norm=lower(text) WHERE text LIKE '%part 5'"
r add --ns a --text "${long^^}, part 5" >/dev/null || fail "add against a row with its copy"
[ "$(sqlite3 "$db" "SELECT duplicate_count FROM memories WHERE text LIKE '%part 5'")" = 1 ] ||
    fail "a duplicate of a row with its copy was not counted"
# A different text of the same length is no duplicate.
r add --ns a --text "$long, part X" >/dev/null || fail "add part X"
[ "$(sqlite3 "$db" "SELECT count(*) FROM memories")" = 11 ] || fail "part X was folded"
[ "$fails" -eq 0 ] && echo "sqlite_row_size: ok"
exit $((fails > 0))
