#!/bin/sh
# The artifacts the refusal tests of `--artifact` load, made from DIR/basics.so
# (written by `cmhost compile`): DIR/basics-stale.so, whose stamp names
# another code-generation hash (what a build of another cmhost leaves), and
# DIR/basics-open.so, which others may write.
set -eu
dir=$1
in=$dir/basics.so
# An artifact ends with its stamp (text), the stamp's length (8 bytes, little
# endian) and an 8-byte magic.
set -- $(tail -c 16 "$in" | head -c 4 | od -An -tu1)
length=$(($1 + 256 * $2 + 65536 * $3 + 16777216 * $4))
size=$(wc -c < "$in")
stale=$dir/basics-stale.so
head -c $((size - length - 16)) "$in" > "$stale"
tail -c $((length + 16)) "$in" | head -c "$length" |
  sed 's/^codegen [0-9a-f]\{64\}$/codegen 0000000000000000000000000000000000000000000000000000000000000000/' >> "$stale"
tail -c 16 "$in" >> "$stale"
chmod 600 "$stale"
if cmp -s "$in" "$stale"; then
  echo "no codegen line in the stamp of $in" >&2
  exit 1
fi
cp "$in" "$dir/basics-open.so"
chmod 666 "$dir/basics-open.so"
