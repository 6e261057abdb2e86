#!/usr/bin/env bash
# bad_dates.sh: an impossible date is refused on every path with one
# message (issue 7, acceptance check 3). `remem import` of a line whose
# created_at is 2023-02-31 (which timegm used to roll over to 3 March and
# store) exits non-zero, names the field and the value, and changes
# nothing (export with vectors and the SQL dump are the same after); the
# same date in a recall filter, and in --now, is refused with the same
# wording: FIELD: "VALUE" is not a valid time (WHY).
set -u
. "$(dirname "$0")/../support/e2e.sh"
e2e_init bad-dates
snapshot() { { r export --vectors | sha256sum; sqlite3 "$db" .dump | sha256sum; } 2>&1; }

# bad NAME EXPECTED-TEXT -- COMMAND...: non-zero exit, one stderr line that
# holds EXPECTED-TEXT exactly, store unchanged.
bad() {
    local name=$1 want=$2; shift 3
    local before after
    before=$(snapshot)
    "$@" >"$tmp/out" 2>"$tmp/err" && fail "$name: exit 0"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$name: stderr is not one line: $(cat "$tmp/err")"
    grep -qF -- "$want" "$tmp/err" || fail "$name: message lacks '$want': $(cat "$tmp/err")"
    after=$(snapshot)
    [ "$before" = "$after" ] || fail "$name: the store changed"
    echo "ok: $name: $(cat "$tmp/err")"
}

printf '%s\n' '{"ns":"a","id":"m1","text":"first memory about deploys","created_at":"2023-02-28"}' \
    '{"ns":"a","id":"m2","text":"second memory about deploys","created_at":"2024-02-29T12:00:00+02:00"}' \
    > "$tmp/good.jsonl"
r import "$tmp/good.jsonl" >/dev/null 2>&1 || fail "a valid import (a leap day) was refused"
[ "$(r export | grep -c '"2024-02-29T10:00:00.000Z"')" -eq 1 ] || fail "the leap day was not stored as 10:00 UTC"

msg='created_at: "2023-02-31" is not a valid time (February 2023 has 28 days)'
printf '%s\n' '{"ns":"a","id":"m3","text":"a valid line first"}' \
    '{"ns":"a","id":"m4","text":"then an impossible date","created_at":"2023-02-31"}' > "$tmp/bad.jsonl"
bad "import of 2023-02-31" "$msg" -- r import "$tmp/bad.jsonl"
r get m3 >/dev/null 2>&1 && fail "the line before the bad one was written"
for d in 2023-13-01 2023-04-31 2023-05-08T25:00:00Z 1900-02-29; do
    printf '{"ns":"a","text":"x","created_at":"%s"}\n' "$d" > "$tmp/one.jsonl"
    bad "import of $d" "created_at: \"$d\" is not a valid time (" -- r import "$tmp/one.jsonl"
done
bad "filter with 2023-02-31" "$msg" -- \
    r recall --ns a --query deploys --filter '{"created_at":{"$gt":"2023-02-31"}}'
bad "--now 2023-02-31" 'now: "2023-02-31" is not a valid time (February 2023 has 28 days)' -- \
    r recall --ns a --query deploys --now 2023-02-31 --no-touch
bad "add --created 2023-02-31" "$msg" -- r add --ns a --text "x y z" --created 2023-02-31

[ $fails -eq 0 ] && echo "bad_dates: all passed" || { echo "bad_dates: $fails failures"; exit 1; }
