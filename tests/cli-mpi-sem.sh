#!/bin/sh
# cli-mpi-sem.sh CAML — `caml sem` on several ranks (mpirun): -np 1 is one
# process bit for bit; -np 2 and 3 (uneven shares, and a corpus file with
# fewer sentences than ranks) count the same corpus and fit the same CA-SEM
# within the rounding of the sums (the fixed-norm mode too); only the first rank prints and writes; a
# rank that cannot read its input ends the job at once, saying so; a
# failure every rank meets is said once. Skipped (77) without mpirun, a caml
# built with MPI, or python3 to compare the figures.
set -eu
caml=$1
command -v mpirun >/dev/null 2>&1 || { echo "skipped: no mpirun (Debian: openmpi-bin)"; exit 77; }
"$caml" --version | grep -q "several ranks under mpirun" \
  || { echo "skipped: this caml was built without MPI (libopenmpi-dev)"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "skipped: no python3 to compare the figures"; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/caml-cli-mpi-sem.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail () { echo "$1"; shift; cat "$@"; exit 1; }
# As root, Open MPI wants to be told; more ranks than cores are fine here.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Under AddressSanitizer, no leak check of the ranks: Open MPI unloads its
# components at MPI_Finalize, leaving their allocations unattributable (the
# run without mpirun, the same code but MPI, keeps the check). mpirun's own
# arguments first: one command, or several after -np N (MPMD, with ":").
mpi () {
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    timeout 300 mpirun --oversubscribe -x ASAN_OPTIONS "$@"
}

# 300 words in 12 dimensions sharing a direction (as CA-SEM's model has
# them), a corpus of two files — 301 sentences, and 2, fewer than the ranks
# — with words that have no vector, and 40 scored pairs.
python3 - "$dir" <<'PY'
import random, sys
d = sys.argv[1]
rng = random.Random(11)
D, V = 12, 300
words = ["w%d" % i for i in range(V)]
common = [rng.gauss(0, 1) + (2 if k == 0 else 0) for k in range(D)]
with open(f"{d}/vectors.txt", "w") as f:
    for w in words:
        c = rng.random()
        f.write(w + " " + " ".join("%.6f" % (c * common[k] + (1 - c) * rng.gauss(0, 1))
                                   for k in range(D)) + "\n")
# Zipf-like: a few frequent words, many rare ones, some without a vector
def sentence():
    out = []
    for _ in range(rng.randrange(3, 12)):
        if rng.random() < 0.08:
            out.append("oov%d" % rng.randrange(20))
        else:
            out.append(words[min(V - 1, int(rng.paretovariate(0.8)) - 1)])
    return " ".join(out)
with open(f"{d}/corpus-a.tsv", "w") as f:
    for i in range(301):
        f.write(sentence() + "\t" + str(i % 2) + "\n")
with open(f"{d}/corpus-b.tsv", "w") as f:
    f.write(sentence() + "\t" + sentence() + "\t3.5\n")
with open(f"{d}/pairs.tsv", "w") as f:
    for i in range(40):
        f.write(sentence() + "\t" + sentence() + "\t%.1f\n" % rng.uniform(1, 5))
with open(f"{d}/freq.txt", "w") as f:
    for i, w in enumerate(words):
        f.write("%s %d\n" % (w, 100000 // (i + 1)))
PY
common="--embeddings $dir/vectors.txt --word-freq $dir/freq.txt --corpus $dir/corpus-a.tsv \
  --corpus $dir/corpus-b.tsv --plain"
args="$common --pairs $dir/pairs.tsv --iterations 25"

# The results of a (from mpirun) against b (one process): the same corpus
# counts, words and iterations exactly; the energies within 1e-9 relative
# (summary.json, 17 digits) and 1e-8 (energy.csv, 9 digits); χ̃ within 2e-6
# (6 decimals: a last digit may round the other way); Pearson × 100 within
# 1e-3. Ranks add the same terms as one process, grouped by rank, so the
# sums differ in their last bits (measured: 1e-14 relative, test-sem.c);
# a missing or doubled share is off by far more.
same_results () {
  python3 - "$1" "$2" <<'PY' || exit 1
import csv, json, sys
a, b = sys.argv[1], sys.argv[2]
def close(x, y, rel, what):
    if abs(x - y) > rel * max(1.0, abs(y)):
        sys.exit(f"{what}: {x!r} against {y!r} for one process")
sa, sb = json.load(open(f"{a}/summary.json")), json.load(open(f"{b}/summary.json"))
for key in ("corpus_sentences", "corpus_tokens", "corpus_words", "corpus_words_with_vector",
            "corpus_tokens_without_vector", "iterations", "stop"):
    if sa[key] != sb[key]:
        sys.exit(f"{key}: {sa[key]!r} against {sb[key]!r} for one process")
for key in ("energy_initial", "energy_final"):
    close(sa[key], sb[key], 1e-9, key)
for key, value in sb["pearson_x100"].items():
    close(sa["pearson_x100"][key], value, 1e-3 / max(1.0, abs(value)), "Pearson " + key)
ea, eb = list(csv.reader(open(f"{a}/energy.csv"))), list(csv.reader(open(f"{b}/energy.csv")))
if len(ea) != len(eb):
    sys.exit(f"energy.csv: {len(ea)} rows against {len(eb)}")
for x, y in zip(ea[1:], eb[1:]):
    if x[0] != y[0] or x[3] != y[3]:
        sys.exit(f"energy.csv: iteration {x[0]} kept {x[3]}, one process {y[0]} {y[3]}")
    for i in (1, 2):
        close(float(x[i]), float(y[i]), 1e-8, f"energy.csv iteration {x[0]}")
    for i in (4, 5):
        if (x[i] == "") != (y[i] == ""):
            sys.exit(f"energy.csv iteration {x[0]}: Pearson {x[i]!r} against {y[i]!r}")
        if x[i]:
            close(float(x[i]), float(y[i]), 1e-3 / max(1.0, abs(float(y[i]))),
                  f"energy.csv iteration {x[0]} Pearson")
ca, cb = list(csv.reader(open(f"{a}/chi.csv"))), list(csv.reader(open(f"{b}/chi.csv")))
if [r[:3] for r in ca] != [r[:3] for r in cb]:
    sys.exit("chi.csv: other words, counts or vectors than one process's")
for x, y in zip(ca[1:], cb[1:]):
    if abs(float(x[3]) - float(y[3])) > 2e-6:
        sys.exit(f"chi.csv {x[0]}: χ̃ {x[3]} against {y[3]} for one process")
PY
}

"$caml" sem $args --out "$dir/alone" >"$dir/alone.txt" 2>&1 || fail "alone: failed" "$dir/alone.txt"
grep -q '"stop" : "iteration cap"' "$dir/alone/summary.json" \
  || fail "alone: the fit stopped before the cap (a near tie could end it differently)" \
          "$dir/alone/summary.json"
for np in 1 2 3; do
  mpi --output-filename "$dir/np$np.ranks" -np $np "$caml" sem $args --out "$dir/np$np" \
    >"$dir/np$np.txt" 2>&1 || fail "mpirun -np $np caml sem failed" "$dir/np$np.txt"
  # the first rank prints what one process prints; the others nothing
  grep '^corpus ' "$dir/np$np.txt" >"$dir/corpus.np"
  grep '^corpus ' "$dir/alone.txt" | cmp -s - "$dir/corpus.np" \
    || fail "-np $np: another corpus than one process's" "$dir/np$np.txt" "$dir/alone.txt"
  [ "$(grep -c '^results in ' "$dir/np$np.txt")" -eq 1 ] || fail "-np $np: not one results line" "$dir/np$np.txt"
  ! grep -q 'rank [0-9]' "$dir/np$np.txt" || fail "-np $np: a rank spoke" "$dir/np$np.txt"
  if [ $np -gt 1 ]; then
    grep -q "^ranks       $np: " "$dir/np$np.txt" || fail "-np $np: no word of the ranks" "$dir/np$np.txt"
    grep -q "\"ranks\" : $np," "$dir/np$np/summary.json" || fail "-np $np: summary.json: ranks" "$dir/np$np/summary.json"
  fi
  r=1
  while [ $r -lt $np ]; do
    for f in stdout stderr; do
      out=$(find "$dir/np$np.ranks" -path "*/rank.$r/$f")
      [ -n "$out" ] || fail "-np $np: no $f of rank $r kept by mpirun" "$dir/np$np.txt"
      [ ! -s "$out" ] || fail "-np $np: rank $r wrote to its $f" "$out"
    done
    r=$((r + 1))
  done
  same_results "$dir/np$np" "$dir/alone" || { echo "-np $np differs from one process"; exit 1; }
done
# One rank is one process: the same sums in the same order.
for f in chi.csv energy.csv; do
  cmp "$dir/np1/$f" "$dir/alone/$f" || { echo "mpirun -np 1: another $f than one process"; exit 1; }
done

# The fixed-norm mode on centred unit vectors (whose configuration sums over
# the ranks too), fitted to convergence: the same on 2 and 3 ranks.
fixed="$common --pairs $dir/pairs.tsv --iterations 1000 --mode fixed-norm --centre-vectors --unit-vectors"
"$caml" sem $fixed --out "$dir/fixed" >"$dir/fixed.txt" 2>&1 || fail "fixed norm alone: failed" "$dir/fixed.txt"
grep -q '"stop" : "energy stopped decreasing"' "$dir/fixed/summary.json" \
  || fail "fixed norm alone: did not converge" "$dir/fixed/summary.json"
for np in 2 3; do
  mpi -np $np "$caml" sem $fixed --out "$dir/fixed$np" >"$dir/fixed$np.txt" 2>&1 \
    || fail "mpirun -np $np caml sem --mode fixed-norm failed" "$dir/fixed$np.txt"
  same_results "$dir/fixed$np" "$dir/fixed" || { echo "fixed norm: -np $np differs from one process"; exit 1; }
done

# Only the first rank writes: given another --out, the others leave it alone
# (they do not even make it), and the first writes what -np 3 wrote.
mpi -np 1 "$caml" sem $args --out "$dir/first" : -np 2 "$caml" sem $args --out "$dir/others" \
  >"$dir/out" 2>&1 || fail "mpirun with two --out failed" "$dir/out"
[ ! -e "$dir/others" ] || fail "a rank past the first made or wrote its --out" "$dir/out"
cmp "$dir/first/chi.csv" "$dir/np3/chi.csv" || { echo "3 ranks fitted otherwise"; exit 1; }

# A rank that cannot read its input (a file missing on its machine): every
# rank stops before the fit, within seconds, that rank saying why; the
# first leaves no --out behind.
start=$(date +%s)
status=0
mpi -np 2 "$caml" sem $args --out "$dir/failed" \
  : -np 1 "$caml" sem $args --corpus "$dir/missing.tsv" --out "$dir/failed" \
  >"$dir/out" 2>&1 || status=$?
took=$(( $(date +%s) - start ))
[ $status -ne 0 ] && [ $status -ne 124 ] || fail "a rank without its corpus: status $status" "$dir/out"
[ $took -le 30 ] || fail "a rank without its corpus: the job took $took s to end" "$dir/out"
[ "$(grep -c "caml sem (rank 2): $dir/missing.tsv: no such file" "$dir/out")" -eq 1 ] \
  || fail "a rank without its corpus: not said once" "$dir/out"
! grep -q "rank [01]" "$dir/out" || fail "a rank with its corpus spoke" "$dir/out"
[ ! -e "$dir/failed" ] || fail "a failed job left --out" "$dir/out"
[ -z "$(pgrep -f "$caml sem .*--out $dir/failed")" ] || fail "a rank is still running" "$dir/out"

# SIGTERM to a rank past the first during the fit: every rank stops after
# the same iteration, the first writes what it reached and says why, and
# the job ends by the signal, within seconds.
(status=0
 mpi -np 2 "$caml" sem $common --pairs "$dir/pairs.tsv" --iterations 1000000 --out "$dir/int" \
   >"$dir/int.txt" 2>&1 || status=$?
 echo "status $status" >>"$dir/int.txt") &
job=$!
i=0
while ! grep -q '^ranks ' "$dir/int.txt" && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1
victim=
for pid in $(pgrep -f "^$caml sem .*--out $dir/int\$"); do
  tr '\0' '\n' <"/proc/$pid/environ" | grep -qx 'OMPI_COMM_WORLD_RANK=1' && victim=$pid
done
[ -n "$victim" ] || fail "no rank 1 to interrupt" "$dir/int.txt"
kill -TERM "$victim"
i=0
while ! grep -q '^status ' "$dir/int.txt" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if ! grep -q '^status ' "$dir/int.txt"; then
  kill $(pgrep -f "mpirun .*--out $dir/int\$") 2>/dev/null || true
  wait $job || true
  fail "the job did not end within 10 s of a rank's SIGTERM" "$dir/int.txt"
fi
wait $job
grep -q "^status 143$" "$dir/int.txt" || fail "not ended by SIGTERM" "$dir/int.txt"
last=$(sed -n 's/^caml sem: another rank was interrupted: the fit stops at iteration \([0-9]*\) and its results are written$/\1/p' "$dir/int.txt")
[ -n "$last" ] || fail "the first rank did not say why the fit stopped" "$dir/int.txt"
grep -q '"stop" : "interrupted"' "$dir/int/summary.json" && grep -q "\"iterations\" : $last," "$dir/int/summary.json" \
  || fail "summary.json: not interrupted at iteration $last" "$dir/int/summary.json"

# A failure every rank meets (a malformed pairs file) is said once, by the first.
printf 'a\tb\t1\nc\td\n' >"$dir/bad.tsv"
status=0
mpi -np 3 "$caml" sem $common --pairs "$dir/bad.tsv" --out "$dir/bad" >"$dir/out" 2>&1 || status=$?
[ $status -eq 1 ] || fail "a malformed pairs file on 3 ranks: status $status" "$dir/out"
[ "$(grep -c "bad.tsv:2: expected 3 tab-separated fields" "$dir/out")" -eq 1 ] \
  || fail "a malformed pairs file on 3 ranks: not said once" "$dir/out"
grep -q "^caml sem: .*bad.tsv:2:" "$dir/out" || fail "not said by the first rank" "$dir/out"
echo ok
