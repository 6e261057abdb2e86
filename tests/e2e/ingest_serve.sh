#!/usr/bin/env bash
# ingest_serve.sh: background ingests through remem serve (202, the ingest
# thread), a SIGKILL in the middle of them, and a restart that finishes
# every accepted job, none twice; the checks are in ingest_serve.py beside
# this script (its docstring says what they are).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/ingest_serve.py"
