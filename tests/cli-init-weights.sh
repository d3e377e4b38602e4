#!/bin/sh
# cli-init-weights.sh CAML — `caml train --init-weights FILE` starts from the
# file's weights: the first step's loss (a full batch) is the training-set
# loss `caml eval` gives those weights, summary.json names the file, and a
# run may start from the weights in its own output directory. Weights of
# another model, or no file, are refused before anything is written.
set -eu
caml=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/caml-cli-init-weights.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail () { echo "$1"; shift; cat "$@"; exit 1; }

# surface-ca-nn-1 trains on the whole training set at every step
"$caml" train --preset surface-ca-nn-1 -n 300 -q --out "$dir/a" >"$dir/t.txt" 2>&1 \
  || fail "the first run failed" "$dir/t.txt"
"$caml" eval "$dir/a/experiment.json" --weights "$dir/a/model.weights" >"$dir/e.txt" 2>&1 \
  || fail "caml eval failed" "$dir/e.txt"
trained=$(sed -n 's/^train  loss \([^ ]*\) .*/\1/p' "$dir/e.txt")

"$caml" train --preset surface-ca-nn-1 -n 1 --plain --init-weights "$dir/a/model.weights" \
  --out "$dir/b" >"$dir/t.txt" 2>&1 || fail "the run from saved weights failed" "$dir/t.txt"
grep -q "^starting from the weights in $dir/a/model.weights" "$dir/t.txt" \
  || fail "the run does not say where its weights came from" "$dir/t.txt"
first=$(sed -n '2s/^1,\([^,]*\),.*/\1/p' "$dir/b/metrics.csv")
awk -v a="$first" -v b="$trained" 'BEGIN { if (a == "" || b == "") exit 1; d = a - b; if (d < 0) d = -d;
  exit !(d <= 1e-5 * b + 1e-12) }' \
  || fail "step 1's loss $first is not the loaded weights' training loss $trained" "$dir/b/metrics.csv" "$dir/e.txt"
grep -q "\"init_weights\" : \"$dir/a/model.weights\"" "$dir/b/summary.json" \
  || fail "summary.json does not name the weights file" "$dir/b/summary.json"
grep -q '"init_weights" : null' "$dir/a/summary.json" \
  || fail "a run from the seed's weights does not say so" "$dir/a/summary.json"

# the seed's weights start far from the trained ones: step 1 shows it
"$caml" train --preset surface-ca-nn-1 -n 1 -q --out "$dir/c" >"$dir/t.txt" 2>&1 \
  || fail "the run from the seed's weights failed" "$dir/t.txt"
fresh=$(sed -n '2s/^1,\([^,]*\),.*/\1/p' "$dir/c/metrics.csv")
awk -v a="$fresh" -v b="$trained" 'BEGIN { exit !(a > 10 * b) }' \
  || fail "the seed's first loss $fresh is not far above the trained $trained" "$dir/c/metrics.csv"

# in place: the run reads its directory's weights, then replaces them
"$caml" train --preset surface-ca-nn-1 -n 1 -q --init-weights "$dir/a/model.weights" \
  --out "$dir/a" >"$dir/t.txt" 2>&1 || fail "the run in place failed" "$dir/t.txt"
first=$(sed -n '2s/^1,\([^,]*\),.*/\1/p' "$dir/a/metrics.csv")
awk -v a="$first" -v b="$trained" 'BEGIN { if (a == "") exit 1; d = a - b; if (d < 0) d = -d;
  exit !(d <= 1e-5 * b + 1e-12) }' \
  || fail "the run in place did not start from its weights (loss $first)" "$dir/a/metrics.csv"
cmp -s "$dir/a/model.weights" "$dir/b/model.weights" \
  || fail "the same start and step gave other weights in place"

# refused: another model's weights, a missing file; the directory untouched
cp "$dir/b/summary.json" "$dir/before.json"
if "$caml" train --preset surface-nn -n 5 --init-weights "$dir/a/model.weights" \
     --out "$dir/b" >"$dir/t.txt" 2>&1; then
  fail "weights of another model were accepted" "$dir/t.txt"
fi
grep -q "^caml train: --init-weights: $dir/a/model.weights: byte [0-9]*: layer 0 is ca_nn in the file but dense in the model" "$dir/t.txt" \
  || fail "the refusal does not name the option, the file and the mismatch" "$dir/t.txt"
cmp -s "$dir/before.json" "$dir/b/summary.json" || fail "a refused run changed the output directory"
if "$caml" train --preset surface-ca-nn-1 -n 5 --init-weights "$dir/none.weights" \
     --out "$dir/d" >"$dir/t.txt" 2>&1; then
  fail "a missing weights file was accepted" "$dir/t.txt"
fi
grep -q "^caml train: --init-weights: $dir/none.weights: no such file" "$dir/t.txt" \
  || fail "the refusal does not name the missing file" "$dir/t.txt"
[ ! -e "$dir/d" ] || fail "a refused run made its output directory"
echo ok
