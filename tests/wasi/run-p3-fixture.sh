#!/usr/bin/env bash
# Runs one of ../shared/p3-fixtures' `run`-world components as upstream's
# generic runner runs them (its README): args [STEM, "."] (--argv0), env
# ERRNO_MODE_UNIX=1 (and DISABLE_IPV6=1 when [::1] cannot be bound), one
# preopen, an empty read-write directory, as `.`, the network allowed,
# stdin empty, stdout and stderr captured. Passes when `run` returns ok
# (exit 0) and, with EXPECT, stdout is exactly that text.
#   run-p3-fixture.sh CMHOST ENGINE FIXTURE.wasm [EXPECT]
set -uo pipefail
cmhost="$1" engine="$2" fixture="$3" expect="${4-}"
stem="$(basename "$fixture" .wasm)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
env_args=(--env ERRNO_MODE_UNIX=1)
if ! node -e "require('net').createServer().on('error', () => process.exit(1)).listen(0, '::1', () => process.exit(0))"; then
  env_args+=(--env DISABLE_IPV6=1)
fi
mkdir "$scratch/dir"
# The fixtures' wit-bindgen (0.58) predates component-model#647.
"$cmhost" run --engine="$engine" --compat=sync-cancel-in-set --allow-network "${env_args[@]}" \
  --dir "$scratch/dir::." --argv0 "$stem" "$fixture" . </dev/null >"$scratch/stdout" 2>"$scratch/stderr"
status=$?
cat "$scratch/stdout"
cat "$scratch/stderr" >&2
if ((status != 0)); then
  echo "FAILED: $stem exited with $status" >&2
  exit 1
fi
if [[ -n "$expect" && "$(cat "$scratch/stdout")" != "$expect" ]]; then
  echo "FAILED: $stem printed something else than expected" >&2
  exit 1
fi
echo "passed: $stem"
