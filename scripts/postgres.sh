# A throwaway PostgreSQL cluster on loopback, for the tests (scripts/test.sh) and the benchmarks
# (scripts/bench.sh). Source this file, then:
#   pg_bin                       the directory of PostgreSQL's server binaries (fails if none)
#   start_postgres NAME OPTS...  starts a cluster in a new folder /tmp/NAME.XXXXXX with the
#                                server options OPTS and sets PG_URL to a superuser's URL
#   stop_postgres                stops it and removes its folder (safe to call when none runs)
# As root the cluster runs as the `postgres` user, made if it does not exist.

pg_bin() {
  local dir
  for dir in /usr/lib/postgresql/*/bin; do
    if [ -x "$dir/initdb" ]; then echo "$dir"; return 0; fi
  done
  return 1
}

PG_DIR=
PG_CTL=()
PG_URL=

start_postgres() {
  local name="$1"
  shift
  local bin port
  bin=$(pg_bin)
  PG_DIR=$(mktemp -d "/tmp/$name.XXXXXX")
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  local run=()
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$PG_DIR" 2>/dev/null || { useradd -r postgres && chown postgres: "$PG_DIR"; }
    run=(runuser -u postgres --)
  fi
  "${run[@]}" "$bin/initdb" -D "$PG_DIR/data" -U postgres -A trust -E UTF8 --no-sync >"$PG_DIR/initdb.log"
  "${run[@]}" "$bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -o \
    "-c listen_addresses=127.0.0.1 -p $port -k $PG_DIR $*" start >/dev/null
  PG_CTL=("${run[@]}" "$bin/pg_ctl" -D "$PG_DIR/data")
  PG_URL="postgres://postgres@127.0.0.1:$port/postgres"
}

stop_postgres() {
  if [ -n "$PG_DIR" ]; then
    "${PG_CTL[@]}" stop -m fast >/dev/null 2>&1 || true
    rm -rf "$PG_DIR"
    PG_DIR=
  fi
}
