# llm_standin.sh: shell helpers for the LLM stand-in (llm_standin.py), for
# e2e scripts, sourced after tests/support/e2e.sh:
#   standin_start DIR [RULES_JSON]  starts it; sets $standin_url (the base
#                                   URL, ".../v1"), $standin_log (the JSONL
#                                   request log), $standin_rules, $standin_pid
#   standin_rules JSON              replaces the rules (read on every request)
#   standin_stop                    stops it (also call it from your trap)
# The rules' format and the log's are in llm_standin.py's header.
standin_start() {
    local dir=$1 rules=${2:-[]}
    standin_rules="$dir/llm_rules.json"; standin_log="$dir/llm_requests.jsonl"
    printf '%s' "$rules" >"$standin_rules"
    rm -f "$dir/llm_port"
    python3 "$(dirname "${BASH_SOURCE[0]}")/llm_standin.py" --port-file "$dir/llm_port" \
        --log "$standin_log" --rules "$standin_rules" &
    standin_pid=$!
    local i
    for i in $(seq 1 200); do [ -s "$dir/llm_port" ] && break; sleep 0.05; done
    [ -s "$dir/llm_port" ] || { echo "the LLM stand-in did not start"; return 1; }
    standin_url="http://127.0.0.1:$(cat "$dir/llm_port")/v1"
}
standin_rules() { printf '%s' "$1" >"$standin_rules.tmp" && mv "$standin_rules.tmp" "$standin_rules"; }
standin_stop() { [ -n "${standin_pid:-}" ] && kill "$standin_pid" 2>/dev/null && wait "$standin_pid" 2>/dev/null; standin_pid=; }
