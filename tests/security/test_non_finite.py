"""One number that is not finite (a UPS saying `battery.runtime: inf`, a JSON answer holding
1e400 or NaN) or absurdly large must not take a page down or stop the alert tick.

Every entrance keeps them out: text parsers read them as unreadable, tool JSON as null, the
scheduler drops such samples and turns such state values into None ("unknown"), the agent
ingest refuses them with 400 before it stores anything, and a state stored by an older version
is cleaned as it is loaded and read as its plug-in's type. Behind the entrances, each plug-in's
findings, tile, section and bays are isolated: a state one plug-in cannot read costs its own
tile, never the page."""

from __future__ import annotations

import asyncio
import copy
import json
import math
import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from app import views
from app.alerting.conditions import Conditions
from app.scheduler import CollectorStatus, Scheduler, Snapshot, sane_result
from app.views import SectionView
from app.web.templating import render_section, templates
from collectors import finite, plugins
from collectors.base import CollectResult, Entity, Sample
from collectors.findings import Judging
from collectors.home.nut.state import NutState, Ups
from collectors.state import VERSION_KEY, State, dump
from tests.collectors.storage.btrfs.test_btrfs_collector import BAYS, answers, tree
from tests.collectors.storage_helpers import runner
from tests.test_web import demo_app

BAD_VALUES = [math.inf, -math.inf, math.nan, 1e300, -1e300, 10**40]
# Limits that come from the user's config, never from a device: a None there is another
# version's state, and the plug-in's tile saying "not understood" is the right answer.
THRESHOLDS = {("host", "limits"), ("probes", "loss_warning"), ("probes", "rtt_warning_ms"),
              ("throughput", "low_ratio"), ("throughput", "baseline_mbps"), ("frr", "drop_ratio"),
              ("frr", "drop_window"), ("frr", "limit_near"), ("heatpump", "backup_share"),
              ("heatpump", "backup_below_celsius"), ("heatpump", "backup_min_kwh"), ("heatpump", "max_starts_per_hour")}
DEEP = int(os.environ.get("RACKPULSE_FUZZ", "1"))  # as in tests/collectors/test_storage_hostile.py
MOMENTS = (80.0, 185.0)  # a disk failing and an array degraded; the UPS on battery and low


@pytest.fixture(scope="module")
def demo_states(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """Every plug-in's state, as JSON, as the demo host has it at two moments of its story (and
    btrfs, which the demo host does not mount, from real btrfs-progs captures)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for t in MOMENTS:
        app = demo_app(tmp_path_factory.mktemp("demo"), t, runs=2)
        for name, state in app.state.site.snap.states.items():
            out.setdefault(name, []).append(dump(state))
    from collectors.storage.btrfs.collector import BtrfsCollector

    btrfs = BtrfsCollector(tree(tmp_path_factory.mktemp("btrfs")), bays=BAYS, runner=runner(answers())).collect()
    assert btrfs.state is not None
    out["btrfs"] = [dump(btrfs.state)]
    # Proxmox VE, which the demo host is not: through the API stand-in, with a failed backup, a
    # replication failing and a stopped onboot guest, so that every part of its state has numbers
    from collectors.host.proxmox.collector import ProxmoxCollector
    from collectors.host.proxmox.config import ProxmoxConfig
    from tests.peers import running
    from tests.peers.pve import TOKEN_ID, PveStandin

    with running(PveStandin, "pve") as pve:
        pve.write("nodes/pve2/qemu/103/config", {"onboot": 1})
        pve.edit("nodes/pve1/replication", {"id": "101-0"}, fail_count=2, error="no route to host")
        pve.edit("cluster/tasks", {"node": "pve1", "id": ""}, status="job errors")
        cfg = ProxmoxConfig(url=pve.url, token_id=TOKEN_ID, token_secret_file=pve.secret_file, ca_file=pve.ca_file)
        proxmox = ProxmoxCollector(cfg, clock=lambda: 1795000000.0).collect()
    assert proxmox.state is not None
    out["proxmox"] = [dump(proxmox.state)]
    from collectors.host.pbs.collector import PbsCollector
    from collectors.host.pbs.config import PbsConfig
    from tests.peers.pve import PBS_TOKEN_ID, PbsStandin

    with running(PbsStandin, "pbs") as server:
        server.edit("admin/sync", {"id": "s-7a1c0d2e"}, **{"last-run-state": "remote unreachable"})
        pbs = PbsCollector(PbsConfig(url=server.url, token_id=PBS_TOKEN_ID, token_secret_file=server.secret_file,
                                     ca_file=server.ca_file)).collect()
    assert pbs.state is not None
    out["pbs"] = [dump(pbs.state)]
    # restic and borg, which the demo host does not run: a repository with every number a state
    # of theirs holds (their own tests read real repositories; here only the fields' places count)
    from collectors.backup import BackupCheck, BackupGroup, BackupRepoView
    from collectors.host.borg.state import BorgState
    from collectors.host.restic.state import ResticState

    repo = BackupRepoView(name="r", location="/r", max_age=93600.0, size_bytes=1e9, check_every=604800.0,
                          check=BackupCheck(ended=1795000000.0, ok=False, error="pack 1: unexpected file size"),
                          groups=[BackupGroup(host="nas", paths=["/srv"], newest=1794990000.0, count=3)])
    out["restic"], out["borg"] = [dump(ResticState(repos=[repo]))], [dump(BorgState(repos=[repo]))]
    return out


def number_paths(obj: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every place a number stands in a state, list indexes written as '*' (not its version)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k != VERSION_KEY:
                yield from number_paths(v, (*path, str(k)))
    elif isinstance(obj, list):
        for v in obj:
            yield from number_paths(v, (*path, "*"))
    elif isinstance(obj, int | float) and not isinstance(obj, bool):
        yield path


def put(obj: Any, path: tuple[str, ...], value: Any) -> Any:
    """obj with `value` at every place `path` names."""
    if not path:
        return value
    if path[0] == "*" and isinstance(obj, list):
        return [put(v, path[1:], value) for v in obj]
    if isinstance(obj, dict) and path[0] in obj:
        return {**obj, path[0]: put(obj[path[0]], path[1:], value)}
    return obj


def cases(states: dict[str, list[dict[str, Any]]], name: str) -> list[tuple[dict[str, Any], tuple[str, ...]]]:
    return [(state, path) for state in states[name] for path in sorted(set(number_paths(state)))]


ENV = templates()


def section_html(name: str, view: Mapping[str, object]) -> str:
    env = ENV
    ctx = env.from_string("").new_context({"base": "", "range": "24h", "ranges_list": ["24h"], "csrf": "",
                                           "host": "h", "snap": None})
    return str(render_section(ctx, SectionView(name, f"{name}/section.html", None, view)))


def behind_the_entrances(plugin: Any, raw: dict[str, Any]) -> State | None:
    """The state with the bad number where its type lets it stand (a float field holds inf; an
    integer field refuses it, and so would the entrance): what an older version stored, or a
    third party's plug-in made, before anything checked it."""
    try:
        return plugin.state.model_validate(raw)  # type: ignore[no-any-return]
    except ValidationError:
        return None


def test_every_built_in_plug_in_is_covered(demo_states: dict[str, list[dict[str, Any]]]) -> None:
    assert set(plugins()) <= set(demo_states), set(plugins()) - set(demo_states)


@pytest.mark.parametrize("name", sorted(plugins()))
def test_a_bad_number_in_any_field_is_unknown_after_the_entrance_and_never_breaks_the_plug_in(
        demo_states: dict[str, list[dict[str, Any]]], name: str) -> None:
    plugin = plugins()[name]
    checked = 0
    for state, path in cases(demo_states, name):
        for bad in BAD_VALUES:
            raw = put(state, path, bad)
            judging = Judging(host="h", status=CollectorStatus(name, 60, 30, up=True))
            # Behind the entrances (an older version's stored state, a plug-in of a third party):
            # the plug-in's own parts may fail, but only into words, never an exception.
            odd = behind_the_entrances(plugin, raw)
            if odd is not None:
                found = plugin.judge(odd, judging)
                plugin.clear_words(odd, judging)
                plugin.bay_list(odd)
                assert "<section" in section_html(name, plugin.view(odd, found)) or plugin.pages.section is None
                # The scheduler's entrance: the value is None, with a warning.
                swept = sane_result(CollectResult(state=odd)).state
                assert swept is not None and finite.count_bad(swept.model_dump()) == 0
            # The entrance of a stored state (a restart) and of an agent's: the value is None, the
            # state reads as its type, and the plug-in reads the value as unknown, still judging
            # everything else.
            clean = plugin.load(finite.loads(json.dumps(raw)))
            assert finite.count_bad(clean.model_dump()) == 0
            if (name, path[-1]) in THRESHOLDS or (name, path[0]) in THRESHOLDS:
                continue
            found = plugin.judge(clean, Judging(host="h"))
            words = [f.text for f in found]
            assert not [w for w in words if "not understood" in w], (path, bad, words)
            if plugin.pages.section is not None:
                assert "not understood" not in section_html(name, plugin.view(clean, found)), (path, bad)
            checked += 1
    assert checked > 0


@pytest.fixture(scope="module")
def app_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, TestClient]]:
    app = demo_app(tmp_path_factory.mktemp("pages"), 185.0, runs=2, shared=False)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        yield app, client


PAGES = ["/", "/disks", "/network", "/power", "/heatpump", "/probes", "/hosts", "/collectors", "/alerts",
         "/api/state", "/metrics"]


@settings(max_examples=40 * DEEP, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pick=st.integers(0, 10**6), bad=st.sampled_from(BAD_VALUES))
def test_any_page_and_the_alert_tick_survive_a_bad_number_that_got_past_the_entrances(
        app_client: tuple[Any, TestClient], demo_states: dict[str, list[dict[str, Any]]], pick: int,
        bad: float) -> None:
    app, client = app_client
    snap: Snapshot = app.state.site.snap
    everything = [(name, s, p) for name in sorted(demo_states) if name in snap.states
                  for s, p in cases(demo_states, name)]
    name, state, path = everything[pick % len(everything)]
    before = snap.states[name]
    odd = behind_the_entrances(plugins()[name], put(copy.deepcopy(state), path, bad))
    if odd is None:  # an integer field: no state of this type can hold the bad number
        return
    conditions = Conditions()
    others = sorted((c.rule, c.subject) for c in conditions.build(snap, now=time.time())
                    if not c.rule.startswith(("collector_",)) and c.labels.get("collector") != name)
    try:
        snap.states[name] = odd
        for page in [p for p in PAGES if p.lstrip("/") in views.pages() or p in ("/", "/hosts", "/collectors",
                                                                                  "/alerts", "/api/state",
                                                                                  "/metrics")]:
            assert client.get(page).status_code == 200, (page, name, path, bad)
        after = Conditions().build(snap, now=time.time())
        mine = {r.name for r in plugins()[name].rules}
        # The tick goes on for every other plug-in: their alerts are the same as before.
        assert sorted((c.rule, c.subject) for c in after if c.rule not in mine and not c.rule.startswith(
            "collector_")) == [o for o in others if o[0] not in mine]
        app.state.site.alert_tick()
    finally:
        snap.states[name] = before


def test_a_collector_returning_infinity_loses_those_samples_and_says_so() -> None:
    result = CollectResult(samples=[Sample.of("rackpulse_ups_battery_runtime_seconds", math.inf, ups="u"),
                                    Sample.of("rackpulse_ups_battery_charge_ratio", 0.05, ups="u"),
                                    Sample.of("rackpulse_x", math.nan)],
                           entities=[Entity("ups", "u", {"runtime": math.inf, "model": "x"})],
                           state=NutState(ups=[Ups(name="u", up=True, runtime=-math.inf, charge=5.0, load=1e40)]))
    out = sane_result(result)
    assert [s.metric for s in out.samples] == ["rackpulse_ups_battery_charge_ratio"]
    assert out.state == NutState(ups=[Ups(name="u", up=True, runtime=None, charge=5.0, load=None)])
    assert out.entities[0].attrs == {"runtime": None, "model": "x"}
    assert out.warnings == ["5 values were not finite numbers (inf, nan or beyond ±1e30): 2 samples dropped, "
                            "the rest shown as unknown"]
    fine = NutState(ups=[Ups(name="u", charge=1.5)])
    assert sane_result(CollectResult(state=fine)).warnings == [] and sane_result(CollectResult(state=fine)).state is fine


class _Upsd:
    """A UPS whose upsd says its runtime is infinite while it is on battery and low."""

    def __init__(self, runtime: str) -> None:
        import app.demo.power as power

        self._old = power.ups_vars
        power.ups_vars = lambda t: {"ups.status": "OB DISCHRG LB", "battery.charge": "4",
                                    "battery.runtime": runtime, "input.voltage": "nan", "ups.load": "inf"}
        self.peer = power.start_upsd(lambda: 0.0)

    def close(self) -> None:
        import app.demo.power as power

        power.ups_vars = self._old
        self.peer.stop()


@pytest.mark.parametrize("runtime", ["inf", "nan", "-inf", "1e999"])
def test_a_ups_saying_its_runtime_is_infinite_while_low_still_fires_ups_low_battery(tmp_path: Path,
                                                                                   runtime: str) -> None:
    from app.alerting.setup import from_config
    from app.config import load_config
    from app.storage.db import make_engine, upgrade
    from app.web.app import create_app
    from collectors import build_collectors

    upsd = _Upsd(runtime)
    try:
        off = {"enabled": False}
        url = f"sqlite:///{tmp_path / 'r.db'}"
        cfg = load_config(None, {"host": "nas", "host_root": str(tmp_path), "storage": {"url": url},
                                 "collectors": {**{n: off for n in plugins() if n != "nut"},
                                                "nut": {"upsd": [{"port": upsd.peer.port}]}}})
        upgrade(url)
        snap = Snapshot(host="nas")
        colls = build_collectors(cfg)
        sched = Scheduler(colls, {n: (60, 30) for n in colls}, snap)
        asyncio.run(sched.run_all_once())
        ups = snap.states["nut"].ups[0]  # type: ignore[attr-defined]
        assert ups.runtime is None and ups.low_battery is True
        alerting = from_config(cfg, make_engine(url))
        alerting.tick(snap, time.time(), deliver=False)
        fired = alerting.states[("ups_low_battery", "ups12v")]
        assert fired.state == "firing" and "runtime unknown" in fired.summary, fired
        app = create_app(cfg, collect=False, snapshot=snap, migrate=False)
        with TestClient(app, base_url="http://127.0.0.1") as client:
            for page in ("/", "/power", "/hosts", "/collectors", "/api/state", "/metrics"):
                assert client.get(page).status_code == 200, page
            assert "runtime ?" in client.get("/power").text
    finally:
        upsd.close()
