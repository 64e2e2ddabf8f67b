#!/usr/bin/env bash
# Runs Adjutant's benchmarks and writes docs/BENCHMARKS.md: each figure beside its ceiling,
# measured in the same run, in complete runs one after the other (ADJUTANT_BENCH_RUNS, default 2),
# each figure reported as the range over the runs. Loopback only; each run takes about ten to
# twelve minutes with PostgreSQL.
#
# PostgreSQL: set ADJUTANT_BENCH_POSTGRES_URL to a database the bench may fill. Without it, when
# PostgreSQL's server binaries are installed, a throwaway cluster with the default durability
# settings (fsync and synchronous_commit on) is started on loopback and stopped afterwards.
# ADJUTANT_BENCH_SECONDS sets the length of each throughput run (default 10).
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
cargo build --release --locked -p adjutant-server -p adjutant-bench

# shellcheck source=scripts/postgres.sh
. scripts/postgres.sh
trap stop_postgres EXIT

if [ -z "${ADJUTANT_BENCH_POSTGRES_URL:-}" ] && pg_bin >/dev/null; then
  # The default durability settings: fsync and synchronous_commit on.
  start_postgres adjutant-bench-pg -c max_connections=200
  export ADJUTANT_BENCH_POSTGRES_URL="$PG_URL"
fi

# Figure 6 holds 10,000 event streams open: the bench and the servers it starts need a file
# descriptor for each (the bench raises its own soft limit to the hard one as well).
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

"$CARGO_TARGET_DIR/release/adjutant-bench" \
  --server "$CARGO_TARGET_DIR/release/adjutant" \
  --seconds "${ADJUTANT_BENCH_SECONDS:-10}" \
  --runs "${ADJUTANT_BENCH_RUNS:-2}" \
  --out docs/BENCHMARKS.md \
  --command "./scripts/bench.sh"
