#!/usr/bin/env bash
# scripts/test's reading of ctest's skipped tests (scripts/lib/ctest-skips.sh)
# on a ctest log of its own: the skips it finds, and which of them an
# expected-skips file allows, with its reason.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$ROOT/scripts/lib/ctest-skips.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/ctest.log" <<'LOG'
 12/14 Test  #12: aot.Engine.Memory64 ....***Skipped   0.01 sec
100% tests passed, 0 tests failed out of 14

The following tests did not run:
	 12 - aot.Engine.Memory64 (Skipped)
	 13 - Engine.Memory64 (Skipped)
LOG
cat > "$work/expected" <<'LIST'
# comment
aot\.Engine\.Memory64   no memory64 ahead of time
LIST
export EXPECTED_SKIPS="$work/expected"
while read -r name; do
  if reason=$(expected_skip_reason "$name"); then
    echo "expected: $name: $reason"
  else
    echo "unexpected: $name"
  fi
done < <(skipped_tests "$work/ctest.log")
