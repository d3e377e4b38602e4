#!/bin/sh
# cli-sigpipe.sh CAML — a reader that stops reading (`caml train … | head -1`)
# ends only the output: the run goes on, says so once on stderr, saves its
# results and exits 0 (it used to die of SIGPIPE, exit 141, with nothing
# said and nothing saved, leaving an empty output directory behind).
set -eu
caml=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/caml-cli-sigpipe.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail () { echo "$1"; shift; cat "$@"; exit 1; }

# --plain: a line per evaluation (every 100 steps), so lines keep coming
# after head has gone; the exit status through the pipe via a file.
{ s=0; "$caml" train --preset surface-ca-nn-2 -n 2000 --plain --out "$dir/r" 2>"$dir/e.txt" \
    || s=$?; echo $s >"$dir/status"; } | head -1 >"$dir/o.txt"
status=$(cat "$dir/status")
[ "$status" -eq 0 ] || fail "exit status $status with the pipe closed, not 0" "$dir/e.txt"
[ "$(wc -l <"$dir/o.txt")" -eq 1 ] || fail "head saw no line" "$dir/o.txt"
[ -f "$dir/r/summary.json" ] && [ -f "$dir/r/model.weights" ] \
  || fail "the results were not saved with the pipe closed" "$dir/e.txt"
[ "$(grep -c 'standard output was closed' "$dir/e.txt")" -eq 1 ] \
  || fail "not one note on stderr about the closed output" "$dir/e.txt"

# Every command: `caml presets | head -1` is no failure either.
{ s=0; "$caml" presets 2>"$dir/e2.txt" || s=$?; echo $s >"$dir/status"; } | head -1 >/dev/null
status=$(cat "$dir/status")
[ "$status" -eq 0 ] || fail "caml presets: exit status $status with the pipe closed" "$dir/e2.txt"
echo ok
