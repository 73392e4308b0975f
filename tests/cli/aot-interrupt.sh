#!/usr/bin/env bash
# An ahead-of-time compile stopped mid-way leaves nothing behind: `cmhost
# compile` killed with SIGINT and with SIGTERM while its C compilers run,
# and `cmhost run --engine=aot` compiling on first use killed with SIGHUP,
# end as the signal ends a process, with no compiler left running, nothing
# beside the component or the artifact's place, and nothing in the cache but
# its (empty) building directory. A build directory a killed process left
# (over an hour old) goes with the next build, a young one stays. Two first
# runs of one component at once both succeed, and leave one artifact.
#   aot-interrupt.sh CMHOST SLOW.wasm QUICK.wasm
# SLOW takes its compilers a while (they are caught running); QUICK
# exports `add(u32, u32) -> u32`.
set -uo pipefail
cmhost="$1" slow="$2" quick="$3"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache"
building="$XDG_CACHE_HOME/cmhost/building"
fail() {
  echo "FAILED: $*"
  exit 1
}
cp "$slow" "$work/slow.wasm"
cp "$quick" "$work/quick.wasm"

# What is in the work directory but the inputs and the cache's directories.
leftovers() {
  (cd "$work" && find . -mindepth 1 -not -name slow.wasm -not -name quick.wasm -not -path ./cache \
    -not -path ./cache/cmhost -not -path ./cache/cmhost/building -not -path "./cache/cmhost/*.cmhost-aot" | sort)
}

# Job control: a background job of a script otherwise starts with SIGINT
# ignored, as POSIX has it, and cmhost rightly keeps it so.
set -m
for signal in INT TERM HUP; do
  if [[ $signal == HUP ]]; then  # a first run compiling into the cache
    "$cmhost" run --engine=aot "$work/slow.wasm" 2>/dev/null &
  else
    "$cmhost" compile "$work/slow.wasm" -o "$work/slow.cmhost-aot" 2>/dev/null &
  fi
  pid=$!
  for _ in $(seq 1 1200); do  # until a C compiler runs under it (at most 120 s)
    pgrep -P "$pid" >/dev/null && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  pgrep -P "$pid" >/dev/null || fail "no C compiler ran under cmhost compile before SIG$signal"
  kill "-$signal" "$pid"
  wait "$pid"
  status=$?
  expected=$((128 + $(kill -l "$signal")))
  ((status == expected)) || fail "cmhost compile exited with $status after SIG$signal, not $expected"
  sleep 0.2
  pgrep -f "$work/cache" >/dev/null && fail "a C compiler still runs after SIG$signal"
  left="$(leftovers)"
  [[ -z "$left" ]] || fail "left behind after SIG$signal: $left"
  echo "SIG$signal: the compile stopped, nothing left"
done

mkdir -p "$building/cmhost-build-old/x" "$building/cmhost-build-young"
touch -d '2 hours ago' "$building/cmhost-build-old"
"$cmhost" compile "$work/quick.wasm" -o "$work/quick.cmhost-aot" >/dev/null 2>&1 || fail "cmhost compile failed"
[[ -e "$building/cmhost-build-old" ]] && fail "a stale build directory stayed"
[[ -d "$building/cmhost-build-young" ]] || fail "a build directory under an hour old went"
rmdir "$building/cmhost-build-young"
rm "$work/quick.cmhost-aot"
echo "stale build directories go, young ones stay"

"$cmhost" invoke --engine=aot "$work/quick.wasm" 'add(2, 40)' >"$work/first.out" 2>/dev/null &
first=$!
"$cmhost" invoke --engine=aot "$work/quick.wasm" 'add(2, 40)' >"$work/second.out" 2>/dev/null
second_status=$?
wait "$first"
first_status=$?
((first_status == 0 && second_status == 0)) || fail "concurrent first runs exited with $first_status and $second_status"
for run in first second; do
  [[ "$(cat "$work/$run.out")" == 42 ]] || fail "the $run run printed $(cat "$work/$run.out")"
  rm "$work/$run.out"
done
artifacts=$(find "$XDG_CACHE_HOME/cmhost" -maxdepth 1 -name '*.cmhost-aot' | wc -l)
((artifacts == 1)) || fail "$artifacts artifacts in the cache after two runs of one component"
left="$(leftovers)"
[[ -z "$left" ]] || fail "left behind by the concurrent runs: $left"
echo "two concurrent first runs both succeed"
echo "all passed"
