"""Real peers the tests start as their own child processes, and stop."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable


def stop_all(procs: Iterable[subprocess.Popen[bytes]], grace: float = 10) -> None:
    """TERM every child, then wait for each; KILL the ones that outlive the grace period."""
    procs = list(procs)
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(grace)
        except subprocess.TimeoutExpired:
            p.kill()
