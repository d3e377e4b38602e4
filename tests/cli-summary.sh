#!/bin/sh
# cli-summary.sh CAML — summary.json's and the last line's train_loss are
# the final weights' loss on the whole training set, the figure `caml eval`
# prints for them (they were the last evaluation's mean over recent
# batches, while train_accuracy was the whole set's). Their test figures
# are the saved weights' too when the run ended between two evaluations
# (they were the last evaluation's, of older weights).
set -eu
caml=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/caml-cli-summary.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail () { echo "$1"; shift; cat "$@"; exit 1; }

for preset in rnn-sanity-ca-rnn surface-ca-nn-1; do
  "$caml" train --preset $preset -n 30 --plain --out "$dir/$preset" >"$dir/t.txt" 2>&1 || fail "$preset: training failed" "$dir/t.txt"
  "$caml" eval "$dir/$preset/experiment.json" --weights "$dir/$preset/model.weights" >"$dir/e.txt" 2>&1 \
    || fail "$preset: caml eval failed" "$dir/e.txt"
  eval_loss=$(sed -n 's/^train  loss \([^ ]*\) .*/\1/p' "$dir/e.txt")
  final_loss=$(sed -n 's/^train_loss \([^ ]*\)  .*/\1/p' "$dir/t.txt")
  [ -n "$eval_loss" ] && [ "$eval_loss" = "$final_loss" ] \
    || fail "$preset: the final line's train_loss $final_loss is not caml eval's $eval_loss" "$dir/t.txt" "$dir/e.txt"
  summary_loss=$(sed -n 's/^ *"train_loss" : \([^,]*\),$/\1/p' "$dir/$preset/summary.json")
  awk -v a="$summary_loss" -v b="$eval_loss" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-5 * (b < 0 ? -b : b) + 1e-12) }' \
    || fail "$preset: summary.json's train_loss $summary_loss is not caml eval's $eval_loss" "$dir/$preset/summary.json" "$dir/e.txt"
done

# close A B: A and B agree to 1e-5 (summary.json has 17 digits, caml eval 6).
close () {
  awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "") exit 1; d = a - b; if (d < 0) d = -d;
    exit !(d <= 1e-5 * (b < 0 ? -b : b) + 1e-12) }'
}
# check_test_figures RUN: the test figures of summary.json and of the last
# line are caml eval's on the saved weights, and metrics.csv ends with a
# row at the run's last step.
check_test_figures () {
  run=$1
  "$caml" eval "$run/experiment.json" --weights "$run/model.weights" >"$dir/e.txt" 2>&1 \
    || fail "$run: caml eval failed" "$dir/e.txt"
  eval_loss=$(sed -n 's/^test   loss \([^ ]*\) .*/\1/p' "$dir/e.txt")
  eval_metric=$(sed -n 's/^test   loss [^ ]*  [a-z]* \([^ ]*\) .*/\1/p' "$dir/e.txt")
  line_loss=$(sed -n 's/^train_loss .*  test_loss \([^ ]*\)  .*/\1/p' "$dir/t.txt")
  line_metric=$(sed -n 's/^train_loss .*  test_[a-z]* \([^ ]*\)$/\1/p' "$dir/t.txt")
  [ -n "$eval_loss" ] && [ "$line_loss" = "$eval_loss" ] && [ "$line_metric" = "$eval_metric" ] \
    || fail "$run: the last line's test figures ($line_loss, $line_metric) are not caml eval's ($eval_loss, $eval_metric)" "$dir/t.txt" "$dir/e.txt"
  summary_loss=$(sed -n 's/^ *"test_loss" : \([^,]*\),$/\1/p' "$run/summary.json")
  summary_metric=$(sed -n 's/^ *"test_\(mse\|accuracy\)" : \([^,]*\),$/\2/p' "$run/summary.json")
  close "$summary_loss" "$eval_loss" && close "$summary_metric" "$eval_metric" \
    || fail "$run: summary.json's test figures ($summary_loss, $summary_metric) are not caml eval's" "$run/summary.json" "$dir/e.txt"
  steps=$(sed -n 's/^ *"steps" : \([0-9]*\),$/\1/p' "$run/summary.json")
  [ "$(tail -n 1 "$run/metrics.csv" | cut -d, -f1)" = "$steps" ] \
    || fail "$run: metrics.csv does not end at step $steps" "$run/metrics.csv"
}

# A run that diverges at step 26 goes back to its last healthy evaluation,
# at step 20; one resumed at step 24, between the evaluations at 20 and 30,
# at a rate that diverges at once goes back to step 24, where it went on
# from: deterministic, no signal needed.
cat >"$dir/diverge.json" <<'J'
{"data": {"builtin": "surface"},
 "model": [{"layer": "dense", "units": 16, "activation": "relu"}, {"layer": "dense", "units": 1}],
 "optimizer": {"type": "sgd", "lr": 0.3, "momentum": 0.99},
 "training": {"steps": 1000, "eval_every": 10}}
J
status=0
"$caml" train "$dir/diverge.json" --plain --out "$dir/diverge" >"$dir/t.txt" 2>&1 || status=$?
[ $status -eq 1 ] || fail "diverge.json: exit status $status, not 1" "$dir/t.txt"
grep -q '"rolled_back_to" : 20' "$dir/diverge/summary.json" \
  || fail "diverge.json did not go back to step 20" "$dir/diverge/summary.json"
check_test_figures "$dir/diverge"
"$caml" train "$dir/diverge.json" -n 24 -q --out "$dir/at24" >"$dir/t.txt" 2>&1 \
  || fail "diverge.json, 24 steps: training failed" "$dir/t.txt"
sed -i 's/"lr" *: *[^,}]*/"lr": 1e30/' "$dir/at24/experiment.json"
status=0
"$caml" train --resume "$dir/at24" -n 1000 --plain >"$dir/t.txt" 2>&1 || status=$?
[ $status -eq 1 ] || fail "resumed at 1e30: exit status $status, not 1" "$dir/t.txt"
grep -q '"rolled_back_to" : 24' "$dir/at24/summary.json" \
  || fail "resumed at 1e30: did not go back to step 24" "$dir/at24/summary.json"
check_test_figures "$dir/at24"
grep -q '^20,' "$dir/at24/metrics.csv" && grep -q '^24,' "$dir/at24/metrics.csv" \
  || fail "metrics.csv lacks the rows at steps 20 and 24" "$dir/at24/metrics.csv"

# A run stopped with Ctrl+C (SIGINT) between two evaluations (every 50
# steps, thousands a second): "stopped after 385 steps" with the figures of
# step 300.
: >"$dir/t.txt"
"$caml" train --preset surface-ca-nn-2 -n 100000000 --plain --out "$dir/stopped" >"$dir/t.txt" 2>&1 &
pid=$!
tries=0
while [ "$(grep -c '^step ' "$dir/t.txt")" -lt 1 ] && [ $tries -lt 300 ]; do
  sleep 0.1; tries=$((tries + 1))
done
kill -INT $pid
status=0
wait $pid || status=$?
[ $status -eq 130 ] || fail "SIGINT: exit status $status, not 130" "$dir/t.txt"
check_test_figures "$dir/stopped"
echo ok
