#!/usr/bin/env bash
# pg.sh: a throwaway PostgreSQL 15 for the tests. Debian's server binaries
# (postgresql-15, /usr/lib/postgresql/15/bin) run initdb in a temporary
# folder and pg_ctl on a free loopback port; the server refuses to run as
# root, so as root it runs as the unprivileged `postgres` user.
#   pg.sh start DIR     start a server whose files live in DIR; prints its
#                       URI (postgres://postgres@127.0.0.1:PORT/postgres).
#                       Exit 77 when PostgreSQL is not installed or cannot
#                       start (the caller reports SKIP, never a pass).
#   pg.sh stop DIR      stop it (fast shutdown) and remove DIR
#   pg.sh restart DIR   stop and start again on the same port (outage tests)
#   pg.sh kill DIR      stop it at once (immediate: a crash, WAL replay next start)
#   pg.sh newdb URI     create a fresh database next to URI's; prints its URI
set -u
bindir=${REMEM_PG_BIN:-/usr/lib/postgresql/15/bin}
as_pg() { # run a command as the server's owner
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
ctl() { # DIR args...
    local dir=$1; shift
    as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 "$@" >/dev/null 2>&1
}
cmd=${1:-}; dir=${2:-}
case $cmd in
start)
    [ -x "$bindir/initdb" ] || { echo "SKIP: postgres: $bindir/initdb not installed (apt-get install postgresql-15)" >&2; exit 77; }
    if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
        echo "SKIP: postgres: no postgres user to run the server as" >&2; exit 77
    fi
    mkdir -p "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres "$dir"
    as_pg test -w "$dir" || { echo "SKIP: postgres: $dir is not reachable by the server's user (use a folder of its own under /tmp)" >&2; exit 77; }
    as_pg "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 \
        >"$dir/initdb.log" 2>&1 || { echo "SKIP: postgres: initdb failed: $(tail -3 "$dir/initdb.log")" >&2; exit 77; }
    port=$(free_port)
    echo "$port" > "$dir/port"
    # Small and fast: the tests need durability across restarts (fsync
    # stays on) but not a tuned server.
    cat >> "$dir/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
max_connections = 200
shared_buffers = 128MB
CONF
    ctl "$dir" start || { echo "SKIP: postgres: the server did not start: $(tail -5 "$dir/log")" >&2; exit 77; }
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
stop)
    [ -d "$dir/data" ] && ctl "$dir" stop -m fast
    rm -rf "$dir"
    ;;
restart)
    ctl "$dir" stop -m fast; ctl "$dir" start
    ;;
kill)
    ctl "$dir" stop -m immediate
    ;;
startagain)
    ctl "$dir" start
    ;;
newdb)
    uri=$dir
    name="remem_t_$$_${RANDOM}${RANDOM}"
    psql -q "$uri" -c "CREATE DATABASE $name" >/dev/null || exit 1
    echo "${uri%/*}/$name"
    ;;
*)
    echo "usage: pg.sh start|stop|restart|kill|startagain DIR, or pg.sh newdb URI" >&2; exit 2 ;;
esac
