#!/bin/sh
# cli-sweep.sh CAML — `caml sweep` on tiny presets: -n and -s checked like
# `caml train`'s, and grid keys that set the same option twice refused,
# before anything is trained.
set -eu
caml=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/caml-cli-sweep.XXXXXX")
trap 'rm -rf "$dir"' EXIT

# expect_usage WHAT TEXT ARGS…: exit status 2, TEXT on stderr, nothing trained.
expect_usage () {
  what=$1 text=$2
  shift 2
  status=0
  "$caml" sweep "$@" -o "$dir/usage" >"$dir/out" 2>"$dir/err" || status=$?
  [ $status -eq 2 ] || { echo "$what: exit status $status, not 2"; cat "$dir/out" "$dir/err"; exit 1; }
  grep -q -- "$text" "$dir/err" || { echo "$what: stderr lacks \"$text\""; cat "$dir/err"; exit 1; }
  [ ! -e "$dir/usage" ] || { echo "$what: trained something"; ls -R "$dir/usage"; exit 1; }
}

# -n and -s: 4294967297 was truncated to 1 step, 2147483648 to -2147483648,
# and -7 or a negative seed fell back to the experiment's.
expect_usage "-n 4294967297" "^caml sweep: --steps 4294967297: expected a whole number in 1…1000000000" \
  --preset xor-ca-nn --grid units=1 -n 4294967297
expect_usage "-n 2147483648" "^caml sweep: --steps 2147483648: expected" --preset xor-ca-nn --grid units=1 -n 2147483648
expect_usage "-n -7" "^caml sweep: --steps -7: expected" --preset xor-ca-nn --grid units=1 -n -7
expect_usage "-n -1" "^caml sweep: --steps -1: expected" --preset xor-ca-nn --grid units=1 -n -1
expect_usage "-n 0" "^caml sweep: --steps 0: expected" --preset xor-ca-nn --grid units=1 -n 0
expect_usage "-s -3" "^caml sweep: --seed -3: expected a whole number in 0…" --preset xor-ca-nn --grid units=1 -s -3
expect_usage "-s -1" "^caml sweep: --seed -1: expected" --preset xor-ca-nn --grid units=1 -s -1

# A key given twice: the runs were labelled units=1 and units=2 but both
# trained with units=3 (the last --grid wins). So does a layer's option and
# the same option of every layer; a value given twice reused one directory.
expect_usage "units twice" "^caml sweep: --grid units=1,2 and --grid units=3 both set units: give each option once" \
  --preset surface-ca-nn-2 -n 2 --grid units=1,2 --grid units=3
expect_usage "units and 1.units" "^caml sweep: --grid units=1,2 and --grid 1.units=3 both set units of layer 1:" \
  --preset surface-ca-nn-2 -n 2 --grid units=1,2 --grid 1.units=3
expect_usage "1.units and 01.units" "both set units of layer 1:" \
  --preset surface-ca-nn-2 -n 2 --grid 1.units=1,2 --grid 01.units=3
expect_usage "a value twice" "^caml sweep: --grid units=2,3,2: the value 2 is given twice" \
  --preset surface-ca-nn-2 -n 2 --grid units=2,3,2
# Different layers' options are different keys.
"$caml" sweep --preset surface-ca-nn-2 -n 2 --no-baseline --grid 0.units=2 --grid 1.units=3 \
  -o "$dir/layers" >"$dir/out" 2>"$dir/err" || { echo "0.units with 1.units failed"; cat "$dir/out" "$dir/err"; exit 1; }

# In range: every run trains with them.
"$caml" sweep --preset xor-ca-nn --grid units=1 -n 7 -s 5 --no-baseline -o "$dir/ok" >"$dir/out" 2>"$dir/err" \
  || { echo "sweep -n 7 -s 5 failed"; cat "$dir/out" "$dir/err"; exit 1; }
grep -q '"steps" : 7' "$dir/ok/units=1/ca/summary.json" || { echo "the run did not train 7 steps"; cat "$dir/ok/units=1/ca/summary.json"; exit 1; }
grep -q '"seed" : 5' "$dir/ok/units=1/ca/summary.json" || { echo "the run did not use seed 5"; exit 1; }

echo ok
