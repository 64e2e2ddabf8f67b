#!/usr/bin/env bash
# Runs Adjutant's benchmarks and writes docs/BENCHMARKS.md: each figure beside its ceiling,
# measured in the same run. Loopback only; takes a few minutes.
#
# PostgreSQL: set ADJUTANT_BENCH_POSTGRES_URL to a database the bench may fill. Without it, when
# PostgreSQL's server binaries are installed, a throwaway cluster with the default durability
# settings (fsync and synchronous_commit on) is started on loopback and stopped afterwards.
# ADJUTANT_BENCH_SECONDS sets the length of each throughput run (default 10).
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
cargo build --release --locked -p adjutant-server -p adjutant-bench

pg_bin() {
  local dir
  for dir in /usr/lib/postgresql/*/bin; do
    if [ -x "$dir/initdb" ]; then echo "$dir"; return 0; fi
  done
  return 1
}

PG_DIR=
stop_postgres() {
  if [ -n "$PG_DIR" ]; then
    "${PG_CTL[@]}" stop -m fast >/dev/null 2>&1 || true
    rm -rf "$PG_DIR"
  fi
}
trap stop_postgres EXIT

if [ -z "${ADJUTANT_BENCH_POSTGRES_URL:-}" ] && bin=$(pg_bin); then
  PG_DIR=$(mktemp -d /tmp/adjutant-bench-pg.XXXXXX)
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  run=()
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$PG_DIR" 2>/dev/null || { useradd -r postgres && chown postgres: "$PG_DIR"; }
    run=(runuser -u postgres --)
  fi
  "${run[@]}" "$bin/initdb" -D "$PG_DIR/data" -U postgres -A trust -E UTF8 >"$PG_DIR/initdb.log"
  "${run[@]}" "$bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -o \
    "-c listen_addresses=127.0.0.1 -p $port -k $PG_DIR -c max_connections=200" start >/dev/null
  PG_CTL=("${run[@]}" "$bin/pg_ctl" -D "$PG_DIR/data")
  export ADJUTANT_BENCH_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/postgres"
fi

"$CARGO_TARGET_DIR/release/adjutant-bench" \
  --server "$CARGO_TARGET_DIR/release/adjutant" \
  --seconds "${ADJUTANT_BENCH_SECONDS:-10}" \
  --out docs/BENCHMARKS.md \
  --command "./scripts/bench.sh"
