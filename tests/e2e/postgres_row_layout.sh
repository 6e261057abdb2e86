#!/usr/bin/env bash
# postgres_row_layout.sh: a memory's row stays whole in the memories table's
# page on PostgreSQL (src/store/postgres.c, migration 2). By default
# PostgreSQL compresses a row's largest value once the row passes ~2 KB (or
# moves it to the TOAST table): a 384-dimension vector (1,536 bytes) and a
# few hundred bytes of text are past that, so every namespace load
# decompressed each vector (7.6% of PostgreSQL's CPU in the tenant
# benchmark). Checked here:
#   - a row of ~3 KB keeps its vector uncompressed in the row (4 bytes a
#     dimension) and the TOAST table stays empty;
#   - a memory of 20 KB of text still goes in (its text is compressed or
#     moved out, as a row must fit its 8 KB page) and reads back whole;
#   - both are recalled; a store made before the change (schema 1) takes
#     it when a newer remem opens it, and keeps its rows.
# SKIP (77) where PostgreSQL cannot be started.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/support/e2e.sh"
e2e_init pg-row-layout
. "$root/tests/support/pg_env.sh"
pg_need
db=$(pg_newdb)
q() { psql -Atq "$db" -c "$1"; }

long=$(python3 -c 'print(" ".join("lantern%d harbour%d" % (i, i % 7) for i in range(120)))')
r add --ns layout --id mid --text "$long" >/dev/null || fail "adding a memory of ${#long} bytes"
huge=$(python3 -c 'print(" ".join("w%05d" % i for i in range(3000)))')
r add --ns layout --id big --text "$huge" >/dev/null || fail "adding a memory of ${#huge} bytes"

# A vector kept whole in its row is its bytes and a 4-byte header; a
# compressed one is smaller, one moved to the TOAST table an 18-byte pointer.
dim=$(q "SELECT dim FROM namespaces WHERE ns='layout'")
[ -n "$dim" ] && [ "$dim" -gt 0 ] || fail "the namespace's dimension: '$dim'"
row=$(q "SELECT octet_length(text) + octet_length(embedding) FROM memories WHERE id='mid'")
[ -n "$row" ] && [ "$row" -gt 2100 ] || fail "the test's row is past PostgreSQL's 2 KB default: $row bytes"
size=$(q "SELECT pg_column_size(embedding) FROM memories WHERE id='mid'")
[ "$size" = $((dim * 4 + 4)) ] ||
    fail "the vector of a ${row}-byte row is kept whole in the row: $size bytes, not $((dim * 4 + 4))"

# The 20 KB memory: its row would not fit a page whole; it goes in and
# reads back whole.
back=$(q "SELECT octet_length(text) FROM memories WHERE id='big'")
[ "$back" = "${#huge}" ] || fail "the 20 KB memory is stored whole: $back bytes of ${#huge}"
r get --ns layout big | grep -q "w02999" || fail "the 20 KB memory reads back to its end"
r recall --ns layout --k 5 "lantern7 harbour3" | grep -q "layout/mid" ||
    fail "recall finds the 3 KB memory"
r recall --ns layout --k 5 "w01234" | grep -q "layout/big" || fail "recall finds the 20 KB memory"

# A store of schema 1 (made by a remem before the change) takes it on open
# and keeps its rows.
old=$(pg_newdb)
r2() { "$bin" --db "$old" "$@"; }
q2() { psql -Atq "$old" -c "$1"; }
r2 add --ns keep --id one --text "$long" >/dev/null || fail "adding to the second store"
q2 "ALTER TABLE memories RESET (toast_tuple_target);
    ALTER TABLE memories ALTER COLUMN embedding SET STORAGE EXTENDED;
    UPDATE remem_meta SET value='1' WHERE key='schema_version'" ||
    fail "putting the second store back to schema 1"
[ "$(q2 "SELECT attstorage FROM pg_attribute WHERE attrelid='memories'::regclass
         AND attname='embedding'")" = x ] || fail "the second store is back to schema 1's layout"
r2 add --ns keep --id two --text "$long and more" >/dev/null || fail "adding after the migration"
opts=$(q2 "SELECT array_to_string(reloptions, ',') FROM pg_class WHERE relname='memories'")
[ "$opts" = "toast_tuple_target=8160" ] || fail "the migration set the table's option: '$opts'"
[ "$(q2 "SELECT value FROM remem_meta WHERE key='schema_version'")" = 2 ] ||
    fail "the schema version after the migration"
[ "$(q2 "SELECT count(*) FROM memories WHERE ns='keep'")" = 2 ] ||
    fail "both memories kept across the migration"
size2=$(q2 "SELECT pg_column_size(embedding) FROM memories WHERE id='two'")
[ "$size2" = $((dim * 4 + 4)) ] || fail "a row added after the migration keeps its vector whole: $size2"

[ $fails -eq 0 ] && echo "PASS: postgres_row_layout" || exit 1
