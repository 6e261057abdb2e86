#!/usr/bin/env bash
# sqlite_page_size.sh: REMEM_SQLITE_PAGE_KB sets the page size of a new
# SQLite store (a store of many small namespaces reads a namespace's rows
# in fewer pages with larger ones: docs/deploy.md); an existing store keeps
# its own, values that are not a power of two from 1 to 64 are ignored,
# and a store of either size answers the same recall the same way.
set -u
. "$(dirname "$0")/../support/e2e.sh"
e2e_init sqlite_page_size
command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 is not installed"; exit 0; }
page() { sqlite3 "$1" "PRAGMA page_size"; }
fill() {
    for i in 1 2 3 4 5 6; do
        "$bin" --db "$1" add --ns a --text "Caroline painted a lake at sunrise, number $i" >/dev/null || fail "add to $1"
    done
}
REMEM_SQLITE_PAGE_KB=16 fill "$tmp/p16.db"
[ "$(page "$tmp/p16.db")" = 16384 ] || fail "16 KB asked: page size $(page "$tmp/p16.db")"
fill "$tmp/p4.db"
[ "$(page "$tmp/p4.db")" = 4096 ] || fail "default: page size $(page "$tmp/p4.db")"
# An existing store keeps its size whatever the variable says.
REMEM_SQLITE_PAGE_KB=64 "$bin" --db "$tmp/p4.db" add --ns a --text "one more" >/dev/null || fail "add to p4"
[ "$(page "$tmp/p4.db")" = 4096 ] || fail "existing store changed to $(page "$tmp/p4.db")"
for bad in 3 128 0 -4 x; do
    rm -f "$tmp/bad.db"*
    REMEM_SQLITE_PAGE_KB=$bad "$bin" --db "$tmp/bad.db" add --ns a --text "x" >/dev/null || fail "add with $bad"
    [ "$(page "$tmp/bad.db")" = 4096 ] || fail "REMEM_SQLITE_PAGE_KB=$bad gave $(page "$tmp/bad.db")"
done
strip() { python3 -c 'import json,sys; print([h["text"] for h in json.load(sys.stdin)["hits"]])'; }
rc() { "$bin" --db "$1" recall --ns a --query "lake sunrise number 4" --k 3 --no-touch --json | strip; }
a=$(rc "$tmp/p16.db")
b=$(rc "$tmp/p4.db")
[ -n "$a" ] && [ "$a" = "$b" ] || fail "recall differs by page size: $a / $b"
[ "$fails" -eq 0 ] && echo "sqlite_page_size: ok"
exit $((fails > 0))
