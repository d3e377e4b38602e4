#!/bin/sh
# cli-sem.sh CAML — `caml sem` end to end on small synthetic files: the
# report, the result files, and the exit statuses of bad input.
set -eu
caml=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/caml-cli-sem.XXXXXX")
trap 'rm -rf "$dir"' EXIT

cat >"$dir/vectors.txt" <<'V'
the 1.0 0.9 0.1
a 0.9 1.0 0.0
dog 0.2 -0.8 0.9
cat 0.1 -0.7 1.0
runs -0.9 0.3 0.2
sleeps -0.8 0.4 -0.1
V
printf 'the dog runs\tthe cat runs\t4.5\na dog sleeps\tthe cat runs\t2.0\nthe dog\ta cat sleeps\t3.0\na zebra runs\tthe dog runs\t3.5\n' >"$dir/pairs.tsv"
printf 'the 1000\na 900\ndog 10\ncat 12\nruns 5\nsleeps 4\n' >"$dir/freq.txt"

"$caml" sem --embeddings "$dir/vectors.txt" --pairs "$dir/pairs.tsv" --word-freq "$dir/freq.txt" \
  --iterations 20 --out "$dir/out" --plain >"$dir/stdout" 2>"$dir/err0"
for f in energy.csv energy.png chi.csv summary.json; do
  [ -s "$dir/out/$f" ] || { echo "missing $f"; cat "$dir/stdout"; exit 1; }
done
for key in average sif ca_sem ca_sem_context; do
  grep -q "\"$key\" :" "$dir/out/summary.json" || { echo "summary.json lacks $key"; exit 1; }
done
grep -q '^  CA-SEM context ' "$dir/stdout" || { echo "no CA-SEM line"; cat "$dir/stdout"; exit 1; }
grep -q '"zebra",1,0,1.000000' "$dir/out/chi.csv" || { echo "OOV word not χ̃ = 1"; exit 1; }
[ -f "$dir/vectors.txt.cache" ] || { echo "no cache beside the GloVe file"; exit 1; }
! grep -q "note:" "$dir/err0" || { echo "a note with good word counts"; cat "$dir/err0"; exit 1; }

# The fixed-norm mode: converged, and said so in summary.json; a bad mode is
# a usage error naming it.
"$caml" sem --embeddings "$dir/vectors.txt" --pairs "$dir/pairs.tsv" --word-freq "$dir/freq.txt" \
  --mode fixed-norm --unit-vectors --iterations 500 --out "$dir/fixed" --plain >"$dir/stdout" 2>"$dir/err0" \
  || { echo "fixed-norm failed"; cat "$dir/err0"; exit 1; }
grep -q '"mode" : "fixed-norm"' "$dir/fixed/summary.json" || { echo "summary.json: no mode"; exit 1; }
grep -q '"fixed_norm" : 1' "$dir/fixed/summary.json" || { echo "summary.json: no fixed norm"; exit 1; }
grep -q '^CA-SEM      fixed-norm (‖v0‖ = 1), unit vectors; .*energy stopped decreasing' "$dir/stdout" \
  || { echo "fixed-norm: not converged"; cat "$dir/stdout"; exit 1; }
status=0
"$caml" sem --embeddings "$dir/vectors.txt" --pairs "$dir/pairs.tsv" --mode free 2>"$dir/err" || status=$?
[ $status -eq 2 ] && grep -qx 'caml sem: --mode free: expected literal or fixed-norm' "$dir/err" \
  || { echo "--mode free: status $status"; cat "$dir/err"; exit 1; }

# Word counts that miss the pairs' words: SIF is then the average less its
# principal component, which the run says (it ran on without a word).
printf 'zebra 5\nthe 0\n' >"$dir/freq-none.txt"
"$caml" sem --embeddings "$dir/vectors.txt" --pairs "$dir/pairs.tsv" --word-freq "$dir/freq-none.txt" \
  --iterations 2 --out "$dir/out5" --plain >/dev/null 2>"$dir/err"
grep -q "note: .*freq-none.txt has a count for 0 of the 6 words of the pairs that have a vector; .*so here SIF is the average less its first principal component" "$dir/err" \
  || { cat "$dir/err"; exit 1; }

# All or nothing: a result that cannot be replaced (chi.csv a directory)
# leaves every file of the earlier run as it was, and no staging behind.
cp "$dir/out/energy.csv" "$dir/energy.before"
rm "$dir/out/chi.csv"
mkdir "$dir/out/chi.csv"
status=0
"$caml" sem --embeddings "$dir/vectors.txt" --pairs "$dir/pairs.tsv" --word-freq "$dir/freq.txt" \
  --iterations 3 --out "$dir/out" --plain >/dev/null 2>"$dir/err" || status=$?
[ $status -eq 1 ] || { echo "an unreplaceable result gave $status"; cat "$dir/err"; exit 1; }
grep -q "chi.csv: is not a file" "$dir/err" && grep -q "nothing written: .*keeps what it held" "$dir/err" \
  || { cat "$dir/err"; exit 1; }
cmp -s "$dir/out/energy.csv" "$dir/energy.before" || { echo "energy.csv replaced"; exit 1; }
[ -z "$(find "$dir/out" -name '.caml-*')" ] || { echo "staging left"; ls -a "$dir/out"; exit 1; }
rmdir "$dir/out/chi.csv"

# Pairs whose two sentences are the same: every cosine is 1, Pearson's r
# undefined — shown as "—" with a note, not "nan".
printf 'the dog\tthe dog\t4\ncat runs\tcat runs\t1\n' >"$dir/same.tsv"
"$caml" sem --embeddings "$dir/vectors.txt" --pairs "$dir/same.tsv" --word-freq "$dir/freq.txt" \
  --iterations 2 --out "$dir/out6" --plain >"$dir/stdout6" 2>"$dir/err"
grep -q '^  average  *—$' "$dir/stdout6" || { cat "$dir/stdout6"; exit 1; }
! grep -qi 'nan' "$dir/stdout6" || { echo "nan printed"; cat "$dir/stdout6"; exit 1; }
grep -q "note: —: every pair got the same cosine similarity" "$dir/err" || { cat "$dir/err"; exit 1; }

# Missing --pairs: a usage error (2). A malformed pairs file: 1, naming file and line.
status=0
"$caml" sem --embeddings "$dir/vectors.txt" 2>"$dir/err" || status=$?
[ $status -eq 2 ] || { echo "missing --pairs gave $status"; exit 1; }
printf 'a\tb\t1\nc\td\n' >"$dir/bad.tsv"
status=0
"$caml" sem --embeddings "$dir/vectors.txt" --pairs "$dir/bad.tsv" --word-freq "$dir/freq.txt" \
  --out "$dir/out2" >/dev/null 2>"$dir/err" || status=$?
[ $status -eq 1 ] || { echo "a malformed pairs file gave $status"; exit 1; }
grep -q "bad.tsv:2: expected 3 tab-separated fields" "$dir/err" || { cat "$dir/err"; exit 1; }

# No word of the pairs has a vector: 1, saying why instead of printing nan.
printf 'zzz qqq\tyyy\t1\nfoo\tbar\t2\nbaz\tquux\t3\n' >"$dir/novec.tsv"
status=0
"$caml" sem --embeddings "$dir/vectors.txt" --pairs "$dir/novec.tsv" --word-freq "$dir/freq.txt" \
  --out "$dir/out3" >"$dir/stdout" 2>"$dir/err" || status=$?
[ $status -eq 1 ] || { echo "pairs without vectors gave $status"; cat "$dir/stdout"; exit 1; }
grep -q "novec.tsv: no word of its 3 pairs has a vector in .*vectors.txt" "$dir/err" \
  || { cat "$dir/err"; exit 1; }
# ... and leaves no directory it made for --out (it left them, empty).
[ ! -e "$dir/out3" ] || { echo "a failed sem left its --out directory"; exit 1; }
status=0
"$caml" sem --embeddings "$dir/no-vectors.txt" --pairs "$dir/pairs.tsv" --word-freq "$dir/freq.txt" \
  --out "$dir/new/deeper" >/dev/null 2>"$dir/err" || status=$?
[ $status -eq 1 ] && [ ! -e "$dir/new" ] || { echo "missing vectors: $status, new/ left"; exit 1; }

# SIGTERM (or Ctrl+C) during the fit: it stops after the iteration under
# way, its results are written, and the command ends by the signal. (A
# background job of sh ignores SIGINT, so SIGTERM stands in for it here.)
# The handler is in place once the vectors' new cache is written.
cp "$dir/vectors.txt" "$dir/vectors-int.txt"
"$caml" sem --embeddings "$dir/vectors-int.txt" --pairs "$dir/pairs.tsv" --word-freq "$dir/freq.txt" \
  --iterations 1000000 --out "$dir/int" --plain >"$dir/stdout-int" 2>"$dir/err-int" &
pid=$!
i=0
while [ ! -f "$dir/vectors-int.txt.cache" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
sleep 0.5
kill -TERM $pid
status=0
wait $pid || status=$?
[ $status -eq 143 ] || { echo "SIGTERM during the fit gave $status"; cat "$dir/err-int"; exit 1; }
grep -q "caml sem: interrupted: the fit stops at iteration [0-9]* and its results are written" \
  "$dir/err-int" || { cat "$dir/err-int"; exit 1; }
grep -q '"stop" : "interrupted"' "$dir/int/summary.json" || { cat "$dir/int/summary.json"; exit 1; }
# --plain shows the last iteration too, not only every tenth.
last=$(sed -n 's/.*the fit stops at iteration \([0-9]*\) .*/\1/p' "$dir/err-int")
grep -q "(interrupted; scoring each for energy.csv" "$dir/stdout-int" \
  && grep -q "^iteration $last  energy" "$dir/stdout-int" || { cat "$dir/stdout-int"; exit 1; }

# SIF's default word counts missing: the message says how to give them.
status=0
CAML_SHARED_DATASETS="$dir/nowhere" "$caml" sem --embeddings "$dir/vectors.txt" \
  --pairs "$dir/pairs.tsv" --out "$dir/out4" >/dev/null 2>"$dir/err" || status=$?
[ $status -eq 1 ] || { echo "missing word counts gave $status"; exit 1; }
grep -q "enwiki_vocab_min200.txt: no such file (SIF's word frequencies: give --word-freq FILE, or set CAML_SHARED_DATASETS" "$dir/err" \
  || { cat "$dir/err"; exit 1; }
echo ok
