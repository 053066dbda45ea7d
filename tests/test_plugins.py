"""Collectors are plug-ins of the entry point group `rackpulse.collectors`: the built-in ones
are installed that way, and a collector from a package of its own is found, configured from
its own [collectors.<name>] section, built and run like them. The quick tests put a module and
its .dist-info on sys.path, as pip leaves them; the last one builds tests/fixtures/plugin-package
and installs it with pip into a fresh venv, and runs `rackpulse serve` there."""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.config import ConfigError, load_config
from collectors import build_collectors, metric_specs, plugins
from tests.peers import free_port

ROOT = Path(__file__).resolve().parents[1]

def built_in() -> set[str]:
    """The plug-ins rackpulse ships: its own pyproject's entry points (the one place a new one is
    named), not a list kept here."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return set(project["entry-points"]["rackpulse.collectors"])


BUILT_IN = built_in()

# The smallest plug-in: a collector, its config section and its state's type.
UPTIME = '''
from pathlib import Path
from typing import ClassVar

from collectors.base import Collector, CollectResult, MetricSpec, Sample, host_path, read_text
from collectors.config import CollectorBase
from collectors.plugin import CollectorPlugin
from collectors.state import State


class UptimeConfig(CollectorBase):
    interval: float = 60.0
    warn_below_seconds: float = 600.0


class UptimeState(State):
    rebooted_recently: bool = False


class UptimeCollector(Collector):
    name: ClassVar[str] = "uptime"
    metrics: ClassVar[dict[str, MetricSpec]] = {"rackpulse_uptime_seconds": MetricSpec("Seconds since boot.")}

    def __init__(self, root: Path, warn_below: float) -> None:
        self.root, self.warn_below = root, warn_below

    def collect(self) -> CollectResult:
        seconds = float(read_text(host_path(self.root, "/proc/uptime")).split()[0])
        return CollectResult(samples=[Sample.of("rackpulse_uptime_seconds", seconds)],
                             state=UptimeState(rebooted_recently=seconds < self.warn_below))


def build(section, host, runner):  # the contract: its own section, the HostContext, the runner
    return UptimeCollector(host.root, section.warn_below_seconds)


PLUGIN = CollectorPlugin("uptime", UptimeCollector, build, UptimeConfig, UptimeState)
'''
# The same plug-in as a package of its own, with findings, a rule, a tile and a page.
PACKAGE = Path(__file__).parent / "fixtures" / "plugin-package"


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
    assert result.state is not None and result.state.model_dump() == {"rebooted_recently": True}
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


def test_a_plug_in_without_a_state_type_is_refused_and_logged(site_packages: Path,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    untyped = UPTIME.replace(", UptimeConfig, UptimeState)", ", UptimeConfig, dict)")
    install(site_packages, "rackpulse_untyped", "rackpulse_untyped", untyped, "uptime = rackpulse_untyped:PLUGIN")
    with caplog.at_level(logging.ERROR, logger="rackpulse.collectors"):
        assert "uptime" not in plugins()
    assert "collector plug-in uptime (rackpulse_untyped:PLUGIN) declares no State type" in caplog.text


@pytest.fixture(scope="module")
def venv_with_the_plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv that has rackpulse (this checkout's environment, through a .pth) and the
    plug-in package built and installed into it by pip, as a user would: `pip install .`."""
    tmp = tmp_path_factory.mktemp("plugin-venv")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    (Path(site) / "_rackpulse.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    source = tmp / "rackpulse-uptime"
    shutil.copytree(PACKAGE, source)  # the build writes beside the sources: never into this checkout
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                    "--no-build-isolation", str(source)], check=True, timeout=300)
    return python


def test_a_plug_in_from_its_own_package_brings_its_tile_page_metric_rule_and_webhook_text(
        venv_with_the_plugin: Path, tmp_path: Path) -> None:
    from tests.agent_hosts import get_json, stop, to_toml, wait_for
    from tests.alerting.sink import Sink

    python = venv_with_the_plugin
    found = subprocess.run([str(python), "-c", "from collectors import plugins; print(plugins()['uptime'].state)"],
                           capture_output=True, text=True, check=True, cwd=tmp_path).stdout
    assert "rackpulse_uptime.UptimeState" in found  # found by its entry point, from the venv's site-packages
    root = tmp_path / "host"
    (root / "proc").mkdir(parents=True)
    (root / "proc/uptime").write_text("321.50 1234.00\n")
    port, sink = free_port(), Sink()
    cfg = {"host": "nas", "host_root": str(root), "web": {"port": port},
           "storage": {"url": f"sqlite:///{tmp_path / 'r.db'}"},
           "collectors": {**{name: {"enabled": False} for name in BUILT_IN},
                          "uptime": {"interval": 1, "warn_below_seconds": 3600}},
           "alerts": {"interval": 1, "group_wait": 0, "channels": [{"name": "hook", "url": f"{sink.url}/hook"}]}}
    (tmp_path / "rackpulse.toml").write_text(to_toml(cfg))
    log = (tmp_path / "serve.log").open("wb")
    # Run from outside the checkout: rackpulse and the plug-in both come from the venv.
    proc = subprocess.Popen([str(python), "-m", "app.cli", "serve", "--config", str(tmp_path / "rackpulse.toml")],
                            cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = 60.0  # start-up, then a collection (every second) and an alert evaluation (every second)
    try:
        wait_for(lambda: sink.json("/hook"), deadline, "the webhook of host_rebooted")
        (sent,) = sink.json("/hook")
        assert (sent["rule"], sent["state"], sent["host"]) == ("host_rebooted", "firing", "nas")
        assert sent["summary"].startswith("nas rebooted recently (")  # the plug-in's own words
        overview = get_text(f"{base}/")
        assert "<strong>Uptime</strong>" in overview and "nas rebooted recently" in overview  # its tile
        assert 'href="/uptime"' in overview  # its page, in the navigation
        page = get_text(f"{base}/uptime")
        assert "<section id=\"uptime\">" in page and "rebooted: up" in page
        metrics = get_text(f"{base}/metrics")  # its declared metric, with its HELP
        assert "# HELP rackpulse_uptime_seconds Seconds since boot." in metrics
        assert 'rackpulse_uptime_seconds{host="nas"} 321.5' in metrics
        state = get_json(f"{base}/api/state")
        assert state["states"]["uptime"] == {"seconds": 321.5, "rebooted_recently": True}
        assert state["findings"]["uptime"][0]["rule"] == "host_rebooted"
        # The first /openapi.json builds the schema of every route and model: 0.5 s here when
        # quiet, past get_json's 2 s beside the suite's other worker (a CI run failed so).
        schema = get_json(f"{base}/openapi.json", timeout=30.0)["components"]["schemas"]
        assert "UptimeState" in schema  # its state's type is in the API's schema too
    finally:
        stop(proc)
        sink.close()
    assert not (ROOT / "tests/fixtures/plugin-package/build").exists()


def get_text(url: str) -> str:
    import urllib.request

    with urllib.request.urlopen(url, timeout=5) as r:  # noqa: S310 - loopback
        return str(r.read().decode())


def test_a_plug_in_is_five_required_fields_and_nine_optional_names_four_of_them_groups() -> None:
    """What a newcomer meets in collectors/plugin.py: the five a plug-in must give, then what is
    wrong, where it sits, and four groups it names only when it has them. A field added at the
    top level, instead of into its group, fails here."""
    import dataclasses

    from collectors.base import Collector
    from collectors.config import CollectorBase
    from collectors.plugin import CollectorPlugin, Legacy, Needs, Pages, Setup
    from collectors.state import State

    fields = dataclasses.fields(CollectorPlugin)
    required = [f.name for f in fields if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    assert required == ["name", "collector", "build", "config", "state"]
    assert [f.name for f in fields if f.name not in required] == [
        "findings", "rules", "tile", "domain", "rank", "pages", "needs", "setup", "legacy"]
    assert all(f.kw_only for f in fields if f.name not in required)
    groups = {cls.__name__: [f.name for f in dataclasses.fields(cls)] for cls in (Pages, Needs, Setup, Legacy)}
    assert groups == {"Pages": ["section", "detail", "charts", "bays", "monitors", "nouns", "words", "field_names"],
                      "Needs": ["privileges", "uses"], "Setup": ["scene", "starter"], "Legacy": ["api", "moved"]}
    minimal = CollectorPlugin("x", Collector, lambda c, h, r: Collector(), CollectorBase, State)
    assert (minimal.pages, minimal.needs, minimal.setup, minimal.legacy) == (Pages(), Needs(), Setup(), Legacy())
