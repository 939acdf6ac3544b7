#!/usr/bin/env bash
# Side-by-side load benchmark: origin direct, nginx, haproxy, the minimal pingora baseline and
# escgate, all on 127.0.0.1 with one worker each and the same header work, plus pingora passing
# requests through untouched (the floor of any pingora-based proxy). Protocol and reference
# figures: shared/design/benchmarks.md. Usage and options: benches/load/README.md, or --help.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: benches/load/run.sh [--quick] [--esc-disabled] [--zones N] [--no-build]

  --quick         1 s warm-up + 2 s per run, 2 s latency step (a smoke run; numbers are rough)
  --esc-disabled  set the bench zone's disable_esc flag through escgate's admin API first
  --zones N       configure escgate with N zones (the bench zone plus N-1 generated ones)
  --no-build      use the release binaries already in target/release

Environment (defaults in brackets): ROUNDS [3], WARMUP [3], DURATION [10] seconds,
CONNECTIONS [64], LAT_RATE [5000] req/s and LAT_SECONDS [5] for the fixed-rate latency step
(LAT_SECONDS=0 skips it), PORT_BASE [18080], RESULTS [target/bench-load/results-<mode>-<time>.txt],
INSTALL [1] (apt-get install missing tools), ESCGATE_RUST_LOG [warn] (RUST_LOG of escgate; the
peers keep no access log either), TIME_LIMIT [computed] seconds for the whole run after the build.
EOF
}

# ---------------------------------------------------------------- options
QUICK=0
ESC_DISABLED=0
ZONES=1
BUILD=1
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --esc-disabled) ESC_DISABLED=1 ;;
    --zones)
      [ $# -ge 2 ] || { echo "--zones needs a number" >&2; exit 2; }
      ZONES="$2"
      shift
      ;;
    --no-build) BUILD=0 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
[[ "$ZONES" =~ ^[1-9][0-9]*$ ]] || { echo "--zones: a positive number expected, got $ZONES" >&2; exit 2; }

if [ "$QUICK" = 1 ]; then
  : "${WARMUP:=1}" "${DURATION:=2}" "${LAT_SECONDS:=2}"
fi
ROUNDS="${ROUNDS:-3}"
WARMUP="${WARMUP:-3}"
DURATION="${DURATION:-10}"
CONNECTIONS="${CONNECTIONS:-64}"
LAT_RATE="${LAT_RATE:-5000}"
LAT_SECONDS="${LAT_SECONDS:-5}"
LAT_WORKERS=25
PORT_BASE="${PORT_BASE:-18080}"
INSTALL="${INSTALL:-1}"
ESCGATE_RUST_LOG="${ESCGATE_RUST_LOG:-warn}"

REPO="$(cd "$(dirname "$0")/../.." && pwd)"
LOAD_DIR="$REPO/benches/load"
cd "$REPO"

MODE="default"
[ "$ESC_DISABLED" = 1 ] && MODE="esc-disabled"
[ "$ZONES" -gt 1 ] && MODE="$MODE-zones$ZONES"
STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
OUT_DIR="$REPO/target/bench-load"
RUN_DIR="$OUT_DIR/run-$MODE-$STAMP"
RESULTS="${RESULTS:-$OUT_DIR/results-$MODE-$STAMP.txt}"
mkdir -p "$RUN_DIR" "$(dirname "$RESULTS")"

# The request every tool sends: a zone host, and a disable_esc cookie that does not match.
BENCH_HOST="bench.example"
COOKIE="session=4f2a9c; disable_esc=not-the-bench-secret; theme=dark"
BENCH_SECRET="bench-secret-never-sent"
ZONE_ID="b0000000000000000000000000000001"
ADMIN_EMAIL="bench@example.com"
ADMIN_KEY="escgate-bench-key"

ORIGIN_PORT=$((PORT_BASE + 1))
NGINX_PORT=$((PORT_BASE + 2))
HAPROXY_PORT=$((PORT_BASE + 3))
BASELINE_PORT=$((PORT_BASE + 4))
ESCGATE_PORT=$((PORT_BASE + 5))
ADMIN_PORT=$((PORT_BASE + 6))
PASSTHRU_PORT=$((PORT_BASE + 7))

TARGETS=(origin nginx haproxy passthru baseline escgate)
declare -A PORT=([origin]=$ORIGIN_PORT [nginx]=$NGINX_PORT [haproxy]=$HAPROXY_PORT
  [passthru]=$PASSTHRU_PORT [baseline]=$BASELINE_PORT [escgate]=$ESCGATE_PORT)
declare -A SERVER_PID=()
declare -A STOP_SIGNAL=()
declare -A STATUS=()
STARTED_PIDS=()
WATCHDOG_PID=""

log() { printf '%s\n' "$*" >&2; }

# ---------------------------------------------------------------- process control
alive() {
  local state
  state="$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

# A pid and all its descendants (nginx's master has a worker).
tree_pids() {
  ps -e -o pid=,ppid= | awk -v root="$1" '
    { parent[$1] = $2; pids[NR] = $1 }
    END {
      keep[root] = 1; print root
      changed = 1
      while (changed) {
        changed = 0
        for (i in pids) { p = pids[i]; if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; print p; changed = 1 } }
      }
    }'
}

stop_all() {
  local pid all=()
  for pid in "${STARTED_PIDS[@]}"; do
    alive "$pid" || continue
    mapfile -t -O "${#all[@]}" all < <(tree_pids "$pid")
  done
  # The fast shutdown: SIGINT for nginx and pingora (SIGTERM waits pingora's grace period),
  # SIGTERM for haproxy (SIGINT makes it wait for its connections to close).
  for pid in "${STARTED_PIDS[@]}"; do kill -"${STOP_SIGNAL[$pid]:-INT}" "$pid" 2>/dev/null || true; done
  local deadline=$((SECONDS + 5))
  for pid in "${all[@]}"; do
    while alive "$pid" && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
  done
  for pid in "${all[@]}"; do
    if alive "$pid"; then
      log "pid $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-60)) did not stop within 5 s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  for pid in "${STARTED_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  STARTED_PIDS=()
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  stop_all
  if [ -n "$WATCHDOG_PID" ]; then
    kill "$WATCHDOG_PID" 2>/dev/null || true
    wait "$WATCHDOG_PID" 2>/dev/null || true
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port_free() { [ -z "$(ss -ltnH "sport = :$1" 2>/dev/null)" ]; }

# ---------------------------------------------------------------- tools
ensure_tools() {
  local need=() tool
  for tool in wrk nginx haproxy taskset curl ss ps cmake; do
    command -v "$tool" >/dev/null 2>&1 || need+=("$tool")
  done
  command -v hey >/dev/null 2>&1 || need+=(hey)
  [ ${#need[@]} -eq 0 ] && return 0
  local pkgs=() t
  for t in "${need[@]}"; do
    case "$t" in
      taskset) pkgs+=(util-linux) ;;
      ss) pkgs+=(iproute2) ;;
      ps) pkgs+=(procps) ;;
      *) pkgs+=("$t") ;;
    esac
  done
  if [ "$INSTALL" = 1 ]; then
    log "installing: ${pkgs[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    DEBIAN_FRONTEND=noninteractive timeout 600 $sudo apt-get update -qq || true
    DEBIAN_FRONTEND=noninteractive timeout 600 $sudo apt-get install -y -qq "${pkgs[@]}" ||
      log "apt-get install failed for some of: ${pkgs[*]}"
  fi
  for tool in wrk nginx haproxy taskset curl ss ps; do
    command -v "$tool" >/dev/null 2>&1 || { log "missing tool: $tool (apt-get install it)"; exit 1; }
  done
}

# ---------------------------------------------------------------- build
build() {
  [ "$BUILD" = 1 ] || return 0
  log "building release binaries (nothing is measured while compiling)"
  timeout 3600 cargo build --release --bin pingora_baseline >&2
  if ! timeout 3600 cargo build --release --bin escgate >&2; then
    STATUS[escgate]="escgate did not build"
  fi
}

# ---------------------------------------------------------------- configs
render() {
  sed -e "s|@RUN_DIR@|$RUN_DIR|g" -e "s|@ORIGIN_PORT@|$ORIGIN_PORT|g" \
    -e "s|@NGINX_PORT@|$NGINX_PORT|g" -e "s|@HAPROXY_PORT@|$HAPROXY_PORT|g" "$1" >"$2"
}

# The shipped escgate.toml uses the default bench ports; move them to this run's ports, then
# append the generated zones of --zones mode (each with the same ESC entry as the bench zone).
render_escgate_config() {
  sed -e "s|127.0.0.1:18085|127.0.0.1:$ESCGATE_PORT|" -e "s|127.0.0.1:18086|127.0.0.1:$ADMIN_PORT|" \
    -e "s|127.0.0.1:18081|127.0.0.1:$ORIGIN_PORT|" \
    -e "s|^state_path = .*|state_path = \"$RUN_DIR/state.json\"|" \
    "$LOAD_DIR/escgate.toml" >"$RUN_DIR/escgate.toml"
  [ "$ZONES" -gt 1 ] || return 0
  awk -v n="$ZONES" -v origin="127.0.0.1:$ORIGIN_PORT" 'BEGIN {
    for (i = 1; i < n; i++) {
      printf "\n[[zones]]\nid = \"%032x\"\nname = \"zone%d.example\"\n", i, i
      printf "account_id = \"a0000000000000000000000000000001\"\nplan = \"free\"\norigin = \"%s\"\n", origin
      printf "[[zones.esc]]\nrequest_headers = { set = { \"x-esc-1\" = \"one\", \"x-esc-2\" = \"two\", \"x-esc-3\" = \"three\", \"x-esc-4\" = \"four\", \"x-esc-5\" = \"five\" } }\n"
      printf "host_header = \"origin.internal\"\n"
      printf "response_headers = { set = { \"x-frame-options\" = \"DENY\", \"x-content-type-options\" = \"nosniff\" } }\n"
    }
  }' >>"$RUN_DIR/escgate.toml"
}

# ---------------------------------------------------------------- servers
PIN_SERVER=()
PIN_LOAD=()
if [ "$(nproc)" -ge 2 ]; then
  PIN_SERVER=(taskset -c 0)
  PIN_LOAD=(taskset -c 1)
fi

# Starts "$@" pinned to the server CPU, logging to $RUN_DIR/<name>.log; records its pid.
spawn() {
  local name="$1"
  shift
  "${PIN_SERVER[@]}" "$@" >"$RUN_DIR/$name.log" 2>&1 &
  local pid=$!
  STARTED_PIDS+=("$pid")
  SERVER_PID[$name]=$pid
}

# Waits until the server answers HTTP on its port; false (and a reason in STATUS) otherwise.
wait_ready() {
  local name="$1" port="$2" limit="$3" deadline=$((SECONDS + $3))
  while [ $SECONDS -lt $deadline ]; do
    if ! alive "${SERVER_PID[$name]}"; then
      local rc=0
      wait "${SERVER_PID[$name]}" 2>/dev/null || rc=$?
      STATUS[$name]="$name did not start (exited with $rc; log: $RUN_DIR/$name.log)"
      return 1
    fi
    local code
    code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 -H "Host: $BENCH_HOST" \
      "http://127.0.0.1:$port/" 2>/dev/null || true)"
    [ -n "$code" ] && [ "$code" != 000 ] && return 0
    sleep 0.2
  done
  STATUS[$name]="$name did not start (no HTTP answer on port $port within ${limit}s; log: $RUN_DIR/$name.log)"
  return 1
}

start_servers() {
  local p
  for p in "${PORT[@]}" "$ADMIN_PORT"; do
    port_free "$p" || { log "port $p is in use: set PORT_BASE to a free range"; exit 1; }
  done
  mkdir -p "$RUN_DIR/origin-tmp" "$RUN_DIR/nginx-tmp"
  render "$LOAD_DIR/origin.nginx.conf" "$RUN_DIR/origin.conf"
  render "$LOAD_DIR/proxy.nginx.conf" "$RUN_DIR/nginx.conf"
  render "$LOAD_DIR/haproxy.cfg" "$RUN_DIR/haproxy.cfg"
  render_escgate_config

  spawn origin nginx -p "$RUN_DIR" -e "$RUN_DIR/origin.err" -c "$RUN_DIR/origin.conf"
  wait_ready origin "$ORIGIN_PORT" 10 || { log "${STATUS[origin]}"; exit 1; }
  spawn nginx nginx -p "$RUN_DIR" -e "$RUN_DIR/nginx.err" -c "$RUN_DIR/nginx.conf"
  spawn haproxy haproxy -db -f "$RUN_DIR/haproxy.cfg"
  STOP_SIGNAL[${SERVER_PID[haproxy]}]=TERM
  spawn baseline "$REPO/target/release/pingora_baseline" \
    --listen "127.0.0.1:$BASELINE_PORT" --origin "127.0.0.1:$ORIGIN_PORT" --threads 1
  spawn passthru "$REPO/target/release/pingora_baseline" \
    --listen "127.0.0.1:$PASSTHRU_PORT" --origin "127.0.0.1:$ORIGIN_PORT" --threads 1 --passthrough
  if [ -z "${STATUS[escgate]:-}" ]; then
    # Peers run without access logs; escgate too unless ESCGATE_RUST_LOG asks for them.
    RUST_LOG="$ESCGATE_RUST_LOG" spawn escgate "$REPO/target/release/escgate" --config "$RUN_DIR/escgate.toml"
  fi
  local name limit
  for name in nginx haproxy passthru baseline escgate; do
    [ -z "${STATUS[$name]:-}" ] || continue
    limit=15
    [ "$name" = escgate ] && [ "$ZONES" -gt 1 ] && limit=120
    wait_ready "$name" "${PORT[$name]}" "$limit" || log "${STATUS[$name]}"
  done
}

# ---------------------------------------------------------------- escgate tenant state
admin_post_disable_esc() {
  curl -s -o "$RUN_DIR/admin-response.json" -w '%{http_code}' --max-time 5 \
    -X POST -H "X-Auth-Email: $ADMIN_EMAIL" -H "X-Auth-Key: $ADMIN_KEY" \
    -H 'Content-Type: application/json' --data "$1" \
    "http://127.0.0.1:$ADMIN_PORT/client/v4/zones/$ZONE_ID/disable_esc" 2>/dev/null || true
}

# Default mode: a zone secret exists, so the non-matching cookie is really compared.
# --esc-disabled: the zone's "always" flag is set, so escgate must skip the ESC work.
configure_escgate_state() {
  [ -z "${STATUS[escgate]:-}" ] || return 0
  local body code
  if [ "$ESC_DISABLED" = 1 ]; then body='{"always": true}'; else body="{\"with_secret\": \"$BENCH_SECRET\"}"; fi
  code="$(admin_post_disable_esc "$body")"
  if [ "$code" = 200 ]; then
    log "escgate: POST disable_esc $body -> 200"
  elif [ "$ESC_DISABLED" = 1 ]; then
    STATUS[escgate]="escgate: could not set the zone's disable_esc flag through the admin API (HTTP ${code:-none})"
    log "${STATUS[escgate]}"
  else
    log "escgate: warning: zone secret not set through the admin API (HTTP ${code:-none});" \
      "the disable_esc cookie is scanned but no secret is compared"
  fi
}

# ---------------------------------------------------------------- verification
EXPECTED_EDITS="host=origin.internal x1=one x2=two x3=three x4=four x5=five"
EXPECTED_UNTOUCHED="host=$BENCH_HOST x1= x2= x3= x4= x5="

verify() {
  local name="$1" port="${PORT[$1]}" body headers expect want_resp_headers=1
  [ -z "${STATUS[$name]:-}" ] || return 0
  headers="$RUN_DIR/verify-$name.headers"
  body="$(curl -s -D "$headers" --max-time 3 -H "Host: $BENCH_HOST" -H "Cookie: $COOKIE" \
    "http://127.0.0.1:$port/echo" 2>/dev/null || true)"
  expect="$EXPECTED_EDITS"
  if [ "$name" = origin ] || [ "$name" = passthru ] || { [ "$name" = escgate ] && [ "$ESC_DISABLED" = 1 ]; }; then
    expect="$EXPECTED_UNTOUCHED"
    want_resp_headers=0
  fi
  local problem=""
  case "$body" in
    "$expect"*) ;;
    *) problem="origin received [${body:-nothing}], expected [$expect ...]" ;;
  esac
  if [ -z "$problem" ]; then
    local has_xfo=0 has_xcto=0
    grep -qi '^x-frame-options: *DENY' "$headers" && has_xfo=1
    grep -qi '^x-content-type-options: *nosniff' "$headers" && has_xcto=1
    if [ "$want_resp_headers" = 1 ] && { [ $has_xfo = 0 ] || [ $has_xcto = 0 ]; }; then
      problem="response lacks x-frame-options: DENY or x-content-type-options: nosniff"
    elif [ "$want_resp_headers" = 0 ] && [ "$name" != origin ] && { [ $has_xfo = 1 ] || [ $has_xcto = 1 ]; }; then
      problem="response header edits applied by a server that must forward untouched"
    fi
  fi
  if [ -n "$problem" ]; then
    STATUS[$name]="$name failed verification: $problem"
    log "${STATUS[$name]}"
  else
    log "verified $name: ${body%%$'\n'*}"
  fi
}

# ---------------------------------------------------------------- sampling
CLK_TCK="$(getconf CLK_TCK)"

# utime+stime+cutime+cstime of a process tree, in clock ticks.
cpu_ticks() {
  local total=0 p t
  for p in $(tree_pids "$1"); do
    t="$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | awk '{ print $12 + $13 + $14 + $15 }')" || t=0
    total=$((total + ${t:-0}))
  done
  echo "$total"
}

rss_kib() {
  local total=0 p r
  for p in $(tree_pids "$1"); do
    r="$(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null)" || r=0
    total=$((total + ${r:-0}))
  done
  echo "$total"
}

origin_accepts() {
  curl -s --max-time 2 "http://127.0.0.1:$ORIGIN_PORT/bench_status" | awk 'NR == 3 { print $1 }'
}

run_wrk() {
  local port="$1" seconds="$2"
  "${PIN_LOAD[@]}" timeout $((seconds + 20)) wrk -t1 -c"$CONNECTIONS" -d"${seconds}s" --timeout 5s --latency \
    -H "Host: $BENCH_HOST" -H "Cookie: $COOKIE" "http://127.0.0.1:$port/"
}

# wrk latency ("512.00us", "1.20ms", "1.01s", "1.00m") -> microseconds.
to_us() {
  awk -v v="$1" 'BEGIN {
    n = v + 0; u = v; sub(/^[0-9.]+/, "", u)
    if (u == "us") f = 1; else if (u == "ms") f = 1000; else if (u == "s") f = 1000000; else if (u == "m") f = 60000000; else f = 0
    printf "%.0f", n * f }'
}

ROWS="$RUN_DIR/rows.tsv"

measure() {
  local name="$1" round="$2" port="${PORT[$1]}" pid="${SERVER_PID[$1]}"
  local out="$RUN_DIR/wrk-$name-round$round.txt"
  run_wrk "$port" "$WARMUP" >/dev/null 2>&1 || true
  local acc0 cpu0 cpu1 acc1
  acc0="$(origin_accepts)"
  cpu0="$(cpu_ticks "$pid")"
  run_wrk "$port" "$DURATION" >"$out" 2>&1 || true
  cpu1="$(cpu_ticks "$pid")"
  acc1="$(origin_accepts)"
  local rss requests rps p50 p99 errors cpu_us new_conns
  rss="$(rss_kib "$pid")"
  requests="$(awk '/requests in/ { print $1 }' "$out")"
  rps="$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$out")"
  p50="$(to_us "$(awk '$1 == "50%" { print $2 }' "$out")")"
  p99="$(to_us "$(awk '$1 == "99%" { print $2 }' "$out")")"
  errors="$(awk '/Non-2xx or 3xx responses:/ { e += $NF }
    /Socket errors:/ { gsub(",", ""); e += $4 + $6 + $8 + $10 } END { print e + 0 }' "$out")"
  if [ -z "$requests" ] || [ "$requests" = 0 ]; then
    log "round $round $name: wrk measured nothing (see $out)"
    printf '%s\t%s\tNA\tNA\tNA\tNA\tNA\t%s\tNA\n' "$round" "$name" "$rss" >>"$ROWS"
    return 0
  fi
  cpu_us="$(awk -v d=$((${cpu1:-0} - ${cpu0:-0})) -v hz="$CLK_TCK" -v n="$requests" 'BEGIN { printf "%.2f", d * 1000000 / hz / n }')"
  # The status query's own connection counts once.
  new_conns=$((${acc1:-0} - ${acc0:-0} - 1))
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$name" "$rps" "$cpu_us" "$p50" "$p99" \
    "$errors" "$rss" "$new_conns" >>"$ROWS"
  log "round $round $name: $rps req/s, $cpu_us us CPU/req, p50 ${p50}us p99 ${p99}us, errors $errors, new upstream conns $new_conns"
}

LAT_ROWS="$RUN_DIR/latency.tsv"

# Latency at a fixed rate below saturation (hey: -q is per worker).
measure_latency() {
  local name="$1"
  local out="$RUN_DIR/hey-$name.txt"
  "${PIN_LOAD[@]}" timeout $((LAT_SECONDS + 30)) hey -z "${LAT_SECONDS}s" -c "$LAT_WORKERS" \
    -q $((LAT_RATE / LAT_WORKERS)) -cpus 1 -host "$BENCH_HOST" -H "Cookie: $COOKIE" \
    "http://127.0.0.1:${PORT[$name]}/" >"$out" 2>&1 || true
  awk -v name="$name" '
    /^ *50% in/ { p50 = $3 * 1000000 }
    /^ *99% in/ { p99 = $3 * 1000000 }
    /^ *Requests\/sec:/ { rps = $2 }
    /^Status code distribution:/ { section = "status"; next }
    /^Error distribution:/ { section = "error"; next }
    /^ *\[[0-9]+\]/ { n = $1; gsub(/[][]/, "", n)
      if (section == "status" && n !~ /^2/) bad += $2
      if (section == "error") bad += n }
    END { printf "%s\t%.0f\t%.0f\t%.0f\t%d\n", name, rps, p50, p99, bad }' "$out" >>"$LAT_ROWS"
}

# ---------------------------------------------------------------- report
report() {
  local r
  echo "escgate load benchmark, mode: $MODE"
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); host: $(nproc) CPU, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo); kernel $(uname -r)"
  echo "commit: $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$REPO" diff --quiet 2>/dev/null || echo ' (dirty)')"
  echo "peers: $(nginx -v 2>&1 | sed 's/.*: //'), $(haproxy -v 2>/dev/null | awk 'NR == 1 { print $1, $3 }'), $(wrk -v 2>&1 | awk 'NR == 1 { print $1, $2 }')"
  echo "load: wrk -t1 -c$CONNECTIONS, ${ROUNDS} interleaved rounds of ${WARMUP}s warm-up + ${DURATION}s;" \
    "$([ ${#PIN_SERVER[@]} -gt 0 ] && echo 'servers on CPU 0, load generator on CPU 1' || echo 'not pinned (one CPU)'); escgate zones: $ZONES"
  echo "work: 5 request-header sets, Host -> origin.internal, X-Forwarded-For/Proto + Via, 2 response-header sets; cookie disable_esc present, not matching"
  echo "passthru: pingora_baseline --passthrough, the same pingora forwarding untouched (no work): the floor of any pingora proxy"
  [ "$ESC_DISABLED" = 1 ] && echo "escgate: zone disable_esc flag set (escgate should forward untouched)"
  echo "load average when the servers started: $LOADAVG_AT_START (other work on the machine skews every figure)"
  [ "$ROUNDS" -ge 3 ] || echo "WARNING: fewer than 3 rounds: not a protocol run"
  for r in "${TARGETS[@]}"; do
    if [ -n "${STATUS[$r]:-}" ]; then echo "NOT MEASURED: ${STATUS[$r]}"; fi
  done
  echo
  echo "Per round (CPU = server process tree utime+stime per request; errors = non-2xx + socket errors;"
  echo "new conns = connections the origin accepted during the run; RSS after the run):"
  awk -F'\t' 'BEGIN { printf "%-6s %-9s %9s %11s %9s %9s %7s %9s %10s\n", "round", "server", "req/s", "CPU us/req", "p50 us", "p99 us", "errors", "RSS MiB", "new conns" }
    { rss = ($8 == "NA") ? "NA" : sprintf("%.1f", $8 / 1024)
      printf "%-6s %-9s %9s %11s %9s %9s %7s %9s %10s\n", $1, $2, $3, $4, $5, $6, $7, rss, $9 }' "$ROWS"
  echo
  echo "Median (min-max) over rounds:"
  printf '%-9s %22s %22s %9s %9s %7s %9s %10s\n' server "req/s" "CPU us/req" "p50 us" "p99 us" errors "RSS MiB" "new conns"
  for r in "${TARGETS[@]}"; do
    awk -F'\t' -v t="$r" '
      function med(a, n,   i, j, x) { for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
        return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
      $2 == t && $3 != "NA" { n++; rps[n] = $3; cpu[n] = $4; p50[n] = $5; p99[n] = $6; err += $7; rss = $8; if ($9 > conns) conns = $9 }
      END {
        if (!n) exit
        m1 = med(rps, n); lo1 = rps[1]; hi1 = rps[n]; m2 = med(cpu, n); lo2 = cpu[1]; hi2 = cpu[n]
        printf "%-9s %22s %22s %9.0f %9.0f %7d %9.1f %10d\n", t,
          sprintf("%.0f (%.0f-%.0f)", m1, lo1, hi1), sprintf("%.2f (%.2f-%.2f)", m2, lo2, hi2),
          med(p50, n), med(p99, n), err, rss / 1024, conns }' "$ROWS"
  done
  echo
  echo "Ratios per round, then median:"
  awk -F'\t' '
    function med(a, n,   i, j, x) { for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
      return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    $3 != "NA" { rps[$1, $2] = $3; cpu[$1, $2] = $4; rounds[$1] = 1 }
    END {
      printf "%-6s %18s %18s %22s %19s %19s\n", "round", "escgate/nginx rps", "escgate/nginx CPU", "escgate-baseline CPU us", "baseline/nginx rps", "passthru/nginx rps"
      for (r in rounds) order[++k] = r + 0
      for (i = 2; i <= k; i++) { x = order[i]; for (j = i - 1; j >= 1 && order[j] > x; j--) order[j + 1] = order[j]; order[j + 1] = x }
      for (i = 1; i <= k; i++) {
        r = order[i]; a = b = c = d = e = "n/a"
        if (((r, "escgate") in rps) && ((r, "nginx") in rps)) { a = sprintf("%.2f", rps[r, "escgate"] / rps[r, "nginx"]); A[++na] = a + 0
          b = sprintf("%.2f", cpu[r, "escgate"] / cpu[r, "nginx"]); B[++nb] = b + 0 }
        if (((r, "escgate") in cpu) && ((r, "baseline") in cpu)) { c = sprintf("%+.2f", cpu[r, "escgate"] - cpu[r, "baseline"]); C[++nc] = c + 0 }
        if (((r, "baseline") in rps) && ((r, "nginx") in rps)) { d = sprintf("%.2f", rps[r, "baseline"] / rps[r, "nginx"]); D[++nd] = d + 0 }
        if (((r, "passthru") in rps) && ((r, "nginx") in rps)) { e = sprintf("%.2f", rps[r, "passthru"] / rps[r, "nginx"]); E[++ne] = e + 0 }
        printf "%-6s %18s %18s %22s %19s %19s\n", r, a, b, c, d, e
      }
      printf "%-6s %18s %18s %22s %19s %19s\n", "median", na ? sprintf("%.2f", med(A, na)) : "n/a", nb ? sprintf("%.2f", med(B, nb)) : "n/a",
        nc ? sprintf("%+.2f", med(C, nc)) : "n/a", nd ? sprintf("%.2f", med(D, nd)) : "n/a", ne ? sprintf("%.2f", med(E, ne)) : "n/a"
    }' "$ROWS"
  if [ -s "$LAT_ROWS" ]; then
    echo
    echo "Latency at a fixed rate (hey on CPU 1, $LAT_RATE req/s for ${LAT_SECONDS}s, $LAT_WORKERS connections;"
    echo "hey reports 100 us steps), overhead over origin direct:"
    awk -F'\t' 'BEGIN { printf "%-9s %9s %9s %9s %14s %14s %7s\n", "server", "req/s", "p50 us", "p99 us", "p50 overhead", "p99 overhead", "non-2xx" }
      { name[NR] = $1; rps[NR] = $2; p50[NR] = $3; p99[NR] = $4; bad[NR] = $5; if ($1 == "origin") { o50 = $3; o99 = $4; have = 1 } }
      END { for (i = 1; i <= NR; i++) printf "%-9s %9s %9s %9s %14s %14s %7s\n", name[i], rps[i], p50[i], p99[i],
        have ? sprintf("%+d us", p50[i] - o50) : "n/a", have ? sprintf("%+d us", p99[i] - o99) : "n/a", bad[i] }' "$LAT_ROWS"
  elif [ "$LAT_SECONDS" = 0 ]; then
    echo
    echo "Fixed-rate latency step skipped (LAT_SECONDS=0)."
  fi
  echo
  echo "raw outputs and server logs: $RUN_DIR"
}

# ---------------------------------------------------------------- main
ensure_tools
build
if ! command -v hey >/dev/null 2>&1 && [ "$LAT_SECONDS" != 0 ]; then
  log "hey not available: the fixed-rate latency step is skipped"
  LAT_SECONDS=0
fi
[ -x "$REPO/target/release/pingora_baseline" ] || { log "target/release/pingora_baseline missing (drop --no-build)"; exit 1; }
[ -x "$REPO/target/release/escgate" ] || STATUS[escgate]="${STATUS[escgate]:-escgate binary missing (target/release/escgate)}"

TIME_LIMIT="${TIME_LIMIT:-$((ROUNDS * ${#TARGETS[@]} * (WARMUP + DURATION + 10) + ${#TARGETS[@]} * (LAT_SECONDS + 10) + 300))}"
# The watchdog: on TERM (from cleanup) it stops its sleep and leaves quietly.
(
  sleep "$TIME_LIMIT" &
  sleep_pid=$!
  trap 'kill "$sleep_pid" 2>/dev/null; exit 0' TERM
  wait "$sleep_pid" || exit 0
  echo "run.sh: time limit of ${TIME_LIMIT}s reached, stopping" >&2
  kill -TERM $$
) &
WATCHDOG_PID=$!

LOADAVG_AT_START="$(cut -d' ' -f1-3 /proc/loadavg)"
start_servers
configure_escgate_state
for name in "${TARGETS[@]}"; do verify "$name"; done
[ -z "${STATUS[origin]:-}" ] || { log "the origin does not answer as expected: nothing to measure"; exit 1; }

: >"$ROWS"
n_targets=${#TARGETS[@]}
for round in $(seq 1 "$ROUNDS"); do
  # Rotate the order every round so slow drift on a shared machine spreads over all servers.
  for i in $(seq 0 $((n_targets - 1))); do
    name="${TARGETS[$(((i + round - 1) % n_targets))]}"
    [ -z "${STATUS[$name]:-}" ] || continue
    if ! alive "${SERVER_PID[$name]}"; then
      STATUS[$name]="$name died during the run (log: $RUN_DIR/$name.log)"
      log "${STATUS[$name]}"
      continue
    fi
    measure "$name" "$round"
  done
done

: >"$LAT_ROWS"
if [ "$LAT_SECONDS" != 0 ]; then
  for name in "${TARGETS[@]}"; do
    [ -z "${STATUS[$name]:-}" ] || continue
    measure_latency "$name"
  done
fi

report | tee "$RESULTS"
log "results written to $RESULTS"
