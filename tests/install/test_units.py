"""The shipped systemd units, scored by systemd's own `systemd-analyze security --offline=true`
(it reads the unit file; no running systemd needed): the web server at 3.0 or less, better than
Debian's prometheus.service (4.0). Before the privilege split, rackpulse.service scored 8.9."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

UNITS = Path(__file__).resolve().parents[2] / "deploy" / "systemd"
TARGET = 3.0


def exposure(unit: Path) -> float:
    out = subprocess.run(["systemd-analyze", "security", "--offline=true", "--no-pager", str(unit)],
                         capture_output=True, text=True, timeout=60)
    m = re.search(r"Overall exposure level for \S+: (\d+\.\d)", out.stdout + out.stderr)
    assert m, out.stdout + out.stderr
    return float(m.group(1))


@pytest.mark.parametrize("name", ["rackpulse.service", "rackpulse-agent.service"])
def test_each_shipped_unit_is_exposed_no_more_than_three(name: str) -> None:
    assert exposure(UNITS / name) <= TARGET


def test_the_install_page_gives_the_figure_the_unit_scores() -> None:
    readme = (UNITS.parents[1] / "docs" / "install.md").read_text()
    assert f"`systemd-analyze security --offline=true deploy/systemd/rackpulse.service`: " \
           f"**{exposure(UNITS / 'rackpulse.service'):.1f} OK**" in readme


def test_the_web_server_runs_as_its_own_user_with_no_ambient_capability() -> None:
    text = (UNITS / "rackpulse.service").read_text()
    assert re.search(r"^User=rackpulse$", text, re.M) and "User=root" not in text
    assert re.search(r"^AmbientCapabilities=$", text, re.M)


def test_the_score_counts_what_a_unit_leaves_open() -> None:
    """The check can fail: the old unit (root, no sandbox beyond ProtectSystem) scores above it."""
    old = UNITS.parents[1] / "tests" / "fixtures" / "install" / "rackpulse-root.service"
    assert exposure(old) > TARGET
