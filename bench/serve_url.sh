# serve_url.sh: sourced by the benchmarks that start `remem serve --listen
# 127.0.0.1:0`: serve_url LOG [TRIES] prints the URL the server wrote to
# LOG once it listens (polled every 0.1 s, TRIES times, 100 by default);
# when it never does, prints LOG to stderr and returns 1.
serve_url() {
    local log=$1 tries=${2:-100} url=
    for _ in $(seq 1 "$tries"); do
        url=$(grep -o 'http://127.0.0.1:[0-9]*' "$log" 2>/dev/null | head -n1) || true
        [ -n "$url" ] && { echo "$url"; return 0; }
        sleep 0.1
    done
    echo "the server did not start:" >&2
    cat "$log" >&2
    return 1
}
