#!/usr/bin/env bash
# layering.sh: runs scripts/check_layers.sh, so that `make test` fails (and
# its closing line counts it) when a face includes an internal header, a
# part includes the engine, util includes anything of remem, or two folders
# include each other (docs/architecture.md).
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
bash "$root/scripts/check_layers.sh" "$root"
