"""docs/first-collector.md is true: the files its titled code blocks show are exactly a plug-in of
three files, which pip installs into a fresh venv beside rackpulse, and `rackpulse serve` there
runs it from its own section, shows its tile, serves its metric and sends its rule's webhook.
No list of rackpulse's names it: the config below switches off what is installed here, derived
from plugins(), and the plug-in's section is the only one named."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.peers import free_port
from tests.states import all_off

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "first-collector.md"
BLOCK = re.compile(r'^```\w+ title="([^"]+)"\n(.*?)^```$', re.M | re.S)
INTERVAL = 1.0  # the plug-in's and the alerts' interval here: every wait is a few of these, or start-up


def files_of_the_page() -> dict[str, str]:
    return {name: text for name, text in BLOCK.findall(PAGE.read_text())}


def test_the_page_shows_a_plug_in_of_three_files() -> None:
    assert sorted(files_of_the_page()) == ["pyproject.toml", "rackpulse_load/__init__.py", "rackpulse_load/collector.py"]


def test_the_pages_parser_quotes_the_line_it_cannot_read(tmp_path: Path) -> None:
    source = files_of_the_page()["rackpulse_load/collector.py"]
    namespace: dict[str, object] = {"__name__": "first_collector_page"}
    exec(compile(source, "rackpulse_load/collector.py", "exec"), namespace)  # noqa: S102 - the page's own code
    parse = namespace["parse_loadavg"]
    assert callable(parse)
    assert parse("0.52 0.58 9.59 1/389 12345\n") == (0.52, 0.58, 9.59)
    with pytest.raises(Exception, match=r"not three numbers: 'garbage'"):
        parse("garbage\n")


@pytest.fixture(scope="module")
def venv_with_the_pages_plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The page's files written out and installed by pip into a fresh venv that has rackpulse (this
    checkout's environment, through a .pth), as the page tells a user to."""
    tmp = tmp_path_factory.mktemp("first-collector")
    source = tmp / "rackpulse-load"
    for name, text in files_of_the_page().items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text(text)
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    (Path(site) / "_rackpulse.pth").write_text(f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                    "--no-build-isolation", str(source)], check=True, timeout=300)
    shutil.rmtree(source / "build", ignore_errors=True)
    return python


def test_the_pages_plug_in_runs_under_serve_with_its_tile_metric_and_alert(
        venv_with_the_pages_plugin: Path, tmp_path: Path) -> None:
    from tests.agent_hosts import get_json, stop, to_toml, wait_for
    from tests.alerting.sink import Sink
    from tests.test_plugins import get_text

    root = tmp_path / "host"
    (root / "proc").mkdir(parents=True)
    (root / "proc/loadavg").write_text("5.10 4.80 4.52 3/412 98765\n")
    port, sink = free_port(), Sink()
    cfg = {"host": "nas", "host_root": str(root), "web": {"port": port},
           "storage": {"url": f"sqlite:///{tmp_path / 'r.db'}"},
           "collectors": all_off(load={"interval": INTERVAL, "warn_above": 4.0}),
           "alerts": {"interval": INTERVAL, "group_wait": 0,
                      "channels": [{"name": "hook", "url": f"{sink.url}/hook"}]}}
    (tmp_path / "rackpulse.toml").write_text(to_toml(cfg))
    log = (tmp_path / "serve.log").open("wb")
    proc = subprocess.Popen([str(venv_with_the_pages_plugin), "-m", "app.cli", "serve", "--config",
                             str(tmp_path / "rackpulse.toml")],
                            cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        # start-up (the suite's start-up waits allow 60 s on a loaded machine), then a collection
        # and an alert evaluation, each every INTERVAL
        wait_for(lambda: sink.json("/hook"), 60.0 + 5 * INTERVAL, "the webhook of load_high")
        (sent,) = sink.json("/hook")
        assert (sent["rule"], sent["state"]) == ("load_high", "firing")
        assert sent["summary"] == "nas: load 4.5 over 15 minutes, above 4"
        overview = get_text(f"{base}/")
        assert "<strong>Load</strong>" in overview
        metrics = get_text(f"{base}/metrics")
        assert "# HELP rackpulse_load_average The load average over a window of minutes." in metrics
        assert 'rackpulse_load_average{host="nas",minutes="15"} 4.52' in metrics
        state = get_json(f"{base}/api/state")["states"]["load"]
        assert state == {"load1": 5.1, "load5": 4.8, "load15": 4.52, "warn_above": 4.0}
    finally:
        stop(proc)
        sink.close()
        log.close()
