#!/usr/bin/env bash
# archive_sigkill.sh: issue 11's acceptance check 3. `remem archive` is
# killed with SIGKILL at a random moment, 20 times, each on a fresh copy of
# a store of 3,000 memories. After the kill, the next archive operation
# (here `remem archive list`, which recovers first) must find every memory
# in exactly one place: live in the store or in a complete archive file,
# never both, never neither, never twice in the archive.
set -u
. "$(dirname "$0")/../support/e2e.sh"
e2e_init archive-sigkill

N=3000
python3 -c "
import json
for i in range($N): print(json.dumps({'id': 'm%05d' % i, 'text': 'memory %d about topic %d' % (i, i % 37)}))
" > "$tmp/in.jsonl"
"$bin" --db "$tmp/base.db" import --ns n "$tmp/in.jsonl" > /dev/null || fail "import"
seq -f 'm%05g' 0 $((N - 1)) > "$tmp/all"

killed_mid=0
for trial in $(seq 1 20); do
    rm -rf "$tmp/A" "$tmp/t.db"*
    cp "$tmp/base.db" "$tmp/t.db"
    "$bin" --db "$tmp/t.db" archive --ns n --before now --batch 100 --archive-location "$tmp/A" \
        > /dev/null 2>&1 &
    pid=$!
    sleep "0.$(printf '%03d' $((RANDOM % 1000)))"
    kill -9 "$pid" 2> /dev/null
    wait "$pid" 2> /dev/null
    "$bin" --db "$tmp/t.db" archive list --ns n --ids --archive-location "$tmp/A" --json \
        > "$tmp/list.json" || { fail "trial $trial: archive list"; continue; }
    python3 -c "
import json, sys
d = json.load(open('$tmp/list.json'))
bad = [f for f in d['files'] if not f['ok']]
if bad: print('damaged files', bad); sys.exit(1)
for i in d['ids']: print(i)
" > "$tmp/archived" || { fail "trial $trial: damaged archive"; continue; }
    "$bin" --db "$tmp/t.db" export --ns n | python3 -c "
import json, sys
for l in sys.stdin: print(json.loads(l)['id'])
" > "$tmp/live"
    dup=$(sort "$tmp/archived" | uniq -d | wc -l)
    both=$(sort "$tmp/archived" "$tmp/live" | uniq -d | wc -l)
    union=$(sort -u "$tmp/archived" "$tmp/live" | diff - "$tmp/all" | wc -l)
    na=$(wc -l < "$tmp/archived")
    [ "$dup" = 0 ] || fail "trial $trial: $dup ids twice in the archive"
    [ "$both" = 0 ] || fail "trial $trial: $both ids both live and archived"
    [ "$union" = 0 ] || fail "trial $trial: ids missing from both places ($union diff lines)"
    if [ "$na" -gt 0 ] && [ "$na" -lt $N ]; then killed_mid=$((killed_mid + 1)); fi
    # Restore is complete afterwards: everything back, nothing doubled.
    "$bin" --db "$tmp/t.db" restore --ns n --all --archive-location "$tmp/A" > /dev/null ||
        fail "trial $trial: restore"
    live=$("$bin" --db "$tmp/t.db" export --ns n | wc -l)
    [ "$live" = "$N" ] || fail "trial $trial: $live live after restore, expected $N"
done
echo "archive_sigkill: 20 trials, $killed_mid killed mid-way"
[ "$killed_mid" -gt 0 ] || fail "no trial was killed mid-way (the kill timing missed)"
[ "$fails" = 0 ] && echo "archive_sigkill: ok"
exit $((fails > 0))
