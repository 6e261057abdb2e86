#!/usr/bin/env bash
# recall_lanes.sh: what the `default` profile's recall understands without a
# model, through the CLI: with the WordNet expansion switched on
# (REMEM_RECALL_EXPAND), a memory that shares no word with the query but a
# WordNet synonym of one ("automobile" / "motorcar") is a lexical candidate,
# scored below one holding the query's own word; the entity lane scores the
# memories that share the query's names ("components.entity", 1 for the
# best, 0 for none) and says which lanes brought each hit; stats say whether
# WordNet's files were found. SKIP without Debian's wordnet-base.
set -u
. "$(dirname "$0")/../support/e2e.sh"
e2e_init recall-lanes
if [ ! -r /usr/share/wordnet/index.noun ] && [ -z "${REMEM_WORDNET_DIR:-}" ]; then
    echo "SKIP: recall_lanes: WordNet's files are not installed (Debian's wordnet-base)"
    exit 77
fi
# The expansion is off by default (docs/retrieval.md); this turns it on.
export REMEM_RECALL_EXPAND=0.1
r add --ns n --id syn --text "Bolton drives his motorcar to the harbour" >/dev/null || fail "add"
r add --ns n --id own --text "the automobile show opens on Friday" >/dev/null || fail "add"
r add --ns n --id far --text "Ann walks along the river at dawn" >/dev/null || fail "add"
r add --ns n --id cat --text "Caroline: my cat sleeps all day" >/dev/null || fail "add"
r add --ns n --id dog --text "Melanie: the dog barks at the gate" >/dev/null || fail "add"
r --json recall --ns n --k 10 "automobile" >"$tmp/syn.json" || fail "recall automobile"
r --json recall --ns n --k 10 "what does Caroline keep at home" >"$tmp/ent.json" || fail "recall Caroline"
r --json stats >"$tmp/stats.json" || fail "stats"
python3 - "$tmp" <<'PY' || fail "checks"
import json, sys
d = sys.argv[1]
hits = {h["id"]: h for h in json.load(open(d + "/syn.json"))["hits"]}
syn, own = hits.get("syn"), hits.get("own")
assert syn and own, hits.keys()
c = syn["components"]
assert "lexical" in c["lanes"] and c["bm25"] > 0 and c["lexical"] > 0, c
assert own["components"]["bm25"] > c["bm25"], (own["components"], c)
hits = json.load(open(d + "/ent.json"))["hits"]
ent = {h["id"]: h["components"].get("entity") for h in hits}
assert ent.get("cat") == 1, ent
assert all(v == 0 for k, v in ent.items() if k != "cat"), ent
for h in hits:
    assert set(h["components"]["lanes"]) <= {"vector", "lexical", "entity", "neighbour"}, h
wn = json.load(open(d + "/stats.json"))["wordnet"]
assert wn["available"] is True and wn["dir"], wn
PY
[ $fails -eq 0 ] && echo "recall_lanes: ok"
exit $((fails > 0))
