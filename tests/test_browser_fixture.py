"""The browser tests' demo fixture fails at once, with the end of the demo's log, when the demo
exits before it serves: it never hands the tests a server that is not up (a newcomer's `make
test` once showed 13 ERR_CONNECTION_REFUSED instead of the demo's own error). And each browser
module has a demo server and a worker of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent_hosts import free_port
from tests.e2e.conftest import wait_until_seeded


def test_a_demo_that_exits_before_serving_fails_the_fixture_with_its_log(tmp_path: Path) -> None:
    log = tmp_path / "demo.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-c", "print('rackpulse: port 1 is taken'); raise SystemExit(3)"],
                                stdout=out, stderr=subprocess.STDOUT)
    proc.wait(30)
    with pytest.raises(pytest.fail.Exception) as failed:
        wait_until_seeded(proc, f"http://127.0.0.1:{free_port()}", log)
    assert "exited with 3" in str(failed.value) and "port 1 is taken" in str(failed.value)



# Collected as `make test` collects (tests/conftest.py marks the groups), written down per module:
# its xdist groups and the scope its tests get the demo `server` fixture at.
GROUPS_PLUGIN = """
import json, os

def pytest_collection_finish(session):
    seen = {}
    for item in session.items:
        marker = item.get_closest_marker("xdist_group")
        group = (marker.args[0] if marker.args else marker.kwargs["name"]) if marker else None
        server = item._fixtureinfo.name2fixturedefs.get("server")
        mine = seen.setdefault(item.path.name, {"groups": [], "server": []})
        if group not in mine["groups"]:
            mine["groups"].append(group)
        if server and server[-1].scope not in mine["server"]:
            mine["server"].append(server[-1].scope)
    with open(os.environ["GROUPS_OUT"], "w") as out:
        json.dump(seen, out)
"""


def test_each_browser_module_has_a_worker_and_a_demo_server_of_its_own(tmp_path: Path) -> None:
    """The browser modules run at once under `make test` (pytest-xdist, --dist loadgroup): each
    module's tests are one group named for the module, so the two take two workers, and every
    test that uses the demo gets it once per module: a server each, never one shared."""
    (tmp_path / "groups_plugin.py").write_text(GROUPS_PLUGIN)
    out = tmp_path / "groups.json"
    root = Path(__file__).parent.parent
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{root}", "GROUPS_OUT": str(out)}
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "groups_plugin",
                           "tests/e2e"], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    seen = json.loads(out.read_text())
    assert seen["test_browser.py"]["groups"] == ["tests/e2e/test_browser.py"]
    assert seen["test_every_page.py"]["groups"] == ["tests/e2e/test_every_page.py"]
    assert {name: facts["server"] for name, facts in seen.items()} == {
        "test_browser.py": ["module"], "test_every_page.py": ["module"]}
