#!/bin/sh
# cli-interrupt-load.sh CAML — Ctrl+C (SIGINT) or SIGTERM while the data
# load says at once that the run stops and that nothing is written, then
# ends it when the load returns: exit status 128 + the signal's number
# (130, 143), no output directory made. (It used to kill the process with
# nothing said: the handler came only after the load.)
set -eu
caml=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/caml-cli-interrupt-load.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail () { echo "$1"; shift; cat "$@"; exit 1; }
# wait_for PATTERN FILE: up to 30 s for a line of FILE to match.
wait_for () {
  tries=0
  while ! grep -q "$1" "$2" && [ $tries -lt 600 ]; do
    sleep 0.05; tries=$((tries + 1))
  done
  grep -q "$1" "$2"
}

# 400,000 texts of 20 words (55 MB): seconds to read and tokenize.
awk 'BEGIN { srand(1); for (i = 0; i < 400000; i++) { s = "";
       for (j = 0; j < 20; j++) s = s " w" int(rand() * 50000); print s "\t" (i % 2) } }' \
  >"$dir/train.tsv"
head -2 "$dir/train.tsv" >"$dir/test.tsv"
cat >"$dir/e.json" <<'J'
{"data": {"text": {"train": "train.tsv", "test": "test.tsv"}},
 "model": [{"layer": "average", "dim": 5}, {"layer": "dense", "units": 1, "activation": "identity"}],
 "loss": "sigmoid_cross_entropy",
 "optimizer": {"type": "adagrad", "lr": 0.1},
 "training": {"steps": 10, "batch_size": 16, "eval_every": 10}}
J

for sig in INT TERM; do
  case $sig in INT) want=130 ;; TERM) want=143 ;; esac
  : >"$dir/o.txt"; : >"$dir/e.txt"
  "$caml" train "$dir/e.json" --plain --out "$dir/out/r" >"$dir/o.txt" 2>"$dir/e.txt" &
  pid=$!
  sleep 0.3
  kill -$sig $pid
  # said while the load goes on: before the process ends
  wait_for 'interrupted while loading the data: stopping; nothing written' "$dir/e.txt" \
    || { kill -KILL $pid 2>/dev/null || true; fail "SIG$sig: nothing said while loading" "$dir/o.txt" "$dir/e.txt"; }
  status=0
  wait $pid || status=$?
  if grep -q '^training ' "$dir/o.txt"; then
    echo "the data were loaded before the signal arrived: this machine is too fast for the test"
    exit 77
  fi
  [ $status -eq $want ] || fail "SIG$sig while loading: exit status $status, not $want" "$dir/o.txt" "$dir/e.txt"
  [ ! -e "$dir/out" ] || fail "SIG$sig while loading: $dir/out was made" "$dir/e.txt"
done
echo ok
