#!/bin/sh
# cli-write-failure.sh CAML — a run whose results cannot all be written
# keeps none of them: the output directory holds the earlier run's results
# exactly as they were (none replaced, none removed, no staging directory
# left), the failure names the file and the error, the exit status is 1,
# and no "results in" line lists files that were not written.
set -eu
caml=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/caml-cli-write-failure.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail () { echo "$1"; shift; cat "$@"; exit 1; }

# listing DIR: every entry with its type and, for a file, its checksum.
listing () {
  (cd "$1" && find . | LC_ALL=C sort | while read -r f; do
     if [ -f "$f" ]; then echo "$f $(cksum <"$f")"; else echo "$f dir"; fi
   done)
}

# An earlier run with plots (surface, chi, parts) the next one does not draw.
"$caml" train --preset surface-ca-nn-2 -n 200 -q --out "$dir/r" >"$dir/t.txt" 2>&1 \
  || fail "the first run failed" "$dir/t.txt"
listing "$dir/r" >"$dir/before.txt"

# A real write failure that needs no privileges (and holds for root): files
# are limited to 8 blocks (4 or 8 KiB), so loss.png (tens of KiB) cannot
# be written — EFBIG, as SIGXFSZ is ignored — while the weights and
# experiment.json can.
status=0
(trap '' XFSZ; ulimit -f 8; exec "$caml" train --preset surface-nn -n 200 --plain --out "$dir/r") \
  >"$dir/o.txt" 2>"$dir/e.txt" || status=$?
[ $status -eq 1 ] || fail "a write failure: exit status $status, not 1" "$dir/o.txt" "$dir/e.txt"
grep -q "^caml train: $dir/r/loss.png: .*File too large" "$dir/e.txt" \
  || fail "the failure does not name r/loss.png and the error" "$dir/e.txt"
! grep -q '^results in' "$dir/o.txt" || fail "a \"results in\" line after a write failure" "$dir/o.txt"
grep -q "^nothing kept: .*$dir/r/ keeps what it held" "$dir/o.txt" \
  || fail "the run did not say it kept nothing" "$dir/o.txt"
listing "$dir/r" >"$dir/after.txt"
diff "$dir/before.txt" "$dir/after.txt" >"$dir/diff.txt" \
  || fail "a write failure changed the earlier run's results:" "$dir/diff.txt"

# A result name taken by a directory (loss.png): refused before training,
# the path named (it used to train, then keep nothing).
rm "$dir/r/loss.png"
mkdir "$dir/r/loss.png"
touch "$dir/r/loss.png/keep"
listing "$dir/r" >"$dir/before.txt"
status=0
"$caml" train --preset surface-nn -n 200 --plain --out "$dir/r" >"$dir/o.txt" 2>"$dir/e.txt" || status=$?
[ $status -eq 1 ] || fail "loss.png a directory: exit status $status, not 1" "$dir/o.txt" "$dir/e.txt"
grep -q "^caml train: $dir/r/loss.png: is not a file" "$dir/e.txt" \
  || fail "the failure does not name r/loss.png" "$dir/e.txt"
! grep -q '^training ' "$dir/o.txt" || fail "loss.png a directory: trained before saying so" "$dir/o.txt" "$dir/e.txt"
! grep -q '^results in' "$dir/o.txt" || fail "a \"results in\" line after a failure" "$dir/o.txt"
listing "$dir/r" >"$dir/after.txt"
diff "$dir/before.txt" "$dir/after.txt" >"$dir/diff.txt" \
  || fail "a failed move changed the earlier run's results:" "$dir/diff.txt"

# … and one the model would write (words.html of a text model with word
# gates: text data of our own, so that no data set is needed).
mkdir -p "$dir/w/words.html"
printf 'good film\t1\nbad plot\t0\ngreat acting\t1\ndull story\t0\n' >"$dir/w.tsv"
cat >"$dir/w.json" <<'J'
{"data": {"text": {"train": "w.tsv", "test": "w.tsv"}},
 "model": [{"layer": "ca_bsfe", "dim": 2, "gate_dim": 2},
           {"layer": "dense", "units": 1, "activation": "identity"}],
 "loss": "sigmoid_cross_entropy",
 "optimizer": {"type": "adagrad", "lr": 0.1},
 "training": {"steps": 10, "batch_size": 2, "eval_every": 5}}
J
status=0
"$caml" train "$dir/w.json" --plain --out "$dir/w" >"$dir/o.txt" 2>"$dir/e.txt" || status=$?
[ $status -eq 1 ] || fail "words.html a directory: exit status $status, not 1" "$dir/o.txt" "$dir/e.txt"
grep -q "^caml train: $dir/w/words.html: is not a file" "$dir/e.txt" \
  || fail "the refusal does not name w/words.html" "$dir/e.txt"
! grep -q '^training ' "$dir/o.txt" || fail "words.html a directory: trained before saying so" "$dir/o.txt" "$dir/e.txt"
[ "$(ls -A "$dir/w")" = "words.html" ] || fail "a refused run wrote into w/" "$dir/o.txt"

# … and a run that can write everything replaces them all.
rm -r "$dir/r/loss.png"
"$caml" train --preset surface-nn -n 200 -q --out "$dir/r" >"$dir/o.txt" 2>&1 \
  || fail "the last run failed" "$dir/o.txt"
[ -s "$dir/r/loss.png" ] && [ ! -e "$dir/r/chi.png" ] && [ ! -e "$dir/r/parts.png" ] \
  || fail "the last run did not replace the earlier results" "$dir/o.txt"
[ -z "$(find "$dir/r" -name '.caml-*')" ] || fail "a staging directory was left" "$dir/o.txt"

# The staging directory of a run killed while saving (nobody holds its
# flock) is removed by the next run into the directory, with a note; one a
# live run holds (this shell, on its fd 9) is left alone.
mkdir "$dir/r/.caml-new-dead01" "$dir/r/.caml-new-live01" "$dir/r/.caml-old-dead02"
touch "$dir/r/.caml-new-dead01/model.weights" "$dir/r/.caml-new-live01/model.weights" \
  "$dir/r/.caml-old-dead02/model.weights"
exec 9<"$dir/r/.caml-new-live01"
flock -n 9 || fail "cannot lock the live staging directory" /dev/null
"$caml" train --preset surface-nn -n 20 -q --out "$dir/r" >"$dir/o.txt" 2>&1 \
  || fail "the run beside stale staging failed" "$dir/o.txt"
exec 9<&-
grep -q "note: removed $dir/r/.caml-new-dead01/" "$dir/o.txt" \
  || fail "no note of the stale staging directory removed" "$dir/o.txt"
[ ! -e "$dir/r/.caml-new-dead01" ] || fail "a stale staging directory stayed" "$dir/o.txt"
# … but the folder a commit killed half-way had moved earlier results into
# is kept, under a name of its own (the only copy of them)
grep -q "note: $dir/r/earlier-results-dead02/ holds earlier results" "$dir/o.txt" \
  && [ -e "$dir/r/earlier-results-dead02/model.weights" ] && [ ! -e "$dir/r/.caml-old-dead02" ] \
  || fail "a stale aside directory was not kept as earlier-results" "$dir/o.txt"
[ -e "$dir/r/.caml-new-live01/model.weights" ] || fail "a live run's staging was removed" "$dir/o.txt"
! grep -q "caml-new-live01" "$dir/o.txt" || fail "a live run's staging was named" "$dir/o.txt"
# Commits into one directory take turns (a flock on it): while another holds
# it, a run that has written its results says so and waits to move them
# into place; Ctrl+C twice aborts the wait, leaving the directory as it was.
# (8<&-: the lock is this shell's, not shared with the runs through fd 8.)
waiting () {   # until the run says it waits (it has written everything)
  i=0
  while ! grep -q "waiting for another command to finish moving its results into $1/" "$2" \
        && [ $i -lt 600 ]; do
    sleep 0.1; i=$((i + 1))
  done
  grep -q "waiting for another command" "$2"
}
mkdir "$dir/c"
exec 8<"$dir/c"
flock -n 8 || fail "cannot lock the output directory" /dev/null
"$caml" train --preset surface-nn -n 20 -q --out "$dir/c" >"$dir/c.txt" 2>&1 8<&- &
waiter=$!
trap 'kill $waiter 2>/dev/null; rm -rf "$dir"' EXIT
waiting "$dir/c" "$dir/c.txt" || fail "the run did not say it waits for the lock" "$dir/c.txt"
[ -n "$(find "$dir/c" -path '*/.caml-new-*/surface.png')" ] || fail "it waits before writing all" "$dir/c.txt"
sleep 0.3
kill -0 $waiter 2>/dev/null || fail "the run did not wait for the directory's lock" "$dir/c.txt"
[ ! -e "$dir/c/summary.json" ] || fail "results moved in while another held the directory" "$dir/c.txt"
exec 8<&-
wait $waiter || fail "the waiting run failed" "$dir/c.txt"
[ -s "$dir/c/summary.json" ] && [ -z "$(find "$dir/c" -name '.caml-*')" ] \
  || fail "the waiting run did not move its results into place" "$dir/c.txt"
cp "$dir/c/summary.json" "$dir/c.before"
exec 8<"$dir/c"
flock -n 8 || fail "cannot lock the output directory again" /dev/null
"$caml" train --preset surface-nn -n 30 -q --out "$dir/c" >"$dir/c2.txt" 2>&1 8<&- &
waiter=$!
waiting "$dir/c" "$dir/c2.txt" || fail "the second run did not say it waits" "$dir/c2.txt"
kill -INT $waiter
sleep 0.3
kill -INT $waiter
status=0
wait $waiter || status=$?
exec 8<&-
[ $status -eq 130 ] || fail "Ctrl+C twice while waiting: exit $status, not 130" "$dir/c2.txt"
grep -q "aborted: nothing of this run was kept" "$dir/c2.txt" || fail "no word of the abort" "$dir/c2.txt"
cmp -s "$dir/c/summary.json" "$dir/c.before" && [ -z "$(find "$dir/c" -name '.caml-*')" ] \
  || fail "an aborted wait changed the directory" "$dir/c2.txt"
trap 'rm -rf "$dir"' EXIT

# caml rnn-sanity is all or nothing too: an unreplaceable result leaves the
# earlier tables as they were.
"$caml" rnn-sanity --runs 1 --steps 5 --out "$dir/rs" >"$dir/o.txt" 2>&1 || fail "rnn-sanity failed" "$dir/o.txt"
cp "$dir/rs/rnn-sanity.csv" "$dir/rs.before"
rm "$dir/rs/rnn-sanity.png"
mkdir "$dir/rs/rnn-sanity.png"
status=0
"$caml" rnn-sanity --runs 2 --steps 5 --out "$dir/rs" >"$dir/o.txt" 2>&1 || status=$?
[ $status -eq 1 ] || fail "rnn-sanity into an unreplaceable result: exit $status" "$dir/o.txt"
grep -q "nothing written: $dir/rs/ keeps what it held" "$dir/o.txt" || fail "no word of nothing written" "$dir/o.txt"
cmp -s "$dir/rs/rnn-sanity.csv" "$dir/rs.before" || fail "rnn-sanity.csv was replaced" "$dir/o.txt"
[ -z "$(find "$dir/rs" -name '.caml-*')" ] || fail "rnn-sanity left a staging directory" "$dir/o.txt"
echo ok
