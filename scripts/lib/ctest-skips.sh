# Sourced by scripts/test: which ctest tests skipped, and whether
# tests/expected-skips.txt (or the file in $EXPECTED_SKIPS) expects each.

# The names of the tests a ctest log lists as skipped, one a line.
skipped_tests() {
  sed -nE 's/^[[:space:]]*[0-9]+ - ([^ ]+) \(Skipped\)$/\1/p' "$1"
}

# The reason the expected-skips file gives for skipping ctest test $1;
# fails when it gives none.
expected_skip_reason() {
  local pattern reason
  while read -r pattern reason; do
    [[ -z "$pattern" || "$pattern" == \#* ]] && continue
    if [[ "$1" =~ ^(${pattern})$ ]]; then
      echo "$reason"
      return 0
    fi
  done < "${EXPECTED_SKIPS:-$ROOT/tests/expected-skips.txt}"
  return 1
}
