#!/usr/bin/env bash
# file_cycles.sh: runs scripts/check_cycles.py on the build under test, so
# that `make test` fails when two files of the library or of a face call
# each other in a circle (issue: "no two files call each other in a
# circle"). The check reads the compiled objects with nm.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${REMEM_BUILD:-$root/build}
python3 "$root/scripts/check_cycles.py" "$build"
