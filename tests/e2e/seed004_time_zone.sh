#!/usr/bin/env bash
# seed004_time_zone.sh: the injection block's dates in the zone the
# configuration names (issue 20, fix 9): seed 004's advisors read their
# memories in local time. time_zone is a policy key (and an argument of
# `context`); daylight saving is the zone database's; an unknown zone is
# an error, in the file or in the call, never a silent UTC. Without one
# the dates stay UTC.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=${REMEM_BIN:-$root/build/remem}
export REMEM_EMBEDDER=hash
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
if [ ! -f /usr/share/zoneinfo/America/New_York ]; then
  echo "SKIP: seed004_time_zone: no time zone database (apt-get install tzdata)"; exit 77
fi
mkdir -p "$tmp/conf"; cat > "$tmp/conf/tz.yaml" <<'YAML'
policies:
  "agent:*":
    profile: stream
    time_zone: America/New_York
YAML
r() { "$bin" --db "$tmp/s.db" --config "$tmp/conf/tz.yaml" "$@"; }
r add --ns agent:President --text "I recommended diplomatic engagement on North Korea issue" \
  --created 2025-11-02T19:30:00Z >/dev/null
r add --ns agent:President --text "I decided to pursue military deterrence on North Korea" \
  --created 2025-07-01T14:15:00Z >/dev/null
out=$(r context --ns agent:President --query "North Korea" 2>&1) || bad "context: $out"
case "$out" in *"[November 2, 2025 at 02:30 PM] I recommended"*) ok "EST in November (UTC-5)";;
  *) bad "November date in New York time: $out";; esac
case "$out" in *"[July 1, 2025 at 10:15 AM] I decided"*) ok "EDT in July (UTC-4)";;
  *) bad "July date in New York time: $out";; esac
out=$(r context --ns agent:President --query "North Korea" --time-zone Asia/Tokyo 2>&1) || bad "context: $out"
case "$out" in *"[November 3, 2025 at 04:30 AM]"*) ok "the call's time_zone wins";;
  *) bad "Tokyo time from the call: $out";; esac
out=$("$bin" --db "$tmp/s.db" context --ns agent:President --query "North Korea" 2>&1)
case "$out" in *"[November 2, 2025 at 07:30 PM]"*) ok "no zone configured: UTC";;
  *) bad "UTC without a zone: $out";; esac
if out=$(r context --ns agent:President --query x --time-zone Mars/Base 2>&1); then
  bad "an unknown zone in the call is an error"
else case "$out" in *Mars/Base*) ok "an unknown zone in the call is an error naming it";;
  *) bad "error names the zone: $out";; esac; fi
printf 'time_zone: Nowhere/City\n' > "$tmp/bad.yaml"
if out=$("$bin" --db "$tmp/s.db" --config "$tmp/bad.yaml" context --ns a --query x 2>&1); then
  bad "an unknown zone in the file is an error"
else case "$out" in *Nowhere/City*) ok "an unknown zone in the file is an error naming it";;
  *) bad "config error names the zone: $out";; esac; fi
exit $fail
