"""The MegaRAID/PERC collector over real storcli captures: drives by EID:slot with serial,
counters and bay; a failed drive's bay, also once it is pulled; every way storcli fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collectors.base import CollectorError, NoData, ParseError
from collectors.findings import Judging
from collectors.location import BayRule
from collectors.state import dump
from collectors.storage.megaraid import findings
from collectors.storage.megaraid.collector import MegaraidCollector
from collectors.storage.megaraid.demo import drives, rebuild, show_all
from tests.collectors.storage_helpers import fixture, runner
from tests.states import one

SHOW = "/call show all J"
DRIVES = "/call/eall/sall show all J"
REBUILD = "/call/eall/sall show rebuild J"
BAYS = [BayRule(f"shelf 3, bay {i}", slot=f"252:{i}") for i in range(8)]


def real(**more):  # type: ignore[no-untyped-def]
    return {SHOW: (0, fixture("storcli", "netdata__storcli__megaraid-controllers-info.json"), b""),
            DRIVES: (0, fixture("storcli", "netdata__storcli__megaraid-drives-info.json"), b""), **more}


def test_drives_carry_their_serial_counters_and_the_bay_of_their_slot(tmp_path: Path) -> None:
    res = MegaraidCollector(tmp_path, bays=BAYS, runner=runner(real())).collect()
    c = res.state.controllers[0]
    assert (c.model, c.status, c.bbu.state) == ("ServeRAID M5015 SAS/SATA Controller", "Optimal", "Optimal")
    assert [(p.eid_slot, p.serial, p.bay, p.media_errors, p.temperature) for p in c.pds][:2] == [
        ("252:0", "ZL2PVFA8", "shelf 3, bay 0", 0, 28.0), ("252:1", c.pds[1].serial, "shelf 3, bay 1", 0,
                                                           c.pds[1].temperature)]
    assert findings.controller_findings(c, Judging()) == []
    vd = {dict(s.labels)["state"]: s.value for s in res.samples if s.metric == "rackpulse_megaraid_vd_state"}
    assert vd == {"Optl": 1, "Dgrd": 0, "Pdgd": 0, "Rbld": 0, "OfLn": 0, "Rec": 0}


def test_a_bay_rule_for_one_controller_does_not_match_the_same_slot_on_another(tmp_path: Path) -> None:
    bays = [BayRule("other box", slot="1/252:0"), BayRule("front", slot="0/252:0")]
    c = MegaraidCollector(tmp_path, bays=bays, runner=runner(real())).collect().state.controllers[0]
    assert c.pds[0].bay == "front"


def demo_answers(t: float) -> dict:  # type: ignore[type-arg]
    return {SHOW: (0, show_all(t).encode(), b""), DRIVES: (0, drives(t).encode(), b""),
            REBUILD: (0, rebuild(t).encode(), b"")}


def test_a_failed_drive_says_its_bay_and_a_pulled_one_still_does(tmp_path: Path) -> None:
    c = MegaraidCollector(tmp_path, bays=BAYS, runner=runner(demo_answers(60)))
    stored = json.loads(json.dumps(dump(c.collect().state)))  # type: ignore[arg-type]  # as the database keeps it
    c.runner = runner(demo_answers(100))
    failed = c.collect().state
    (f,) = [f for f in findings.controller_findings(failed.controllers[0], Judging()) if f.rule == "megaraid_vd_degraded"]
    assert "drive 252:3 unconfigured bad (shelf 3, bay 3, ST16000NM001G-2KK103 serial ZL2PV003)" in f.text
    # restarted while the drive is out of its slot: the stored state still knows it
    again = MegaraidCollector(tmp_path, bays=BAYS, runner=runner(demo_answers(145)))
    again.restore(one("megaraid", stored))
    pulled = again.collect().state.controllers[0]
    gone = next(p for p in pulled.pds if p.eid_slot == "252:3")
    assert (gone.state, gone.serial, gone.bay) == ("Msng", "ZL2PV003", "shelf 3, bay 3")


def test_a_rebuild_shows_its_progress_and_time_left(tmp_path: Path) -> None:
    calls: list[list[str]] = []
    res = MegaraidCollector(tmp_path, bays=BAYS, runner=runner(demo_answers(185), calls)).collect()
    pd = next(p for p in res.state.controllers[0].pds if p.state == "Rbld")
    assert (pd.rebuild_ratio, pd.rebuild_remaining_seconds, pd.serial) == (0.5, 2100.0, "ZL2QX913")
    assert [" ".join(a[1:]) for a in calls] == [SHOW, DRIVES, REBUILD]


def test_the_rebuild_is_not_asked_for_when_nothing_rebuilds(tmp_path: Path) -> None:
    calls: list[list[str]] = []
    MegaraidCollector(tmp_path, runner=runner(demo_answers(10), calls)).collect()
    assert [" ".join(a[1:]) for a in calls] == [SHOW, DRIVES]


def test_no_storcli_or_no_controller_means_not_used_here(tmp_path: Path) -> None:
    with pytest.raises(NoData, match="not installed"):
        MegaraidCollector(tmp_path, runner=runner({})).collect()
    none = fixture("storcli", "prometheus-hardware-exporter__perccli__perccli_not_controller.json")
    with pytest.raises(NoData, match="No Controller found"):
        MegaraidCollector(tmp_path, runner=runner({SHOW: (0, none, b"")})).collect()


def test_drive_details_failing_keep_the_states_and_warn(tmp_path: Path) -> None:
    res = MegaraidCollector(tmp_path, runner=runner(real(**{DRIVES: CollectorError("command timed out after 30s")}))
                            ).collect()
    assert len(res.state.controllers[0].pds) == 6 and res.state.controllers[0].pds[0].serial is None
    assert res.warnings == ["drive details: command timed out after 30s"]


def test_a_partial_failure_with_data_is_read_and_said(tmp_path: Path) -> None:
    text = fixture("storcli", "pystorcli2__controllerSet__test03____c0_show_J.json")
    res = MegaraidCollector(tmp_path, runner=runner({SHOW: (0, text, b""), DRIVES: (0, b'{"Controllers": []}', b"")})
                            ).collect()
    assert len(res.state.controllers[0].pds) == 12
    assert res.warnings == ["controller 0: Incomplete foreign configuration"]


def test_truncated_json_is_a_parse_error_not_a_crash(tmp_path: Path) -> None:
    text = fixture("storcli", "netdata__storcli__megaraid-controllers-info.json")
    with pytest.raises(ParseError, match="not JSON"):
        MegaraidCollector(tmp_path, runner=runner({SHOW: (0, text[:5000], b"")})).collect()


def test_an_hba_without_virtual_drives_is_fine(tmp_path: Path) -> None:
    text = fixture("storcli", "netdata__storcli__mpt3sas-controllers-info.json")
    c = MegaraidCollector(tmp_path, runner=runner({SHOW: (0, text, b""), DRIVES: (0, b'{"Controllers": []}', b"")})
                          ).collect().state.controllers[0]
    assert (c.model, c.status, c.vds) == ("HBA 9500-8i", "OK", []) and findings.controller_findings(c, Judging()) == []
