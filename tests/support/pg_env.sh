# pg_env.sh: sourced by the PostgreSQL end-to-end scripts after e2e_init:
#   . "$root/tests/support/pg_env.sh"; pg_need
# gives $pg_uri, a PostgreSQL 15 server's admin URI: $REMEM_TEST_PG_URI when
# tests/run.sh (or the caller) started one, else a server of our own in
# $tmp/pg, stopped on exit. Where PostgreSQL cannot be installed or started
# the script exits 77 (SKIP), never passes. pg_newdb prints the URI of a
# fresh, empty database on it. pg_need_logged: a server of our own that
# logs every statement ("[pid] ... LOG:  statement: ..." or "execute ...",
# one line a round trip) to $pg_own/log, for the tests that count round
# trips.
pg_support=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
pg_need() {
    pg_own=
    if [ -n "${REMEM_TEST_PG_URI:-}" ]; then
        pg_uri=$REMEM_TEST_PG_URI
        return
    fi
    if [ "${REMEM_TEST_PG:-1}" = 0 ]; then
        echo "SKIP: postgres: PostgreSQL 15 could not be started here (see tests/run.sh's log)"
        exit 77
    fi
    pg_own=$(mktemp -d /tmp/remem-pg-XXXXXX)
    pg_uri=$(bash "$pg_support/pg.sh" start "$pg_own") || {
        st=$?
        rm -rf "$pg_own"
        [ $st -eq 77 ] && exit 77
        echo "FAIL: starting PostgreSQL"; exit 1
    }
    trap 'bash "$pg_support/pg.sh" stop "$pg_own"; rm -rf "$tmp"' EXIT
}
pg_newdb() { bash "$pg_support/pg.sh" newdb "$pg_uri"; }
pg_need_logged() {
    REMEM_TEST_PG_URI= REMEM_TEST_PG=1 pg_need # our own server: its log is read
    cat >> "$pg_own/data/postgresql.conf" <<CONF
log_statement = 'all'
log_line_prefix = '[%p] '
CONF
    bash "$pg_support/pg.sh" restart "$pg_own" || { echo "FAIL: restarting PostgreSQL"; exit 1; }
}
# With pg_need_logged: the round trips of the last transaction (BEGIN ..
# COMMIT on its backend) in $pg_own/log since line $1; -1 when none ended.
round_trips() {
    tail -n +"$(( $1 + 1 ))" "$pg_own/log" | python3 -c '
import re, sys
lines = [l for l in sys.stdin if re.search(r"LOG:  (statement|execute)", l)]
begin = [i for i, l in enumerate(lines) if "statement: BEGIN; SET LOCAL" in l]
if not begin: print(-1); sys.exit()
pid = re.match(r"\[(\d+)\]", lines[begin[-1]]).group(1)
mine = [l for l in lines[begin[-1]:] if l.startswith("[" + pid + "]")]
end = next((i for i, l in enumerate(mine) if "COMMIT" in l), None)
print(-1 if end is None else end + 1)'
}
