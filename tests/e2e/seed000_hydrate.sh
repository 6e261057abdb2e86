#!/usr/bin/env bash
# seed000_hydrate.sh: hydration on first use as seed 000 does it (issue 20,
# fix 3): the configuration may name the seed's `preseeded_memory*.json`
# with its wildcard (each file it matches, in name order), and on a store
# that does not exist yet the CLI's first experience read (`fewshot`)
# creates it, hydrates and answers from the pre-seeded decisions, as
# `remem serve` does. A pattern that matches no file is an error naming it.
set -euo pipefail
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=${REMEM_BIN:-$root/build/remem}
export REMEM_EMBEDDER=hash
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
mkdir -p "$tmp/data"
for i in 1 2 3; do
  cat > "$tmp/data/preseeded_memory_p$i.json" <<JSON
{"decisions": {"ids": ["d$i"], "metadatas": [{"conflict_title": "Friday 6PM part $i",
 "action_type": "communicate", "target_domain": "relationships", "reward": 0.7,
 "reasoning": "reason $i", "episode_id": ""}]}}
JSON
done
printf 'hydrate: [data/preseeded_memory*.json]\n' > "$tmp/remem.yaml"
out=$("$bin" --db "$tmp/new.db" --config "$tmp/remem.yaml" fewshot --ns agent --title "Friday 6PM" --n 3 2>&1) &&
  ok "fewshot on a store not created yet runs" || bad "fewshot on a new store: $out"
n=$(printf '%s\n' "$out" | grep -c "Agent's Initial Reasoning: reason" || true)
[ "$n" = 3 ] && ok "it answers from the three files the wildcard matches" || bad "pre-seeded decisions in the answer: $n: $out"
cnt=$("$bin" --db "$tmp/new.db" --config "$tmp/remem.yaml" decision similar --ns agent --title "Friday 6PM" --n 10 --json 2>&1 |
      python3 -c 'import json,sys; print(len(json.load(sys.stdin)["results"]))') || cnt=err
[ "$cnt" = 3 ] && ok "hydrated once: 3 decisions" || bad "decisions after two reads: $cnt"
printf 'hydrate: [data/nothing_here*.json]\n' > "$tmp/none.yaml"
if out=$("$bin" --db "$tmp/other.db" --config "$tmp/none.yaml" fewshot --ns agent --title x 2>&1); then
  bad "a pattern matching no file is an error"
else
  case "$out" in *nothing_here*) ok "a pattern matching no file is an error naming it";;
    *) bad "the error names the pattern: $out";; esac
fi
if "$bin" --db "$tmp/typo.db" recall --ns agent "x" >/dev/null 2>&1; then
  bad "a plain read on a missing store is still an error"
else ok "a plain read on a missing store is still an error"; fi
exit $fail
