#!/bin/sh
# cli-sweep.sh CAML — `caml sweep` on tiny presets: -n and -s checked like
# `caml train`'s, and grid keys that set the same option twice refused,
# before anything is trained; failed runs marked in sweep.csv and sweep.md,
# counted, and the exit status 1; figures in significant digits; no baseline
# for a model without a context-aware layer; a grid over a setting
# (optimizer.lr); sweep files — written by --write-sweep and beside every
# sweep's tables (sweep.json), run again, their errors placed.
set -eu
caml=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/caml-cli-sweep.XXXXXX")
trap 'rm -rf "$dir"' EXIT

# expect_usage WHAT TEXT ARGS…: exit status 2, TEXT on stderr, nothing trained.
expect_usage () {
  what=$1 text=$2
  shift 2
  status=0
  "$caml" sweep "$@" -o "$dir/usage" >"$dir/out" 2>"$dir/err" || status=$?
  [ $status -eq 2 ] || { echo "$what: exit status $status, not 2"; cat "$dir/out" "$dir/err"; exit 1; }
  grep -q -- "$text" "$dir/err" || { echo "$what: stderr lacks \"$text\""; cat "$dir/err"; exit 1; }
  [ ! -e "$dir/usage" ] || { echo "$what: trained something"; ls -R "$dir/usage"; exit 1; }
}

# -n and -s: 4294967297 was truncated to 1 step, 2147483648 to -2147483648,
# and -7 or a negative seed fell back to the experiment's.
expect_usage "-n 4294967297" "^caml sweep: --steps 4294967297: expected a whole number in 1…1000000000" \
  --preset xor-ca-nn --grid units=1 -n 4294967297
expect_usage "-n 2147483648" "^caml sweep: --steps 2147483648: expected" --preset xor-ca-nn --grid units=1 -n 2147483648
expect_usage "-n -7" "^caml sweep: --steps -7: expected" --preset xor-ca-nn --grid units=1 -n -7
expect_usage "-n -1" "^caml sweep: --steps -1: expected" --preset xor-ca-nn --grid units=1 -n -1
expect_usage "-n 0" "^caml sweep: --steps 0: expected" --preset xor-ca-nn --grid units=1 -n 0
expect_usage "-s -3" "^caml sweep: --seed -3: expected a whole number in 0…" --preset xor-ca-nn --grid units=1 -s -3
expect_usage "-s -1" "^caml sweep: --seed -1: expected" --preset xor-ca-nn --grid units=1 -s -1

# A key given twice: the runs were labelled units=1 and units=2 but both
# trained with units=3 (the last --grid wins). So does a layer's option and
# the same option of every layer; a value given twice reused one directory.
expect_usage "units twice" "^caml sweep: --grid units=1,2 and --grid units=3 both set units: give each option once" \
  --preset surface-ca-nn-2 -n 2 --grid units=1,2 --grid units=3
expect_usage "units and 1.units" "^caml sweep: --grid units=1,2 and --grid 1.units=3 both set units of layer 1:" \
  --preset surface-ca-nn-2 -n 2 --grid units=1,2 --grid 1.units=3
expect_usage "1.units and 01.units" "both set units of layer 1:" \
  --preset surface-ca-nn-2 -n 2 --grid 1.units=1,2 --grid 01.units=3
expect_usage "a value twice" "^caml sweep: --grid units=2,3,2: the value 2 is given twice" \
  --preset surface-ca-nn-2 -n 2 --grid units=2,3,2
# … and one written two ways (compared as text, 2 and 02 trained twice).
expect_usage "a value two ways" "^caml sweep: --grid units=2,3,02: the values 2 and 02 are the same setting" \
  --preset surface-ca-nn-2 -n 2 --grid units=2,3,02
expect_usage "a flag two ways" "^caml sweep: --grid bias=true,1: the values true and 1 are the same setting" \
  --preset surface-ca-nn-2 -n 2 --grid bias=true,1
# Different layers' options are different keys.
"$caml" sweep --preset surface-ca-nn-2 -n 2 --no-baseline --grid 0.units=2 --grid 1.units=3 \
  -o "$dir/layers" >"$dir/out" 2>"$dir/err" || { echo "0.units with 1.units failed"; cat "$dir/out" "$dir/err"; exit 1; }

# In range: every run trains with them.
"$caml" sweep --preset xor-ca-nn --grid units=1 -n 7 -s 5 --no-baseline -o "$dir/ok" >"$dir/out" 2>"$dir/err" \
  || { echo "sweep -n 7 -s 5 failed"; cat "$dir/out" "$dir/err"; exit 1; }
grep -q '"steps" : 7' "$dir/ok/units=1/ca/summary.json" || { echo "the run did not train 7 steps"; cat "$dir/ok/units=1/ca/summary.json"; exit 1; }
grep -q '"seed" : 5' "$dir/ok/units=1/ca/summary.json" || { echo "the run did not use seed 5"; exit 1; }
grep -q '^units,model,test_mse,test_loss,sigma_auc,seconds,steps_per_second,status,error$' "$dir/ok/sweep.csv" \
  || { echo "sweep.csv has no speed, status and error columns"; cat "$dir/ok/sweep.csv"; exit 1; }
grep -q '^1,context-aware,.*,ok,$' "$dir/ok/sweep.csv" || { echo "a finished run is not ok"; cat "$dir/ok/sweep.csv"; exit 1; }

# sweep.csv keeps the seconds to 6 significant digits (it rounded to 0.0).
! grep -q ',0\.0,ok,$' "$dir/ok/sweep.csv" || { echo "seconds rounded away"; cat "$dir/ok/sweep.csv"; exit 1; }
# The three tables are all or nothing: one that cannot be replaced (sweep.png
# a directory) leaves the earlier ones as they were.
cp "$dir/ok/sweep.csv" "$dir/sweep.before"
rm "$dir/ok/sweep.png"
mkdir "$dir/ok/sweep.png"
status=0
"$caml" sweep --preset xor-ca-nn --grid units=2 -n 3 --no-baseline -o "$dir/ok" >"$dir/out" 2>"$dir/err" \
  || status=$?
[ $status -eq 1 ] || { echo "an unreplaceable sweep.png gave $status"; cat "$dir/err"; exit 1; }
grep -q "not written: .*keeps what it held" "$dir/err" || { cat "$dir/err"; exit 1; }
cmp -s "$dir/ok/sweep.csv" "$dir/sweep.before" || { echo "sweep.csv was replaced"; exit 1; }
[ -z "$(find "$dir/ok" -maxdepth 1 -name '.caml-*')" ] || { echo "staging left"; ls -a "$dir/ok"; exit 1; }

# A model without a context-aware layer: its "baseline" was the same model
# trained again, labelled context-aware. Said once, no baseline run, rows
# labelled plain.
"$caml" sweep --preset xor-nn --grid 0.units=2,3 -o "$dir/plain" >"$dir/out" 2>"$dir/err" \
  || { echo "sweep xor-nn failed"; cat "$dir/out" "$dir/err"; exit 1; }
[ "$(grep -c '^xor-nn has no context-aware layer: no baseline runs$' "$dir/out")" -eq 1 ] \
  || { echo "xor-nn: not said once that there is no baseline"; cat "$dir/out"; exit 1; }
[ ! -e "$dir/plain/0.units=2/baseline" ] && [ ! -e "$dir/plain/0.units=3/baseline" ] \
  || { echo "xor-nn: a baseline was trained"; ls -R "$dir/plain"; exit 1; }
! grep -q 'baseline\|context-aware' "$dir/plain/sweep.csv" "$dir/plain/sweep.md" \
  || { echo "xor-nn: a baseline or context-aware row"; cat "$dir/plain/sweep.csv"; exit 1; }
[ "$(grep -c '^[23],plain,.*,ok,$' "$dir/plain/sweep.csv")" -eq 2 ] \
  || { echo "xor-nn: not 2 plain rows"; cat "$dir/plain/sweep.csv"; exit 1; }

# sweep.md and the console give 4 significant digits, as sweep.csv's 6 are
# (%.4f printed XOR's MSEs, ~1e-10, as 0.0000, and 0.2 s as 0).
for units in 2 3; do
  mse=$(grep "^$units,plain," "$dir/plain/sweep.csv" | cut -d, -f3)
  short=$(printf '%.4g' "$mse")
  grep -q "^| $units | plain | $short | $short | – | [0-9.e+-]* | [0-9.e+-]* | ok |$" "$dir/plain/sweep.md" \
    || { echo "sweep.md: units=$units not given as $short"; cat "$dir/plain/sweep.md"; exit 1; }
  grep -q "^        test_mse $short$" "$dir/out" \
    || { echo "console: units=$units not given as $short"; cat "$dir/out"; exit 1; }
done
! grep -q '0\.0000\|| 0 | ok |' "$dir/plain/sweep.md" \
  || { echo "sweep.md rounds to nothing"; cat "$dir/plain/sweep.md"; exit 1; }

# Word-valued options plot as categories (test-plot's test_categorical_x
# checks the axis): the sweep writes its plot as for numbers.
"$caml" sweep --preset xor-ca-nn --grid activation=tanh,relu -n 5 --no-baseline -o "$dir/words" \
  >"$dir/out" 2>"$dir/err" || { echo "a word-valued grid failed"; cat "$dir/out" "$dir/err"; exit 1; }
head -c 8 "$dir/words/sweep.png" | od -An -tx1 | grep -q "89 50 4e 47" \
  || { echo "no sweep.png for a word-valued grid"; exit 1; }

# Runs that fail: every run of surface-ca-nn-1 with a wider readout fails
# before training (2 or 3 outputs for 1-wide targets); the sweep said
# "results in" and exited 0 with a sweep.csv of nan.
status=0
"$caml" sweep --preset surface-ca-nn-1 --grid 1.units=2,3 -n 20 -o "$dir/fail" >"$dir/out" 2>"$dir/err" || status=$?
[ $status -eq 1 ] || { echo "4 failed runs: exit status $status, not 1"; cat "$dir/out" "$dir/err"; exit 1; }
grep -q "^caml sweep: 4 of 4 runs failed (1.units=2 context-aware, 1.units=2 baseline, 1.units=3 context-aware, 1.units=3 baseline)" "$dir/err" \
  || { echo "no count of the failed runs"; cat "$dir/err"; exit 1; }
[ "$(grep -c ",failed,preset surface-ca-nn-1: the training set has targets of width 1 but the model's . outputs" "$dir/fail/sweep.csv")" -eq 4 ] \
  || { echo "sweep.csv does not mark the 4 failed runs with their message"; cat "$dir/fail/sweep.csv"; exit 1; }
[ "$(grep -c '| failed: preset surface-ca-nn-1: the training set has targets of width 1' "$dir/fail/sweep.md")" -eq 4 ] \
  || { echo "sweep.md does not mark the 4 failed runs"; cat "$dir/fail/sweep.md"; exit 1; }
# Each run's error is printed once, on stderr (it was on stdout too).
[ "$(grep -c 'targets of width 1' "$dir/err")" -eq 4 ] && ! grep -q 'targets of width 1' "$dir/out" \
  || { echo "the errors are not printed once each, on stderr"; cat "$dir/out" "$dir/err"; exit 1; }
# A layer given: no word about giving one.
! grep -q 'give its index' "$dir/err" "$dir/fail/sweep.csv" || { echo "a hint for an indexed key"; cat "$dir/err"; exit 1; }

# A key without an index sets the option on every layer that has it:
# units=2,3 widened surface-ca-nn-1's readout too and every run failed. The
# error says how to vary one layer's (once on stderr, in every row of the
# tables).
status=0
"$caml" sweep --preset surface-ca-nn-1 --grid units=2,3 -n 20 --no-baseline -o "$dir/every" >"$dir/out" 2>"$dir/err" || status=$?
[ $status -eq 1 ] || { echo "units=2,3: exit status $status, not 1"; cat "$dir/out" "$dir/err"; exit 1; }
[ "$(grep -c 'sets units on layers 0 (ca_nn) and 1 (dense) alike; to vary one layer.s, give its index: --grid 0.units=2,3' "$dir/err")" -eq 1 ] \
  || { echo "units=2,3: no hint (once) to give a layer's index"; cat "$dir/err"; exit 1; }
[ "$(grep -c ',failed,.*give its index: --grid 0.units=2,3' "$dir/every/sweep.csv")" -eq 2 ] \
  || { echo "units=2,3: sweep.csv lacks the hint"; cat "$dir/every/sweep.csv"; exit 1; }
head -c 8 "$dir/every/sweep.png" | od -An -tx1 | grep -q "89 50 4e 47" \
  || { echo "no sweep.png when every run failed"; exit 1; }

# Every run failing while its model is built (no run directory made): the
# tables are written all the same (the output directory did not exist).
cat >"$dir/embedding.json" <<'J'
{
  "name": "xor-embedding",
  "data": { "builtin": "xor" },
  "model": [ { "layer": "embedding", "dim": 2 }, { "layer": "ca_nn", "units": 1, "activation": "tanh" } ],
  "loss": "mse",
  "optimizer": { "type": "sgd", "lr": 0.1, "momentum": 0 },
  "training": { "steps": 20, "batch_size": 0, "eval_every": 5 }
}
J
status=0
"$caml" sweep "$dir/embedding.json" --grid 1.units=1 -o "$dir/unbuilt" >"$dir/out" 2>"$dir/err" || status=$?
[ $status -eq 1 ] || { echo "unbuildable runs: exit status $status, not 1"; cat "$dir/out" "$dir/err"; exit 1; }
[ "$(grep -c ',failed,".*embedding.json: layer 0 (embedding) takes token ids' "$dir/unbuilt/sweep.csv")" -eq 2 ] \
  || { echo "sweep.csv missing or without the 2 failed runs"; cat "$dir/err"; ls -R "$dir/unbuilt"; exit 1; }

# A run that diverges wrote its error into summary.json: sweep.csv gives it.
cat >"$dir/diverge.json" <<'J'
{
  "name": "xor-diverge",
  "data": { "builtin": "xor" },
  "model": [ { "layer": "ca_nn", "units": 1, "activation": "tanh" } ],
  "loss": "mse",
  "optimizer": { "type": "sgd", "lr": 1e30, "momentum": 0 },
  "training": { "steps": 20, "batch_size": 0, "eval_every": 5 }
}
J
status=0
"$caml" sweep "$dir/diverge.json" --grid units=1 -o "$dir/div" >"$dir/out" 2>"$dir/err" || status=$?
[ $status -eq 1 ] || { echo "a diverged run: exit status $status, not 1"; cat "$dir/out" "$dir/err"; exit 1; }
grep -q '^caml sweep: 1 of 2 runs failed (units=1 context-aware)' "$dir/err" || { cat "$dir/err"; exit 1; }
grep -q '^1,context-aware,.*,failed,step [0-9]*: .*weights rolled back to step' "$dir/div/sweep.csv" \
  || { echo "sweep.csv lacks the divergence"; cat "$dir/div/sweep.csv"; exit 1; }
grep -q '^1,baseline,.*,ok,$' "$dir/div/sweep.csv" || { echo "the baseline is not ok"; cat "$dir/div/sweep.csv"; exit 1; }

# A run that fails in a directory where an earlier sweep's run finished:
# the old summary.json is not read as the new run's.
"$caml" sweep --preset surface-ca-nn-2 --grid 1.units=2 -n 5 --no-baseline -o "$dir/again" >/dev/null 2>&1 \
  || { echo "surface-ca-nn-2 1.units=2 failed"; exit 1; }
status=0
"$caml" sweep --preset surface-ca-nn-1 --grid 1.units=2 -n 5 --no-baseline -o "$dir/again" >"$dir/out" 2>"$dir/err" || status=$?
[ $status -eq 1 ] || { echo "a failed run over an old one: exit status $status"; cat "$dir/out" "$dir/err"; exit 1; }
grep -q '^2,context-aware,nan,nan,nan,nan,failed,' "$dir/again/sweep.csv" \
  || { echo "the old run's figures were read as the failed run's"; cat "$dir/again/sweep.csv"; exit 1; }

# A setting as a key: a grid over the learning rate, each run trained with
# its own (its experiment.json says so); --steps beside a key that sets the
# steps too is refused, naming both.
"$caml" sweep --preset xor-ca-nn --grid optimizer.lr=0.001,0.1 -n 20 --no-baseline -o "$dir/lr" \
  >"$dir/out" 2>"$dir/err" || { echo "a grid over optimizer.lr failed"; cat "$dir/out" "$dir/err"; exit 1; }
for lr in 0.001 0.1; do
  grep -q "\"lr\": $lr," "$dir/lr/optimizer.lr=$lr/ca/experiment.json" \
    || { echo "optimizer.lr=$lr: not trained with it"; cat "$dir/lr/optimizer.lr=$lr/ca/experiment.json"; exit 1; }
done
grep -q '^optimizer.lr,model,test_mse,' "$dir/lr/sweep.csv" || { cat "$dir/lr/sweep.csv"; exit 1; }
expect_usage "optimizer.lr out of range" "^caml sweep: --grid optimizer.lr=0.1,-1: optimizer.lr: -1 is out of range (must be > 0)$" \
  --preset xor-ca-nn --grid optimizer.lr=0.1,-1
expect_usage "--steps and training.steps" "^caml sweep: --steps 5 and --grid training.steps=10,20 both set training.steps: give it once$" \
  --preset xor-ca-nn --grid training.steps=10,20 -n 5

# Every sweep leaves its plan as run, the experiment written out: the
# folder's sweep.json runs the same sweep again (the same figures but the
# time), and names the preset it came from.
grep -q '"preset": "xor-ca-nn"' "$dir/lr/sweep.json" && grep -q '"steps": 20,' "$dir/lr/sweep.json" \
  && grep -q '"baselines": false' "$dir/lr/sweep.json" \
  || { echo "sweep.json is not the plan as run"; cat "$dir/lr/sweep.json"; exit 1; }
"$caml" sweep "$dir/lr/sweep.json" -o "$dir/again-lr" >"$dir/out" 2>"$dir/err" \
  || { echo "sweep.json did not run again"; cat "$dir/out" "$dir/err"; exit 1; }
figures () { cut -d, -f1-5,8- "$1"; }   # all but seconds and steps_per_second
[ "$(figures "$dir/lr/sweep.csv")" = "$(figures "$dir/again-lr/sweep.csv")" ] \
  || { echo "sweep.json ran another sweep"; cat "$dir/lr/sweep.csv" "$dir/again-lr/sweep.csv"; exit 1; }
cmp -s "$dir/lr/sweep.json" "$dir/again-lr/sweep.json" || { echo "sweep.json changed on the way"; exit 1; }

# --write-sweep writes the plan and trains nothing; the file runs with
# --steps, --seed and --no-baseline beside it, and alone when it has a
# grid: --grid, --preset or -O as well are refused, naming both.
"$caml" sweep --preset xor-ca-nn --grid units=1 --grid activation=tanh,relu -O optimizer.lr=0.05 \
  --write-sweep "$dir/plan.json" -o "$dir/never" >"$dir/out" 2>"$dir/err" \
  || { echo "--write-sweep failed"; cat "$dir/out" "$dir/err"; exit 1; }
[ ! -e "$dir/never" ] || { echo "--write-sweep trained"; ls -R "$dir/never"; exit 1; }
grep -q '^sweep written to .*plan.json (4 runs)$' "$dir/out" || { cat "$dir/out"; exit 1; }
grep -q '{ "key": "activation", "values": \["tanh", "relu"\] }' "$dir/plan.json" \
  && grep -q '"set": { "optimizer.lr": 0.05 }' "$dir/plan.json" \
  || { echo "plan.json lacks the grid or -O"; cat "$dir/plan.json"; exit 1; }
"$caml" sweep "$dir/plan.json" --write-sweep "$dir/plan2.json" >/dev/null \
  && cmp -s "$dir/plan.json" "$dir/plan2.json" || { echo "--write-sweep of a sweep file changed it"; exit 1; }
"$caml" sweep "$dir/plan.json" --steps 20 --seed 3 --no-baseline -o "$dir/file" >"$dir/out" 2>"$dir/err" \
  || { echo "a sweep file failed"; cat "$dir/out" "$dir/err"; exit 1; }
[ "$(grep -c ',ok,$' "$dir/file/sweep.csv")" -eq 2 ] || { cat "$dir/file/sweep.csv"; exit 1; }
grep -q '"steps" : 20' "$dir/file/units=1-activation=relu/ca/summary.json" \
  && grep -q '"seed" : 3' "$dir/file/units=1-activation=relu/ca/summary.json" \
  && grep -q '"lr": 0.05,' "$dir/file/units=1-activation=relu/ca/experiment.json" \
  || { echo "the sweep file's run lacks --steps, --seed or its set"; exit 1; }
grep -q '"name": "xor-ca-nn units=1 activation=relu",' "$dir/file/units=1-activation=relu/ca/experiment.json" \
  || { echo "a run is not named after its point"; exit 1; }
expect_usage "a sweep file and --grid" "^caml sweep: --grid and the sweep file .*plan.json: " "$dir/plan.json" --grid units=2
expect_usage "a sweep file and --preset" "^caml sweep: --preset and the sweep file" "$dir/plan.json" --preset xor-nn
# A sweep file's errors say where: file, line and column, path.
cat >"$dir/bad.json" <<'J'
{ "preset": "xor-ca-nn",
  "grid": [ { "key": "units", "values": [1, 0] } ] }
J
status=0
"$caml" sweep "$dir/bad.json" -o "$dir/bad" >"$dir/out" 2>"$dir/err" || status=$?
[ $status -eq 1 ] && grep -q "^caml sweep: $dir/bad.json:2:45: grid\[0\].values\[1\]: layer 0 (ca_nn): units: 0 is out of range" "$dir/err" \
  && [ ! -e "$dir/bad" ] || { echo "a bad sweep file: status $status"; cat "$dir/err"; exit 1; }
# … a syntax error too (it was "give one or two --grid"), and an
# experiment file without --grid still asks for the grid.
printf '{ "preset": "xor-ca-nn",\n  "grid": [ { "key": "units" "values": [1] } ] }\n' >"$dir/broken.json"
status=0
"$caml" sweep "$dir/broken.json" -o "$dir/bad" >"$dir/out" 2>"$dir/err" || status=$?
[ $status -eq 1 ] && grep -q "^caml sweep: $dir/broken.json:2:30: grid\[0\]: expected ',' or '}' in an object" "$dir/err" \
  || { echo "a broken sweep file: status $status"; cat "$dir/err"; exit 1; }
expect_usage "an experiment without --grid" "^caml sweep: give one or two --grid KEY=V1,V2,…, or a sweep file$" \
  "$dir/embedding.json"

echo ok
