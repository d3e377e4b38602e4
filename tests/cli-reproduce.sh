#!/bin/sh
# cli-reproduce.sh CAML — `caml reproduce`: the report's table has a verdict
# on every row, its numbers are those of results.json, and each verdict
# follows from the numbers by the row's rule (recomputed here, with the
# paired t-test's p-value); a second run re-runs nothing; --only with an
# unknown name fails, naming the experiments; missing data give "not
# testable here" with the fetch command, not an error.
set -eu
caml=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/caml-cli-reproduce.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail () { echo "$1"; shift; cat "$@"; exit 1; }

# --seeds 3 keeps the surface's 10 seeds short under the sanitizers; the
# report says so
"$caml" reproduce --quick --only xor surface --seeds 3 --out "$dir/r" \
  > "$dir/out1.txt" 2> "$dir/err1.txt" || fail "caml reproduce failed" "$dir/err1.txt"
test -s "$dir/r/report.md" || fail "no report.md" "$dir/out1.txt"
test -s "$dir/r/report.html" || fail "no report.html" "$dir/out1.txt"
grep -q -- "--quick --seeds 3 --only xor surface" "$dir/r/report.md" \
  || fail "the report does not say which command made it" "$dir/r/report.md"
# one progress line per run on stderr: 3 models × 3 seeds, twice
test "$(grep -c "seed [0-9] … t[a-z]*_mse" "$dir/err1.txt")" -eq 18 \
  || fail "expected 18 progress lines" "$dir/err1.txt"

python3 - "$dir/r" <<'PY'
import json, math, sys
d = sys.argv[1]

def t_two_sided(t, df):
    """P(|T| > t), by Simpson's rule over s in (0, 1] with T = |t| / s."""
    t = abs(t)
    if t == 0:
        return 1.0
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    f = lambda s: 0.0 if s == 0 else c * (1 + (t / s) ** 2 / df) ** (-(df + 1) / 2) * t / s ** 2
    n = 4000
    h = 1.0 / n
    total = f(0) + f(1) + sum((4 if i % 2 else 2) * f(i * h) for i in range(1, n))
    return 2 * total * h / 3

def mean_sd(v):
    v = [x for x in v if x is not None]
    m = sum(v) / len(v)
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else None
    return m, sd

def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)

def holds(c):
    v, op, t = c["value"], c["op"], c["threshold"]
    return {"<": v < t, "<=": v <= t, ">": v > t, ">=": v >= t}[op]

md = open(f"{d}/report.md").read().splitlines()
table = [l for l in md if l.startswith("| ") and not l.startswith("| experiment")
         and not l.startswith("| model")]
expected_rows = []
for name in ("xor", "surface"):
    r = json.load(open(f"{d}/{name}/results.json"))
    assert r["complete"] is True and r["settings"] == {"mode": "quick", "seeds": 3, "steps": 0}, r
    models = {m["key"]: m for m in r["models"]}
    for m in r["models"]:
        assert len(m["values"]) == 3 and None not in m["values"], m
        mean, sd = mean_sd(m["values"])
        assert close(mean, m["mean"]) and close(sd, m["sd"]), (m, mean, sd)
    for row in r["rows"]:
        verdict = row["verdict"]
        assert verdict in ("reproduced", "not reproduced", "not testable here"), row
        conds = row["conditions"]
        if row.get("why") or any(c["value"] is None for c in conds):
            want = "not testable here"
        else:
            want = "reproduced" if all(holds(c) for c in conds) else "not reproduced"
        assert verdict == want, (row, want)
        expected_rows.append((name, row))
    # the rows' numbers from the models' values
    rows = r["rows"]
    if name == "surface":
        ca1, ca2 = models["ca1"]["values"], models["ca2"]["values"]
        assert close(rows[0]["mean"], mean_sd(ca1)[0])
        assert close(rows[0]["conditions"][0]["value"], mean_sd(ca1)[0])
        assert rows[0]["conditions"][0]["threshold"] == 1.5 * 0.0063
        assert close(rows[1]["mean"], mean_sd(ca2)[0])
        diffs = [a - b for a, b in zip(ca1, ca2)]
        m, sd = mean_sd(diffs)
        assert close(rows[2]["mean"], m, 1e-6) and close(rows[2]["spread"], sd, 1e-6), rows[2]
        p = t_two_sided(m / (sd / math.sqrt(len(diffs))), len(diffs) - 1)
        assert abs(rows[2]["conditions"][1]["value"] - p) < 1e-6, (rows[2], p)
    else:
        ca, nn = models["ca"]["values"], models["nn"]["values"]
        assert close(rows[0]["mean"], mean_sd(ca)[0])
        assert close(rows[1]["conditions"][0]["value"], mean_sd(ca)[0] - mean_sd(nn)[0], 1e-9)
    for f in r["figures"]:
        with open(f"{d}/{f}", "rb") as png:
            assert png.read(8) == b"\x89PNG\r\n\x1a\n", f

# the report's table: a row per claim, in order, with results.json's figures
assert len(table) >= len(expected_rows), (table, expected_rows)
for line, (name, row) in zip(table, expected_rows):
    cells = [c.strip() for c in line.strip("|").split(" | ")]
    assert cells[0] == name, (line, name)
    assert cells[2] == row["ours"], (line, row["ours"])
    assert cells[2].startswith("%.4g" % row["mean"]), (line, row["mean"])
    assert cells[3] == row["verdict"], (line, row["verdict"])
PY

# a second run re-runs nothing: both experiments are read back
"$caml" reproduce --quick --only xor surface --seeds 3 --out "$dir/r" \
  > "$dir/out2.txt" 2> "$dir/err2.txt" || fail "the second run failed" "$dir/err2.txt"
test "$(grep -c "not run again" "$dir/err2.txt")" -eq 2 \
  || fail "the second run did not read both experiments back" "$dir/err2.txt"
! grep -q "… t[a-z]*_mse" "$dir/err2.txt" || fail "the second run trained" "$dir/err2.txt"
# other settings are another run: its runs are trained (a run of the same
# seed and steps is kept)
"$caml" reproduce --quick --only xor --seeds 4 --out "$dir/r" \
  > "$dir/out3.txt" 2> "$dir/err3.txt" || fail "the --seeds 4 run failed" "$dir/err3.txt"
test "$(grep -c "kept from an earlier run" "$dir/err3.txt")" -eq 9 \
  || fail "expected the 9 runs of seeds 0-2 kept" "$dir/err3.txt"
test "$(grep -c "seed 3 … train_mse" "$dir/err3.txt")" -eq 3 \
  || fail "expected seed 3 trained for 3 models" "$dir/err3.txt"

# an unknown name: a usage error that lists the experiments
if "$caml" reproduce --only xor nosuch --out "$dir/u" > "$dir/u.txt" 2>&1; then
  fail "--only nosuch succeeded" "$dir/u.txt"
else
  test $? -eq 2 || fail "--only nosuch: expected exit status 2" "$dir/u.txt"
fi
grep -q 'no experiment named "nosuch" (experiments: xor, surface, mnist' "$dir/u.txt" \
  || fail "--only nosuch: no clear message" "$dir/u.txt"
test ! -e "$dir/u/report.md" || fail "--only nosuch wrote a report" "$dir/u.txt"
for bad in "--seeds 0" "--steps x"; do
  if "$caml" reproduce --quick $bad --only xor --out "$dir/u" > "$dir/u.txt" 2>&1; then
    fail "$bad succeeded" "$dir/u.txt"
  fi
  grep -q "expected a whole number" "$dir/u.txt" || fail "$bad: no clear message" "$dir/u.txt"
done

# data missing: not testable here, with the command that fetches them
mkdir "$dir/empty"
CAML_DATA_DIR="$dir/empty" "$caml" reproduce --quick --only mnist sigma --out "$dir/m" \
  > "$dir/m.txt" 2>&1 || fail "missing data made caml reproduce fail" "$dir/m.txt"
python3 - "$dir/m" <<'PY'
import json, sys
d = sys.argv[1]
for name in ("mnist", "sigma"):
    r = json.load(open(f"{d}/{name}/results.json"))
    assert r["complete"] is False and "datasets/fetch mnist" in r["why"], r
    assert r["rows"] and all(row["verdict"] == "not testable here" for row in r["rows"]), r
md = open(f"{d}/report.md").read()
assert md.count("| not testable here |") == 4, md
assert "datasets/fetch mnist" in md
PY
