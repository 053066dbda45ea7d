#!/usr/bin/env bash
# The whole suite, N times in a row (default 3), beside a load of two busy processes
# (stress-ng --cpu 2): a test that fails only then waits on a guess instead of the product's own
# settings. Prints each run's result and time and the tests that failed; exit 1 if any run failed.
# Not part of `make test` (it takes N times the suite and more). Needs stress-ng (Debian's package).
#
#     bash scripts/suite_under_load.sh [runs]
set -uo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
command -v stress-ng >/dev/null || { echo "suite_under_load: install stress-ng first (apt-get install stress-ng)" >&2; exit 2; }
mkdir -p test-artifacts
stress-ng --cpu 2 --quiet &
load=$!
suite=""
# Stopped early (Ctrl-C, kill), the suite's workers and the demos and peers they started go too:
# left behind, two demos kept the machine at a load of 45 for the next run.
trap 'kill $load 2>/dev/null; [ -n "$suite" ] && kill -- -"$suite" 2>/dev/null' EXIT
trap 'exit 130' INT TERM
failed=0
for i in $(seq 1 "$runs"); do
  log="test-artifacts/under-load-$i.log"
  start=$(date +%s)
  setsid .venv/bin/python -m pytest -p no:cacheprovider -n 4 --dist loadgroup -q -rf --durations=30 > "$log" 2>&1 &
  suite=$!
  wait "$suite"
  rc=$?
  suite=""
  echo "run $i: exit $rc in $(( $(date +%s) - start )) s, load $(cut -d' ' -f1-3 /proc/loadavg): $(tail -1 "$log")"
  grep '^FAILED' "$log" | sed 's/^/    /'
  [ "$rc" -eq 0 ] || failed=1
done
exit "$failed"
