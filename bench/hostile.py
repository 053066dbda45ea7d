"""The bounds contract, measured: the demo host's collectors, every command they run answered by a
hostile one (a real child process through the real runner: its 16 MiB cap, its timeouts), and the
HTTP plug-ins' API (Proxmox VE, its Backup Server) by a hostile HTTPS server. Two rounds; each
collector's run must end within its timeout, the next round must run on time, the process's RSS
must stay within +64 MB, /healthz must answer and the collectors that read files stay up.

What a hostile answer is (`--kind`):
  items    100,000 lines and a JSON list of 100,000 objects
  big      50 MB of output (past the 16 MiB cap)
  deep     JSON nested 200,000 deep
  trickle  one byte every 0.2 s, never ending
  count    every count 10**12 (net.count=1000000000000, "count": 1000000000000)

usage: python bench/hostile.py [--kind KIND ...] [--json]   (prints a table, or JSON for a test)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

KINDS = ("items", "big", "deep", "trickle", "count")
TIMEOUT = 5.0  # each collector's run in this bench (the scheduler abandons it past this)
COMMAND_TIMEOUT = 3.0  # each command's (the runner kills it past this)
SCRIPTS = {
    "items": "import sys\nw=sys.stdout.write\nfor i in range(100000): w(f'item{i} {i} ok\\n')\n"
             "w('['+','.join('{\"name\":\"x%d\",\"id\":%d,\"state\":\"ok\"}' % (i, i) for i in range(100000))+']\\n')",
    "big": "import sys\nline=b'x'*1023+b'\\n'\nfor _ in range(50*1024): sys.stdout.buffer.write(line)",
    "deep": "import sys\nsys.stdout.write('['*200000+']'*200000+'\\n')",
    "trickle": "import sys,time\nwhile True:\n  sys.stdout.write('{'); sys.stdout.flush(); time.sleep(0.2)",
    "count": "import sys\nn=10**12\nsys.stdout.write(f'net.count={n}\\nblock.count={n}\\nvcpu.current={n}\\n')\n"
             "sys.stdout.write('{\"count\": %d, \"total\": %d, \"items\": %d, \"devices\": %d}\\n' % (n, n, n, n))",
}
HTTP_BODIES = {
    "items": lambda: json.dumps({"data": [{"vmid": i, "name": f"g{i}", "type": "qemu", "node": "pve1",
                                           "status": "running", "id": f"qemu/{i}"} for i in range(100_000)]}).encode(),
    "big": lambda: b'{"data": "' + b"x" * (50 * 1024 * 1024) + b'"}',
    "deep": lambda: b"[" * 200_000 + b"]" * 200_000,
    "count": lambda: json.dumps({"data": [{"vmid": 10**12, "maxcpu": 10**12, "netin": 10**12, "type": "qemu",
                                           "node": "pve1", "status": "running", "name": "big",
                                           "id": "qemu/1"}]}).encode(),
}


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def at_rest(sched: Any, deadline_s: float) -> list[str]:
    """The process at rest before a plug-in's measurement: every collection thread the scheduler
    abandoned at a run's timeout (Python cannot stop the thread) joined within deadline_s, then the
    garbage collected. Without it a thread of the plug-in before, still parsing 100,000 items on a
    loaded machine, was charged to the next one (probes +64.8 MB in CI, +23 MB at most alone).
    Returns the threads still running past the deadline, said in the figures."""
    end = time.monotonic() + deadline_s
    for t in sched.abandoned_threads():
        t.join(max(0.0, end - time.monotonic()))
    gc.collect()
    return sorted(t.name for t in sched.abandoned_threads())


def hostile_runner(kind: str) -> Any:
    from collectors.base import run_command

    def run(argv: Any, timeout: float) -> Any:
        return run_command([sys.executable, "-I", "-c", SCRIPTS[kind]], min(timeout, COMMAND_TIMEOUT))

    return run


def one_kind(kind: str) -> dict[str, Any]:
    import httpx

    from app.config import load_config
    from app.demo import story as demo
    from app.scheduler import Scheduler, Snapshot
    from app.storage.db import upgrade
    from app.web.app import create_app
    from bench.hostile_http import HostileApi
    from collectors import build_collectors

    tmp = Path(tempfile.mkdtemp(prefix="rackpulse-hostile-"))
    url = f"sqlite:///{tmp / 'db.sqlite'}"
    api = HostileApi(kind, HTTP_BODIES.get(kind))
    api.start()
    raw = demo.demo_config(tmp, url, 1, 1)
    token = tmp / "token"
    token.write_text("secret\n")
    token.chmod(0o600)
    for name in ("proxmox", "pbs"):
        raw["collectors"][name] = {"url": api.url, "token_id": "monitor@pve!rackpulse" if name == "proxmox"
                                   else "monitor@pbs!rackpulse", "token_secret_file": str(token), "verify": False,
                                   "command_timeout": COMMAND_TIMEOUT}
    cfg = load_config(None, raw)
    upgrade(url)
    snap = Snapshot(host=cfg.host)
    app = create_app(cfg, collect=False, snapshot=snap, migrate=False)
    colls = build_collectors(cfg, hostile_runner(kind))
    demo.attach_simulations(colls, tmp)
    demo.write_tree(tmp, demo.story_state(0))
    sched = Scheduler(colls, {n: (60.0, TIMEOUT) for n in colls}, snap)
    # One at a time first: what each plug-in's hostile answer costs the process (RSS after it,
    # the allocator keeping what it took); then every one at once, twice: the next run on time.
    before = rss_mb()
    grew: dict[str, float] = {}
    still: dict[str, list[str]] = {}
    for name in colls:
        # an abandoned run's thread ends within its command's timeout, or the run's, past it
        still[name] = at_rest(sched, TIMEOUT + COMMAND_TIMEOUT)
        start = rss_mb()
        asyncio.run(sched.run_once(name))
        grew[name] = round(rss_mb() - start, 1)
    rounds = []
    for _ in range(2):
        t0 = time.monotonic()
        asyncio.run(sched.run_all_once())
        rounds.append(round(time.monotonic() - t0, 2))
    after = rss_mb()

    async def healthz() -> int:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as c:
            return (await c.get("/healthz")).status_code

    status = asyncio.run(healthz())
    api.stop()
    statuses = {n: {"up": st.up, "runs": st.runs, "duration": round(st.duration or 0.0, 2), "rss_growth_mb": grew[n],
                    "measured_beside": still[n], "error": (st.last_error or "")[:160]} for n, st in snap.statuses.items()}
    return {"kind": kind, "rss_before_mb": round(before, 1), "rss_after_mb": round(after, 1),
            "rss_growth_mb": round(after - before, 1), "rss_growth_alone_mb": max(grew.values()), "rounds_s": rounds,
            "healthz": status,
            "collectors": statuses, "timeout": TIMEOUT}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kind", action="append", choices=KINDS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    for kind in args.kind or KINDS:
        got = one_kind(kind)
        if args.json:
            print(json.dumps(got))
            continue
        slowest = max(got["collectors"].items(), key=lambda kv: kv[1]["duration"])
        most = max(got["collectors"].items(), key=lambda kv: kv[1]["rss_growth_mb"])
        print(f"{kind:8} RSS {got['rss_before_mb']:.0f} -> {got['rss_after_mb']:.0f} MB "
              f"(+{got['rss_growth_mb']:.1f}; one plug-in alone at most +{most[1]['rss_growth_mb']:.1f}, {most[0]}), "
              f"rounds {got['rounds_s']} s, slowest {slowest[0]} {slowest[1]['duration']} s, /healthz {got['healthz']}")


if __name__ == "__main__":
    main()
