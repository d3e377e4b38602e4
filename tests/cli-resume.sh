#!/bin/sh
# cli-resume.sh CAML — `caml train --resume DIR` goes on with a saved run
# exactly: a run of 600 steps and one of 230 resumed to 600 end with the
# same weights and the same evaluations, bit for bit, through minibatches in
# a shuffled order, dropout and SGD with momentum; so does a run stopped by
# SIGINT at whatever step and resumed, and so does a run that diverged, from
# the step it rolled back to (its last healthy evaluation, when the last
# finite weights are past it). What cannot be resumed is refused
# before anything is written: options that would change the run, no state,
# a finished run without more steps, weights that are not the state's.
set -eu
caml=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/caml-cli-resume.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail () { echo "$1"; shift; cat "$@"; exit 1; }
# the evaluations without their seconds
evals () { cut -d, -f1-4 "$1"; }
listing () {
  (cd "$1" && for f in *; do echo "$f $(cksum <"$f")"; done)
}

cat >"$dir/exp.json" <<'J'
{"name": "resume-check", "seed": 5,
 "data": {"builtin": "surface", "grid": 41, "train_fraction": 0.1},
 "model": [{"layer": "dense", "units": 12, "activation": "tanh"},
           {"layer": "dropout", "rate": 0.2},
           {"layer": "ca_nn", "units": 4, "activation": "tanh"},
           {"layer": "dense", "units": 1}],
 "optimizer": {"type": "sgd", "lr": 0.05, "momentum": 0.9, "em_steps": 7},
 "training": {"steps": 600, "batch_size": 16, "eval_every": 100}}
J

"$caml" train "$dir/exp.json" -q --out "$dir/full" >"$dir/t.txt" 2>&1 \
  || fail "the full run failed" "$dir/t.txt"
[ -f "$dir/full/trainer.state" ] || fail "a finished run kept no trainer.state" "$dir/t.txt"
"$caml" train "$dir/exp.json" -n 230 -q --out "$dir/part" >"$dir/t.txt" 2>&1 \
  || fail "the short run failed" "$dir/t.txt"
"$caml" train --resume "$dir/part" -n 600 --plain >"$dir/t.txt" 2>&1 \
  || fail "the resumed run failed" "$dir/t.txt"
grep -q "^going on from step 230 in $dir/part/" "$dir/t.txt" \
  || fail "the resumed run does not say where it goes on from" "$dir/t.txt"
grep -q '^step 200 ' "$dir/t.txt" && fail "the resumed run printed the saved run's rows again" "$dir/t.txt"
grep -q '^step 300 ' "$dir/t.txt" || fail "the resumed run printed no rows of its own" "$dir/t.txt"
cmp -s "$dir/full/model.weights" "$dir/part/model.weights" \
  || fail "230 + 370 steps gave other weights than 600" "$dir/t.txt"
# the same evaluations, and one more at step 230 where the short run ended
# (so the next row's train_loss, the mean since the row before, differs)
cut -d, -f1,3,4 "$dir/full/metrics.csv" >"$dir/a.csv"
cut -d, -f1,3,4 "$dir/part/metrics.csv" | grep -v '^230,' >"$dir/b.csv"
cmp -s "$dir/a.csv" "$dir/b.csv" || { diff "$dir/a.csv" "$dir/b.csv" || true; fail "the evaluations differ"; }
grep -q '"resumed_from" : {' "$dir/part/summary.json" \
  || fail "summary.json does not say the run was resumed" "$dir/part/summary.json"
grep -q '"step" : 230' "$dir/part/summary.json" \
  || fail "summary.json does not give the step it went on from" "$dir/part/summary.json"
grep -q '"resumed_from" : null' "$dir/full/summary.json" \
  || fail "a fresh run's summary.json does not say resumed_from null" "$dir/full/summary.json"

# stopped by SIGINT at some step, resumed to a total beyond it
cp "$dir/exp.json" "$dir/long.json"
sed -i 's/"steps": 600/"steps": 100000000/' "$dir/long.json"
"$caml" train "$dir/long.json" --plain --out "$dir/stopped" >"$dir/o.txt" 2>"$dir/e.txt" &
pid=$!
tries=0
while ! grep -q '^step 200 ' "$dir/o.txt" && [ $tries -lt 600 ]; do
  sleep 0.05; tries=$((tries + 1))
done
kill -INT $pid
status=0
wait $pid || status=$?
[ $status -eq 130 ] || fail "the stopped run exited $status" "$dir/o.txt" "$dir/e.txt"
stopped=$(sed -n 's/^stopped after \([0-9]*\) steps.*/\1/p' "$dir/o.txt")
[ -n "$stopped" ] || fail "the run did not stop" "$dir/o.txt" "$dir/e.txt"
total=$((stopped + 321))
"$caml" train --resume "$dir/stopped" -n $total -q >"$dir/t.txt" 2>&1 \
  || fail "resuming the stopped run failed" "$dir/t.txt"
sed -i "s/\"steps\": 100000000/\"steps\": $total/" "$dir/long.json"
"$caml" train "$dir/long.json" -q --out "$dir/whole" >"$dir/t.txt" 2>&1 \
  || fail "the run of $total steps failed" "$dir/t.txt"
cmp -s "$dir/whole/model.weights" "$dir/stopped/model.weights" \
  || fail "stopped at $stopped and resumed to $total: other weights than $total steps at once"
evals "$dir/whole/metrics.csv" >"$dir/a.csv"
evals "$dir/stopped/metrics.csv" >"$dir/b.csv"
cmp -s "$dir/a.csv" "$dir/b.csv" || { diff "$dir/a.csv" "$dir/b.csv" || true; fail "the evaluations differ after the stop"; }

# A run that diverges keeps the state of the step it rolled back to: one
# resumed with its learning rate raised to 1e30 blows up at once and goes
# back to step 40, where it was, with the same weights; lowered again, it
# goes on exactly as the saved run at step 40 does (SGD's velocity, the
# batch order and dropout's masks go back with the weights).
cat >"$dir/raised.json" <<'J'
{"name": "raised", "seed": 3,
 "data": {"builtin": "surface", "grid": 41, "train_fraction": 0.1},
 "model": [{"layer": "dense", "units": 16, "activation": "relu"},
           {"layer": "dropout", "rate": 0.2},
           {"layer": "dense", "units": 1}],
 "optimizer": {"type": "sgd", "lr": 0.05, "momentum": 0.9},
 "training": {"steps": 40, "batch_size": 16, "eval_every": 10}}
J
set_lr () { sed -i "s/\"lr\" *: *[^,}]*/\"lr\": $2/" "$1/experiment.json"; }
"$caml" train "$dir/raised.json" -q --out "$dir/at40" >"$dir/t.txt" 2>&1 \
  || fail "the run of 40 steps failed" "$dir/t.txt"
cp -r "$dir/at40" "$dir/raised"
set_lr "$dir/raised" 1e30
status=0
"$caml" train --resume "$dir/raised" -n 300 --plain >"$dir/t.txt" 2>&1 || status=$?
[ $status -eq 1 ] || fail "the run at a learning rate of 1e30 exited $status, not 1" "$dir/t.txt"
grep -q "step 42: .*rolled back to step 40$" "$dir/t.txt" \
  || fail "the run did not roll back to step 40" "$dir/t.txt"
grep -q "^to go on from step 40: lower optimizer.lr in $dir/raised/experiment.json, then \`caml train --resume $dir/raised\`" "$dir/t.txt" \
  || fail "the diverged run does not say how to go on" "$dir/t.txt"
cmp -s "$dir/raised/model.weights" "$dir/at40/model.weights" \
  || fail "the diverged run did not keep the weights of step 40" "$dir/t.txt"
set_lr "$dir/raised" 0.05
for run in raised at40; do
  "$caml" train --resume "$dir/$run" -n 300 -q >"$dir/t.txt" 2>&1 \
    || fail "resuming $run failed" "$dir/t.txt"
done
cmp -s "$dir/raised/model.weights" "$dir/at40/model.weights" \
  || fail "gone on after the divergence: other weights than from the run saved at step 40"
evals "$dir/raised/metrics.csv" >"$dir/a.csv"
evals "$dir/at40/metrics.csv" >"$dir/b.csv"
cmp -s "$dir/a.csv" "$dir/b.csv" || { diff "$dir/a.csv" "$dir/b.csv" || true; fail "the evaluations differ after the divergence"; }

# A run that blows up goes back to its last healthy evaluation (its loss
# finite and within twice the lowest so far), as the workbench's Continue
# does: at a rate of 0.15 the test loss is lowest at step 10 (0.33), grows
# from there (9.5 at step 15, 48 at 20) and the loss blows up at step 24.
# The last finite weights, of step 22 (test loss 4922), would blow up again
# at a rate that trains from step 10: the run keeps the state of a run
# stopped at step 10 — the same weights — and, its rate lowered, goes on as
# that run does.
cat >"$dir/blowup.json" <<'J'
{"name": "blowup", "seed": 3,
 "data": {"builtin": "surface", "grid": 41, "train_fraction": 0.1},
 "model": [{"layer": "dense", "units": 16, "activation": "relu"},
           {"layer": "dense", "units": 1}],
 "optimizer": {"type": "sgd", "lr": 0.15, "momentum": 0.9},
 "training": {"steps": 300, "batch_size": 16, "eval_every": 5}}
J
status=0
"$caml" train "$dir/blowup.json" --plain --out "$dir/blowup" >"$dir/t.txt" 2>&1 || status=$?
[ $status -eq 1 ] || fail "the run at a learning rate of 0.15 exited $status, not 1" "$dir/t.txt"
grep -q "step 24: .*rolled back to step 10 (the last healthy evaluation)$" "$dir/t.txt" \
  || fail "the run did not go back to its last healthy evaluation, at step 10" "$dir/t.txt"
grep -q "^to go on from step 10: lower optimizer.lr in $dir/blowup/experiment.json, then \`caml train --resume $dir/blowup\`" "$dir/t.txt" \
  || fail "the diverged run does not say how to go on from step 10" "$dir/t.txt"
grep -q '"rolled_back_to" : 10' "$dir/blowup/summary.json" \
  || fail "summary.json does not say rolled_back_to 10" "$dir/blowup/summary.json"
[ "$(tail -n 1 "$dir/blowup/metrics.csv" | cut -d, -f1)" = 10 ] \
  || fail "metrics.csv goes past step 10" "$dir/blowup/metrics.csv"
"$caml" train "$dir/blowup.json" -n 10 -q --out "$dir/at10" >"$dir/t.txt" 2>&1 \
  || fail "the run of 10 steps failed" "$dir/t.txt"
cmp -s "$dir/blowup/model.weights" "$dir/at10/model.weights" \
  || fail "the diverged run did not keep the weights of step 10"
for run in blowup at10; do
  set_lr "$dir/$run" 0.05
  "$caml" train --resume "$dir/$run" -n 300 -q >"$dir/t.txt" 2>&1 \
    || fail "resuming $run at a learning rate of 0.05 failed" "$dir/t.txt"
done
cmp -s "$dir/blowup/model.weights" "$dir/at10/model.weights" \
  || fail "gone on after the blow-up: other weights than from the run saved at step 10"
evals "$dir/blowup/metrics.csv" >"$dir/a.csv"
evals "$dir/at10/metrics.csv" >"$dir/b.csv"
cmp -s "$dir/a.csv" "$dir/b.csv" || { diff "$dir/a.csv" "$dir/b.csv" || true; fail "the evaluations differ after the blow-up"; }
# Blown up before any evaluation (at 0.2, at step 8; the first at step 10):
# back to the start, nothing kept — only failed-summary.json and
# failed-loss.png, beside what the directory held.
sed 's/"lr": 0.15/"lr": 0.2/; s/"eval_every": 5/"eval_every": 10/' "$dir/blowup.json" >"$dir/early.json"
status=0
"$caml" train "$dir/early.json" --plain --out "$dir/early" >"$dir/t.txt" 2>&1 || status=$?
[ $status -eq 1 ] || fail "the run at a learning rate of 0.2 exited $status, not 1" "$dir/t.txt"
grep -q "step 8: .*rolled back to step 0 (where the run started: no evaluation before the divergence was healthy)$" "$dir/t.txt" \
  || fail "the run that blew up before its first evaluation did not go back to step 0" "$dir/t.txt"
[ -f "$dir/early/failed-summary.json" ] && [ ! -e "$dir/early/model.weights" ] \
  || fail "the run that blew up before its first evaluation kept something" "$dir/t.txt"
grep -q '"rolled_back_to" : 0' "$dir/early/failed-summary.json" \
  || fail "failed-summary.json does not say rolled_back_to 0" "$dir/early/failed-summary.json"

# refused, nothing written
listing "$dir/part" >"$dir/before.txt"
refused () {
  want=$1; code=$2; shift 2
  status=0
  "$caml" train "$@" >"$dir/t.txt" 2>&1 || status=$?
  [ $status -eq "$code" ] || fail "caml train $* exited $status, not $code" "$dir/t.txt"
  grep -q "^caml train: $want" "$dir/t.txt" || fail "caml train $*: not \"$want\"" "$dir/t.txt"
  listing "$dir/part" >"$dir/after.txt"
  cmp -s "$dir/before.txt" "$dir/after.txt" || fail "caml train $* changed $dir/part"
}
refused "--resume goes on with the experiment saved in $dir/part/: --seed cannot be given with it" 2 \
  --resume "$dir/part" -n 700 --seed 3
refused "--resume goes on with the experiment saved in $dir/part/: $dir/exp.json cannot be given with it" 2 \
  --resume "$dir/part" "$dir/exp.json"
# -k 0 was read as "not given" and let through.
refused "--resume goes on with the experiment saved in $dir/part/: --kernel cannot be given with it" 2 \
  --resume "$dir/part" -n 700 -k 0
refused "--resume: the run in $dir/part has done all its 600 steps: give --steps N above 600 (the total) to train further" 1 \
  --resume "$dir/part"
# --steps below the steps done: said so (it was "so 300 in all would add none")
refused "--resume: 300 steps in all is fewer than the 600 the run in $dir/part has done: --steps is the total, so give one above 600 to train further" 1 \
  --resume "$dir/part" -n 300
# experiment.json edited beyond the live settings (lr, em_steps,
# weight_decay, steps, eval_every): the state still loaded, and the run went
# on as another one without a word
cp "$dir/part/experiment.json" "$dir/saved.json"
sed -i 's/"momentum": 0.9/"momentum": 0.5/' "$dir/part/experiment.json"
listing "$dir/part" >"$dir/before.txt"
refused "--resume: $dir/part/experiment.json has \"momentum\": 0.5 where the run was trained with \"momentum\": 0.9: a resumed run may change only optimizer.lr, em_steps and weight_decay" 1 \
  --resume "$dir/part" -n 700
cp "$dir/saved.json" "$dir/part/experiment.json"
cp "$dir/part/model.weights" "$dir/saved.weights"
cp "$dir/stopped/model.weights" "$dir/part/model.weights"
listing "$dir/part" >"$dir/before.txt"
refused "--resume: $dir/part/trainer.state: byte [0-9]*: these are not the weights the state was saved with" 1 \
  --resume "$dir/part" -n 700
cp "$dir/saved.weights" "$dir/part/model.weights"
mv "$dir/part/trainer.state" "$dir/saved.state"
listing "$dir/part" >"$dir/before.txt"
refused "--resume: $dir/part/trainer.state: no such file" 1 --resume "$dir/part" -n 700
mv "$dir/saved.state" "$dir/part/trainer.state"
head -c 100 "$dir/part/trainer.state" >"$dir/short.state"
cp "$dir/short.state" "$dir/part/trainer.state"
listing "$dir/part" >"$dir/before.txt"
refused "--resume: $dir/part/trainer.state: truncated at byte" 1 --resume "$dir/part" -n 700

# A run whose embedding started from a word-vectors file goes on (and starts
# again from its weights) without that file: every weight comes from
# model.weights. It was "vectors.txt: no such file".
mkdir "$dir/vec"
printf 'a good film\t1\na bad film\t0\ngood fun\t1\nbad acting\t0\nvery good\t1\nvery bad\t0\n' >"$dir/vec/train.tsv"
printf 'good film\t1\nbad film\t0\n' >"$dir/vec/test.tsv"
printf 'good 1 0 0\nbad -1 0 0\nfilm 0 1 0\na 0 0 1\n' >"$dir/vec/vectors.txt"
cat >"$dir/vec/exp.json" <<'J'
{ "name": "vec", "seed": 1,
  "data": { "text": { "train": "train.tsv", "test": "test.tsv" }, "embeddings": "vectors.txt" },
  "model": [ {"layer": "embedding", "dim": 3, "pretrained": true}, {"layer": "mean_pool"},
             {"layer": "dense", "units": 1, "activation": "identity"} ],
  "loss": "sigmoid_cross_entropy",
  "optimizer": { "type": "adam", "lr": 0.01 },
  "training": { "steps": 20, "batch_size": 2, "eval_every": 10 } }
J
"$caml" train "$dir/vec/exp.json" --out "$dir/vec/run" --plain >"$dir/out.txt" 2>&1 \
  || fail "training with word vectors failed" "$dir/out.txt"
grep -q "word vectors: 4 of" "$dir/out.txt" || fail "the vectors were not read" "$dir/out.txt"
mv "$dir/vec/vectors.txt" "$dir/vec/gone.txt"
"$caml" train --resume "$dir/vec/run" -n 30 --plain >"$dir/out.txt" 2>&1 \
  || fail "--resume needed the word vectors" "$dir/out.txt"
"$caml" train "$dir/vec/exp.json" --init-weights "$dir/vec/run/model.weights" \
  --out "$dir/vec/again" --plain >"$dir/out.txt" 2>&1 \
  || fail "--init-weights needed the word vectors" "$dir/out.txt"
echo ok
