#!/usr/bin/env bash
# make_deps.sh: plain `make` builds (its default goal is `all`, never
# `format`, so it rewrites no tracked file), and scripts/deps.sh keeps the
# test-only packages (PostgreSQL, clang, node, python3-venv) out of what
# `make`/`make run` ask for. deps.sh runs here against stand-ins for
# dpkg-query (nothing installed), id (not root) and apt-get (must not run),
# so nothing on this machine is installed or changed.
set -u
. "$(dirname "$0")/../support/e2e.sh"
e2e_init make_deps
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}

# The default goal, from make's own database, and what `make -n` would run.
goal=$(make -C "$root" -pn -f Makefile 2>/dev/null | sed -n 's/^\.DEFAULT_GOAL := //p' | tail -n 1)
[ "$goal" = all ] || fail "make's default goal is '${goal:-?}', not all"
make -C "$root" -n --no-print-directory > "$tmp/plan" 2>&1 || fail "make -n failed: $(tail -n 3 "$tmp/plan")"
grep -q 'clang-format' "$tmp/plan" && fail "plain make would run clang-format"
make -C "$root" -n --no-print-directory format 2>&1 | grep -q 'clang-format -i' \
    || fail "make format does not run clang-format"
# make run and make demo ask for the runtime set only; make test for the test set.
make -C "$root" -n --no-print-directory run > "$tmp/run" 2>&1
grep -q 'deps.sh runtime' "$tmp/run" || fail "make run does not check the runtime packages"
grep -q 'deps.sh test' "$tmp/run" && fail "make run asks for the test packages"
make -C "$root" -n --no-print-directory test 2>/dev/null | grep -q 'deps.sh test' \
    || fail "make test does not check the test packages"

# deps.sh with nothing installed and no root: it names what is missing.
mkdir -p "$tmp/fake"
printf '#!/bin/sh\nexit 1\n' > "$tmp/fake/dpkg-query"
printf '#!/bin/sh\necho 1000\n' > "$tmp/fake/id"
printf '#!/bin/sh\necho apt-get ran >&2; exit 9\n' > "$tmp/fake/apt-get"

chmod +x "$tmp/fake"/*
deps() { PATH="$tmp/fake:$PATH" bash "$root/scripts/deps.sh" "$@"; }
st=0; deps runtime > "$tmp/rt" 2>&1 || st=$?
[ $st -ne 0 ] || fail "deps.sh runtime succeeded with nothing installed"
grep -q 'missing' "$tmp/rt" || fail "deps.sh runtime (not root) does not say missing: $(cat "$tmp/rt")"
grep -qi 'installing' "$tmp/rt" && fail "deps.sh runtime (not root) says installing"
grep -q 'apt-get ran' "$tmp/rt" && fail "deps.sh ran apt-get without root"
grep -q 'libsqlite3-dev' "$tmp/rt" || fail "deps.sh runtime does not name libsqlite3-dev"
for p in postgresql-15 clang python3-venv npm; do
    grep -qw -- "$p" "$tmp/rt" && fail "deps.sh runtime asks for the test package $p"
done
st=0; deps test > "$tmp/te" 2>&1 || st=$?
[ $st -ne 0 ] || fail "deps.sh test succeeded with nothing installed"
for p in libsqlite3-dev postgresql-15 clang python3-venv; do
    grep -qw -- "$p" "$tmp/te" || fail "deps.sh test does not name $p"
done
deps bogus > "$tmp/bad" 2>&1 && fail "deps.sh bogus succeeded"
grep -q 'usage' "$tmp/bad" || fail "deps.sh bogus says no usage"

[ $fails -eq 0 ] && echo "ok - make builds by default; deps.sh keeps test packages apart" || exit 1
