# Shared by ab.sh and instructions.sh (sourced, not run): the benchmark's request, the origin,
# escgate's config and preparation, and stopping everything started. The caller sets REPO,
# RUN_DIR and PORT_BASE first; run.sh keeps its own, richer versions (per-peer startup, install).

LOAD_DIR="$REPO/benches/load"
ORIGIN_PORT=$((PORT_BASE + 1))
HOST="bench.example"
ZONE_ID="b0000000000000000000000000000001"
COOKIE="session=4f2a9c; disable_esc=not-the-bench-secret; theme=dark"
mkdir -p "$RUN_DIR/origin-tmp"

# PIDs stopped on exit: SIGINT (pingora's fast shutdown; nginx's too), SIGKILL after STOP_WAIT s.
STARTED=()
STOP_WAIT="${STOP_WAIT:-1}"
stop_started() {
  for pid in "${STARTED[@]}"; do kill -INT "$pid" 2>/dev/null || true; done
  sleep "$STOP_WAIT"
  for pid in "${STARTED[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
}
trap stop_started EXIT

require_tools() {
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$tool is missing (benches/load/run.sh installs the load tools)" >&2; exit 1; }
  done
}

# benches/load/$1 with its @RUN_DIR@, @ORIGIN_PORT@ and @NGINX_PORT@ filled in, written to $2;
# further arguments are extra sed expressions.
render_conf() {
  local source="$1" target="$2"
  shift 2
  sed -e "s#@RUN_DIR@#$RUN_DIR#g" -e "s/@ORIGIN_PORT@/$ORIGIN_PORT/g" -e "s/@NGINX_PORT@/${NGINX_PORT:-}/g" \
    "$@" "$LOAD_DIR/$source" >"$target"
}

# The origin nginx on ORIGIN_PORT; arguments prefix the command (e.g. `taskset -c 0`).
start_origin() {
  render_conf origin.nginx.conf "$RUN_DIR/origin.conf"
  "$@" nginx -c "$RUN_DIR/origin.conf" -p "$RUN_DIR" >"$RUN_DIR/origin.log" 2>&1 &
  STARTED+=($!)
}

# escgate.toml for a proxy on port $1 (admin API on $1 + 1), state file $2, written to $3.
render_escgate_config() {
  sed -e "s|127.0.0.1:18085|127.0.0.1:$1|" -e "s|127.0.0.1:18086|127.0.0.1:$(($1 + 1))|" \
    -e "s|127.0.0.1:18081|127.0.0.1:$ORIGIN_PORT|" -e "s|target/bench-load/state.json|$2|" \
    "$LOAD_DIR/escgate.toml" >"$3"
}

# Waits until a proxy on port $1 answers (deadline $2 seconds, default 30).
wait_up() {
  local deadline=$((SECONDS + ${2:-30}))
  until curl -s -o /dev/null --max-time 2 -H "Host: $HOST" "http://127.0.0.1:$1/"; do
    [ $SECONDS -lt $deadline ] || { echo "nothing answers on port $1 (logs: $RUN_DIR)" >&2; exit 1; }
    sleep 0.3
  done
}

# Gives the escgate on port $1 its zone secret through the admin API (so the benchmark's cookie
# is really compared) and checks that the ESC edits reach the origin.
prepare_escgate() {
  local code
  code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X POST \
    -H "X-Auth-Email: bench@example.com" -H "X-Auth-Key: escgate-bench-key" \
    -H 'Content-Type: application/json' --data '{"with_secret": "bench-secret-never-sent"}' \
    "http://127.0.0.1:$(($1 + 1))/client/v4/zones/$ZONE_ID/disable_esc")"
  [ "$code" = 200 ] || { echo "escgate on port $1: setting the zone secret answered $code" >&2; exit 1; }
  curl -s --max-time 5 -H "Host: $HOST" "http://127.0.0.1:$1/echo" | grep -q "x5=five" ||
    { echo "escgate on port $1: the ESC edits did not reach the origin" >&2; exit 1; }
}
