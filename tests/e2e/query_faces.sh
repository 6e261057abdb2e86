#!/usr/bin/env bash
# query_faces.sh: HTTP, MCP and the CLI accept and refuse the same recall
# queries with the same message (issue 7, acceptance check 4). The table of
# queries and the three drivers are in query_faces.py beside this script;
# add a row there to extend it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/query_faces.py"
