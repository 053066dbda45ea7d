"""The demo's Ceph cluster (the demo host is one of its BGP-routed nodes): an OSD on the
third node goes down for a while, and the cluster recovers when it is back."""

from __future__ import annotations

import json
from pathlib import Path

from collectors.scenes import write_answer

NODES = ("demo-nas", "ceph-b", "ceph-c")
PGS = 512


def _args(*words: str) -> list[str]:
    return ["--connect-timeout", "10", *words, "-f", "json"]


def status(t: float) -> dict[str, object]:
    down = 160 <= t < 200
    recovering = 200 <= t < 230
    checks: dict[str, object] = {}
    pgs = [{"state_name": "active+clean", "count": PGS}]
    degraded = None
    if down:
        checks["OSD_DOWN"] = {"severity": "HEALTH_WARN", "summary": {"message": "1 osds down", "count": 1},
                              "muted": False}
        checks["PG_DEGRADED"] = {"severity": "HEALTH_WARN", "muted": False, "summary": {
            "message": "Degraded data redundancy: 4113/98304 objects degraded (4.184%), 43 pgs degraded", "count": 43}}
        pgs = [{"state_name": "active+clean", "count": PGS - 43}, {"state_name": "active+undersized+degraded",
                                                                   "count": 43}]
        degraded = 4113 / 98304
    elif recovering:
        left = int(43 * (230 - t) / 30)
        checks["PG_DEGRADED"] = {"severity": "HEALTH_WARN", "muted": False, "summary": {
            "message": f"Degraded data redundancy: {left * 95}/98304 objects degraded, {left} pgs degraded",
            "count": left}}
        pgs = [{"state_name": "active+clean", "count": PGS - left},
               {"state_name": "active+recovering+degraded", "count": left}]
        degraded = left * 95 / 98304
    pgmap: dict[str, object] = {"pgs_by_state": pgs, "num_pgs": PGS, "num_pools": 3, "bytes_used": 9_412_634_165_248,
                             "bytes_avail": 38_566_011_994_112, "bytes_total": 47_978_646_159_360}
    if degraded:
        pgmap.update(degraded_ratio=degraded, recovering_bytes_per_sec=0 if down else 187_432_960)
    return {"fsid": "5b0e3c2a-63f4-11ef-9e1c-525400d1a0c3",
            "health": {"status": "HEALTH_WARN" if checks else "HEALTH_OK", "checks": checks, "mutes": []},
            "quorum_names": list(NODES),
            "osdmap": {"epoch": 4117, "num_osds": 6, "num_up_osds": 5 if down else 6, "num_in_osds": 6},
            "pgmap": pgmap}


def tree(t: float) -> dict[str, object]:
    down = 160 <= t < 200
    nodes: list[dict[str, object]] = [{"id": -1, "name": "default", "type": "root", "children": [-2, -3, -4]}]
    for h, host in enumerate(NODES):
        nodes.append({"id": -2 - h, "name": host, "type": "host", "children": [2 * h, 2 * h + 1]})
    for i in range(6):
        nodes.append({"id": i, "name": f"osd.{i}", "type": "osd", "device_class": "hdd", "exists": 1,
                      "status": "down" if down and i == 5 else "up", "reweight": 1.0})
    return {"nodes": nodes, "stray": []}


def metadata() -> list[dict[str, object]]:
    return [{"id": i, "hostname": NODES[i // 2], "devices": f"sd{'mn'[i % 2]}",
             "device_ids": f"sd{'mn'[i % 2]}=ATA_ST12000VN0008-2YS101_ZRT0{i:02d}K{i}"} for i in range(6)]


def write_scene(root: Path, t: float) -> None:
    folder = root / "demo-tools" / "ceph"
    write_answer(folder, _args("status"), json.dumps(status(t)))
    write_answer(folder, _args("osd", "tree"), json.dumps(tree(t)))
    write_answer(folder, _args("osd", "metadata"), json.dumps(metadata()))
