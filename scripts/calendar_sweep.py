"""The calendar sweep: the tests listed in tests/calendar-sweep.txt, run again with the wall clock
set to each moment below, so no test and no figure depends on the day the suite happens to run on.
The golden /metrics went red on 1 December: "this month" of the demo's heat pump was another figure
on the 1st than on the 15th.

Each run's processes start at the moment and tick on from it: tests/conftest.py moves time.time(),
datetime and localtime with time-machine when RACKPULSE_TEST_CLOCK is set, and TZ sets the zone
(for the peers too). Monotonic clocks, timed waits and the peers' own clocks stay real; so do
files' mtimes, so files whose age a test judges are stamped with the process's own clock when
written (collectors/scenes.py). libfaketime (Debian's `faketime`) was tried first and fails here:
with a faked monotonic clock threading.Event.wait(1) never returns, with a real one every
time.sleep raises EINVAL, and fping's round trips came out at -2.6e9 ms.

Usage: python scripts/calendar_sweep.py [--only N] [pytest args...]; exits non-zero when any
moment fails, and names the moments that did.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIST = ROOT / "tests" / "calendar-sweep.txt"
# (when, TZ, why): ISO 8601; without an offset, the wall time of TZ.
MOMENTS = [
    ("2026-12-01T08:00:00", "Europe/Berlin", "the 1st of a month (CI went red on it)"),
    ("2027-01-01T00:30:00", "Europe/Berlin", "1 January, half an hour into the year"),
    ("2028-02-29T12:00:00", "Europe/Berlin", "29 February of a leap year"),
    ("2027-03-28T01:00:30+00:00", "Europe/Berlin", "30 s after spring's DST change (02:00 -> 03:00 local)"),
    ("2027-10-31T01:30:00+00:00", "Europe/Berlin", "autumn's DST change, 02:30 local the second time"),
    ("2026-12-31T23:40:00", "Asia/Dubai", "a late evening in UTC+4, the last of the year"),
]


def selections(text: str) -> list[tuple[str, str | None]]:
    """(path or node id, -k expression or None) per line of the list; '#' starts a comment."""
    out = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        target, _, k = line.partition(" -k ")
        out.append((target.strip(), k.strip().strip('"') or None))
    return out


def node_ids(python: str, picks: list[tuple[str, str | None]]) -> list[str]:
    """The node ids the list names, collected on the real clock (ids do not depend on it): one
    pytest --collect-only for every line with the same -k (or none), not one per line, which cost
    38 s of the sweep's 250. A line that selects nothing is still named."""
    by_k: dict[str | None, list[str]] = {}
    for target, k in picks:
        by_k.setdefault(k, []).append(target)
    ids: list[str] = []
    for k, targets in by_k.items():
        argv = [python, "-m", "pytest", "--collect-only", "-p", "no:cacheprovider", *targets]
        if k:
            argv += ["-k", k]
        out = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False).stdout
        found = [line for line in out.splitlines() if "::" in line and not line.startswith(" ")]
        for target in targets:
            if not any(selects(target, node) for node in found):
                raise SystemExit(f"calendar-sweep: {target}{' -k ' + k if k else ''} selects no test")
        ids += found
    return ids


def selects(target: str, node: str) -> bool:
    """Whether a list line (a folder, a file or a node id) names this collected node id."""
    target = target.rstrip("/")
    return node == target or node.startswith((target + "::", target + "/", target + "["))


def sqlite_twins_only(ids: list[str]) -> list[str]:
    """The ids without the PostgreSQL run of a test that also runs on SQLite: the dates are worked
    out in Python on both (no SQL of app/storage/ reads a date: no now(), date_trunc or strftime),
    and the main run has tried each on PostgreSQL. A test only PostgreSQL runs (the chunks') stays.
    Those runs were 10 of a moment's 66 s of tests (measured, 2026-12-02)."""
    have = set(ids)
    return [i for i in ids if "[postgresql" not in i or i.replace("[postgresql", "[sqlite", 1) not in have]


def one_moment(python: str, moment: tuple[str, str, str], ids: list[str], extra: list[str]) -> tuple[int, str, float]:
    """(pytest's exit status, its output, seconds) for the tests at one moment, in one process:
    xdist's controller and workers each imported and collected everything again, per moment."""
    when, tz, _ = moment
    env = {**os.environ, "TZ": tz, "RACKPULSE_TEST_CLOCK": when}
    started = time.monotonic()
    proc = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra, *ids], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout + proc.stderr, time.monotonic() - started


def main(argv: list[str]) -> int:
    python = str(ROOT / ".venv" / "bin" / "python")
    moments = MOMENTS
    if argv[:1] == ["--only"]:
        moments, argv = [MOMENTS[int(argv[1])]], argv[2:]
    ids = sqlite_twins_only(node_ids(python, selections(LIST.read_text())))
    print(f"calendar-sweep: {len(ids)} tests at {len(moments)} moments, all at once", flush=True)
    failed = []
    # Every moment at once, each one pytest process: a moment's tests wait on PostgreSQL, peers and
    # their own timers as much as they compute. Measured on this 2-core machine: one after another
    # on two xdist workers 251 s; two at a time 207 s (the cores 60 % busy); all six 163 s.
    with ThreadPoolExecutor(max_workers=len(moments)) as pool:
        runs = [pool.submit(one_moment, python, m, ids, argv) for m in moments]
        for (when, tz, why), run in zip(moments, runs, strict=True):
            rc, output, seconds = run.result()
            verdict = "passed" if rc == 0 else f"FAILED (pytest exit {rc})"
            print(f"calendar-sweep: {when} ({tz}), {why}: {verdict} in {seconds:.0f} s", flush=True)
            if rc != 0:
                print(output[-20000:], flush=True)  # what failed, and why, at that moment
                failed.append(f"{when} ({tz})")
    if failed:
        print("calendar-sweep: failed at " + "; ".join(failed), file=sys.stderr)
        return 1
    print(f"calendar-sweep: {len(ids)} tests passed at every one of {len(moments)} moments")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
