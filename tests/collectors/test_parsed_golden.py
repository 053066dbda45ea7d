"""Every real capture (mdstat, `mdadm --detail`, smartctl JSON, /proc/net/bonding, OpenVPN
status, FRR's BGP summaries, neighbors, prefix counts, BFD sessions and EVPN VNIs, zpool, btrfs, storcli and ceph) parses to exactly the record stored beside it in tests/golden/parsed/, every field of
it, and for smartctl the verdict with its reasons too. A change to what a parser reads shows up
here as a diff to review; after an intended one:
UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/collectors/test_parsed_golden.py"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from collectors.base import CollectorError, ParseError
from collectors.disks.mdraid.mdadm import parse_mdadm_detail
from collectors.disks.mdraid.mdstat import parse_mdstat
from collectors.disks.smart.smartctl import judge_health, parse_smartctl_json, parse_smartctl_scan
from collectors.network.bonding.collector import parse_bonding
from collectors.network.frr.bfd import parse_bfd_peers
from collectors.network.frr.collector import parse_bgp_neighbors, parse_bgp_summary
from collectors.network.frr.evpn import parse_evpn_vni
from collectors.network.frr.prefixes import parse_prefix_counts
from collectors.network.openvpn.status import parse_status
from collectors.storage.btrfs.parse import parse_device_stats, parse_fi_show, parse_scrub_status
from collectors.storage.ceph.parse import parse_osd_tree
from collectors.storage.ceph.parse import parse_status as parse_ceph_status
from collectors.storage.megaraid.storcli import parse_drives, parse_show_all
from collectors.storage.zfs.zpool_json import parse_zpool_status_json
from collectors.storage.zfs.zpool_text import parse_zpool_list, parse_zpool_status
from tests import paths

GOLDEN = paths.GOLDEN / "parsed"
FIXTURES = paths.FIXTURES
PARSERS = {"mdstat": parse_mdstat, "mdadm": parse_mdadm_detail, "bonding": parse_bonding, "openvpn": parse_status,
           "smartctl": None, "frr": None, "zpool": None, "btrfs": None, "storcli": None, "ceph": None}
# telegraf's FreeBSD captures are `zpool list -Hp -o name,health,size,alloc,free,fragmentation,capacity,dedupratio`.
TELEGRAF_ZPOOL = ("name", "health", "size", "allocated", "free", "fragmentation", "capacity", "dedupratio")
NOW = 1795918600.0  # the clock a running scan's time left is reckoned from


def storage_record(kind: str, name: str, text: str) -> Any:
    """The storage tools' parsers, chosen by what the capture is of (its name says)."""
    if kind == "zpool":
        if name.endswith(".json"):
            return parse_zpool_status_json(text, now=NOW)
        if "list" in name or name.endswith("zpool.txt"):
            return parse_zpool_list(text, TELEGRAF_ZPOOL) if name.startswith("telegraf") else parse_zpool_list(text)
        return parse_zpool_status(text)
    if kind == "btrfs":
        if "fi_show" in name:
            return parse_fi_show(text)
        return parse_device_stats(text) if "device_stats" in name else parse_scrub_status(text)
    if kind == "storcli":
        if "sALL" in name or "drives" in name:
            return {f"{c}/{slot}": d for (c, slot), d in parse_drives(text).items()}
        return parse_show_all(text)
    return parse_osd_tree(text) if "tree" in name else parse_ceph_status(text)
CASES = [(kind, p.name) for kind in PARSERS for p in sorted((FIXTURES / kind).iterdir()) if p.is_file() and p.suffix != ".md"]


def plain(o: Any) -> Any:
    """A parser's record as JSON: its dataclasses, and the typed parts of state it fills (a SMART table)."""
    if isinstance(o, BaseModel):
        return o.model_dump(mode="json")
    return dataclasses.asdict(o)


def record(kind: str, name: str) -> Any:
    text = (FIXTURES / kind / name).read_text()
    try:
        if kind == "frr":
            if "bfd_peers_counters" in name:  # read together with the sessions they count
                return [dataclasses.asdict(b) for b in parse_bfd_peers(
                    (FIXTURES / kind / name.replace("_counters", "")).read_text(), text)]
            if "bfd" in name:
                return [dataclasses.asdict(b) for b in parse_bfd_peers(text)]
            if "evpn_vni_detail" in name:  # read together with the list it completes
                return {str(k): dataclasses.asdict(v) for k, v in parse_evpn_vni(
                    (FIXTURES / kind / name.replace("_detail", "")).read_text(), text).items()}
            if "evpn_vni" in name:
                return {str(k): dataclasses.asdict(v) for k, v in parse_evpn_vni(text).items()}
            if "prefix_counts" in name:
                return {"adj_in": parse_prefix_counts(text)}
            if "neighbors" in name:
                return {f"{vrf}/{peer}": dataclasses.asdict(info) for (vrf, peer), info in parse_bgp_neighbors(text).items()}
            return [dataclasses.asdict(p) for p in parse_bgp_summary(text)]
        if kind in ("zpool", "btrfs", "storcli", "ceph"):
            got = storage_record(kind, name, text)
            return json.loads(json.dumps(got, default=plain))
        if kind != "smartctl":
            return json.loads(json.dumps(dataclasses.asdict(PARSERS[kind](text))))  # type: ignore[misc]
        if "scan" in name:
            return {"scan": [list(d) for d in parse_smartctl_scan(text)]}
        disk = parse_smartctl_json(text)
        level, reasons = judge_health(disk, previous={k: v - 1 for k, v in disk.attributes.items()})
        return {"disk": json.loads(json.dumps(dataclasses.asdict(disk), default=plain)), "level": level,
                "reasons": reasons}
    except (ParseError, CollectorError) as exc:
        return {"error": str(exc)}


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # OpenVPN's v1 "Updated," line is its local time: read here as UTC, on any machine.
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize("kind, name", CASES, ids=[f"{k}/{n}" for k, n in CASES])
def test_a_real_capture_parses_to_its_stored_record(kind: str, name: str) -> None:
    golden = GOLDEN / kind / f"{name}.json"
    got = record(kind, name)
    if os.environ.get("UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    assert got == json.loads(golden.read_text())
