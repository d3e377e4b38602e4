#!/bin/sh
# cli-sigma.sh CAML — `caml train` draws a convolutional CA layer's σ-maps
# at the --sigma-steps, on a fixed 0…1 grey scale, or stretched over the
# maps' own range with --sigma-stretch (a different picture of the same
# maps), and reports their AUC; `caml eval` gives the same AUC for the
# saved weights and draws them. Synthetic IDX files: bars whose position is
# the label.
set -eu
caml=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/caml-cli-sigma.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail () { echo "$1"; shift; cat "$@"; exit 1; }

python3 - "$dir" <<'PY'
import random, struct, sys
d = sys.argv[1]
for name, n, seed in (("train", 200, 1), ("test", 80, 2)):
    rng = random.Random(seed)
    img = bytearray(struct.pack(">IIII", 0x803, n, 28, 28))
    lab = bytearray(struct.pack(">II", 0x801, n))
    for _ in range(n):
        label = rng.randrange(10)
        px = bytearray(28 * 28)
        x0, y0 = 2 + 2 * label, 4 + rng.randrange(6)
        for y in range(y0, y0 + 14):
            for x in range(x0, x0 + 6):
                px[y * 28 + x] = 255
        img += px
        lab.append(label)
    open(f"{d}/{name}-images", "wb").write(img)
    open(f"{d}/{name}-labels", "wb").write(lab)
PY
cat >"$dir/bars.json" <<JSON
{ "name": "bars", "seed": 0,
  "data": { "idx": { "train_images": "$dir/train-images", "train_labels": "$dir/train-labels",
                     "test_images": "$dir/test-images", "test_labels": "$dir/test-labels" } },
  "model": [ { "layer": "ca_cnn", "kernel": 3, "depth": 2 },
             { "layer": "flatten" },
             { "layer": "dense", "units": 10, "activation": "identity" } ],
  "loss": "softmax_cross_entropy",
  "optimizer": { "type": "adagrad", "lr": 0.01 },
  "training": { "steps": 20, "batch_size": 20, "eval_every": 10 } }
JSON

"$caml" train "$dir/bars.json" --sigma-steps 10,last -q -o "$dir/fixed" >"$dir/t.txt" 2>&1 \
  || fail "training failed" "$dir/t.txt"
"$caml" train "$dir/bars.json" --sigma-steps 10,last --sigma-stretch -q -o "$dir/stretched" \
  >"$dir/s.txt" 2>&1 || fail "training with --sigma-stretch failed" "$dir/s.txt"
! grep -q 'note:.*σ-maps' "$dir/t.txt" "$dir/s.txt" || fail "a note that σ-map options do nothing, for a model with σ-maps" "$dir/t.txt" "$dir/s.txt"
# A step past the run's last is noted (it was dropped silently); an empty
# list is a usage error (it drew no maps at all).
"$caml" train "$dir/bars.json" --sigma-steps 5000,last -n 5 -q -o "$dir/past" >"$dir/p.txt" 2>&1 \
  || fail "training with a step past the last failed" "$dir/p.txt"
grep -q "note: --sigma-steps 5000: past the run's last step (5), so not drawn" "$dir/p.txt" \
  || fail "no note of a σ-map step past the run" "$dir/p.txt"
[ -s "$dir/past/sigma-step5.png" ] || fail "no sigma-step5.png beside the step past the run" "$dir/p.txt"
status=0
"$caml" train "$dir/bars.json" --sigma-steps '' -n 5 -q -o "$dir/empty" >"$dir/p.txt" 2>&1 || status=$?
[ $status -eq 2 ] && grep -q -- "--sigma-steps: the list is empty" "$dir/p.txt" \
  || fail "--sigma-steps '': exit $status" "$dir/p.txt"
for run in fixed stretched; do
  for step in 10 20; do
    [ -s "$dir/$run/sigma-step$step.png" ] || fail "$run: no sigma-step$step.png" "$dir/t.txt"
  done
  grep -q '"sigma_auc"' "$dir/$run/summary.json" || fail "$run: no sigma_auc" "$dir/$run/summary.json"
done
# A resumed run cannot draw the maps of the steps before it went on: it keeps
# the earlier run's (they were deleted with its other results), in its
# directory or at --out, and lists them.
cp -r "$dir/fixed" "$dir/resumed"
cmp -s "$dir/fixed/sigma-step10.png" "$dir/resumed/sigma-step10.png" || fail "cp -r"
"$caml" train --resume "$dir/resumed" -n 30 --sigma-steps 10,last -q >"$dir/r.txt" 2>&1 \
  || fail "resuming failed" "$dir/r.txt"
"$caml" train --resume "$dir/fixed" -n 30 --sigma-steps 25 -q -o "$dir/elsewhere" \
  >"$dir/e.txt" 2>&1 || fail "resuming into --out failed" "$dir/e.txt"
for run in resumed elsewhere; do
  for step in 10 20; do
    cmp -s "$dir/fixed/sigma-step$step.png" "$dir/$run/sigma-step$step.png" \
      || fail "$run: the σ-map of step $step was not kept" "$dir/r.txt"
  done
done
[ -s "$dir/resumed/sigma-step30.png" ] && [ -s "$dir/elsewhere/sigma-step25.png" ] \
  || fail "the resumed runs' own σ-maps" "$dir/r.txt"
grep -q 'sigma-step10.png, sigma-step20.png, sigma-step30.png)$' "$dir/r.txt" \
  || fail "the kept maps are not listed" "$dir/r.txt"
grep -q '^sigma_auc .*; σ-maps of layer 0 (ca_cnn))$' "$dir/t.txt" || fail "no sigma_auc line naming the layer" "$dir/t.txt"
# summary.json says whose σ-maps sigma_auc is of
grep -q '"sigma_layer" : 0,' "$dir/fixed/summary.json" && grep -q '"sigma_layer_type" : "ca_cnn"' "$dir/fixed/summary.json" \
  || fail "summary.json does not say which layer sigma_auc is of" "$dir/fixed/summary.json"
! grep -q '"sigma_sublayer"' "$dir/fixed/summary.json" || fail "a sublayer for ca_cnn" "$dir/fixed/summary.json"
# … and of a ca_res_conv block, which sublayer's gate (the last), after a
# plain conv layer: layer 1.
sed 's/{ "layer": "ca_cnn", "kernel": 3, "depth": 2 }/{ "layer": "conv2d", "kernel": 3, "depth": 2 }, { "layer": "ca_res_conv", "kernel": 3, "depth": 2, "sublayers": 2 }/' \
  "$dir/bars.json" >"$dir/block.json"
"$caml" train "$dir/block.json" --sigma-steps last -q -o "$dir/block" >"$dir/b.txt" 2>&1 \
  || fail "training a ca_res_conv block failed" "$dir/b.txt"
grep -q '^sigma_auc .*; σ-maps of layer 1 (ca_res_conv), sublayer 2 of 2)$' "$dir/b.txt" \
  || fail "the sigma_auc line does not name the block's sublayer" "$dir/b.txt"
for pair in '"sigma_layer" : 1,' '"sigma_layer_type" : "ca_res_conv"' '"sigma_sublayer" : 2,' '"sigma_sublayers" : 2'; do
  grep -q "$pair" "$dir/block/summary.json" || fail "summary.json lacks $pair" "$dir/block/summary.json"
done
# Same seed, same maps: only the grey scale (and the title) differ.
cmp -s "$dir/fixed/model.weights" "$dir/stretched/model.weights" \
  || fail "the two runs trained different weights" "$dir/t.txt" "$dir/s.txt"
if cmp -s "$dir/fixed/sigma-step20.png" "$dir/stretched/sigma-step20.png"; then
  fail "--sigma-stretch drew the same picture" "$dir/s.txt"
fi
"$caml" train --help | grep -q -- '--sigma-stretch' || fail "--help does not list --sigma-stretch" /dev/null

# caml eval gives the saved weights' σ-map AUC, as the run did, and with
# --out draws sigma.png.
"$caml" eval "$dir/fixed/experiment.json" -w "$dir/fixed/model.weights" -o "$dir/ev" \
  >"$dir/e.txt" 2>&1 || fail "caml eval failed" "$dir/e.txt"
train_auc=$(sed -n 's/^sigma_auc \([^ ]*\) .*/\1/p' "$dir/t.txt")
eval_auc=$(sed -n 's/^sigma_auc \([^ ]*\) .*/\1/p' "$dir/e.txt")
[ -n "$eval_auc" ] && [ "$eval_auc" = "$train_auc" ] \
  || fail "caml eval's sigma_auc '$eval_auc' is not the run's '$train_auc'" "$dir/t.txt" "$dir/e.txt"
[ -s "$dir/ev/sigma.png" ] || fail "caml eval --out drew no sigma.png" "$dir/e.txt"
grep -q 'sigma.png' "$dir/e.txt" || fail "caml eval does not say it wrote sigma.png" "$dir/e.txt"
echo ok
