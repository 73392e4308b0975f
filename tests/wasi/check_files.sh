#!/bin/sh
# wasi:filesystem through `cmhost run --dir`: file operations inside a
# preopened directory, a read-only preopen refusing changes (writes,
# removals, links, symlinks, times), and confinement: `..` past the
# preopen, absolute paths, symlinks pointing out and `..` through a
# subdirectory are refused for reads, writes, renames, link-at, symlink-at,
# readlink-at, set-times-at and set-times, symlink targets are checked as
# wasmtime checks them, and nothing outside the preopen was changed.
# Usage: check_files.sh CMHOST COMMAND.wasm ENGINE
set -u
cmhost=$1 command=$2 engine=$3
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/box/sub" "$tmp/outside"
printf 'secret' >"$tmp/outside/secret"
printf 'hello' >"$tmp/box/a.txt"
ln -s ../outside/secret "$tmp/box/link-out"
ln -s a.txt "$tmp/box/link-in"
ln -s ../outside "$tmp/box/dir-out"
ln -s secret "$tmp/outside/link"
status=0
run() { "$cmhost" run --engine="$engine" --dir "$tmp/box::/data" "$command" "$@" 2>&1; }
run_ro() { "$cmhost" run --engine="$engine" --dir "$tmp/box::/data:ro" "$command" "$@" 2>&1; }
expect() {  # NAME EXPECTED ACTUAL
  if [ "$2" != "$3" ]; then
    printf '%s: expected [%s], got [%s]\n' "$1" "$2" "$3"
    status=1
  fi
}
expect read hello "$(run read /data/a.txt)"
expect read-via-link-inside hello "$(run read /data/link-in)"
expect copy "" "$(run copy /data/a.txt /data/b.txt)"
expect copied hello "$(cat "$tmp/box/b.txt")"
expect append "" "$(run append /data/b.txt ' world')"
expect appended "hello world" "$(cat "$tmp/box/b.txt")"
expect stat "file 11" "$(run stat /data/b.txt)"
expect stat-dir "directory" "$(run stat /data/sub | cut -d' ' -f1)"
expect mkdir "" "$(run mkdir /data/new)"
expect rename "" "$(run rename /data/b.txt /data/new/c.txt)"
expect ls "$(printf 'c.txt')" "$(run ls /data/new)"
expect ls-root "$(printf 'a.txt\ndir-out\nlink-in\nlink-out\nnew\nsub')" "$(run ls /data)"
expect rmdir-not-empty "error: Directory not empty" "$(run rmdir /data/new)"
expect rm "" "$(run rm /data/new/c.txt)"
expect rmdir "" "$(run rmdir /data/new)"
expect missing "error: No such file or directory" "$(run read /data/nope)"
expect link "" "$(run link /data/a.txt /data/hard)"
expect link-count 2 "$(stat -c %h "$tmp/box/a.txt")"
expect link-read hello "$(run read /data/hard)"
rm "$tmp/box/hard"
expect readlink "8 ../a.txt" "$(ln -s ../a.txt "$tmp/box/sub/up" && run readlink /data/sub/up)"
# The longest target Linux makes (PATH_MAX - 1 bytes) comes back whole.
long_target=$(head -c 4095 /dev/zero | tr '\0' 'x')
ln -s "$long_target" "$tmp/box/long-link"
expect readlink-long "4095 $long_target" "$(run readlink /data/long-link)"
rm "$tmp/box/long-link" "$tmp/box/sub/up"
# Read-only: reads work, nothing changes.
expect ro-read hello "$(run_ro read /data/a.txt)"
expect ro-write "error: Read-only file system" "$(run_ro write /data/x.txt hi)"
expect ro-mkdir "error: Read-only file system" "$(run_ro mkdir /data/d)"
expect ro-rm "error: Read-only file system" "$(run_ro rm /data/a.txt)"
expect ro-link "error: Read-only file system" "$(run_ro link /data/a.txt /data/hard)"
expect ro-symlink "error: Read-only file system" "$(run_ro symlink a.txt /data/soft)"
expect ro-readlink "5 a.txt" "$(run_ro readlink /data/link-in)"
mtime() { stat -c %Y "$1"; }
a_mtime=$(mtime "$tmp/box/a.txt")
expect ro-set-times "error: Read-only file system" "$(run_ro futimes /data/a.txt 1000000000)"
expect ro-set-times-at "error: Read-only file system" "$(run_ro utimes /data/a.txt 1000000000)"
expect ro-set-times-at-nofollow "error: Read-only file system" "$(run_ro lutimes /data/a.txt 1000000000)"
expect ro-times-kept "$a_mtime" "$(mtime "$tmp/box/a.txt")"
# Times change in a writable preopen, on a file opened for reading too.
expect set-times "" "$(run futimes /data/a.txt 1000000000)"
expect set-times-done 1000000000 "$(mtime "$tmp/box/a.txt")"
expect set-times-at "" "$(run utimes /data/a.txt 1100000000)"
expect set-times-at-done 1100000000 "$(mtime "$tmp/box/a.txt")"
# Confinement.
outside_state() { ls -la "$tmp/outside"; stat -c '%n %h %Y' "$tmp/outside" "$tmp/outside/"*; cat "$tmp/outside/secret"; }
before=$(outside_state)
expect dotdot "error: Operation not permitted" "$(run read /data/../outside/secret)"
expect dotdot-sub "error: Operation not permitted" "$(run read /data/sub/../../outside/secret)"
expect symlink-out "error: Operation not permitted" "$(run read /data/link-out)"
expect absolute "error: Capabilities insufficient" "$(run read /etc/hostname)"
expect write-dotdot "error: Operation not permitted" "$(run write /data/../outside/new pwned)"
expect write-symlink-out "error: Operation not permitted" "$(run write /data/link-out pwned)"
expect mkdir-dotdot "error: Operation not permitted" "$(run mkdir /data/sub/../../outside/dir)"
expect rename-out "error: Operation not permitted" "$(run rename /data/a.txt /data/../outside/a.txt)"
# link-at, symlink-at, readlink-at, set-times-at and set-times: `..` past
# the preopen, absolute paths (handed to the host as they are, through
# `at`) and symlinks leading out, on either path.
out=$tmp/outside
expect link-dotdot "error: Operation not permitted" "$(run link /data/../outside/secret /data/stolen)"
expect link-to-dotdot "error: Operation not permitted" "$(run link /data/a.txt /data/sub/../../outside/planted)"
expect link-absolute "error: Operation not permitted" "$(run at /data link "$out/secret" stolen)"
expect link-to-absolute "error: Operation not permitted" "$(run at /data link a.txt "$out/planted")"
expect link-through-symlink "error: Operation not permitted" "$(run link /data/dir-out/secret /data/stolen)"
expect link-to-through-symlink "error: Operation not permitted" "$(run link /data/a.txt /data/dir-out/planted)"
expect link-not-made "no" "$(test -e "$tmp/box/stolen" && echo made || echo no)"
# A hard link to a symlink leading out is that symlink again, not its target.
expect link-a-symlink-out "" "$(run link /data/link-out /data/link-out-2)"
expect link-a-symlink-out-read "error: Operation not permitted" "$(run read /data/link-out-2)"
expect symlink-at-dotdot "error: Operation not permitted" "$(run symlink a.txt /data/../outside/planted)"
expect symlink-at-absolute "error: Operation not permitted" "$(run at /data symlink a.txt "$out/planted")"
expect symlink-at-through-symlink "error: Operation not permitted" "$(run symlink a.txt /data/dir-out/planted)"
expect readlink-dotdot "error: Operation not permitted" "$(run readlink /data/../outside/link)"
expect readlink-absolute-path "error: Operation not permitted" "$(run at /data readlink "$out/link")"
expect readlink-through-symlink "error: Operation not permitted" "$(run readlink /data/dir-out/link)"
expect readlink-link-out "17 ../outside/secret" "$(run readlink /data/link-out)"
expect set-times-at-dotdot "error: Operation not permitted" "$(run utimes /data/../outside/secret 1000000000)"
expect set-times-at-absolute "error: Operation not permitted" "$(run at /data utimes "$out/secret" 1000000000)"
expect set-times-at-symlink-out "error: Operation not permitted" "$(run utimes /data/link-out 1000000000)"
expect set-times-at-through-symlink "error: Operation not permitted" "$(run lutimes /data/dir-out/secret 1000000000)"
expect set-times-dotdot "error: Operation not permitted" "$(run futimes /data/../outside/secret 1000000000)"
expect set-times-absolute "error: Operation not permitted" "$(run at /data futimes "$out/secret" 1000000000)"
expect set-times-symlink-out "error: Operation not permitted" "$(run futimes /data/link-out 1000000000)"
# Not following a final symlink touches the link itself, which is inside.
expect set-times-at-nofollow "" "$(run lutimes /data/link-out 1000000000)"
expect set-times-at-nofollow-done 1000000000 "$(stat -c %Y "$tmp/box/link-out")"
# symlink-at: an absolute target is refused (as wasmtime refuses it); a
# relative one is kept as given, and one leading out is never followed out.
expect symlink-absolute "error: Operation not permitted" "$(run symlink /etc/hostname /data/abs)"
expect symlink-root "error: Operation not permitted" "$(run symlink / /data/abs)"
expect symlink-absolute-not-made "no" "$(test -L "$tmp/box/abs" && echo made || echo no)"
expect symlink-out "" "$(run symlink ../outside/secret /data/made-out)"
expect symlink-out-kept "../outside/secret" "$(readlink "$tmp/box/made-out")"
expect symlink-out-readlink "17 ../outside/secret" "$(run readlink /data/made-out)"
expect symlink-out-read "error: Operation not permitted" "$(run read /data/made-out)"
expect symlink-out-write "error: Operation not permitted" "$(run write /data/made-out pwned)"
expect symlink-out-times "error: Operation not permitted" "$(run utimes /data/made-out 1000000000)"
expect symlink-inside "" "$(run symlink ../a.txt /data/sub/up)"
expect symlink-inside-read hello "$(run read /data/sub/up)"
# A NUL byte would cut a string short where the kernel reads it.
expect symlink-nul-target "error: Invalid argument" "$(run at /data symlink 'a.txt|/../../outside' nul-link)"
expect symlink-nul-path "error: Invalid argument" "$(run at /data symlink a.txt 'nul-link|x')"
expect symlink-nul-not-made "no" "$(test -L "$tmp/box/nul-link" && echo made || echo no)"
# readlink-at: an absolute target (made on the host) is not the guest's to see.
ln -s "$tmp/outside/secret" "$tmp/box/host-absolute"
expect readlink-absolute "error: Operation not permitted" "$(run readlink /data/host-absolute)"
after=$(outside_state)
expect outside-untouched "$before" "$after"
expect inside-kept hello "$(cat "$tmp/box/a.txt")"
exit $status
