"""A smartctl stand-in that records what it is asked and keeps each disk's self-test state.

A real process (the collector runs it as it runs smartctl), answering ``--scan``, ``--json --all``
from a real capture with this disk's serial, hours, sleep and self-test log, and ``-t short|long``
by starting a test: the next ``--all`` says it is in progress, as an ATA drive does."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.paths import FIXTURES

CAPTURE = FIXTURES / "smartctl" / "scrutiny__smart-ata.json"

SCRIPT = """
import fcntl, json, sys
state_file = sys.argv[1]
args = sys.argv[2:]
lock = open(state_file + ".lock", "w")
fcntl.flock(lock, fcntl.LOCK_EX)  # the collector asks several disks at once
state = json.load(open(state_file))
state["calls"].append(args)
json.dump(state, open(state_file, "w"))
if "--scan" in args:
    print(json.dumps({"smartctl": {"exit_status": 0},
                      "devices": [{"name": d, "type": "sat"} for d in state["disks"]]}))
    sys.exit(0)
dev = args[-1]
disk = state["disks"][dev]
if disk["standby"] and "--nocheck=standby" in args:
    print(json.dumps({"smartctl": {"exit_status": 2, "messages": [{"string": "Device is in STANDBY mode, exit(2)"}]},
                      "device": {"name": dev, "type": "sat", "protocol": "ATA"}}))
    sys.exit(2)
if "-t" in args:
    disk["running"] = args[args.index("-t") + 1]
    json.dump(state, open(state_file, "w"))
    sys.exit(0)
doc = json.load(open(state["capture"]))
doc["device"]["name"] = dev
doc["serial_number"] = disk["serial"]
doc["power_on_time"]["hours"] = disk["hours"]
doc["ata_smart_self_test_log"]["standard"]["table"] = disk["log"]
status = ({"value": 246, "string": "in progress, 60% remaining", "remaining_percent": 60} if disk["running"]
          else {"value": 0, "string": "completed without error", "passed": True})
doc["ata_smart_data"]["self_test"]["status"] = status
print(json.dumps(doc))
"""

TYPES = {"short": (1, "Short offline"), "long": (2, "Extended offline")}


class StandIn:
    def __init__(self, tmp: Path, devices: dict[str, str], hours: int = 10_000) -> None:
        self.file = tmp / "smartctl-state.json"
        self.script = tmp / "smartctl_standin.py"
        self.script.write_text(SCRIPT)
        self.write({"capture": str(CAPTURE), "calls": [],
                    "disks": {dev: {"serial": serial, "hours": hours, "standby": False, "running": None, "log": []}
                              for dev, serial in devices.items()}})

    @property
    def argv(self) -> list[str]:
        return [sys.executable, str(self.script), str(self.file)]

    def read(self) -> dict[str, Any]:
        return json.loads(self.file.read_text())  # type: ignore[no-any-return]

    def write(self, state: dict[str, Any]) -> None:
        self.file.write_text(json.dumps(state))

    def tests_started(self) -> list[tuple[str, str]]:
        """(type, device) of every ``-t`` asked, in order."""
        return [(c[c.index("-t") + 1], c[-1]) for c in self.read()["calls"] if "-t" in c]

    def change(self, dev: str, **kw: Any) -> None:
        s = self.read()
        s["disks"][dev].update(kw)
        self.write(s)

    def log(self, dev: str, kind: str, hours_ago: int, failed: bool = False) -> None:
        """Put a finished test in the disk's log (newest first), as the drive would."""
        s = self.read()
        d = s["disks"][dev]
        value, words = TYPES[kind]
        status = ({"value": 121, "string": "Completed: read failure", "passed": False} if failed
                  else {"value": 0, "string": "Completed without error", "passed": True})
        entry = {"type": {"value": value, "string": words}, "status": status, "lifetime_hours": d["hours"] - hours_ago}
        if failed:
            entry["lba"] = 104870168
        d["log"].insert(0, entry)
        self.write(s)

    def finish(self, dev: str) -> None:
        """The running test ends without error now."""
        kind = self.read()["disks"][dev]["running"]
        self.change(dev, running=None)
        self.log(dev, kind, 0)

    def advance(self, hours: int) -> None:
        s = self.read()
        for d in s["disks"].values():
            d["hours"] += hours
        self.write(s)
