#!/usr/bin/env bash
# Hostile input: schemathesis against every operation of /v1/openapi.json on the real binary
# (a temporary SQLite database, a free loopback port): every check schemathesis has
# (scripts/schemathesis/schemathesis.toml) in every phase — examples, coverage, fuzzing, and the
# stateful phase that follows the description's links from each create to its reads — with at
# least 5,000 generated requests in all and zero failures, under several seeds. Each seed and
# the request counts are printed.
# Called by scripts/test.sh; bounded to a few minutes.
set -euo pipefail
cd "$(dirname "$0")/.."

SCHEMATHESIS_VERSION=4.32.5
MIN_REQUESTS=5000
TARGET="${CARGO_TARGET_DIR:-target}"
VENV="$TARGET/schemathesis-$SCHEMATHESIS_VERSION"

if [ ! -x "$VENV/bin/schemathesis" ]; then
  rm -rf "$VENV"
  if ! python3 -m venv "$VENV" >/dev/null 2>&1; then
    # Debian splits venv out of python3.
    rm -rf "$VENV"
    if [ "$(id -u)" -eq 0 ]; then sudo=(); else sudo=(sudo); fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
    python3 -m venv "$VENV"
  fi
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi
"$VENV/bin/schemathesis" --version

# The binary as it ships: the release build of the Dockerfile's line and the README's command
# (scripts/test.sh has built it by now, so this builds nothing there; it runs without the lints'
# compiler wrapper, as a user's build does). ADJUTANT_BIN names another binary instead.
if [ -n "${ADJUTANT_BIN:-}" ]; then
  BIN=$ADJUTANT_BIN
else
  env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS cargo build --release --locked --bin adjutant --quiet
  BIN="$TARGET/release/adjutant"
fi
WORK=$(mktemp -d /tmp/adjutant-fuzz.XXXXXX)
cleanup() {
  # Each seed's run stops its own server as it ends; an interrupted run is ended here first.
  local running
  running=$(jobs -p)
  if [ -n "$running" ]; then kill $running 2>/dev/null || true; wait 2>/dev/null || true; fi
  if [ -n "${ADJUTANT_FUZZ_KEEP:-}" ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# One seed's run: a server of its own (its own SQLite database in $WORK/$SEED, a free port, an
# operator token of its own), the moderator, campaign, player and bot made over the API, then
# schemathesis. It writes the count of requests schemathesis sent to $WORK/$SEED/sent.
fuzz_seed() {
  # Called in a subshell of its own: its variables and its EXIT trap are the run's alone.
  SEED=$1 DIR="$WORK/$1" SERVER_PID=
  mkdir -p "$DIR"
  trap 'if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; fi' EXIT
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  BASE="http://127.0.0.1:$port"
  export ADJ_FUZZ_OPERATOR="fuzz-operator-$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
  ADJUTANT_LISTEN="127.0.0.1:$port" \
  ADJUTANT_DATABASE_URL="sqlite://$DIR/adjutant.db" \
  ADJUTANT_ADMIN_TOKEN="$ADJ_FUZZ_OPERATOR" \
  ADJUTANT_DATA_DIR="$DIR/data" \
  ADJUTANT_RATE_LIMIT_PER_MINUTE=0 \
  ADJUTANT_WEBHOOK_POLL_MS=86400000 \
  ADJUTANT_WEBHOOK_WAKE=false \
  ADJUTANT_EXPENSIVE_READS_PER_MINUTE=0 \
  ADJUTANT_AUTH_FAILURES_PER_MINUTE=0 \
  ADJUTANT_NOTES_PER_PLAYER_PER_DAY=0 \
  ADJUTANT_SEALS_PER_PLAYER_PER_DAY=0 \
  ADJUTANT_POSTS_PER_PLAYER_PER_DAY=0 \
  ADJUTANT_LOG=warn \
    "$BIN" 2>"$DIR/server.log" &
  SERVER_PID=$!

  # (Webhooks registered by generated requests point at generated addresses: the deliverer is made
  # to wait a day before it looks, and no post wakes it, so none is ever sent to.)
  # A moderator, a campaign, a player and a bot of it, made over the API itself.
  eval "$(python3 - "$BASE" <<'PY'
import json, sys, time, urllib.request
base = sys.argv[1]
operator = __import__("os").environ["ADJ_FUZZ_OPERATOR"]
for _ in range(300):
    try:
        urllib.request.urlopen(base + "/healthz", timeout=2)
        break
    except Exception:
        time.sleep(0.1)
def created(path, token, body):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
        headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 201, r.status
        return json.load(r)
moderator = created("/v1/moderators", operator, {"name": "Fuzz moderator"})["token"]
campaign = created("/v1/campaigns", moderator, {"name": "Fuzz campaign"})["id"]
issued = created(f"/v1/campaigns/{campaign}/players", moderator, {"name": "Fuzz player", "side": "union"})
player, player_id = issued["token"], issued["id"]
bot = created(f"/v1/campaigns/{campaign}/bots", moderator, {"name": "Fuzz bot"})["token"]
req = urllib.request.Request(base + f"/v1/campaigns/{campaign}/posts", method="POST",
    data=json.dumps({"kind": "note", "body": {"text": "post 1, for the operations that read one"}}).encode(),
    headers={"Authorization": "Bearer " + player, "Content-Type": "application/json", "Idempotency-Key": "fuzz-1"})
with urllib.request.urlopen(req, timeout=10) as r:
    assert r.status == 201, r.status
print(f"export ADJ_FUZZ_MODERATOR={moderator} ADJ_FUZZ_CAMPAIGN={campaign} ADJ_FUZZ_PLAYER={player} ADJ_FUZZ_PLAYER_ID={player_id} ADJ_FUZZ_BOT={bot}")
PY
)"

  echo "schemathesis seed: $SEED (ADJUTANT_FUZZ_SEEDS=$SEED replays this run)"
  "$VENV/bin/schemathesis" --config-file scripts/schemathesis/schemathesis.toml run "$BASE/v1/openapi.json" \
    --max-examples "${ADJUTANT_FUZZ_EXAMPLES:-400}" \
    --seed "$SEED" \
    --max-time "${ADJUTANT_FUZZ_SECONDS:-90}" \
    --workers 1 \
    --phases examples,coverage,fuzzing,stateful \
    --report ndjson --report-ndjson-path "$DIR/events-$SEED.ndjson" \
    --no-color

  # schemathesis exits non-zero on any failure; here the count of requests it sent is checked too.
  sent=$(python3 - "$DIR/events-$SEED.ndjson" <<'PY'
import json, sys
count = 0
for line in open(sys.argv[1]):
    event = json.loads(line)
    for kind, data in event.items():
        if kind == "ScenarioFinished":
            for case in (data.get("recorder", {}).get("interactions") or {}).values():
                count += 1
print(count)
PY
)
  echo "$sent" >"$DIR/sent"
  echo "schemathesis sent $sent requests (seed $SEED)"
}

# Several seeds, each exploring inputs the others do not, so that a gap between the description
# and the server is found here rather than by a client; the seeds are fixed so that a run is
# repeatable, and a seed that once found a gap stays in the list. ADJUTANT_FUZZ_SEEDS sets others
# (e.g. a new random one to explore), ADJUTANT_FUZZ_SECONDS the time each seed runs. The seeds
# run side by side, each against a server of its own, and their outputs are shown one after the
# other: on two cores, three seeds of 90 s each send half as many requests again as three of 60 s
# one after the other did, in about half the time.
SEEDS="${ADJUTANT_FUZZ_SEEDS:-${ADJUTANT_FUZZ_SEED:-20261121 1570769412 879059896}}"
pids=()
for SEED in $SEEDS; do
  (fuzz_seed "$SEED") >"$WORK/seed-$SEED.log" 2>&1 &
  pids+=($!)
done
failed=0
requests=0
i=0
for SEED in $SEEDS; do
  if ! wait "${pids[$i]}"; then failed=1; fi
  i=$((i + 1))
  cat "$WORK/seed-$SEED.log"
  if [ -f "$WORK/$SEED/sent" ]; then
    requests=$((requests + $(cat "$WORK/$SEED/sent")))
  else
    echo "schemathesis failed under seed $SEED (ADJUTANT_FUZZ_SEEDS=$SEED replays it); its server's log:" >&2
    tail -n 50 "$WORK/$SEED/server.log" >&2 || true
  fi
done
if [ "$failed" -ne 0 ]; then
  exit 1
fi
echo "schemathesis sent $requests requests in all (seeds $SEEDS)"
if [ "$requests" -lt "$MIN_REQUESTS" ]; then
  echo "schemathesis sent fewer than $MIN_REQUESTS requests" >&2
  exit 1
fi
