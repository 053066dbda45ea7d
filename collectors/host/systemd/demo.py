"""The demo's systemd: nginx running, the nightly backup's timer on time, and photo-sync whose
service fails for a stretch of each loop. Written as `systemctl` answers (list-units JSON and
`show --timestamp=unix` blocks) for the demo's replay stand-in, for every question the collector
asks with the demo's watch list."""

from __future__ import annotations

import json
import time
from pathlib import Path

from collectors.host.systemd.systemctl import PROPERTIES
from collectors.scenes import write_answer

WATCH = ["nginx.service", "*.timer"]
FAILING = (150.0, 200.0)  # story seconds in which photo-sync.service is failed
SHOW = ["show", "--timestamp=unix", "--no-pager", f"--property={','.join(PROPERTIES)}"]


def _block(**kv: object) -> str:
    return "\n".join(f"{k}={'' if v is None else v}" for k, v in kv.items()) + "\n"


def write_scene(root: Path, t: float) -> None:
    t = t % 240.0
    now = int(time.time())
    failing = FAILING[0] <= t < FAILING[1]
    sync_state = ("failed", "failed", "exit-code", 23) if failing else ("inactive", "dead", "success", 0)
    units = [("nginx.service", "active", "running", "A high performance web server"),
             ("backup-nightly.service", "inactive", "dead", "Nightly restic backup"),
             ("backup-nightly.timer", "active", "waiting", "Run the nightly backup"),
             ("photo-sync.service", sync_state[0], sync_state[1], "Sync photos to the NAS"),
             ("photo-sync.timer", "active", "waiting", "Sync photos every half hour")]
    folder = root / "demo-tools" / "systemctl"
    write_answer(folder, ["list-units", "--all", "--output=json", "--no-pager"], json.dumps(
        [{"unit": u, "load": "loaded", "active": a, "sub": s, "description": d} for u, a, s, d in units]))
    blocks = {
        "nginx.service": _block(Id="nginx.service", Description=units[0][3], ActiveState="active", SubState="running",
                                Result="success", NRestarts=0, ActiveEnterTimestamp=f"@{now - 86400 * 3}"),
        "backup-nightly.timer": _block(Id="backup-nightly.timer", Description=units[2][3], ActiveState="active",
                                       SubState="waiting", Result="success", Unit="backup-nightly.service",
                                       ActiveEnterTimestamp=f"@{now - 86400 * 3}", LastTriggerUSec=f"@{now - 20000}",
                                       NextElapseUSecRealtime=f"@{now + 66400}"),
        "photo-sync.timer": _block(Id="photo-sync.timer", Description=units[4][3], ActiveState="active",
                                   SubState="waiting", Result="success", Unit="photo-sync.service",
                                   ActiveEnterTimestamp=f"@{now - 86400 * 3}", LastTriggerUSec=f"@{now - 600}",
                                   NextElapseUSecRealtime=f"@{now + 1200}"),
        "backup-nightly.service": _block(Id="backup-nightly.service", Description=units[1][3], ActiveState="inactive",
                                         SubState="dead", Result="success", NRestarts=0, ExecMainStatus=0,
                                         ExecMainExitTimestamp=f"@{now - 18500}"),
        "photo-sync.service": _block(Id="photo-sync.service", Description=units[3][3], ActiveState=sync_state[0],
                                     SubState=sync_state[1], Result=sync_state[2], NRestarts=0,
                                     ExecMainStatus=sync_state[3], ExecMainExitTimestamp=f"@{now - 590}",
                                     InactiveEnterTimestamp=f"@{now - 590}"),
    }
    watched = ["nginx.service", "backup-nightly.timer", "photo-sync.timer"]
    # every question the collector can ask: the watched units (and the failed one), then the
    # timers' services it has not seen yet
    for names in (watched, [*watched, "photo-sync.service"], ["backup-nightly.service", "photo-sync.service"],
                  ["backup-nightly.service"]):
        write_answer(folder, [*SHOW, *names], "\n".join(blocks[n] for n in names))
