#!/bin/sh
# cli-mpi.sh CAML — `caml train` on several ranks (mpirun): -np 1, 2 and 3
# (uneven shares, and a rank with none) train what one process trains,
# within the rounding of the sums, for a dense model, a CA-CNN and a text
# model; only the first rank speaks and writes; a command that runs on one
# rank only says so; a rank killed mid-run ends the job within seconds,
# saying the step, and the checkpoint it left goes on with -np 1 and -np 2.
# Skipped (77) without mpirun or a caml built with MPI.
set -eu
caml=$1
command -v mpirun >/dev/null 2>&1 || { echo "skipped: no mpirun (Debian: openmpi-bin)"; exit 77; }
"$caml" --version | grep -q "several ranks under mpirun" \
  || { echo "skipped: this caml was built without MPI (libopenmpi-dev)"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "skipped: no python3 to compare the figures"; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/caml-cli-mpi.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail () { echo "$1"; shift; cat "$@"; exit 1; }
# As root, Open MPI wants to be told; more ranks than cores are fine here.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Under AddressSanitizer, no leak check of the ranks: Open MPI unloads its
# components at MPI_Finalize, leaving their allocations unattributable (the
# runs without mpirun, the same code but MPI, keep the check).
mpi () {
  np=$1; shift
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    timeout 300 mpirun --oversubscribe -x ASAN_OPTIONS -np "$np" "$caml" "$@"
}

# Images: bars whose position is the label (as cli-sigma.sh).
python3 - "$dir" <<'PY'
import random, struct, sys
d = sys.argv[1]
for name, n, seed in (("train", 150, 1), ("test", 40, 2)):
    rng = random.Random(seed)
    img = bytearray(struct.pack(">IIII", 0x803, n, 12, 12))
    lab = bytearray(struct.pack(">II", 0x801, n))
    for _ in range(n):
        label = rng.randrange(10)
        px = bytearray(12 * 12)
        y0 = rng.randrange(4)
        for y in range(y0, y0 + 6):
            px[y * 12 + label] = 255
        img += px
        lab.append(label)
    open(f"{d}/{name}-images", "wb").write(img)
    open(f"{d}/{name}-labels", "wb").write(lab)
PY
cat >"$dir/cnn.json" <<JSON
{ "name": "bars", "seed": 3,
  "data": { "idx": { "train_images": "$dir/train-images", "train_labels": "$dir/train-labels",
                     "test_images": "$dir/test-images", "test_labels": "$dir/test-labels" } },
  "model": [ { "layer": "ca_cnn", "kernel": 3, "depth": 4 },
             { "layer": "dense", "units": 10, "activation": "identity" } ],
  "loss": "softmax_cross_entropy",
  "optimizer": { "type": "adagrad", "lr": 0.05 },
  "training": { "steps": 30, "batch_size": 25, "eval_every": 10 } }
JSON
# text: word sentiment, a CA-BSFE bag of words (sparse rows of a word table)
python3 - "$dir" <<'PY'
import random, sys
d = sys.argv[1]
good, bad = ["good", "fine", "great", "fun"], ["bad", "dull", "awful", "slow"]
other = ["the", "film", "plot", "was", "a", "very", "and"]
for name, n, seed in (("train", 120, 4), ("test", 40, 5)):
    rng = random.Random(seed)
    with open(f"{d}/{name}.tsv", "w") as f:
        for i in range(n):
            label = i % 2
            words = [rng.choice(other) for _ in range(rng.randrange(2, 7))]
            words.insert(rng.randrange(len(words) + 1), rng.choice(good if label else bad))
            f.write(" ".join(words) + "\t" + str(label) + "\n")
PY
cat >"$dir/text.json" <<JSON
{ "name": "words", "seed": 4,
  "data": { "text": { "train": "$dir/train.tsv", "test": "$dir/test.tsv" } },
  "model": [ { "layer": "ca_bsfe", "dim": 6, "gate_dim": 3 },
             { "layer": "dense", "units": 1, "activation": "identity" } ],
  "loss": "sigmoid_cross_entropy",
  "optimizer": { "type": "adagrad", "lr": 0.2 },
  "training": { "steps": 30, "batch_size": 16, "eval_every": 10 } }
JSON

# metrics.csv of a against b: every row's train and test loss within tol.
same_metrics () {
  python3 - "$1" "$2" "$3" <<'PY' || exit 1
import csv, sys
a, b, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
ra, rb = list(csv.DictReader(open(a))), list(csv.DictReader(open(b)))
if len(ra) != len(rb):
    sys.exit(f"{a}: {len(ra)} rows, {b}: {len(rb)}")
for x, y in zip(ra, rb):
    for key in ("train_loss", "test_loss"):
        u, v = float(x[key]), float(y[key])
        if abs(u - v) > tol * max(1.0, abs(v)):
            sys.exit(f"step {x['step']}: {key} {u} against {v} alone")
PY
}

for model in surface "$dir/cnn.json" "$dir/text.json"; do
  case $model in
    surface) what=surface; args="--preset surface-ca-nn-2 --steps 40" ;;
    *) what=$(basename "$model" .json); args=$model ;;
  esac
  # shellcheck disable=SC2086
  "$caml" train $args -q -o "$dir/$what-alone" >"$dir/out" 2>&1 || fail "$what: alone failed" "$dir/out"
  for np in 1 2 3; do
    # shellcheck disable=SC2086
    mpi $np train $args -q -o "$dir/$what-$np" >"$dir/out" 2>&1 \
      || fail "$what: mpirun -np $np failed" "$dir/out"
    # one rank speaks: one summary line, no rank's name
    [ "$(grep -c '^results in ' "$dir/out")" -eq 1 ] || fail "$what -np $np: not one results line" "$dir/out"
    ! grep -q 'rank [0-9]' "$dir/out" || fail "$what -np $np: a rank spoke" "$dir/out"
    same_metrics "$dir/$what-$np/metrics.csv" "$dir/$what-alone/metrics.csv" 1e-4 \
      || { echo "$what: -np $np differs from one process"; exit 1; }
    # no checkpoint left after a run that ended well
    [ ! -e "$dir/$what-$np/checkpoint" ] || fail "$what -np $np: a checkpoint left" "$dir/out"
  done
done

# One process trains alone exactly as mpirun -np 1 (the same code path).
cmp "$dir/cnn-alone/model.weights" "$dir/cnn-1/model.weights" \
  || { echo "mpirun -np 1 trained other weights than one process"; exit 1; }

# Commands that run on one rank only say so, once, with status 2.
status=0
mpi 2 eval "$dir/cnn-alone/experiment.json" --weights "$dir/cnn-alone/model.weights" \
  >"$dir/out" 2>&1 || status=$?
[ $status -ne 0 ] || fail "mpirun -np 2 caml eval: status 0" "$dir/out"
[ "$(grep -c 'runs on one rank only' "$dir/out")" -eq 1 ] \
  || fail "mpirun -np 2 caml eval: not said once" "$dir/out"

# A rank that cannot start (here it is given a file that does not exist:
# mpirun's MPMD form, one command per rank) says why, and the job ends on
# every rank with a failure, never a hang.
for verb in train sweep; do
  grid="-q"; [ $verb = train ] || grid="--grid kernel=3"
  status=0
  # shellcheck disable=SC2086
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout 60 mpirun --oversubscribe \
    -x ASAN_OPTIONS -np 1 "$caml" $verb "$dir/cnn.json" $grid -o "$dir/start-$verb" \
    : -np 1 "$caml" $verb "$dir/missing.json" $grid -o "$dir/start-$verb" \
    >"$dir/out" 2>&1 || status=$?
  [ $status -ne 0 ] && [ $status -ne 124 ] || fail "$verb: a rank without its file: status $status" "$dir/out"
  grep -q "rank 1.*missing.json" "$dir/out" \
    || fail "$verb: the rank that could not start did not say why" "$dir/out"
done

# caml sweep hands its runs to the ranks as they become free: the same
# tables as one process (but the seconds and the speed), a failing run
# marked failed while the others go on (surface-ca-nn-1's readout cannot be
# 2 wide), and each run's progress said by the first rank.
sweep_args="--preset surface-ca-nn-1 --grid 1.units=1,2 --grid 0.units=3,5 -n 60"
# shellcheck disable=SC2086
"$caml" sweep $sweep_args -o "$dir/sweep-alone" >"$dir/out" 2>&1 && fail "sweep alone: status 0" "$dir/out"
for np in 2 3; do
  status=0
  # shellcheck disable=SC2086
  mpi $np sweep $sweep_args -o "$dir/sweep-$np" >"$dir/out" 2>&1 || status=$?
  [ $status -eq 1 ] || fail "sweep -np $np: status $status, not 1 (two runs fail)" "$dir/out"
  python3 - "$dir/sweep-alone/sweep.csv" "$dir/sweep-$np/sweep.csv" <<'PY' || fail "sweep -np $np: other tables" "$dir/out"
import csv, sys
a, b = (list(csv.DictReader(open(p))) for p in sys.argv[1:])
for row in a + b:
    del row["seconds"], row["steps_per_second"]
if a != b:
    sys.exit("\n".join(map(str, a)) + "\nagainst\n" + "\n".join(map(str, b)))
if sum(r["status"] == "failed" for r in b) != 4 or sum(r["status"] == "ok" for r in b) != 4:
    sys.exit("not 4 failed and 4 ok runs: " + str(b))
PY
  [ "$(grep -c '^\[[0-9]/4\] .* … (rank [0-9])$' "$dir/out")" -eq 8 ] \
    || fail "sweep -np $np: not 8 runs handed out" "$dir/out"
  grep -q "^caml sweep: 4 of 8 runs failed" "$dir/out" || fail "sweep -np $np: no count of the failures" "$dir/out"
  # the first rank alone writes the tables (another wrote empty ones)
  ! grep -q "waiting for another command" "$dir/out" || fail "sweep -np $np: two ranks wrote the tables" "$dir/out"
  [ -s "$dir/sweep-$np/sweep.png" ] && [ -s "$dir/sweep-$np/1.units=1-0.units=5/baseline/model.weights" ] \
    || fail "sweep -np $np: a plot or a run's weights missing" "$dir/out"
done

# A rank killed mid-run: the job ends within 10 s on every rank, the first
# saying at which step and how to go on; the checkpoint of the last
# evaluation goes on with -np 1 and with -np 2, to the end.
sed 's/"steps": 30, "batch_size": 25, "eval_every": 10/"steps": 200000, "batch_size": 25, "eval_every": 20/' \
  "$dir/cnn.json" >"$dir/long.json"
(mpi 2 train "$dir/long.json" --plain -o "$dir/killed" >"$dir/killed.txt" 2>&1
 echo "status $?" >>"$dir/killed.txt") &
job=$!
for i in $(seq 1 100); do
  [ -s "$dir/killed/checkpoint/trainer.state" ] && break
  sleep 0.2
done
[ -s "$dir/killed/checkpoint/trainer.state" ] || fail "no checkpoint after 20 s" "$dir/killed.txt"
sleep 1
victim=$(pgrep -n -f "$caml train $dir/long.json") || fail "no rank to kill" "$dir/killed.txt"
kill -9 "$victim"
start=$(date +%s)
wait $job || true
took=$(( $(date +%s) - start ))
[ $took -le 10 ] || fail "the job took $took s to end after a rank was killed" "$dir/killed.txt"
grep -q "exited on signal 9" "$dir/killed.txt" || fail "no word of the killed rank" "$dir/killed.txt"
grep -q "at step [0-9]* of 200000; should the job end first, \`caml train --resume $dir/killed/checkpoint --out $dir/killed\`" \
  "$dir/killed.txt" || fail "no step and no way to go on" "$dir/killed.txt"
! pgrep -f "$caml train $dir/long.json" >/dev/null || fail "a rank is still running" "$dir/killed.txt"
cp -r "$dir/killed" "$dir/killed2"
# to go on: a total past the step where it stopped
total=$(( $(sed -n 's/.*at step \([0-9]*\) of 200000.*/\1/p' "$dir/killed.txt") + 60 ))
for np in 1 2; do
  out=$dir/killed; [ $np -eq 1 ] || out=$dir/killed2
  if [ $np -eq 1 ]; then
    "$caml" train --resume "$out/checkpoint" --out "$out" --steps $total -q >"$dir/out" 2>&1 \
      || fail "--resume with one process failed" "$dir/out"
  else
    mpi 2 train --resume "$out/checkpoint" --out "$out" --steps $total -q >"$dir/out" 2>&1 \
      || fail "--resume with -np 2 failed" "$dir/out"
  fi
  grep -q "^finished after $total steps" "$dir/out" || fail "-np $np: the run did not finish" "$dir/out"
  [ -s "$out/model.weights" ] && [ ! -e "$out/checkpoint" ] \
    || fail "-np $np: results not in place, or the checkpoint left" "$dir/out"
done

echo ok
