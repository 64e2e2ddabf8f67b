#!/usr/bin/env bash
# A newcomer's first run, as the README and the Dockerfile write it, so neither can drift:
#   1. the Dockerfile's `cargo build` line, run as written (no Docker engine needed for that);
#   2. the README's first set-up command, read from README.md and run verbatim; the service must
#      answer /healthz on its configured address, print the operator token it made, and that
#      token must create a moderator; then the service is stopped with SIGTERM and must exit 0.
# Its data goes to a temporary folder (ADJUTANT_DATA_DIR, ADJUTANT_DATABASE_URL), so a
# developer's own ./data is never touched. Called by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n== %s\n' "$*"; }

# 1. The Dockerfile's build, as written.
docker_build=$(sed -n 's/^RUN \(cargo build .*\)$/\1/p' Dockerfile)
if [ -z "$docker_build" ]; then
  echo "Dockerfile: no 'RUN cargo build …' line found" >&2
  exit 1
fi
log "the Dockerfile's build: $docker_build"
bash -c "$docker_build"

# 2. The README's first command: the first line of the first ```sh block that is not a comment.
first=$(awk '/^```sh/{f=1;next} /^```/{if(f)exit} f' README.md | grep -v '^[[:space:]]*#' | grep -v '^[[:space:]]*$' | head -1)
if [ -z "$first" ]; then
  echo "README.md: no first set-up command found" >&2
  exit 1
fi
log "the README's first command: $first"

WORK=$(mktemp -d /tmp/adjutant-first-run.XXXXXX)
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM -- "-$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# The configured address: the default unless something here already listens on it.
listen=$(sed -n 's/^listen = "\(.*\)"$/\1/p' config/default.toml)
if python3 -c 'import socket,sys; h,p=sys.argv[1].rsplit(":",1); s=socket.socket(); s.bind((h,int(p)))' "$listen" 2>/dev/null; then
  unset ADJUTANT_LISTEN
else
  listen="127.0.0.1:$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  echo "note: the configured address is taken here; listening on $listen instead"
  export ADJUTANT_LISTEN="$listen"
fi
unset ADJUTANT_ADMIN_TOKEN
export ADJUTANT_DATA_DIR="$WORK/data" ADJUTANT_DATABASE_URL="sqlite://$WORK/data/adjutant.db"

# A process group of its own, so that SIGTERM reaches the service and not only cargo.
setsid bash -c "$first" >"$WORK/stdout" 2>"$WORK/stderr" &
SERVER_PID=$!

python3 - "$listen" "$WORK" <<'PY'
import json, re, sys, time, urllib.request, urllib.error
listen, work = sys.argv[1], sys.argv[2]
base = "http://" + listen
deadline = time.time() + 600  # a cold release build comes first
while True:
    try:
        with urllib.request.urlopen(base + "/healthz", timeout=2) as r:
            health = json.load(r)
            break
    except Exception:
        if time.time() > deadline:
            sys.exit("the service did not answer /healthz in time; its output:\n" + open(work + "/stderr").read()[-4000:])
        time.sleep(0.5)
assert health.get("status") == "ok" and health.get("backend") == "sqlite", health
print("healthz:", health)
out = open(work + "/stdout").read()
shown = re.search(r"^\s+(adj_[0-9a-f]{64})\s*$", out, re.M)
assert shown, "the first start shows the operator token it made; stdout was:\n" + out
token = shown.group(1)
assert open(work + "/data/admin-token").read().strip() == token, "the token shown is the one kept"
req = urllib.request.Request(base + "/v1/moderators", method="POST", data=b'{"name":"First-run check"}',
                             headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
with urllib.request.urlopen(req, timeout=10) as r:
    assert r.status == 201, r.status
    assert json.load(r)["kind"] == "moderator"
print("the operator token shown at the first start creates a moderator")
PY

kill -TERM -- "-$SERVER_PID"
status=0
wait "$SERVER_PID" || status=$?
SERVER_PID=
if [ "$status" -ne 0 ]; then
  echo "the service did not stop cleanly on SIGTERM (exit $status)" >&2
  tail -20 "$WORK/stderr" >&2
  exit 1
fi
echo "the service stopped cleanly on SIGTERM"
