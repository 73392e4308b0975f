#!/usr/bin/env bash
# `cmhost serve` under load from Debian's wrk, side by side in one run with
# a bare Node.js `http` server answering the same body: requests/s, p50
# and p99, and the ratio to Node's.
#   bench/http/serve_bench.sh CMHOST HELLO.wasm [JS_PROXY.wasm] [SECONDS]
# HELLO.wasm: ../shared/p3-fixtures/p3-cli-serve-hello-world.wasm;
# JS_PROXY.wasm: the componentize-js proxy (build/release/tests/js-proxy).
# Then how requests/s grow with connections (1, 10, 50, 200) with one and
# two workers, on aot. Artifacts come from the cache: after a rebuild of
# cmhost, serve the JavaScript proxy until it says its optimized code is
# ready (minutes, in the background) before measuring, or its row measures
# the baseline tier.
set -euo pipefail
cmhost=$1 hello=$2 js=${3:-} seconds=${4:-10}
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT

free_port() { node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'; }

# Starts a server (the command after the port placeholder PORT), waits until
# it answers; its pid is $server.
start() {
  port=$(free_port)
  "${@//PORT/$port}" >/dev/null 2>&1 &
  server=$!
  pids+=("$server")
  for _ in $(seq 600); do curl -sf -o /dev/null "http://127.0.0.1:$port/" && return 0; sleep 0.1; done
  echo "server did not start: $*" >&2
  exit 1
}
stop() { kill "$server" && wait "$server" 2>/dev/null || true; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# wrk's requests/s, p50, p99 and failed requests at $1 connections.
measure() {
  local out
  out=$(wrk -t$(($1 < 2 ? $1 : 2)) -c"$1" -d"${seconds}s" --latency "http://127.0.0.1:$port/")
  # Failures are reported, not hidden: a timed-out request (wrk's 2 s) or
  # an error status.
  failed=$(awk '/Socket errors/ {gsub(",", ""); print $4 + $6 + $8 + $10} /Non-2xx/ {print $5}' <<<"$out" |
    awk '{n += $1} END {print n + 0}')
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
  p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
}

node_server='require("http").createServer((q, r) => { r.setHeader("content-type", "text/plain"); r.end("Hello, WASI!"); }).listen(PORT, "127.0.0.1")'
serve=("$cmhost" serve --compat=sync-cancel-in-set --addr 127.0.0.1:PORT)

printf '| server | requests/s | p50 | p99 | failed | requests/s / Node |\n|---|---|---|---|---|---|\n'
start node -e "$node_server"
measure 50
node_rps=$rps
printf '| Node.js http (one process) | %s | %s | %s | %s | 1.00x |\n' "$rps" "$p50" "$p99" "$failed"
stop
row() {
  local name=$1
  shift
  start "$@"
  measure 50
  printf '| %s | %s | %s | %s | %s | %sx |\n' "$name" "$rps" "$p50" "$p99" "$failed" "$(ratio "$rps" "$node_rps")"
  stop
}
row "cmhost aot, 2 workers" "${serve[@]}" --engine=aot --workers 2 "$hello"
row "cmhost aot, 1 worker" "${serve[@]}" --engine=aot --workers 1 "$hello"
row "cmhost interp, 2 workers" "${serve[@]}" --engine=interp --workers 2 "$hello"
[[ -n "$js" ]] && row "cmhost aot, JavaScript proxy (a SpiderMonkey instance per request), 2 workers" \
  "${serve[@]}" --engine=aot --workers 2 "$js"

printf '\n| connections | aot, 1 worker: requests/s, p99, failed | aot, 2 workers: the same | 2 / 1 |\n|---|---|---|---|\n'
for connections in 1 10 50 200; do
  start "${serve[@]}" --engine=aot --workers 1 "$hello"
  measure "$connections"
  one=$rps one_row="$rps, $p99, $failed"
  stop
  start "${serve[@]}" --engine=aot --workers 2 "$hello"
  measure "$connections"
  two=$rps two_row="$rps, $p99, $failed"
  stop
  printf '| %s | %s | %s | %sx |\n' "$connections" "$one_row" "$two_row" "$(ratio "$two" "$one")"
done
