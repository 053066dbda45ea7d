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

BUILT_IN = {"mdraid", "smart", "frr", "bonding", "openvpn", "snmp", "nut", "hwmon", "heatpump", "host"}

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


def build(cfg, runner):
    return UptimeCollector(Path(cfg.host_root), cfg.collectors.uptime.warn_below_seconds)


PLUGIN = CollectorPlugin("uptime", UptimeCollector, build, UptimeConfig)
'''


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
