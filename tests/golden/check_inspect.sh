#!/bin/sh
# Checks `cmhost inspect` against a golden WIT file.
# Usage: check_inspect.sh CMHOST COMPONENT.wasm GOLDEN.wit [JCO]
#
# Passes when `CMHOST inspect COMPONENT.wasm` exits with 0 and prints GOLDEN
# byte for byte; otherwise shows the difference and fails. With JCO (the
# pinned jco, node_modules/.bin/jco) it also checks the golden's root world,
# everything before the first nested `package ... {`, against `jco wit`,
# which prints that part with the same printer (and one more newline).
set -u
if [ $# -lt 3 ]; then
  echo "usage: $0 CMHOST COMPONENT.wasm GOLDEN.wit [JCO]" >&2
  exit 2
fi
cmhost=$1 component=$2 golden=$3 jco=${4:-}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

"$cmhost" inspect "$component" >"$tmp/actual.wit"
status=$?
if [ "$status" -ne 0 ]; then
  echo "cmhost inspect $component exited with $status" >&2
  exit 1
fi
if ! diff -u "$golden" "$tmp/actual.wit"; then
  echo "cmhost inspect $component differs from $golden" >&2
  exit 1
fi

if [ -n "$jco" ]; then
  "$jco" wit "$component" >"$tmp/jco.wit" || exit 1
  awk 'NR > 1 && /^package / { exit } { print }' "$golden" >"$tmp/root.wit"
  echo >>"$tmp/root.wit"
  if ! diff -u "$tmp/jco.wit" "$tmp/root.wit"; then
    echo "the root world of $golden differs from jco wit" >&2
    exit 1
  fi
fi
exit 0
