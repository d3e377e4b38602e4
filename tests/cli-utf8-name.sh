#!/bin/sh
# cli-utf8-name.sh CAML — an experiment file whose name is not valid UTF-8
# ("caf\351.json", Latin-1) still gives a run every result: the name taken
# from it (when the file has none) is valid UTF-8 in experiment.json,
# summary.json and the plot titles, and `caml eval` loads the
# experiment.json written.
set -eu
caml=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/caml-cli-utf8-name.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail () { echo "$1"; shift; cat "$@"; exit 1; }

file=$(printf '%s/caf\351.json' "$dir")
cat >"$file" <<'J'
{"data": {"builtin": "surface"},
 "model": [{"layer": "ca_nn", "units": 4}, {"layer": "dense", "units": 1}],
 "optimizer": {"type": "adam", "lr": 0.01},
 "training": {"steps": 20, "eval_every": 10}}
J
"$caml" train "$file" --plain --out "$dir/r" >"$dir/t.txt" 2>&1 || fail "training failed" "$dir/t.txt"
for name in experiment.json summary.json metrics.csv model.weights loss.png surface.png chi.png; do
  [ -s "$dir/r/$name" ] || fail "no $name" "$dir/t.txt"
done
for name in experiment.json summary.json; do
  iconv -f UTF-8 -t UTF-8 "$dir/r/$name" >/dev/null 2>&1 || fail "$name is not valid UTF-8" "$dir/r/$name"
done
grep -q '"experiment" : "caf' "$dir/r/summary.json" || fail "summary.json names no caf… experiment" "$dir/r/summary.json"
! grep -q 'not valid UTF-8' "$dir/t.txt" || fail "a title was refused" "$dir/t.txt"
"$caml" eval "$dir/r/experiment.json" --weights "$dir/r/model.weights" >"$dir/e.txt" 2>&1 \
  || fail "caml eval refused the experiment.json written" "$dir/e.txt"
echo ok
