"""`rackpulse collect --once`: every collector once, like `telegraf --test`, stored nowhere. It
prints a line a collector (what it saw, in the words of its findings; why it has nothing; why it
failed) and exits 1 if one failed; `--json` prints every state whole, `--format prometheus` the
/metrics text."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from app.cli.common import load_args as _load


def cmd_collect(args: argparse.Namespace) -> int:
    from app import views
    from app.disks.bay_labels import host_bays
    from app.scheduler import Scheduler, Snapshot
    from collectors import build_collectors, host_context

    cfg = _load(args)
    colls = build_collectors(cfg, host=host_context(cfg, host_bays(cfg)))
    snap = Snapshot(host=cfg.host)
    sched = Scheduler(colls, cfg.schedules(colls), snap)
    asyncio.run(sched.run_all_once())
    failed = [s for s in snap.statuses.values() if not s.up]
    fmt = "json" if args.json else args.format
    if fmt == "prometheus":
        sys.stdout.write(snap.metrics.decode())
    elif fmt == "json":
        print(json.dumps(dump_all(cfg.host, snap), indent=2, default=str))
    else:
        print(summary(cfg.host, snap, views.findings(snap)))
    for s in failed:
        print(f"collector {s.name} failed: {s.last_error}", file=sys.stderr)
    return 1 if failed else 0


def dump_all(host: str, snap: Any) -> dict[str, object]:
    from collectors.state import dump

    return {"host": host, "collectors": {
        s.name: {"up": s.up, "no_data": s.no_data, "duration": round(s.duration or 0, 4),
                 "error": s.last_error if not s.up else None, "warnings": s.warnings,
                 "state": dump(state) if (state := snap.states.get(s.name)) else None}
        for s in snap.statuses.values()}}


def summary(host: str, snap: Any, found: dict[str, list[Any]]) -> str:
    """A line a collector, worst first (failed, with a problem, fine, nothing to read here): its
    verdict, its time, and what it saw (its worst findings' words), why it has nothing, or why it
    failed."""
    from collectors.findings import BAD, WARN

    rank = {BAD: 0, WARN: 1}
    rows = []
    for s in snap.statuses.values():
        if not s.up:
            order, verdict, words = 0, "FAILED", s.last_error or "failed"
        elif s.no_data:
            order, verdict, words = 3, "no data", s.last_error or "nothing to read here"
        else:
            worst = sorted((f for f in found.get(s.name, []) if f.level in rank), key=lambda f: rank[f.level])
            order, verdict = (1, "problem") if worst else (2, "ok")
            words = "; ".join(f.text for f in worst[:2]) + (f" (+{len(worst) - 2} more)" if len(worst) > 2 else "") \
                if worst else "fine"
        extra = f" [{len(s.warnings)} warning{'s' if len(s.warnings) != 1 else ''}]" if s.warnings else ""
        rows.append((order, s.name, verdict, s.duration or 0, _short(words) + extra))
    rows.sort()
    width = max((len(r[1]) for r in rows), default=0)
    lines = [f"host {host}: {len(rows)} collectors, {sum(r[3] for r in rows):.1f} s of work"]
    lines += [f"  {verdict:8} {name:{width}} {took:6.2f} s  {words}" for _, name, verdict, took, words in rows]
    lines.append("every state in full: rackpulse collect --once --json")
    return "\n".join(lines)


def _short(text: str, limit: int = 140) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"
