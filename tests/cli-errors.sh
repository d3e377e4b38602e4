#!/bin/sh
# cli-errors.sh CAML VERSION — what `caml` does with bad input and hostile
# conditions: usage errors exit 2 before anything is written, failures exit 1
# with a message that says what is wrong, a run keeps what it can.
set -eu
caml=$1
version=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/caml-cli-errors.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"

# expect STATUS PATTERN COMMAND… — the command exits STATUS and its stderr
# matches PATTERN (grep -E).
expect () {
  want=$1 pattern=$2
  shift 2
  status=0
  "$@" >out.txt 2>err.txt || status=$?
  if [ "$status" -ne "$want" ]; then
    echo "FAIL: $* exited $status, expected $want"; cat out.txt err.txt; exit 1
  fi
  if [ -n "$pattern" ] && ! grep -Eq "$pattern" err.txt; then
    echo "FAIL: $* said:"; cat err.txt; echo "expected: $pattern"; exit 1
  fi
}

# Usage errors: 2, and no output directory made.
# Each names the option that is wrong, and only it (both were named).
expect 2 '^caml train: --steps -1: expected a whole number in 1…1000000000$' \
  "$caml" train --preset xor-ca-nn -n -1 -o u1
! grep -q -- '--seed' err.txt || { echo "FAIL: --steps -1 named --seed"; cat err.txt; exit 1; }
expect 2 '^caml train: --seed -1: expected a whole number in 0…' "$caml" train --preset xor-ca-nn -s -1 -o u1
! grep -q -- '--steps' err.txt || { echo "FAIL: --seed -1 named --steps"; cat err.txt; exit 1; }
expect 2 '^caml train: --kernel -3: layer 0 \(ca_cnn\): kernel: -3 is out of range 1…32$' \
  "$caml" train --preset mnist-ca-cnn -k -3 -o u1
# 0 was read as "not given" and the preset's 5 kept, silently.
expect 2 '^caml train: --kernel 0: layer 0 \(ca_cnn\): kernel: 0 is out of range 1…32$' \
  "$caml" train --preset mnist-ca-cnn -k 0 -o u1
expect 2 '^caml train: --depth 0: layer 0 \(ca_cnn\): depth: 0 is out of range' \
  "$caml" train --preset mnist-ca-cnn -d 0 -o u1
expect 2 '^caml bench: --kernel 0: ' "$caml" bench -k 0 --synthetic -n 5
expect 2 '^caml train: --kernel 0: no layer of this experiment has an option "kernel"$' \
  "$caml" train --preset surface-ca-nn-1 -k 0 -o u1
expect 2 'units: "0x10" is not a number' "$caml" train --preset xor-ca-nn -O units=0x10 -o u1
expect 2 'units: "nan" is not a number' "$caml" train --preset xor-ca-nn -O units=nan -o u1
expect 2 'give either --preset NAME or one' "$caml" train --preset xor-ca-nn x.json -o u1
expect 2 "give either --preset NAME or one" "$caml" sweep --preset xor-ca-nn x.json --grid units=1,2
expect 2 "give either --preset NAME or one" "$caml" bench --preset xor-ca-nn x.json
expect 2 'sigma-steps: "foo"' "$caml" train --preset xor-ca-nn --sigma-steps=foo -o u1
# A preset that does not exist is a usage error like any other (it exited 1).
expect 2 '^caml bench: no preset named "nope" \(presets: .*xor-nn' "$caml" bench -p nope
expect 2 '^caml train: no preset named "nope"' "$caml" train -p nope -o u1
expect 2 '^caml sweep: no preset named "nope"' "$caml" sweep -p nope --grid units=1 -o u1
expect 2 '^caml eval: no preset named "nope"' "$caml" eval -p nope -w none -o u1
expect 2 '^caml eval: --seed -5: expected a whole number in 0…' "$caml" eval --preset xor-ca-nn -s -5 -w none
expect 2 'unexpected argument "extra"' "$caml" presets extra
expect 2 'unexpected argument "foo"' "$caml" layers foo
expect 2 '^caml rnn-sanity: --lr 0: expected a number in \(0, 1000\)$' "$caml" rnn-sanity --lr 0 -o u1
expect 2 '^caml rnn-sanity: --lr nan: expected a number in \(0, 1000\)$' "$caml" rnn-sanity --lr nan -o u1
# --units 0 meant "the presets' width" and was taken; each option says its own range.
expect 2 '^caml rnn-sanity: --units 0: expected a whole number in 1…4096$' "$caml" rnn-sanity --units 0 -o u1
expect 2 '^caml rnn-sanity: --runs 0: expected a whole number in 1…10000$' "$caml" rnn-sanity --runs 0 -o u1
# An option given two values was settled silently by the last one.
expect 2 '^caml train: --steps is given twice, as "10" and as "20": give it once$' \
  "$caml" train --preset xor-ca-nn --steps 10 -n 20 -o u1
expect 2 '^caml sem: --pairs is given twice, as "a" and as "b"' "$caml" sem --pairs a --pairs=b
expect 2 '^caml sweep: --out is given twice' "$caml" sweep -p xor-ca-nn --grid units=1 -o u1 -o u2
# GOption reads whole numbers in base 0: -n 010 trained 8 steps and -n 0x20
# 32, while -O kernel=010 is 10.
expect 2 '^caml train: --steps "010": write a whole number in decimal digits, without leading zeros$' \
  "$caml" train --preset xor-ca-nn -n 010 -o u1
expect 2 '^caml bench: --kernel "0x3": write a whole number' "$caml" bench -p xor-ca-nn -k 0x3
# Two layer options that set one layer's option to different values: the
# last one (or -k over -O, whatever came last) won silently. (N.KEY over a
# bare KEY is no conflict: the layer named wins, in either order — below.)
expect 2 '^caml train: -O 0.units=2 and -O 0.units=3 both set units of layer 0 \(dense\), to different values: give it once$' \
  "$caml" train --preset xor-nn -O 0.units=2 -O 0.units=3 -o u1
expect 2 '^caml train: -O units=2 and -O units=3 both set units of layer 0 \(dense\)' \
  "$caml" train --preset xor-nn -O units=2 -O units=3 -o u1
# …also when an N.KEY came between them, before or after
expect 2 '^caml train: -O units=64 and -O units=3 both set units of layer 0 \(dense\)' \
  "$caml" train --preset xor-nn -O units=64 -O 0.units=3 -O units=3 -o u1
expect 2 '^caml train: -O units=64 and -O units=5 both set units of layer 0 \(dense\)' \
  "$caml" train --preset xor-nn -O 0.units=3 -O units=64 -O units=5 -o u1
expect 2 '^caml train: -O kernel=5 and --kernel 3 both set kernel of layer 0 \(ca_cnn\)' \
  "$caml" train --preset mnist-ca-cnn -k 3 -O kernel=5 -o u1
expect 2 '^caml sweep: -O 0.units=4 and --grid 0.units=2,3 both set units of layer 0' \
  "$caml" sweep --preset xor-nn --grid 0.units=2,3 -O 0.units=4 -o u1
# -O sets a setting by its path too, with the file's ranges; beside the
# option that sets it, the last one won silently.
expect 2 '^caml train: optimizer.lr: -1 is out of range \(must be > 0\)$' \
  "$caml" train --preset xor-ca-nn -O optimizer.lr=-1 -o u1
expect 2 '^caml train: optimizer.lrr: not a setting \(one of optimizer.lr, ' \
  "$caml" train --preset xor-ca-nn -O optimizer.lrr=1 -o u1
expect 2 '^caml train: -O optimizer.lr=0.5 and -O optimizer.lr=0.4 both set optimizer.lr, to different values: give it once$' \
  "$caml" train --preset xor-ca-nn -O optimizer.lr=0.5 -O optimizer.lr=0.4 -o u1
expect 2 '^caml train: --steps 5 and -O training.steps=6 both set training.steps: give it once$' \
  "$caml" train --preset xor-ca-nn -n 5 -O training.steps=6 -o u1
expect 2 '^caml train: --seed 5 and -O seed=6 both set seed: give it once$' \
  "$caml" train --preset xor-ca-nn -s 5 -O seed=6 -o u1
expect 2 '^caml rnn-sanity: -O 1.units=4 and --units 5 both set units of layer 1' \
  "$caml" rnn-sanity -O 1.units=4 --units 5 -o u1
expect 2 '^caml rnn-sanity: -O bogus=1: none of CA-RNN, LSTM and GRU has a layer option "bogus"$' \
  "$caml" rnn-sanity -O bogus=1 -o u1
expect 2 '^caml rnn-sanity: layer 1 \(ca_rnn\): peephole_init: 11 is out of range -10…10$' \
  "$caml" rnn-sanity -O peephole_init=11 -o u1
[ ! -e u1 ] || { echo "FAIL: a usage error left the output directory"; exit 1; }
# The same value twice, a flag twice, a repeatable option twice (-O, with
# the same value or for another option), and a value
# that looks like an option are all fine.
expect 0 '' "$caml" train --preset xor-nn -n 3 --steps 3 -q -q -O 0.units=3 -O 0.units=3 -O 0.activation=relu --out --steps
[ -f ./--steps/summary.json ] || { echo "FAIL: --out --steps did not write into ./--steps"; exit 1; }
rm -rf ./--steps
expect 0 '' "$caml" train --preset xor-ca-nn -n 3 -q -O optimizer.lr=0.125 -O training.batch_size=2 -o lr
grep -q '"lr": 0.125,' lr/experiment.json && grep -q '"batch_size": 2,' lr/experiment.json \
  || { echo "FAIL: -O optimizer.lr, -O training.batch_size"; cat lr/experiment.json; exit 1; }
rm -rf lr
# A bare KEY for every layer, and N.KEY for one of them, in either order.
for order in "-O units=4 -O 1.units=1" "-O 1.units=1 -O units=4"; do
  expect 0 '' "$caml" train --preset xor-nn -n 2 -q $order -o widths
  grep -q '"layer": "dense", "units": 4' widths/experiment.json \
    && grep -q '"layer": "dense", "units": 1' widths/experiment.json \
    || { echo "FAIL: $order"; cat widths/experiment.json; exit 1; }
  rm -rf widths
done
expect 0 '' "$caml" train --steps 3 --steps 4 --help
expect 0 '' "$caml" help help
grep -q '^Usage: caml COMMAND' out.txt || { echo "FAIL: caml help help"; exit 1; }
# `caml help --help` was 'unknown command "--help"', exit 2.
for h in --help -h; do
  expect 0 '' "$caml" help $h
  grep -q '^Usage: caml COMMAND' out.txt || { echo "FAIL: caml help $h"; cat out.txt err.txt; exit 1; }
done
expect 0 '' "$caml" train --help
grep -q 'caml train \[OPTION…\] (--preset NAME | FILE.json)' out.txt \
  || { echo "FAIL: the usage line of caml train:"; head -3 out.txt; exit 1; }
# sweep's and bench's usage lines said FILE.json twice.
for c in sweep bench; do
  expect 0 '' "$caml" $c --help
  grep -q "caml $c \[OPTION…\] [[(]--preset NAME | FILE.json[])]" out.txt \
    || { echo "FAIL: the usage line of caml $c:"; head -3 out.txt; exit 1; }
done

# The version, from meson.build (--version was an unknown command), then
# the kernels that run and the thread count.
for v in --version version; do
  expect 0 '' "$caml" $v
  [ "$(head -1 out.txt)" = "caml $version" ] || { echo "FAIL: caml $v said:"; cat out.txt; exit 1; }
  sed -n 2p out.txt | grep -q "OpenBLAS .* kernels.*; convolutions: the engine's .* kernels" \
    || { echo "FAIL: caml $v names no kernels:"; cat out.txt; exit 1; }
  sed -n 3p out.txt | grep -Eq '^threads [0-9]+ \(cores [0-9]+\)$' \
    || { echo "FAIL: caml $v gives no thread count:"; cat out.txt; exit 1; }
done
# --threads and $CAML_THREADS: a count from 1 to 256, in decimal digits,
# given once; applied (caml --version shows the environment's).
CAML_THREADS=3 "$caml" --version > out.txt
grep -q '^threads 3 ' out.txt || { echo "FAIL: CAML_THREADS=3 not applied"; cat out.txt; exit 1; }
for bad in 0 x 010 257 -1 ''; do
  expect 2 "CAML_THREADS=\"$bad\": expected a number of threads from 1 to 256" \
    env CAML_THREADS="$bad" "$caml" presets --names
  expect 2 "^caml train: --threads \"$bad\": expected a number of threads from 1 to 256" \
    "$caml" train --preset xor-ca-nn --threads "$bad" -q
done
expect 2 '^caml train: --threads is given twice, as "2" and as "3"' \
  "$caml" train --preset xor-ca-nn --threads 2 --threads 3 -q

# `caml presets`: the descriptions line up after the longest name (the
# names column was 20 wide; sst-attention-bahdanau is 22).
expect 0 '' "$caml" presets
columns=$(sed 's/^\([^ ]* *\).*/\1/' out.txt | awk '{ print length ($0) }' | sort -u)
[ "$(echo "$columns" | wc -l)" -eq 1 ] \
  || { echo "FAIL: caml presets: descriptions start at columns" $columns; cat out.txt; exit 1; }
longest=$("$caml" presets --names | awk '{ if (length ($0) > n) n = length ($0) } END { print n }')
[ "$columns" -eq $((longest + 1)) ] \
  || { echo "FAIL: caml presets: column $columns for names of up to $longest"; exit 1; }

# One step is "1 step".
expect 0 '' "$caml" train --preset xor-nn -n 1 -o one
grep -q '^training xor-nn (seed 0, 1 step, ' out.txt && grep -q '^finished after 1 step in ' out.txt \
  || { echo "FAIL: 1 step:"; cat out.txt; exit 1; }
# One run has no standard deviation: a dash, not "± 0".
expect 0 '' "$caml" rnn-sanity --runs 1 --steps 1 -o sanity1
grep -q '^1 run per cell, 1 full-batch step,' out.txt && [ "$(grep -c '± –  .*± –  .*± – ' out.txt)" -eq 3 ] \
  && ! grep -q '± 0' out.txt || { echo "FAIL: rnn-sanity --runs 1:"; cat out.txt; exit 1; }
grep -q '^CA-RNN,1,[^,]*,nan,' sanity1/rnn-sanity.csv \
  || { echo "FAIL: rnn-sanity.csv gives a std for one run"; cat sanity1/rnn-sanity.csv; exit 1; }

# Output that cannot be written is a failure.
if [ -w /dev/full ]; then
  expect 1 'cannot write the output' sh -c "\"$caml\" presets >/dev/full"
fi

# An output directory that cannot take files fails before training.
if [ -d /proc/self ]; then
  expect 1 '/proc/self: cannot write the results there' \
    "$caml" train --preset surface-ca-nn-1 -n 100000000 -o /proc/self
fi

# Targets the loss cannot take: refused before the run.
cat >softmax.json <<'J'
{"data": {"builtin": "surface"}, "model": [{"layer": "dense", "units": 1}],
 "loss": "softmax_cross_entropy", "training": {"steps": 10}}
J
expect 1 "has the target [-0-9.e]+, which is not a class of the model's outputs" \
  "$caml" train softmax.json -o t1 -q
# XOR's 0/1 targets are classes: two outputs under softmax train.
cat >xor-softmax.json <<'J'
{"data": {"builtin": "xor"}, "model": [{"layer": "dense", "units": 4, "activation": "tanh"},
 {"layer": "dense", "units": 2}], "loss": "softmax_cross_entropy", "training": {"steps": 10}}
J
expect 0 '' "$caml" train xor-softmax.json -o t3 -q
printf 'good film\t1\nbad film\t0\ngreat\t2\n' >three.tsv
cat >classes.json <<'J'
{"data": {"text": {"train": "three.tsv", "test": "three.tsv"}},
 "model": [{"layer": "average", "dim": 4}, {"layer": "dense", "units": 2}],
 "loss": "softmax_cross_entropy", "training": {"steps": 10}}
J
# The sample is named by its file and line (blank lines counted).
printf 'good film\t1\n\nbad film\t0\ngreat\t2\n' >three.tsv
expect 1 "^caml train: classes.json: [^ ]*three\.tsv:4: the sample has the target 2, which is not a class of the model's outputs" \
  "$caml" train classes.json -o t2 -q
# … in a held-out split too.
sed 's/"test": "three.tsv"}/"test": "three.tsv"}, "validation_fraction": 0.5/' classes.json >held.json
expect 1 "^caml train: held.json: [^ ]*three\.tsv:4: the sample has the target 2" \
  "$caml" train held.json -o t2 -q
# … before the output directory is made (it was left behind, empty).
[ ! -e t1 ] && [ ! -e t2 ] || { echo "FAIL: a refused run left its output directory"; exit 1; }
# An output directory that is a file, or has no name, is refused before the
# work, by name (`caml eval` printed its figures first; "Not a directory").
: >a-file
expect 1 '^caml train: a-file: cannot be the output directory: it is a file$' \
  "$caml" train xor-softmax.json -o a-file -q
expect 1 "^caml train: the output directory's name is empty$" "$caml" train xor-softmax.json -o '' -q
expect 1 '^caml train: /dev/null: cannot be the output directory: it is a character device$' \
  "$caml" train xor-softmax.json -o /dev/null -q
ln -s no-such-dir dangling
expect 1 '^caml train: dangling: cannot be the output directory: it is a symbolic link to no-such-dir, which does not exist$' \
  "$caml" train xor-softmax.json -o dangling -q
expect 1 '^caml eval: a-file: cannot be the output directory: it is a file$' \
  "$caml" eval t3/experiment.json -w t3/model.weights -o a-file
[ ! -s out.txt ] || { echo "FAIL: caml eval worked before refusing its output directory"; cat out.txt; exit 1; }
# Nothing to draw: the directory made for it goes again.
expect 0 '' "$caml" eval t3/experiment.json -w t3/model.weights -o e-none
grep -q '^nothing drawn into e-none/' out.txt && [ ! -e e-none ] \
  || { echo "FAIL: caml eval left an empty e-none/"; cat out.txt; exit 1; }

# A model that cannot be built: every command names the experiment file, then
# the layer by its index in "model"; a preset is named as such. Errors of a
# file the experiment names (a data set) name that file instead.
cat >shape.json <<'J'
{"data": {"builtin": "surface"},
 "model": [{"layer": "dense", "units": 4}, {"layer": "conv2d"}, {"layer": "dense", "units": 1}],
 "training": {"steps": 10}}
J
conv='layer 1 \(conv2d\), input shape \(4\): conv2d needs an image input \(C, H, W\), got the flat shape \(4\)'
expect 1 "^caml train: shape.json: $conv" "$caml" train shape.json -o s1 -q
[ ! -e s1 ] || { echo "FAIL: a model that cannot be built left the output directory"; exit 1; }
expect 1 "^caml eval: shape.json: $conv" "$caml" eval shape.json -w none
expect 1 "^caml bench: shape.json: $conv" "$caml" bench shape.json
expect 1 "^caml sweep: shape.json: $conv" "$caml" sweep shape.json --grid 2.units=1,2 \
  --no-baseline -o s2
# A JSON syntax error: FILE:LINE:COLUMN: PATH: problem, the column in
# characters (é is one), as every JSON reader words it.
printf '{\n  "name": "caf\303\251",\n  "seed": 1.e3\n}\n' >syntax.json
expect 1 "^caml train: syntax.json:3:11: seed: a malformed number \\(digits must follow '\\.'\\)\$" \
  "$caml" train syntax.json -o s3 -q
[ ! -e s3 ] || { echo "FAIL: a file with a syntax error left the output directory"; exit 1; }
printf '{\n  "name": "caf\303\251", "x" 1 }\n' >syntax.json
expect 1 "^caml train: syntax.json:2:23: expected ':' after the key, found '1'\$" \
  "$caml" train syntax.json -o s3 -q
cat >tokens.json <<'J'
{"data": {"builtin": "xor"}, "model": [{"layer": "embedding", "dim": 4}, {"layer": "mean_pool"},
 {"layer": "dense", "units": 1}]}
J
expect 1 '^caml train: tokens.json: layer 0 \(embedding\) takes token ids, but its input is \(2\)' \
  "$caml" train tokens.json -o s1 -q
# --validation on data without a validation split is a bad option (2)
expect 2 '^caml train: --validation 0.1: xor data has no validation split' \
  "$caml" train --preset xor-ca-nn -V 0.1 -o s3 -q
cat >missing.json <<'J'
{"data": {"text": {"train": "missing.tsv", "test": "missing.tsv"}},
 "model": [{"layer": "average", "dim": 4}, {"layer": "dense", "units": 2}]}
J
expect 1 '^caml train: missing.json: data.text.train: /[^ ]*/missing.tsv: no such file' \
  "$caml" train missing.json -o s4 -q
cat >missing-idx.json <<'J'
{"data": {"idx": {"train_images": "a", "train_labels": "b", "test_images": "c",
  "test_labels": "d"}}, "model": [{"layer": "flatten"}, {"layer": "dense", "units": 10}]}
J
expect 1 '^caml train: missing-idx.json: data.idx.train_images: /[^ ]*/a: no such file' \
  "$caml" train missing-idx.json -o s4 -q
# Every file the experiment names that cannot be opened is named by its key
# and the experiment, in the words of the loaders ("not a regular file (a
# directory)" everywhere; "is a directory" and bare paths were said too).
printf 'good film\t1\nbad film\t0\n' >ok.tsv
text_exp () {   # text_exp TRAIN EMBEDDINGS — an experiment in keys.json
  cat >keys.json <<J
{"data": {"text": {"train": "$1", "test": "ok.tsv"}, "embeddings": $2},
 "model": [{"layer": "embedding", "dim": 4, "pretrained": true}, {"layer": "mean_pool"},
  {"layer": "dense", "units": 2}], "loss": "softmax_cross_entropy", "training": {"steps": 2}}
J
}
text_exp "$dir" null
expect 1 "^caml train: keys.json: data.text.train: $dir: not a regular file \\(a directory\\)\$" \
  "$caml" train keys.json -o s5 -q
text_exp /dev/zero null
expect 1 '^caml train: keys.json: data.text.train: /dev/zero: not a regular file \(a character device\)$' \
  "$caml" train keys.json -o s5 -q
if [ "$(id -u)" -ne 0 ]; then   # root reads any file
  printf 'good film\t1\n' >secret.tsv
  chmod 000 secret.tsv
  text_exp secret.tsv null
  expect 1 '^caml train: keys.json: data.text.train: /[^ ]*/secret.tsv: cannot open: ' \
    "$caml" train keys.json -o s5 -q
fi
text_exp ok.tsv '"nofile.txt"'
expect 1 '^caml train: keys.json: data.embeddings: /[^ ]*/nofile.txt: no such file$' \
  "$caml" train keys.json -o s5 -q
text_exp ok.tsv "\"$dir\""
expect 1 "^caml train: keys.json: data.embeddings: $dir: not a regular file \\(a directory\\)\$" \
  "$caml" train keys.json -o s5 -q
[ ! -e s5 ] || { echo "FAIL: a data file that cannot be opened left s5"; exit 1; }

# An experiment read from a pipe (`caml train <(cat exp.json)`, or
# /dev/stdin fed by one) has no directory of its own: its relative data
# paths are relative to the current directory, not to /dev/fd
# ('/dev/fd/63: data.text.train: /dev/fd/good.tsv: no such file'), and it
# is "untitled", not named after the pipe ("63"). (A pipe, not a named
# FIFO: a FIFO's writer that comes after the reader's non-blocking open
# finds it gone — a race the fresh-clone CI hit.)
cat >piped.json <<'J'
{"data": {"text": {"train": "ok.tsv", "test": "ok.tsv"}},
 "model": [{"layer": "average", "dim": 4}, {"layer": "dense", "units": 2}],
 "loss": "softmax_cross_entropy", "training": {"steps": 2}}
J
cat piped.json | expect 0 '' "$caml" train /dev/stdin -o piped -q
grep -q "\"train\": \"$dir/ok.tsv\"" piped/experiment.json \
  || { echo "FAIL: the run's experiment.json does not hold $dir/ok.tsv"; cat piped/experiment.json; exit 1; }
grep -q '"name": "untitled"' piped/experiment.json \
  || { echo "FAIL: the experiment is named after the pipe"; cat piped/experiment.json; exit 1; }
# /dev/stdin redirected from a regular file is read the same way (its data
# were looked for in /dev).
expect 0 '' "$caml" train /dev/stdin -o from-stdin -q <piped.json
grep -q "\"train\": \"$dir/ok.tsv\"" from-stdin/experiment.json \
  || { echo "FAIL: /dev/stdin: the data were not looked for here"; cat from-stdin/experiment.json; exit 1; }

# Weights trained on other words are refused by eval, even when the
# vocabulary has the same size (every layer then fits).
printf 'good film\t1\nbad film\t0\n' >words.tsv
cat >words.json <<'J'
{"data": {"text": {"train": "words.tsv", "test": "words.tsv"}},
 "model": [{"layer": "average", "dim": 4}, {"layer": "dense", "units": 2}],
 "loss": "softmax_cross_entropy", "training": {"steps": 5}}
J
expect 0 '' "$caml" train words.json -o w -q
expect 0 '' "$caml" eval words.json -w w/model.weights
printf 'fine film\t1\nbad film\t0\n' >words.tsv
expect 1 '^caml eval: w/model.weights: byte 12: these weights were trained on a vocabulary of 3 words with fingerprint [0-9a-f]{16}; the data now gives 3 words with a different fingerprint \([0-9a-f]{16}\) — the training text or the data settings changed' \
  "$caml" eval words.json -w w/model.weights

# A loss that blows up while staying finite is a divergence: exit 1, the
# message says so, and the results of the steps kept (weights first) are
# written — here 20 of them, the run failing at step 26 and going back to
# its last healthy evaluation.
cat >blowup.json <<'J'
{"data": {"builtin": "surface"},
 "model": [{"layer": "dense", "units": 16, "activation": "relu"}, {"layer": "dense", "units": 1}],
 "optimizer": {"type": "sgd", "lr": 0.3, "momentum": 0.99},
 "training": {"steps": 1000, "eval_every": 10}}
J
expect 1 'step 26: .*is over a million times the first step.*rolled back to step 20 \(the last healthy evaluation\)' \
  "$caml" train blowup.json -o b -q
for f in model.weights summary.json metrics.csv loss.png; do
  [ -s "b/$f" ] || { echo "FAIL: a diverged run did not write $f"; exit 1; }
done
grep -q '"error"' b/summary.json || { echo "FAIL: summary.json lacks the error"; exit 1; }
grep -q '"diverged_at_step" : 26' b/summary.json && grep -q '"rolled_back_to" : 20' b/summary.json \
  || { echo "FAIL: summary.json does not say where the run diverged"; cat b/summary.json; exit 1; }
[ ! -e b/failed-summary.json ] || { echo "FAIL: a failure with steps kept wrote failed-summary.json"; exit 1; }

# A run that fails with nothing kept (rolled back to step 0) leaves an
# earlier run's results in the directory as they were: they were replaced
# by the untrained weights, and chi.png and parts.png deleted. Its own
# failure goes to failed-summary.json and failed-loss.png.
cat >diverge0.json <<'J'
{"data": {"builtin": "surface"},
 "model": [{"layer": "dense", "units": 16, "activation": "relu"}, {"layer": "dense", "units": 1}],
 "optimizer": {"type": "sgd", "lr": 1000}, "training": {"steps": 100}}
J
"$caml" train --preset surface-ca-nn-1 -n 50 -o good -q >/dev/null
cp -r good good.before
expect 1 'step 2: .*rolled back to step 0' "$caml" train diverge0.json -o good
grep -q '^nothing kept: .*good/ keeps what it held' out.txt \
  || { echo "FAIL: the run did not say it kept nothing"; cat out.txt; exit 1; }
for f in model.weights summary.json metrics.csv experiment.json loss.png surface.png chi.png parts.png; do
  cmp -s "good/$f" "good.before/$f" || { echo "FAIL: a run that kept nothing changed $f"; ls -l good; exit 1; }
done
grep -q '"diverged_at_step" : 2' good/failed-summary.json && grep -q '"rolled_back_to" : 0' good/failed-summary.json \
  || { echo "FAIL: no failed-summary.json"; ls good; exit 1; }
head -c 8 good/failed-loss.png | od -An -tx1 | grep -q "89 50 4e 47" || { echo "FAIL: no failed-loss.png"; exit 1; }
# A directory where the failure report goes is refused before training, as
# for every result name (the run said its failure was there).
mkdir failed-dir failed-dir/failed-summary.json
expect 1 'failed-dir/failed-summary.json: is not a file \(a directory\)' \
  "$caml" train diverge0.json -o failed-dir
grep -q '^training ' out.txt && { echo "FAIL: trained before refusing failed-summary.json"; exit 1; }
# … until a run that keeps its results replaces them: the failure report goes too.
"$caml" train --preset surface-nn -n 20 -o good -q >/dev/null
[ ! -e good/failed-summary.json ] && [ ! -e good/failed-loss.png ] && [ ! -e good/chi.png ] \
  || { echo "FAIL: an earlier run's files stayed beside a new run's"; ls good; exit 1; }

# An empty model reads (the workbench saves one) but does not train; a
# layer option on it is refused (an index into no layers crashed).
echo '{"model": []}' >empty.json
expect 1 '^caml train: empty.json: the model has no layers$' "$caml" train empty.json -o e1 -q
for opt in 0.units 3.units units; do
  expect 2 "^caml train: $opt: the model has no layers to set it on\$" \
    "$caml" train empty.json -O "$opt=2" -o e1 -q
done
expect 2 'the model has no layers to set it on' "$caml" sweep empty.json --grid 0.units=1,2 -o e2

# A name cannot place the default output outside runs/.
cat >evil.json <<'J'
{"name": "../../evil", "data": {"builtin": "xor"}, "model": [{"layer": "dense", "units": 1}],
 "training": {"steps": 5}}
J
mkdir -p sub/deeper
(cd sub/deeper && "$caml" train ../../evil.json -q >/dev/null)
[ ! -e evil-seed0 ] && [ ! -e sub/evil-seed0 ] || { echo "FAIL: results outside runs/"; exit 1; }
ls sub/deeper/runs/*evil-seed0/model.weights >/dev/null

# A reused output directory keeps no plots of an earlier, other run.
"$caml" train --preset surface-ca-nn-1 -n 20 -o reuse -q >/dev/null
[ -s reuse/surface.png ] && [ -s reuse/parts.png ] || { echo "FAIL: no surface plots"; exit 1; }
touch reuse/notes.txt
"$caml" train --preset rnn-sanity-lstm -n 20 -o reuse -q >/dev/null
[ ! -e reuse/surface.png ] && [ ! -e reuse/parts.png ] && [ ! -e reuse/chi.png ] \
  || { echo "FAIL: stale plots of the earlier run"; ls reuse; exit 1; }
[ -e reuse/notes.txt ] || { echo "FAIL: a file caml does not write was removed"; exit 1; }

# SIGTERM stops a run as Ctrl+C does, the results written; exit 143 (128 + 15).
# Sent after the first evaluation line, when the run is surely under way
# (term.txt made first: grep on a file the child has not opened yet ended
# the wait at once, and the signal came before the handler).
: >term.txt
"$caml" train --preset surface-ca-nn-2 -n 100000000 -o term --plain >term.txt 2>&1 &
pid=$!
tries=0
while [ "$(grep -c '^step ' term.txt)" -lt 1 ] && [ $tries -lt 600 ]; do
  sleep 0.1; tries=$((tries + 1))
done
kill -TERM $pid
status=0
wait $pid || status=$?
[ $status -eq 143 ] || { echo "FAIL: SIGTERM gave $status, not 143"; exit 1; }
[ -s term/model.weights ] && [ -s term/metrics.csv ] \
  || { echo "FAIL: SIGTERM lost the results"; exit 1; }

# Pre-trained word vectors: the coverage is reported; vectors of no word of
# the vocabulary (a cased file against the lower-cased tokens) are an error.
printf 'good film\t1\nbad plot\t0\n' >vtr.tsv
printf 'good plot\t1\n' >vte.tsv
printf 'film 1 2 3\ngood 4 5 6\n' >lower.txt
printf 'Film 1 2 3\nGood 4 5 6\n' >cased.txt
for v in lower cased; do
  cat >pre-$v.json <<EOF2
{ "data": { "text": { "train": "vtr.tsv", "test": "vte.tsv" }, "embeddings": "$v.txt" },
  "model": [ { "layer": "embedding", "dim": 3, "pretrained": true },
             { "layer": "mean_pool" }, { "layer": "dense", "units": 1 } ],
  "loss": "sigmoid_cross_entropy", "training": { "steps": 2, "eval_every": 2 } }
EOF2
done
expect 0 '' "$caml" train pre-lower.json -o pre --plain
grep -q "^word vectors: 2 of 4 training words found in .*/lower.txt$" out.txt \
  || { echo "FAIL: no coverage line:"; cat out.txt; exit 1; }
expect 1 'cased.txt: none of the 4 words .* lower-cases' "$caml" train pre-cased.json -o pre2

echo ok
