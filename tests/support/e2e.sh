# e2e.sh: what the shell end-to-end tests share, sourced after `set -u`:
#   . "$(dirname "$0")/../support/e2e.sh"; e2e_init NAME
# gives $bin (the remem under test: $REMEM_BIN or build/remem), $tmp (a
# fresh folder, removed on exit unless the script sets its own trap), $db
# (a store in it, or $REMEM_TEST_DB), the hash embedder named (so no "auto" note joins
# stderr), no $REMEM_DB, and fail() / r() with $fails counting failures.
e2e_init() {
    bin=${REMEM_BIN:-$(cd "$(dirname "$0")/../.." && pwd)/build/remem}
    tmp=$(mktemp -d "/tmp/remem-$1-XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    export REMEM_EMBEDDER=hash
    unset REMEM_DB
    # REMEM_TEST_DB: run the test on another store, e.g. a fresh PostgreSQL
    # database (tests/e2e/postgres_suite.sh).
    db=${REMEM_TEST_DB:-$tmp/store.db}
    fails=0
}
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
r() { "$bin" --db "$db" "$@"; }
