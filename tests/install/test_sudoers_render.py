"""The drop-in `init --sudoers` writes, rendered from a config with no sudo involved: a disabled
collector gets no grant (its tool may be installed, it is not run), an enabled one gets its
anchored line, a tool that is not installed is named once as not granted."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from app.config import load_config
from app.install.sudoers import argv_lines, needed, render
from collectors import plugins


def config(enabled: set[str]) -> object:
    return load_config(None, {"host": "nas", "collectors": {n: {"enabled": n in enabled} for n in plugins()}})


def installed(*names: str) -> Callable[[str], str | None]:
    return lambda cmd: f"/usr/sbin/{cmd}" if Path(cmd).name in names else None


def test_a_disabled_collector_gets_no_grant_though_its_tool_is_installed() -> None:
    text = render(config({"host"}), "rackpulse", installed("smartctl", "mdadm", "storcli64"))
    assert "smartctl" not in text and "mdadm" not in text and "storcli64" not in text
    assert [n.collector for n in needed(config({"host"}), installed("smartctl"))] == []


def test_an_enabled_collector_gets_its_anchored_line_for_the_installed_tool() -> None:
    text = render(config({"smart"}), "rackpulse", installed("smartctl"))
    grants = [line for line in text.splitlines() if line.startswith("rackpulse ALL=(root) NOPASSWD: /usr/sbin/smartctl")]
    assert grants, text
    assert "not installed" not in text


def test_a_tool_that_is_not_installed_is_named_once_as_not_granted() -> None:
    text = render(config({"smart", "mdraid"}), "rackpulse", installed())
    (line,) = [ln for ln in text.splitlines() if ln.startswith("# not installed")]
    assert line.count("smartctl") == 1
    assert "ALL=(root)" not in text.split("Defaults", 1)[1].split("\n", 1)[1]


def test_the_argv_lines_to_change_are_each_said_once() -> None:
    lines = argv_lines(config({"smart"}), installed("smartctl"))
    assert len(lines) == len(set(lines)) >= 1
    assert all(line.endswith("# [collectors.smart]") for line in lines)


def test_the_drop_in_reads_whole_with_a_group_grant_as_a_note_and_the_missing_tools_last() -> None:
    cfg = load_config(None, {"host": "nas", "collectors": {**{n: {"enabled": False} for n in plugins()},
                                                           "frr": {"enabled": True}, "mdraid": {"enabled": True},
                                                           "btrfs": {"enabled": True}}})
    assert render(cfg, "monitor", installed("vtysh")) == (
        "# Written by `rackpulse init --sudoers`: what rackpulse's collectors may run as root, and\n"
        "# nothing else (argument lists are anchored regular expressions: sudo 1.9.10 or later).\n"
        "# Regenerate after enabling a collector. Delete the Defaults line to log every run.\n"
        "Defaults:monitor !syslog, !pam_session, !lecture\n"
        "\n"
        "# frr: vtysh talks to FRR's daemons over their sockets in /run/frr, open to the frrvty group\n"
        "# not sudo: usermod -aG frrvty monitor   # and SupplementaryGroups=frrvty in the unit\n"
        "\n"
        "# not installed, so not granted: mdadm, btrfs (run this again after installing)\n")


def test_each_grant_follows_its_own_comment_and_every_enabled_tool_is_listed() -> None:
    text = render(config({"smart", "mdraid"}), "monitor", installed("smartctl", "mdadm"))
    blocks = text.split("\n\n")[1:]
    assert [b.splitlines()[0].split(":")[0] for b in blocks] == ["# mdraid", "# smart", "# smart"]  # the config's order
    assert all(b.splitlines()[1].startswith("monitor ALL=(root) NOPASSWD: /usr/sbin/") for b in blocks)
    assert text.endswith("$\n") and not text.endswith("\n\n")


def test_a_command_found_by_its_path_is_granted_by_its_real_path(tmp_path: Path) -> None:
    real = tmp_path / "real-smartctl"
    real.write_text("")
    link = tmp_path / "smartctl"
    link.symlink_to(real)
    (n, *_) = list(needed(config({"smart"}), lambda c: str(link)))
    assert n.executable == str(real) and n.section is not None and n.section.enabled
    assert n.option == "collectors.smart.smartctl"


def test_a_tool_that_is_not_installed_has_no_argv_line_to_change() -> None:
    assert argv_lines(config({"smart"}), installed()) == []
