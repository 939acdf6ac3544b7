#!/usr/bin/env bash
# A/B of escgate builds or settings: several escgate binaries side by side behind one nginx origin,
# interleaved within each round, the load benchmark's work and cookie (benches/load/escgate.toml),
# CPU µs per request from /proc. For deciding whether one change helps; run.sh is the benchmark.
#
#   benches/load/ab.sh /tmp/escgate-before target/release/escgate
#   EXTRA_2='work_stealing = false' benches/load/ab.sh target/release/escgate target/release/escgate
#
# Environment: ROUNDS [3], WARMUP [2], DURATION [6] seconds, CONNECTIONS [64], PORT_BASE [19080],
# EXTRA_<n> (a TOML line added to [server] of the n-th binary's config).
set -euo pipefail

[ $# -ge 1 ] || { sed -n '2,10p' "$0" >&2; exit 2; }
ROUNDS="${ROUNDS:-3}"
WARMUP="${WARMUP:-2}"
DURATION="${DURATION:-6}"
CONNECTIONS="${CONNECTIONS:-64}"
PORT_BASE="${PORT_BASE:-19080}"
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
RUN_DIR="$REPO/target/bench-load/ab-$(date -u +%Y%m%dT%H%M%SZ)"
# shellcheck source=benches/load/common.sh
source "$REPO/benches/load/common.sh"
require_tools nginx wrk curl taskset
start_origin taskset -c 0

declare -A PID PORT
n=0
for bin in "$@"; do
  n=$((n + 1))
  port=$((PORT_BASE + 2 * n + 10))
  render_escgate_config "$port" "$RUN_DIR/state$n.json" "$RUN_DIR/escgate$n.toml"
  extra="EXTRA_$n"
  if [ -n "${!extra:-}" ]; then
    sed -i "s|^threads = 1|threads = 1\n${!extra}|" "$RUN_DIR/escgate$n.toml"
  fi
  RUST_LOG=warn taskset -c 0 "$bin" --config "$RUN_DIR/escgate$n.toml" >"$RUN_DIR/escgate$n.log" 2>&1 &
  PID[$n]=$!
  PORT[$n]=$port
  STARTED+=($!)
done

for i in $(seq 1 "$n"); do
  wait_up "${PORT[$i]}"
  prepare_escgate "${PORT[$i]}"
done

cpu_ticks() { awk '{ print $14 + $15 + $16 + $17 }' "/proc/$1/stat"; }
load() {
  taskset -c 1 timeout $(($2 + 20)) wrk -t1 -c"$CONNECTIONS" -d"$2s" --timeout 5s \
    -H "Host: $HOST" -H "Cookie: $COOKIE" "http://127.0.0.1:$1/"
}
printf "%-6s %-4s %-40s %10s %12s %9s\n" round bin binary "req/s" "CPU us/req" "RSS MiB"
ROWS="$RUN_DIR/rows.tsv"
: >"$ROWS"
for round in $(seq 1 "$ROUNDS"); do
  # Each round starts with the next binary, so none is always measured first (or last).
  for k in $(seq 0 $((n - 1))); do
    i=$(((round - 1 + k) % n + 1))
    load "${PORT[$i]}" "$WARMUP" >/dev/null
    before="$(cpu_ticks "${PID[$i]}")"
    out="$(load "${PORT[$i]}" "$DURATION")"
    after="$(cpu_ticks "${PID[$i]}")"
    requests="$(awk '/requests in/ { print $1 }' <<<"$out")"
    rps="$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' <<<"$out")"
    errors="$(awk '/Non-2xx|Socket errors/' <<<"$out")"
    [ -z "$errors" ] || echo "binary $i round $round: $errors" >&2
    cpu="$(awk -v d=$((after - before)) -v hz="$(getconf CLK_TCK)" -v r="${requests:-0}" \
      'BEGIN { if (r > 0) printf "%.2f", d * 1000000 / hz / r; else print "NA" }')"
    rss="$(awk '/VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/${PID[$i]}/status")"
    printf "%-6s %-4s %-40s %10s %12s %9s\n" "$round" "$i" "${!i}" "$rps" "$cpu" "$rss"
    printf "%s\t%s\t%s\t%s\n" "$i" "$rps" "$cpu" "$rss" >>"$ROWS"
  done
done

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo
echo "Median over rounds (CPU relative to binary 1):"
printf "%-4s %-40s %10s %12s %9s %9s\n" bin binary "req/s" "CPU us/req" "CPU rel" "RSS MiB"
base_cpu="$(awk -F'\t' '$1 == 1 { print $3 }' "$ROWS" | median)"
for i in $(seq 1 "$n"); do
  rps="$(awk -F'\t' -v b="$i" '$1 == b { print $2 }' "$ROWS" | median)"
  cpu="$(awk -F'\t' -v b="$i" '$1 == b { print $3 }' "$ROWS" | median)"
  rss="$(awk -F'\t' -v b="$i" '$1 == b { print $4 }' "$ROWS" | median)"
  rel="$(awk -v c="$cpu" -v b="$base_cpu" 'BEGIN { printf "%+.1f%%", (c / b - 1) * 100 }')"
  printf "%-4s %-40s %10.0f %12.2f %9s %9.1f\n" "$i" "${!i}" "$rps" "$cpu" "$rel" "$rss"
done
echo "raw outputs: $RUN_DIR"
