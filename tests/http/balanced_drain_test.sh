#!/usr/bin/env bash
# `cmhost serve` scaled out: two servers behind Debian's haproxy on
# loopback (health checks on --health-path, retries to the other server),
# under load from wrk; one server is stopped with SIGTERM mid-run. It must
# drain and exit 0, and no request may fail: wrk reports neither socket
# errors nor non-2xx responses. docs/deploy.md shows the same configuration.
#   balanced_drain_test.sh CMHOST ENGINE COMPONENT (a wit-bindgen 0.58 build: --compat=sync-cancel-in-set)
set -uo pipefail
cmhost=$1 engine=$2 component=$3
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAILED: $*"
  for log in "$work"/*.log; do echo "--- $log"; tail -n 20 "$log"; done
  exit 1
}

# A server on a free port: its pid in pids[] and $name.pid, its port in $port.
start_server() {
  local name=$1
  "$cmhost" serve --engine="$engine" --compat=sync-cancel-in-set --addr 127.0.0.1:0 --health-path /healthz "$component" 2>"$work/$name.log" &
  pids+=($!)
  echo $! >"$work/$name.pid"
  port=""
  for _ in $(seq 600); do
    port=$(grep -oE 'Serving HTTP on http://127\.0\.0\.1:[0-9]+/' "$work/$name.log" | grep -oE '[0-9]+/$')
    [[ -n "$port" ]] && port=${port%/} && return 0
    sleep 0.1
  done
  return 1
}
start_server a || fail "server a did not start"
port_a=$port
start_server b || fail "server b did not start"
port_b=$port
front=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')

cat >"$work/haproxy.cfg" <<CONFIG
global
  maxconn 1000
defaults
  mode http
  timeout connect 2s
  timeout client 30s
  timeout server 30s
  retries 3
  option redispatch
  retry-on all-retryable-errors
frontend web
  bind 127.0.0.1:$front
  default_backend cmhost
backend cmhost
  balance roundrobin
  option httpchk GET /healthz
  http-check expect status 200
  server a 127.0.0.1:$port_a check inter 200ms fall 1 rise 1
  server b 127.0.0.1:$port_b check inter 200ms fall 1 rise 1
CONFIG
haproxy -f "$work/haproxy.cfg" -db >"$work/haproxy.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  curl -sf -o /dev/null "http://127.0.0.1:$front/" && break
  sleep 0.1
done
curl -sf -o /dev/null "http://127.0.0.1:$front/" || fail "haproxy does not answer"

wrk -t2 -c20 -d6s "http://127.0.0.1:$front/" >"$work/wrk.out" 2>&1 &
load=$!
sleep 2
kill -TERM "$(cat "$work/a.pid")"
wait "$(cat "$work/a.pid")"
status=$?
wait "$load"
cat "$work/wrk.out"
((status == 0)) || fail "server a exited with $status after SIGTERM"
grep -q "finishing the requests in flight" "$work/a.log" || fail "server a did not drain"
requests=$(grep -oE '^ *[0-9]+ requests in' "$work/wrk.out" | grep -oE '[0-9]+')
[[ -n "$requests" && "$requests" -gt 100 ]] || fail "wrk sent too few requests: ${requests:-none}"
if grep -qE 'Socket errors|Non-2xx' "$work/wrk.out"; then fail "requests failed while a server drained"; fi
echo "passed: $requests requests through haproxy, none failed while server a drained"
