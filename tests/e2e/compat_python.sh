#!/usr/bin/env bash
# compat_python.sh: the seed systems' own Python APIs (remem.compat, issue
# 20): every code example of seeds 000, 001, 002 and 004, as the seed
# documents write it with only the import or constructor changed, runs
# against remem and gives what the seed says (compat_python.py). Operations
# that need an LLM run against the local stand-in (tests/support/
# llm_standin.py).
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export REMEM_BIN=${REMEM_BIN:-$root/build/remem}
exec python3 "$root/tests/e2e/compat_python.py" "$root"
