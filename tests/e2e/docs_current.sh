#!/usr/bin/env bash
# docs_current.sh: sentences that once described work not yet done, and
# are false now, stay out of the docs (issue 20, fix 11): OpenTelemetry is
# built (docs/telemetry.md) and prune's `llm` strategy calls the LLM
# client. Each pattern is a phrase a stale page used; finding one fails.
set -u
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
fail=0
stale=(
  "are not built yet"
  "until the LLM client is connected"
)
for p in "${stale[@]}"; do
  if hits=$(grep -rnF -- "$p" "$root/docs" "$root/README.md"); then
    echo "FAIL stale sentence \"$p\":"; echo "$hits" | sed 's/^/    /'; fail=1
  else
    echo "ok   no \"$p\""
  fi
done
# the page telemetry.md describes must exist where maintenance.md points
grep -q "telemetry.md" "$root/docs/maintenance.md" && [ -f "$root/docs/telemetry.md" ] ||
  { echo "FAIL docs/maintenance.md does not point to docs/telemetry.md"; fail=1; }
exit $fail
