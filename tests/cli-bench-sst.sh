#!/bin/sh
# cli-bench-sst.sh CAML — `caml bench` on a binary-SST preset (ragged token
# ids from the shared data sets, a vocabulary of thousands with sparse
# gradients): timed and profiled layer by layer. Skipped (77) without the
# shared data sets.
set -eu
caml=$1
shared=${CAML_SHARED_DATASETS:-${CAML_SOURCE_ROOT:-.}/../shared/datasets}
if [ ! -f "$shared/sst/sentiment-train" ] || [ ! -f "$shared/sst/sentiment-dev" ]; then
  echo "SKIP: no $shared/sst/sentiment-train or sentiment-dev (set CAML_SHARED_DATASETS)"
  exit 77
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/caml-cli-bench-sst.XXXXXX")
trap 'rm -rf "$dir"' EXIT

status=0
"$caml" bench --preset sst-average --warmup 1 -n 2 --profile-steps 2 \
  --json "$dir/sst.json" >"$dir/out" 2>"$dir/err" || status=$?
[ $status -eq 0 ] || { echo "bench sst-average: exit status $status"; cat "$dir/out" "$dir/err"; exit 1; }
grep -q '^training: .* steps/s' "$dir/out" || { echo "no training line"; cat "$dir/out"; exit 1; }
grep -q '^  0   average ' "$dir/out" || { echo "no row for the average layer"; cat "$dir/out"; exit 1; }
grep -q '"layer" : "average"' "$dir/sst.json" || { echo "no layers in the JSON"; cat "$dir/sst.json"; exit 1; }
echo ok
