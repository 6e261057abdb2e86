#!/usr/bin/env bash
# episodes_faces.sh: issue 11's acceptance check 1 through the CLI, HTTP and
# the server's maintenance thread; the checks are in episodes_faces.py
# beside this script (its docstring says what they are).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/episodes_faces.py"
