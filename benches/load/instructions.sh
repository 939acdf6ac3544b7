#!/usr/bin/env bash
# Instructions per proxied request, escgate vs the minimal pingora baseline, with nginx doing the
# same work and pingora passing requests through untouched (the floor of any pingora proxy) for
# reference, counted by callgrind:
# deterministic where wall-clock CPU time is not (on a shared VM the same binary's µs/request
# drifts by ±30% within minutes). Same work and cookie as run.sh; each proxy runs under callgrind
# behind one nginx origin, takes a warm-up, then its counters are zeroed, REQUESTS requests are
# sent (hey, CONNECTIONS connections) and the counters dumped. User-space instructions only: the
# kernel's share (loopback TCP) is the same for both proxies (identical syscalls per request).
#
#   benches/load/instructions.sh                 # release binaries must exist (run.sh builds them)
#   TOP=25 benches/load/instructions.sh          # also list escgate's 25 costliest functions
#
# Environment: REQUESTS [4000], WARMUP [1000], CONNECTIONS [8], PORT_BASE [19180], TOP [0].
set -euo pipefail

REQUESTS="${REQUESTS:-4000}"
WARMUP="${WARMUP:-1000}"
CONNECTIONS="${CONNECTIONS:-8}"
PORT_BASE="${PORT_BASE:-19180}"
TOP="${TOP:-0}"
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
RUN_DIR="$REPO/target/bench-load/instructions-$(date -u +%Y%m%dT%H%M%SZ)"
STOP_WAIT=2 # valgrind takes longer to stop
# shellcheck source=benches/load/common.sh
source "$REPO/benches/load/common.sh"
require_tools nginx hey curl valgrind callgrind_control callgrind_annotate
for bin in escgate pingora_baseline; do
  [ -x "$REPO/target/release/$bin" ] || { echo "target/release/$bin is missing: cargo build --release" >&2; exit 1; }
done

ESCGATE_PORT=$((PORT_BASE + 5))
BASELINE_PORT=$((PORT_BASE + 4))
PASSTHRU_PORT=$((PORT_BASE + 7))
NGINX_PORT=$((PORT_BASE + 2))
start_origin
render_escgate_config "$ESCGATE_PORT" "$RUN_DIR/state.json" "$RUN_DIR/escgate.toml"

send() { hey -n "$2" -c "$CONNECTIONS" -H "Cookie: $COOKIE" -host "$HOST" "http://127.0.0.1:$1/" >"$RUN_DIR/hey-$3.txt"; }

# Prints "instructions per request" for one proxy: warm-up, zero, measure, dump.
measure() {
  local name="$1" port="$2" pid="$3"
  wait_up "$port" 60
  send "$port" "$WARMUP" "$name-warmup"
  callgrind_control -z "$pid" >/dev/null 2>&1
  send "$port" "$REQUESTS" "$name"
  local ok
  ok="$(awk '/\[200\]\t*[0-9]+ responses/ { print $2 }' "$RUN_DIR/hey-$name.txt")"
  if [ "${ok:-0}" != "$REQUESTS" ] || grep -q 'Error distribution' "$RUN_DIR/hey-$name.txt"; then
    echo "$name: errors or non-2xx answers (see $RUN_DIR/hey-$name.txt)" >&2; exit 1
  fi
  # callgrind acts on a command when the process next runs: one more request wakes it (the dump
  # happens as that request starts, so it is not counted).
  callgrind_control -d "$pid" >/dev/null 2>&1
  local dump="" deadline=$((SECONDS + 30))
  while [ -z "$dump" ]; do
    [ $SECONDS -lt $deadline ] || { echo "$name: callgrind wrote no dump" >&2; exit 1; }
    curl -s -o /dev/null --max-time 5 -H "Host: $HOST" "http://127.0.0.1:$port/" || true
    sleep 1
    dump="$(ls "$RUN_DIR"/callgrind."$name".*.1 2>/dev/null || true)"
  done
  local total
  total="$(awk '/^(summary|totals):/ { print $2; exit }' "$dump")"
  awk -v t="$total" -v n="$REQUESTS" -v name="$name" 'BEGIN { printf "%-10s %12.0f\n", name, t / n }'
  echo "$dump" >"$RUN_DIR/$name.dump-path"
}

# exec: so that $! is valgrind itself, which the cleanup stops.
cg() { exec valgrind --tool=callgrind --callgrind-out-file="$RUN_DIR/callgrind.$1.%p" "${@:2}"; }

echo "instructions per request (callgrind, user space; $REQUESTS requests after $WARMUP warm-up, $CONNECTIONS connections)"
printf "%-10s %12s\n" proxy "instr/req"
# run.sh's nginx proxy config, in one process so that callgrind counts the worker's work.
mkdir -p "$RUN_DIR/nginx-tmp"
render_conf proxy.nginx.conf "$RUN_DIR/nginx.conf" -e 's/^daemon off;/daemon off;\nmaster_process off;/'
cg nginx nginx -c "$RUN_DIR/nginx.conf" -p "$RUN_DIR" >"$RUN_DIR/nginx.log" 2>&1 &
STARTED+=($!)
nginx_row="$(measure nginx "$NGINX_PORT" $!)"
echo "$nginx_row"
cg passthru "$REPO/target/release/pingora_baseline" --listen "127.0.0.1:$PASSTHRU_PORT" \
  --origin "127.0.0.1:$ORIGIN_PORT" --passthrough >"$RUN_DIR/passthru.log" 2>&1 &
STARTED+=($!)
passthru_row="$(measure passthru "$PASSTHRU_PORT" $!)"
echo "$passthru_row"
cg baseline "$REPO/target/release/pingora_baseline" --listen "127.0.0.1:$BASELINE_PORT" \
  --origin "127.0.0.1:$ORIGIN_PORT" >"$RUN_DIR/baseline.log" 2>&1 &
STARTED+=($!)
baseline_row="$(measure baseline "$BASELINE_PORT" $!)"
echo "$baseline_row"
RUST_LOG=warn cg escgate "$REPO/target/release/escgate" --config "$RUN_DIR/escgate.toml" >"$RUN_DIR/escgate.log" 2>&1 &
escgate_pid=$!
STARTED+=($!)
wait_up "$ESCGATE_PORT" 60
prepare_escgate "$ESCGATE_PORT"
escgate_row="$(measure escgate "$ESCGATE_PORT" "$escgate_pid")"
echo "$escgate_row"
awk -v b="${baseline_row##* }" -v e="${escgate_row##* }" \
  'BEGIN { printf "escgate - baseline: %+.0f instructions per request (%+.1f%%)\n", e - b, (e / b - 1) * 100 }'
awk -v p="${passthru_row##* }" -v b="${baseline_row##* }" \
  'BEGIN { printf "baseline - passthru: %+.0f instructions per request (the header work done through pingora)\n", b - p }'
awk -v n="${nginx_row##* }" -v p="${passthru_row##* }" -v e="${escgate_row##* }" \
  'BEGIN { printf "per request vs nginx: passthru %.2fx, escgate %.2fx the user-space instructions\n", p / n, e / n }'
if [ "$TOP" != 0 ]; then
  echo
  echo "escgate's costliest functions (inclusive, per request):"
  callgrind_annotate --inclusive=yes "$(cat "$RUN_DIR/escgate.dump-path")" 2>/dev/null |
    awk -v n="$REQUESTS" '/^ *[0-9,]+ / { gsub(",", "", $1); printf "%10.0f  %s\n", $1 / n, $0 }' |
    head -n "$TOP" | cut -c1-160
fi
echo "callgrind dumps: $RUN_DIR"
