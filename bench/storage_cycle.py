"""Issue 17's cost: CPU time of one storage collection, parse to samples and findings, for a
big home lab: a 24-disk ZFS pool (4 raidz2 of 6, as text and as `zpool status -j`), a 24-drive
MegaRAID shelf, a 60-OSD Ceph cluster. The tools' own run time is not in it (answers are fed in
memory): this is what rackpulse adds. Target: under 20 ms per collector cycle.
usage: python bench/storage_cycle.py [--cycles 100]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from collectors import plugins  # noqa: E402
from collectors.base import CommandResult  # noqa: E402
from collectors.findings import Judging  # noqa: E402
from collectors.storage.ceph.collector import CephCollector  # noqa: E402
from collectors.storage.megaraid.collector import MegaraidCollector  # noqa: E402
from collectors.storage.zfs.collector import ZfsCollector  # noqa: E402
from collectors.storage.zfs.zpool_text import LIST_COLUMNS  # noqa: E402


def fixed(answers: dict[str, str]) -> Callable[[Sequence[str], float], CommandResult]:
    def run(argv: Sequence[str], timeout: float) -> CommandResult:
        return CommandResult(tuple(argv), 0, answers.get(" ".join(argv[1:]), "").encode(), b"")
    return run


def zpool_text() -> str:
    rows = ["\tNAME  STATE  READ WRITE CKSUM", "\ttank  ONLINE  0 0 0"]
    for g in range(4):
        rows.append(f"\t  raidz2-{g}  ONLINE  0 0 0")
        rows += [f"\t    ata-ST16000NM001G-2KK103_ZL2P{g}{d:03d}-part1  ONLINE  0 0 0" for d in range(6)]
    return "\n".join([" pool: tank", " state: ONLINE",
                      "  scan: scrub repaired 0B in 06:58:02 with 0 errors on Sun Nov  8 07:22:03 2026",
                      "config:", "", *rows, "", "errors: No known data errors", ""])


def zpool_json() -> str:
    groups = {f"raidz2-{g}": {"name": f"raidz2-{g}", "vdev_type": "raidz", "state": "ONLINE", "vdevs": {
        f"sd{g}{d}": {"name": f"sd{g}{d}", "vdev_type": "disk", "state": "ONLINE", "read_errors": 0,
                      "write_errors": 0, "checksum_errors": 0,
                      "path": f"/dev/disk/by-id/ata-ST16000NM001G-2KK103_ZL2P{g}{d:03d}-part1"}
        for d in range(6)}} for g in range(4)}
    return json.dumps({"pools": {"tank": {"name": "tank", "state": "ONLINE", "vdevs": {"tank": {
        "name": "tank", "vdev_type": "root", "state": "ONLINE", "vdevs": groups}}, "error_count": 0}}})


def storcli() -> tuple[str, str]:
    pds = [{"EID:Slt": f"252:{i}", "DID": i, "State": "Onln", "DG": 0, "Size": "14.551 TB", "Model": "ST16000NM001G"}
           for i in range(24)]
    show = {"Controllers": [{"Command Status": {"Controller": 0, "Status": "Success"}, "Response Data": {
        "Basics": {"Controller": 0, "Model": "MegaRAID 9560-16i"}, "Status": {"Controller Status": "Optimal"},
        "VD LIST": [{"DG/VD": "0/0", "TYPE": "RAID6", "State": "Optl", "Size": "320 TB"}], "PD LIST": pds}}]}
    drives: dict[str, Any] = {}
    for i in range(24):
        k = f"Drive /c0/e252/s{i}"
        drives[k] = [pds[i]]
        drives[f"{k} - Detailed Information"] = {f"{k} State": {"Media Error Count": 0, "Other Error Count": 0,
                                                                 "Drive Temperature": " 30C (86.00 F)",
                                                                 "Predictive Failure Count": 0},
                                                 f"{k} Device attributes": {"SN": f"ZL2Q{i:04d}", "WWN": "5000C5"}}
    return json.dumps(show), json.dumps({"Controllers": [{"Command Status": {"Status": "Success"},
                                                          "Response Data": drives}]})


def ceph() -> dict[str, str]:
    nodes: list[dict[str, Any]] = [{"id": -1, "name": "default", "type": "root", "children": []}]
    for h in range(10):
        nodes.append({"id": -2 - h, "name": f"node{h}", "type": "host", "children": list(range(h * 6, h * 6 + 6))})
    nodes += [{"id": i, "name": f"osd.{i}", "type": "osd", "status": "up", "reweight": 1.0} for i in range(60)]
    status = {"health": {"status": "HEALTH_OK", "checks": {}}, "osdmap": {"num_osds": 60, "num_up_osds": 60,
              "num_in_osds": 60}, "pgmap": {"pgs_by_state": [{"state_name": "active+clean", "count": 4096}],
                                            "num_pgs": 4096}}
    meta = [{"id": i, "hostname": f"node{i // 6}", "devices": "sdb", "device_ids": f"sdb=ATA_ST16000_ZL{i:04d}"}
            for i in range(60)]
    pre = "--connect-timeout 10 "
    return {pre + "status -f json": json.dumps(status), pre + "osd tree -f json": json.dumps({"nodes": nodes}),
            pre + "osd metadata -f json": json.dumps(meta)}


def measure(name: str, collector: Any, cycles: int) -> None:
    plugin = plugins()[name]
    judging = Judging()
    times = []
    for _ in range(cycles):
        t0 = time.process_time()
        res = collector.collect()
        plugin.findings(res.state, judging)
        times.append((time.process_time() - t0) * 1000)
    print(f"{name:<18} {len(res.samples):5d} samples  median {statistics.median(times):6.2f} ms  "
          f"p95 {sorted(times)[int(len(times) * 0.95) - 1]:6.2f} ms CPU per cycle")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cycles", type=int, default=100)
    cycles = ap.parse_args().cycles
    root = Path(tempfile.mkdtemp())
    listing = "tank\t384000000000000\t100000000000000\t284000000000000\t3\t26\t1.00\tONLINE\n"
    lst = "list -Hp -o " + ",".join(LIST_COLUMNS)
    measure("zfs", ZfsCollector(root, fmt="text", runner=fixed({"status -p": zpool_text(), lst: listing})), cycles)
    c = ZfsCollector(root, runner=fixed({"status -p -j --json-int": zpool_json(), lst: listing}))
    print("(as JSON)", end=" ")
    measure("zfs", c, cycles)
    show, drives = storcli()
    measure("megaraid", MegaraidCollector(root, runner=fixed({"/call show all J": show,
                                                              "/call/eall/sall show all J": drives})), cycles)
    measure("ceph", CephCollector(root, runner=fixed(ceph())), cycles)


if __name__ == "__main__":
    main()
