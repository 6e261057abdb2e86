#!/usr/bin/env bash
# postgres_suite.sh: the end-to-end tests of the CLI, HTTP, MCP and Python
# faces again, each on a fresh PostgreSQL database instead of a SQLite file
# (issue 13, acceptance check 1). Each script takes its store from
# REMEM_TEST_DB (tests/support/e2e.sh, tests/e2e/serve_util.py). Left out:
# the scripts that read the SQLite file itself (sqlite3 .dump, integrity
# checks, bytes in the file: bad_input, bad_dates, serve_hardening,
# purge_scrub, crash_import, concurrent_writers; postgres_servers.sh covers
# crashes and concurrency on PostgreSQL) and those that touch no store.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/support/e2e.sh"
e2e_init pg-suite
. "$root/tests/support/pg_env.sh"
pg_need
tests=(cli_basic.sh serve_api.sh serve_keys.sh serve_key_rights.sh serve_sigterm.sh
       serve_openapi.sh mcp_http.sh mcp_stdio.sh python_binding.sh query_faces.sh)
for t in "${tests[@]}"; do
    dbu=$(pg_newdb) || { fail "$t: cannot create a database"; continue; }
    t0=$SECONDS
    st=0
    REMEM_TEST_DB=$dbu bash "$root/tests/e2e/$t" >"$tmp/out" 2>&1 || st=$?
    if [ $st -eq 0 ]; then
        echo "ok - $t on PostgreSQL ($((SECONDS - t0)) s)"
    elif [ $st -eq 77 ]; then
        echo "SKIP: $t: $(grep -m1 SKIP "$tmp/out")"
    else
        fail "$t on PostgreSQL (exit $st):"
        tail -n 40 "$tmp/out" | sed 's/^/    /'
    fi
done
[ $fails -eq 0 ]
