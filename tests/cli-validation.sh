#!/bin/sh
# cli-validation.sh CAML — a run with --validation evaluates on a part held
# out of the training set: its outputs said "test" all the same. They say
# "validation" now, and summary.json says what the test_* figures are of.
set -eu
caml=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/caml-cli-validation.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail () { echo "$1"; shift; cat "$@"; exit 1; }

"$caml" train --preset rnn-sanity-ca-rnn --validation 0.25 --plain --out "$dir/v" >"$dir/v.txt" 2>&1 \
  || fail "training with --validation failed" "$dir/v.txt"
grep -q '"evaluated_on" : "validation"' "$dir/v/summary.json" || fail "summary.json: no evaluated_on validation" "$dir/v/summary.json"
grep -q '^train_loss [^ ]*  validation_loss [^ ]*  train_accuracy [^ ]*  validation_accuracy ' "$dir/v.txt" \
  || fail "the final line does not say validation" "$dir/v.txt"
grep -q '^step [0-9]*  train_loss [^ ]*  validation_loss ' "$dir/v.txt" || fail "the progress lines do not say validation" "$dir/v.txt"
! grep -q 'test' "$dir/v.txt" || fail "a validation run's output says test" "$dir/v.txt"
grep -q '<h2>[0-9]* validation samples</h2>' "$dir/v/words.html" || fail "words.html does not say validation samples" "$dir/v/words.html"
! grep -q 'test' "$dir/v/words.html" || fail "words.html says test" "$dir/v/words.html"
"$caml" eval "$dir/v/experiment.json" --weights "$dir/v/model.weights" >"$dir/e.txt" 2>&1 || fail "caml eval failed" "$dir/e.txt"
grep -q '^validation  loss ' "$dir/e.txt" || fail "caml eval does not say validation" "$dir/e.txt"

# Without --validation: the test set, and said so.
"$caml" train --preset rnn-sanity-ca-rnn --plain --out "$dir/t" >"$dir/t.txt" 2>&1 || fail "training failed" "$dir/t.txt"
grep -q '"evaluated_on" : "test"' "$dir/t/summary.json" || fail "summary.json: no evaluated_on test" "$dir/t/summary.json"
grep -q '  test_loss [^ ]*  train_accuracy [^ ]*  test_accuracy ' "$dir/t.txt" || fail "the final line does not say test" "$dir/t.txt"
grep -q '<h2>[0-9]* test samples</h2>' "$dir/t/words.html" || fail "words.html does not say test samples" "$dir/t/words.html"
echo ok
