#!/bin/sh
# cli-notes.sh CAML — settings that would silently do nothing get a note on
# stderr (the run goes on): optimizer.em_steps > 0 on a model with no
# context-aware layer (no gate parameters), --sigma-steps / --sigma-stretch
# for a model without σ-maps. A model they act on gets no note.
set -eu
caml=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/caml-cli-notes.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail () { echo "$1"; shift; cat "$@"; exit 1; }

# experiment NAME LAYER: XOR with em_steps 5 and a first layer LAYER.
experiment () {
  cat >"$dir/$1.json" <<J
{"data": {"builtin": "xor"},
 "model": [{"layer": "$2", "units": 4, "activation": "tanh"},
           {"layer": "dense", "units": 1, "activation": "identity"}],
 "loss": "mse",
 "optimizer": {"type": "sgd", "lr": 0.1, "em_steps": 5},
 "training": {"steps": 20, "eval_every": 10}}
J
}
experiment plain dense
experiment gated ca_nn

"$caml" train "$dir/plain.json" -q -o "$dir/p" >"$dir/o.txt" 2>"$dir/e.txt" \
  || fail "the plain run failed" "$dir/o.txt" "$dir/e.txt"
grep -q '^caml train: note: optimizer.em_steps = 5 does nothing here: the model has no context-aware layer' "$dir/e.txt" \
  || fail "no note that em_steps does nothing without gates" "$dir/e.txt"
[ -s "$dir/p/model.weights" ] || fail "a note stopped the run" "$dir/o.txt" "$dir/e.txt"

"$caml" train "$dir/gated.json" -q -o "$dir/g" >"$dir/o.txt" 2>"$dir/e.txt" \
  || fail "the gated run failed" "$dir/o.txt" "$dir/e.txt"
! grep -q 'note:' "$dir/e.txt" || fail "a note for a model with gates" "$dir/e.txt"

"$caml" train "$dir/gated.json" -q -o "$dir/s" --sigma-steps 10,last --sigma-stretch \
  >"$dir/o.txt" 2>"$dir/e.txt" || fail "the run with σ-map options failed" "$dir/o.txt" "$dir/e.txt"
grep -q '^caml train: note: --sigma-steps and --sigma-stretch do nothing here: the model has no σ-maps' "$dir/e.txt" \
  || fail "no note that the σ-map options do nothing" "$dir/e.txt"
"$caml" train "$dir/gated.json" -q -o "$dir/s" --sigma-stretch >"$dir/o.txt" 2>"$dir/e.txt" \
  || fail "the run with --sigma-stretch failed" "$dir/o.txt" "$dir/e.txt"
grep -q '^caml train: note: --sigma-stretch does nothing here' "$dir/e.txt" \
  || fail "no note that --sigma-stretch does nothing" "$dir/e.txt"
echo ok
