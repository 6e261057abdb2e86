#!/usr/bin/env bash
# deps.sh: makes sure the Debian 12 packages remem needs are installed, in
# two sets, so that building and serving never pull in the test tools:
#   deps.sh runtime   what `make`, `make run`, `make demo` need: a compiler,
#                     pkg-config and the -dev packages of the libraries
#                     libremem links (SQLite, libpq's client library, ...),
#                     jemalloc (the remem binary's allocator),
#                     and libjs-chart.js (Chart.js, built into remem serve's
#                     inspector page)
#   deps.sh python    runtime, plus pip, setuptools and wheel (make python)
#   deps.sh test      runtime, plus what `make test`/`make asan`/`make fuzz`
#                     need: PostgreSQL 15 (the store suite), clang and its
#                     fuzzing runtime, node and npm (the MCP and OpenAPI
#                     clients), python3-venv (the Python package test),
#                     chromium (the inspector's browser test), strace
#                     (tests/e2e/postgres_backend_heap.sh)
# Quiet when everything is there. As root it installs what is missing with
# apt-get; otherwise it says what is missing, prints the exact line to run,
# and fails.
#   REMEM_DEPS_EXTRA="wrk python3-torch" adds packages (the benchmarks use them).
set -euo pipefail
set_name=${1:-runtime}
runtime=(build-essential pkg-config
         libsqlite3-dev sqlite3 libpq-dev libjansson-dev libcurl4-openssl-dev libmicrohttpd-dev
         libopenblas-dev libutf8proc-dev libzstd-dev libxxhash-dev libssl-dev libstemmer-dev
         libyaml-dev libjemalloc-dev tzdata libjs-chart.js wordnet-base)
python=(python3 python3-pip python3-setuptools python3-wheel)
test=(clang libclang-rt-14-dev postgresql-15 python3 python3-venv python3-setuptools python3-wheel
      curl nodejs npm chromium strace)
case $set_name in
    runtime) pkgs=("${runtime[@]}") ;;
    python) pkgs=("${runtime[@]}" "${python[@]}") ;;
    test) pkgs=("${runtime[@]}" "${test[@]}") ;;
    *) echo "usage: deps.sh [runtime|python|test]" >&2; exit 2 ;;
esac
pkgs+=(${REMEM_DEPS_EXTRA:-})
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# nodejs may come from elsewhere than Debian's package; a working node and npm will do.
if command -v node >/dev/null && command -v npm >/dev/null; then
    tmp=(); for p in "${missing[@]}"; do [[ $p == nodejs || $p == npm ]] || tmp+=("$p"); done
    missing=("${tmp[@]}")
fi
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "remem: missing Debian packages ($set_name): ${missing[*]}" >&2
    echo "remem: not root; run:  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi
echo "remem: installing missing Debian packages ($set_name): ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
