"""`make slow-tests`: find the tests without peers that take longer than a threshold and list them
in tests/slow-tests.txt, which tests/conftest.py reads to mark them `slow`. `make quick` leaves
them out (the quick loop: parsers, judges, rules, storage, pages built alone); `make test` and CI
run them with everything else.

Measured, not guessed: the quick selection runs with pytest's durations, every test over the
threshold (set-up, call and tear-down together) joins the list, and the run is repeated, because
a set-up shared by a module (a demo app built once) moves to the next test of that module when
its first is left out. It stops when a round adds nothing.

    .venv/bin/python scripts/slow_tests.py [--threshold 0.3] [--rounds 4]

Run it on a quiet machine; a loaded one lists more tests than it should.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIST = ROOT / "tests" / "slow-tests.txt"
HEADER = ("# Tests without peers that took over {threshold} s on this project's 2-core machine (set-up, call and\n"
          "# tear-down): `make quick` leaves them out, `make test` runs them. Written by scripts/slow_tests.py.\n")
LINE = re.compile(r"^\s*([0-9.]+)s (setup|call|teardown)\s+(\S+)")


def listed() -> dict[str, float]:
    out = {}
    if LIST.exists():
        for line in LIST.read_text().splitlines():
            if line and not line.startswith("#"):
                seconds, nodeid = line.split(" ", 1)
                out[nodeid] = float(seconds)
    return out


def measure(threshold: float) -> dict[str, float]:
    """Seconds per test of one run of the quick selection, for those over the threshold."""
    argv = [sys.executable, "-m", "pytest", "-p", "no:warnings", "-m", "not peers and not slow", "-n", "2",
            "--dist", "loadgroup", "-q", "--durations=0", f"--durations-min={threshold / 3:.3f}"]
    run = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    if run.returncode not in (0, 5):
        sys.exit(f"the quick selection failed; fix it first:\n{run.stdout[-3000:]}")
    per_test: dict[str, float] = defaultdict(float)
    for line in run.stdout.splitlines():
        m = LINE.match(line)
        if m:
            per_test[m.group(3).split("@", 1)[0]] += float(m.group(1))  # xdist adds "@group"
    return {k: v for k, v in per_test.items() if v >= threshold}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threshold", type=float, default=0.3)
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()
    slow = listed()
    for n in range(args.rounds):
        new = measure(args.threshold)
        print(f"round {n + 1}: {len(new)} more over {args.threshold} s "
              f"({sum(new.values()):.1f} s together)")
        if not new:
            break
        slow.update(new)
        LIST.write_text(HEADER.format(threshold=args.threshold) + "".join(
            f"{s:.2f} {k}\n" for k, s in sorted(slow.items())))
    print(f"{len(slow)} tests in {LIST.relative_to(ROOT)}, {sum(slow.values()):.0f} s of the quick loop's time")


if __name__ == "__main__":
    main()
