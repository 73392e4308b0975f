#!/bin/sh
# Runs a command and passes when it exits with the expected status.
# Usage: expect_exit.sh STATUS COMMAND [ARGS...]
expected=$1
shift
"$@" >/dev/null 2>&1
status=$?
if [ "$status" -ne "$expected" ]; then
  echo "expected exit status $expected, got $status: $*" >&2
  exit 1
fi
