#!/usr/bin/env bash
# deps.sh: makes sure the Debian 12 packages remem builds and tests with are
# installed. As root it installs what is missing with apt-get; otherwise it
# prints the exact line to run and fails. Quiet when everything is there.
#   REMEM_DEPS_EXTRA="wrk python3-torch" adds packages (the benchmarks use them).
set -euo pipefail
pkgs=(build-essential pkg-config clang libclang-rt-14-dev
      libsqlite3-dev sqlite3 libjansson-dev libcurl4-openssl-dev libmicrohttpd-dev
      libopenblas-dev libutf8proc-dev libzstd-dev libxxhash-dev libssl-dev libstemmer-dev libyaml-dev
      python3 curl nodejs npm)
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
echo "remem: installing missing Debian packages: ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
else
    echo "remem: not root; run:  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi
