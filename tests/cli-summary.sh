#!/bin/sh
# cli-summary.sh CAML — summary.json's and the last line's train_loss are
# the final weights' loss on the whole training set, the figure `caml eval`
# prints for them (they were the last evaluation's mean over recent
# batches, while train_accuracy was the whole set's).
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
echo ok
