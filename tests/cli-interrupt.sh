#!/bin/sh
# cli-interrupt.sh CAML — Ctrl+C (SIGINT) stops a run and says at once that
# it is evaluating and saving the results; a second aborts with exit status
# 130 and leaves an earlier run's results in the directory as they were
# (nothing of the aborted run written, no staging directory left).
set -eu
caml=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/caml-cli-interrupt.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail () { echo "$1"; shift; cat "$@"; exit 1; }
listing () {
  (cd "$1" && find . | LC_ALL=C sort | while read -r f; do
     if [ -f "$f" ]; then echo "$f $(cksum <"$f")"; else echo "$f dir"; fi
   done)
}
# wait_for PATTERN FILE: up to 30 s for a line of FILE to match.
wait_for () {
  tries=0
  while ! grep -q "$1" "$2" && [ $tries -lt 600 ]; do
    sleep 0.05; tries=$((tries + 1))
  done
  grep -q "$1" "$2"
}

"$caml" train --preset surface-ca-nn-2 -n 200 -q --out "$dir/r" >"$dir/t.txt" 2>&1 \
  || fail "the first run failed" "$dir/t.txt"
listing "$dir/r" >"$dir/before.txt"

# 4.2 million weights: evaluating and saving them takes seconds (its
# plot of the fitted surface evaluates the model on a grid, and the weights
# file is 17 MB), time for a second Ctrl+C.
cat >"$dir/wide.json" <<'J'
{"data": {"builtin": "surface"},
 "model": [{"layer": "dense", "units": 2048, "activation": "tanh"},
           {"layer": "dense", "units": 2048, "activation": "tanh"}, {"layer": "dense", "units": 1}],
 "optimizer": {"type": "sgd", "lr": 0.001},
 "training": {"steps": 100000000, "eval_every": 100000000}}
J
: >"$dir/e.txt"
"$caml" train "$dir/wide.json" --plain --out "$dir/r" >"$dir/o.txt" 2>"$dir/e.txt" &
pid=$!
wait_for '^training ' "$dir/o.txt" || fail "the run did not start" "$dir/o.txt" "$dir/e.txt"
sleep 0.5
kill -INT $pid
wait_for 'stopping: evaluating and saving the results (Ctrl-C again to abort)' "$dir/e.txt" \
  || { kill -TERM $pid 2>/dev/null; fail "nothing said on the first SIGINT" "$dir/o.txt" "$dir/e.txt"; }
kill -INT $pid 2>/dev/null || true
status=0
wait $pid || status=$?
if grep -q '^results in' "$dir/o.txt"; then
  echo "the results were saved before the second SIGINT arrived: this machine is too fast for the test"
  exit 77
fi
[ $status -eq 130 ] || fail "two SIGINTs: exit status $status, not 130" "$dir/o.txt" "$dir/e.txt"
grep -q '^caml train: aborted: nothing of this run was kept' "$dir/e.txt" \
  || fail "the second SIGINT did not abort" "$dir/o.txt" "$dir/e.txt"
listing "$dir/r" >"$dir/after.txt"
diff "$dir/before.txt" "$dir/after.txt" >"$dir/diff.txt" \
  || fail "an aborted run changed the earlier run's results:" "$dir/diff.txt" "$dir/e.txt"

# An aborted run into a directory it made (and its parent) leaves no empty
# directory behind — and takes away no directory it did not make: through
# "new/..", keep/empty (the user's, empty) went too.
: >"$dir/e.txt"; : >"$dir/o.txt"
mkdir -p "$dir/keep/empty"
"$caml" train "$dir/wide.json" --plain --out "$dir/new/../keep/empty/sub" >"$dir/o.txt" 2>"$dir/e.txt" &
pid=$!
wait_for '^training ' "$dir/o.txt" || fail "the run did not start" "$dir/o.txt" "$dir/e.txt"
sleep 0.5
kill -INT $pid
wait_for 'stopping: evaluating' "$dir/e.txt" \
  || { kill -TERM $pid 2>/dev/null; fail "nothing said on the first SIGINT" "$dir/o.txt" "$dir/e.txt"; }
kill -INT $pid 2>/dev/null || true
status=0
wait $pid || status=$?
if grep -q '^results in' "$dir/o.txt"; then
  echo "the results were saved before the second SIGINT arrived: this machine is too fast for the test"
  exit 77
fi
[ $status -eq 130 ] || fail "two SIGINTs: exit status $status, not 130" "$dir/o.txt" "$dir/e.txt"
[ ! -e "$dir/new" ] || fail "an aborted run left the directory it made behind:" "$dir/e.txt"
[ ! -e "$dir/keep/empty/sub" ] || fail "an aborted run left the directory it made behind:" "$dir/e.txt"
[ -d "$dir/keep/empty" ] || fail "an aborted run removed a directory it did not make:" "$dir/e.txt"

# Stopped by SIGINT, the process ends by SIGINT once its results are saved
# (it exited 130: a bash loop around it went on with the next command).
python3 - "$caml" "$dir/wide.json" "$dir/by-signal" <<'PY' || fail "a stopped run did not end by SIGINT" "$dir/e.txt"
import signal, subprocess, sys, time
p = subprocess.Popen([sys.argv[1], "train", sys.argv[2], "--plain", "--out", sys.argv[3]],
                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
for line in p.stdout:
    if line.startswith("training "):
        break
time.sleep(0.3)
p.send_signal(signal.SIGINT)
out = p.stdout.read()
code = p.wait()
print("exit:", code, "saved:", "results in" in out)
sys.exit(0 if code == -signal.SIGINT and "results in" in out else 1)
PY
echo ok
