"""Collectors are plug-ins of the entry point group `rackpulse.collectors`: the built-in ones
are installed that way, and a collector from a package of its own is found, configured from
its own [collectors.<name>] section, built and run like them. The package here is real: a
module and its .dist-info on sys.path, found by importlib.metadata as pip would leave it."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.config import ConfigError, load_config
from collectors import build_collectors, metric_specs, plugins

BUILT_IN = {"mdraid", "smart", "frr", "bonding", "openvpn", "snmp", "nut", "hwmon", "heatpump", "host", "probes", "throughput",
            "zfs", "btrfs", "megaraid", "ceph"}

UPTIME = '''
from pathlib import Path
from typing import ClassVar

from collectors.base import Collector, CollectResult, MetricSpec, Sample, host_path, read_text
from collectors.config import CollectorBase
from collectors.plugin import CollectorPlugin


class UptimeConfig(CollectorBase):
    interval: float = 60.0
    warn_below_seconds: float = 600.0


class UptimeCollector(Collector):
    name: ClassVar[str] = "uptime"
    metrics: ClassVar[dict[str, MetricSpec]] = {"rackpulse_uptime_seconds": MetricSpec("Seconds since boot.")}

    def __init__(self, root: Path, warn_below: float) -> None:
        self.root, self.warn_below = root, warn_below

    def collect(self) -> CollectResult:
        seconds = float(read_text(host_path(self.root, "/proc/uptime")).split()[0])
        result = CollectResult(samples=[Sample.of("rackpulse_uptime_seconds", seconds)])
        result.state = {"rebooted_recently": seconds < self.warn_below}
        return result


def build(section, host, runner):  # the contract: its own section, the HostContext, the runner
    return UptimeCollector(host.root, section.warn_below_seconds)


PLUGIN = CollectorPlugin("uptime", UptimeCollector, build, UptimeConfig)
'''

# The same collector with what is wrong, a tile and its own page, as a third party would ship it.
UPTIME_WITH_PAGE = UPTIME.replace("from collectors.plugin import CollectorPlugin", """
from collectors.findings import WARN, Finding, RuleSpec, Tile
from collectors.plugin import CollectorPlugin, Section


def findings(state, judging):
    if state.get("rebooted_recently"):
        return [Finding(WARN, f"{judging.host} rebooted recently", "host_rebooted", judging.host)]
    return []
""").replace("PLUGIN = CollectorPlugin(\"uptime\", UptimeCollector, build, UptimeConfig)", """PLUGIN = CollectorPlugin(
    "uptime", UptimeCollector, build, UptimeConfig, domain="host", findings=findings,
    rules=(RuleSpec("host_rebooted", "warning"),), tile=Tile("Uptime", "/uptime", lambda state, j: "up a while"),
    section=Section("uptime", "Uptime", Path(__file__).parent))""")


def install(site: Path, dist: str, module: str, source: str | None, entries: str) -> None:
    """What `pip install` leaves: the module and a .dist-info with its entry points."""
    info = site / f"{dist}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[rackpulse.collectors]\n{entries}\n")
    if source is not None:
        (site / f"{module}.py").write_text(source)


@pytest.fixture
def site_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    plugins.cache_clear()
    yield site
    plugins.cache_clear()


def test_every_built_in_collector_is_an_installed_plug_in_under_its_own_name() -> None:
    found = plugins()
    assert BUILT_IN <= set(found)
    assert all(found[n].collector.name == n and found[n].collector.metrics for n in BUILT_IN)
    assert "rackpulse_md_array_degraded" in metric_specs("mdraid") and metric_specs("nope") == {}


def test_a_collector_from_its_own_package_is_configured_built_and_run(site_packages: Path, tmp_path: Path) -> None:
    install(site_packages, "rackpulse_uptime", "rackpulse_uptime", UPTIME, "uptime = rackpulse_uptime:PLUGIN")
    root = tmp_path / "host"
    (root / "proc").mkdir(parents=True)
    (root / "proc/uptime").write_text("321.50 1234.00\n")
    off = {name: {"enabled": False} for name in BUILT_IN}
    cfg = load_config(None, {"host_root": str(root), "collectors": {**off, "uptime": {"warn_below_seconds": 3600}}})
    assert (cfg.collectors.uptime.interval, cfg.collectors.uptime.warn_below_seconds) == (60.0, 3600)
    built = build_collectors(cfg)
    assert list(built) == ["uptime"]
    result = built["uptime"].collect()
    assert [(s.metric, s.value) for s in result.samples] == [("rackpulse_uptime_seconds", 321.5)]
    assert result.state == {"rebooted_recently": True}
    assert cfg.schedules(built) == {"uptime": (60.0, 20.0)}
    assert "rackpulse_uptime_seconds" in metric_specs("uptime")


def test_a_plug_ins_section_is_checked_like_every_other(site_packages: Path) -> None:
    install(site_packages, "rackpulse_uptime", "rackpulse_uptime", UPTIME, "uptime = rackpulse_uptime:PLUGIN")
    with pytest.raises(ConfigError) as err:
        load_config(None, {"collectors": {"uptime": {"warn_below": 5}}})
    assert "unknown key 'collectors.uptime.warn_below'" in str(err.value)


def test_a_section_for_a_collector_nobody_installed_is_an_unknown_key(site_packages: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(None, {"collectors": {"uptime": {"interval": 5}}})
    assert "unknown key 'collectors.uptime'" in str(err.value)


def test_a_broken_plug_in_is_logged_and_the_others_still_load(site_packages: Path,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    install(site_packages, "rackpulse_broken", "rackpulse_broken", None, "broken = rackpulse_broken:PLUGIN")
    install(site_packages, "rackpulse_odd", "rackpulse_odd", "PLUGIN = 42\n", "odd = rackpulse_odd:PLUGIN")
    with caplog.at_level(logging.ERROR, logger="rackpulse.collectors"):
        found = plugins()
    assert BUILT_IN <= set(found) and not {"broken", "odd"} & set(found)
    text = caplog.text
    assert "collector plug-in broken (rackpulse_broken:PLUGIN) failed to load" in text
    assert "collector plug-in odd (rackpulse_odd:PLUGIN) is not a CollectorPlugin named 'odd'" in text


def test_a_plug_in_from_its_own_package_brings_its_tile_alert_rule_and_page(site_packages: Path,
                                                                            tmp_path: Path) -> None:
    from app.alerting.conditions import Conditions, builtin_rules
    from app.scheduler import Scheduler, Snapshot
    from app.storage.db import upgrade
    from app.web.app import create_app
    from tests.test_web import fetch

    # A module name of its own: the earlier tests' rackpulse_uptime stays imported in sys.modules.
    install(site_packages, "rackpulse_uptime_page", "rackpulse_uptime_page", UPTIME_WITH_PAGE,
            "uptime = rackpulse_uptime_page:PLUGIN")
    plugins.cache_clear()  # importing the app above already looked the plug-ins up
    (site_packages / "section.html").write_text("<section id=uptime>{{ 'rebooted' if v.rebooted_recently "
                                                "else 'steady' }}</section>\n")
    root = tmp_path / "host"
    (root / "proc").mkdir(parents=True)
    (root / "proc/uptime").write_text("321.50 1234.00\n")
    off = {name: {"enabled": False} for name in BUILT_IN}
    cfg = load_config(None, {"host": "nas", "host_root": str(root), "storage": {"url": f"sqlite:///{tmp_path}/r.db"},
                             "collectors": {**off, "uptime": {"warn_below_seconds": 3600}}})
    upgrade(cfg.storage.url)
    snap = Snapshot(host="nas")
    sched = Scheduler(build_collectors(cfg), cfg.schedules(["uptime"]), snap)
    app = create_app(cfg, collect=False, snapshot=snap, migrate=False)
    sched.store = app.state.store
    import asyncio

    asyncio.run(sched.run_all_once())
    assert builtin_rules()["host_rebooted"].severity == "warning"
    assert [(c.rule, c.summary) for c in Conditions().build(snap)] == [("host_rebooted", "nas rebooted recently")]
    overview = fetch(app, "/").text
    assert "<strong>Uptime</strong>" in overview and "nas rebooted recently" in overview
    assert 'href="/uptime"' in overview  # in the navigation
    page = fetch(app, "/uptime")
    assert page.status_code == 200 and "<section id=uptime>rebooted</section>" in page.text
    metrics = fetch(app, "/metrics").text  # its declared metric, with its HELP
    assert "# HELP rackpulse_uptime_seconds Seconds since boot." in metrics
    assert 'rackpulse_uptime_seconds{host="nas"} 321.5' in metrics
    assert fetch(app, "/api/state").json()["findings"]["uptime"][0]["text"] == "nas rebooted recently"

