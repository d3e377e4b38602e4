#!/bin/sh
# cli-bench.sh CAML — `caml bench` on tiny presets: usage errors for step
# counts out of range, before anything is trained; figures the clock cannot
# measure shown as a dash and written as null; text data (the RNN sanity
# sentences, ragged token ids, and texts from an experiment's own files)
# timed and profiled layer by layer; the report names the data it used and
# the kernel and depth, a preset's own unless -k or -d is given.
set -eu
caml=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/caml-cli-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT

# expect_usage WHAT TEXT ARGS…: exit status 2 and TEXT on stderr.
expect_usage () {
  what=$1 text=$2
  shift 2
  status=0
  "$caml" bench "$@" >"$dir/out" 2>"$dir/err" || status=$?
  [ $status -eq 2 ] || { echo "$what: exit status $status, not 2"; cat "$dir/out" "$dir/err"; exit 1; }
  grep -q -- "$text" "$dir/err" || { echo "$what: stderr lacks \"$text\""; cat "$dir/err"; exit 1; }
}

# Step counts: each in 1…1000000000, and warm-up + timed steps too (their
# sum overflowed an int and the run reported negative steps).
expect_usage "--warmup 2147483647 -n 1" "^caml bench: --warmup 2147483647: expected" \
  --preset xor-ca-nn --warmup 2147483647 -n 1
expect_usage "--warmup 600000000 -n 600000000" \
  "^caml bench: --warmup 600000000 + --steps 600000000: at most 1000000000 steps in all" \
  --preset xor-ca-nn --warmup 600000000 -n 600000000
expect_usage "-n 0" "^caml bench: --steps 0: expected a number of steps in 1…1000000000" \
  --preset xor-ca-nn -n 0
expect_usage "--warmup -3" "^caml bench: --warmup -3:" --preset xor-ca-nn --warmup -3
expect_usage "--profile-steps 1000000001" "^caml bench: --profile-steps 1000000001:" \
  --preset xor-ca-nn --profile-steps 1000000001

have_python=no
if command -v python3 >/dev/null 2>&1 && python3 -c 1 2>/dev/null; then
  have_python=yes
fi
# check_json FILE: valid JSON without inf or nan (which json-glib writes as
# inf.0 / nan.0 and no reader accepts).
check_json () {
  if grep -Eq ':[[:space:]]*-?(inf|nan|Infinity|NaN)' "$1"; then
    echo "$1: a non-finite number"; cat "$1"; exit 1
  fi
  if [ $have_python = yes ]; then
    python3 -c 'import json, sys
def bad(c):
    sys.exit("%s: %s is not JSON" % (sys.argv[1], c))
json.load(open(sys.argv[1]), parse_constant=bad)' "$1" || { cat "$1"; exit 1; }
  fi
}

# xor-nn2's layers each take about a microsecond on 4 samples: some of its
# timings are 0 µs, whose GFLOP/s were inf (printed "inf", written "inf.0").
for i in 1 2 3; do
  "$caml" bench --preset xor-nn2 --warmup 1 -n 1 --profile-steps 1 \
    --json "$dir/xor.json" >"$dir/out" 2>"$dir/err" \
    || { echo "bench xor-nn2 failed"; cat "$dir/out" "$dir/err"; exit 1; }
  check_json "$dir/xor.json"
  if grep -Eqi '(^|[^a-z])(inf|nan)([^a-z]|$)' "$dir/out"; then
    echo "bench printed a non-finite number"; cat "$dir/out"; exit 1
  fi
  grep -q '"forward_ms"' "$dir/xor.json" || { echo "no layer timings in the JSON"; exit 1; }
done

# Text data sets hold no dense x: the per-layer profile dereferenced NULL
# (SIGSEGV) and the timed run's figures were lost with it.
for preset in rnn-sanity-ca-rnn rnn-sanity-lstm; do
  status=0
  "$caml" bench --preset $preset --warmup 1 -n 2 --profile-steps 3 \
    --json "$dir/$preset.json" >"$dir/out" 2>"$dir/err" || status=$?
  [ $status -eq 0 ] || { echo "bench $preset: exit status $status"; cat "$dir/out" "$dir/err"; exit 1; }
  grep -q '^training: .* steps/s' "$dir/out" || { echo "bench $preset: no training line"; cat "$dir/out"; exit 1; }
  grep -q '^per step over 3 profiled steps on [0-9]* threads:' "$dir/out" || { echo "bench $preset: no profile"; cat "$dir/out"; exit 1; }
  grep -q '^  0   embedding ' "$dir/out" || { echo "bench $preset: no embedding row"; cat "$dir/out"; exit 1; }
  check_json "$dir/$preset.json"
  grep -q '"layer" : "embedding"' "$dir/$preset.json" || { echo "bench $preset: no layers in the JSON"; exit 1; }
done

# The report names the data trained on (it said "MNIST data" for all).
"$caml" bench --preset xor-ca-nn --warmup 1 -n 1 --profile-steps 1 \
  --json "$dir/xor.json" >"$dir/out"
grep -q '^xor-ca-nn, data: xor (4 training samples), batch 4,' "$dir/out" \
  || { echo "bench xor-ca-nn does not name its data"; cat "$dir/out"; exit 1; }
grep -q '"data" : "xor"' "$dir/xor.json" || { echo "xor.json does not name its data"; exit 1; }
"$caml" bench --preset rnn-sanity-lstm --warmup 1 -n 1 --profile-steps 1 >"$dir/out"
grep -q '^rnn-sanity-lstm, data: rnn_sanity (2 training samples),' "$dir/out" \
  || { echo "bench rnn-sanity-lstm does not name its data"; cat "$dir/out"; exit 1; }
printf 'a good film\t1\na bad film\t0\nso good\t1\nso bad\t0\ngood\t1\nbad\t0\n' >"$dir/train.tsv"
printf 'good film\t1\nbad film\t0\n' >"$dir/test.tsv"
cat >"$dir/words.json" <<'J'
{
  "name": "words",
  "data": { "text": { "train": "train.tsv", "test": "test.tsv" } },
  "model": [
    {"layer": "embedding", "dim": 4},
    {"layer": "mean_pool"},
    {"layer": "dense", "units": 1, "activation": "identity"}
  ],
  "loss": "sigmoid_cross_entropy",
  "optimizer": { "type": "adagrad", "lr": 0.1 },
  "training": { "steps": 10, "batch_size": 2, "eval_every": 10 }
}
J
"$caml" bench "$dir/words.json" --warmup 1 -n 2 --profile-steps 2 \
  --json "$dir/words-bench.json" >"$dir/out"
grep -q "^words, data: text $dir/train.tsv (6 training samples), batch 2," "$dir/out" \
  || { echo "bench of a text file does not name it"; cat "$dir/out"; exit 1; }
grep -q "\"data\" : \"text $dir/train.tsv\"" "$dir/words-bench.json" \
  || { echo "the JSON does not name the text file"; cat "$dir/words-bench.json"; exit 1; }
check_json "$dir/words-bench.json"
# --preset times the preset's own model: mnist-ca-cnn has kernel 5, depth 16
# and 403,284 weights (bench forced kernel 8, depth 8: 202,715 weights,
# another model). The first line says which kernel and depth were used.
bench_head () {
  "$caml" bench "$@" --warmup 1 -n 1 --profile-steps 1 >"$dir/out" 2>"$dir/err" \
    || { echo "bench $*: failed"; cat "$dir/out" "$dir/err"; exit 1; }
  head -n 1 "$dir/out"
}
head=$(bench_head --preset mnist-ca-cnn --synthetic)
case $head in
  "mnist-ca-cnn, kernel 5, depth 16, data: synthetic "*", 403284 weights") ;;
  *) echo "bench --preset mnist-ca-cnn: $head"; exit 1 ;;
esac
head=$(bench_head --preset mnist-ca-cnn --synthetic -k 3)
case $head in
  "mnist-ca-cnn, kernel 3, depth 16, "*) ;;
  *) echo "bench --preset mnist-ca-cnn -k 3: $head"; exit 1 ;;
esac
# Without --preset or a file: the paper's recipe, kernel 8 and depth 8.
head=$(bench_head --synthetic)
case $head in
  "mnist-ca-cnn-nopool, kernel 8, depth 8, "*) ;;
  *) echo "bench (default): $head"; exit 1 ;;
esac
# A preset without convolutional layers needs no now, and its
# first line names no kernel.
head=$(bench_head --preset xor-ca-nn)
case $head in
  "xor-ca-nn, data: xor "*) ;;
  *) echo "bench --preset xor-ca-nn: $head"; exit 1 ;;
esac
# -k on a model without a kernel is still an error.
expect_usage "-k 3 on xor-ca-nn" 'no layer of this experiment has an option "kernel"' \
  --preset xor-ca-nn -k 3 --warmup 1 -n 1

# --json where no file can be written fails before the run (it was found
# out after the whole benchmark): 10⁸ xor steps would take minutes.
: >"$dir/regular"
status=0
timeout 30 "$caml" bench --preset xor-ca-nn --warmup 1 -n 100000000 \
  --json "$dir/regular/bench.json" >"$dir/out" 2>"$dir/err" || status=$?
[ $status -eq 1 ] || { echo "--json under a regular file: exit status $status, not 1"; cat "$dir/out" "$dir/err"; exit 1; }
grep -q "^caml bench: --json $dir/regular/bench.json: cannot save into $dir/regular: " "$dir/err" \
  || { echo "--json under a regular file: no message"; cat "$dir/err"; exit 1; }
! grep -q '^training:' "$dir/out" || { echo "--json under a regular file: trained first"; cat "$dir/out"; exit 1; }

# The help says what the engine does with threads (it said
# OPENBLAS_NUM_THREADS chose them, which the engine overrides).
"$caml" bench --help >"$dir/out"
! grep -q 'OPENBLAS_NUM_THREADS (default: all cores)' "$dir/out" || { echo "bench --help: OpenBLAS threads"; exit 1; }
grep -q 'into as many parts as the thread count' "$dir/out" || { echo "bench --help: no word on threads"; cat "$dir/out"; exit 1; }

# --synthetic images cannot stand in for other data: a usage error.
expect_usage "--synthetic on xor" "^caml bench: --synthetic: makes 28×28 images, but xor-ca-nn trains on xor data" \
  --preset xor-ca-nn --synthetic

# --threads LIST: a scaling table, one row per count in the order given, the
# first at 1.00×; the JSON has the same rows. Counts are checked like
# --threads N, each given once.
"$caml" bench --preset xor-nn2 --warmup 1 -n 20 --profile-steps 1 --threads 2,1,3 \
  --json "$dir/scale.json" >"$dir/out" 2>"$dir/err" \
  || { echo "bench --threads 2,1,3 failed"; cat "$dir/out" "$dir/err"; exit 1; }
grep -q '^  threads    steps/s' "$dir/out" || { echo "no scaling table"; cat "$dir/out"; exit 1; }
rows=$(sed -n '/^  threads /,/^peak memory/p' "$dir/out" | awk '$1 ~ /^[0-9]+$/ { print $1 }' | tr '\n' ' ')
[ "$rows" = "2 1 3 " ] || { echo "scaling rows \"$rows\", not \"2 1 3 \""; cat "$dir/out"; exit 1; }
sed -n '/^  threads /,/^peak memory/p' "$dir/out" | awk '$1 == 2 && $4 != "1.00×" { exit 1 }' \
  || { echo "the first count is not 1.00×"; cat "$dir/out"; exit 1; }
grep -q '^per step over 1 profiled steps on 3 threads:' "$dir/out" \
  || { echo "the profile is not at the last count"; cat "$dir/out"; exit 1; }
check_json "$dir/scale.json"
[ "$(grep -c '"speedup"' "$dir/scale.json")" -eq 3 ] || { echo "no 3 scaling rows in the JSON"; cat "$dir/scale.json"; exit 1; }
for bad in 0,1 1,x 2,2 1,,2; do
  expect_usage "--threads $bad" "^caml bench: --threads $bad" --preset xor-nn2 --threads "$bad"
done

echo ok
