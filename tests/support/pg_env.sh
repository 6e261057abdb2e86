# pg_env.sh: sourced by the PostgreSQL end-to-end scripts after e2e_init:
#   . "$root/tests/support/pg_env.sh"; pg_need
# gives $pg_uri, a PostgreSQL 15 server's admin URI: $REMEM_TEST_PG_URI when
# tests/run.sh (or the caller) started one, else a server of our own in
# $tmp/pg, stopped on exit. Where PostgreSQL cannot be installed or started
# the script exits 77 (SKIP), never passes. pg_newdb prints the URI of a
# fresh, empty database on it.
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
