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

# A name longer than a file name may be (300 two-byte characters) gives the
# default output directory its first 100 bytes, whole characters: it was
# "File name too long".
long=$(python3 -c 'print("é" * 300)')
printf '{"name": "%s", "training": {"steps": 5}}\n' "$long" >"$dir/long.json"
(cd "$dir" && "$caml" train long.json -q) >"$dir/l.txt" 2>&1 || fail "a long name failed" "$dir/l.txt"
short=$(python3 -c 'print("é" * 50)')
[ -s "$dir/runs/$short-seed0/summary.json" ] || { ls "$dir/runs"; fail "not in runs/é×50-seed0" "$dir/l.txt"; }
echo ok
