"""`rackpulse doctor`'s pieces without sudo or a service user: a refused command is recognised by
what tools print when the kernel or sudo said no (real commands: small scripts that refuse), it
belongs to the collector whose section sets its command, and its grant is the plug-in's declared
privilege for exactly those arguments; a command that is not one of them gets no grant."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from app.install.doctor import NO_WRITES, Recorder, Refusal, _belongs, doctor_config, grants_for
from app.install.sudoers import Needed, needed
from collectors import plugins
from collectors.base import CollectorError
from tests.states import all_off


def script(tmp: Path, name: str, body: str) -> str:
    path = tmp / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.mark.parametrize("said", ["Permission denied", "smartctl: must be root", "sudo: a password is required",
                                  "Operation not permitted", "ACCESS DENIED"])
def test_a_command_that_says_it_was_refused_is_remembered_with_its_line(tmp_path: Path, said: str) -> None:
    tool = script(tmp_path, "tool", f'echo "some output"; echo "open /dev/sda: {said}" >&2; exit 2')
    rec = Recorder()
    res = rec([tool, "--scan"], 5.0)
    assert res.returncode == 2
    assert rec.refused == [Refusal((tool, "--scan"), f"open /dev/sda: {said}")]


def test_smartctls_json_message_is_the_line_quoted(tmp_path: Path) -> None:
    body = ('echo \'{"smartctl": {"messages": [{"string": "Smartctl open device: /dev/sda failed: Permission denied",'
            ' "severity": "error"}]}}\'; exit 2')
    rec = Recorder()
    rec([script(tmp_path, "smartctl", body), "--json"], 5.0)
    assert [r.said for r in rec.refused] == ["Smartctl open device: /dev/sda failed: Permission denied"]


def test_a_command_that_failed_for_another_reason_or_succeeded_is_not_a_refusal(tmp_path: Path) -> None:
    rec = Recorder()
    rec([script(tmp_path, "a", 'echo "no such device" >&2; exit 1')], 5.0)
    rec([script(tmp_path, "b", 'echo "permission denied (but it worked)"; exit 0')], 5.0)
    assert rec.refused == []


def test_a_command_that_cannot_start_is_raised_and_remembered_only_when_refused(tmp_path: Path) -> None:
    rec = Recorder()
    with pytest.raises(CollectorError):
        rec([str(tmp_path / "missing")], 5.0)
    locked = tmp_path / "locked"
    locked.write_text("#!/bin/sh\n")
    locked.chmod(0o600)  # not executable: EACCES
    with pytest.raises(CollectorError):
        rec([str(locked)], 5.0)
    assert [r.argv for r in rec.refused] == [(str(locked),)]


def smart_needed(argv: list[str]) -> Needed:
    from app.config import load_config

    cfg = load_config(None, {"collectors": all_off(smart={"smartctl": argv})})
    (n, *_) = [n for n in needed(cfg, lambda c: "/usr/sbin/smartctl") if n.collector == "smart"]
    return n


def test_a_refused_scan_gets_its_anchored_grant_and_the_argv_line() -> None:
    n = smart_needed(["smartctl"])
    grants = grants_for(Refusal(("smartctl", "--scan", "--json"), "Permission denied"), [n], "monitor")
    assert grants[0].startswith("monitor ALL=(root) NOPASSWD: /usr/sbin/smartctl ")
    assert grants[1] == 'smartctl = ["sudo", "-n", "/usr/sbin/smartctl"]   # [collectors.smart]'


def test_a_refused_command_through_sudo_gets_the_grant_but_no_argv_line() -> None:
    n = smart_needed(["sudo", "-n", "smartctl"])
    grants = grants_for(Refusal(("sudo", "-n", "smartctl", "--scan", "--json"), "a password is required"), [n], "u")
    assert len(grants) == 1 and grants[0].startswith("u ALL=(root) NOPASSWD: ")


def test_arguments_no_privilege_declares_or_another_tool_get_no_grant() -> None:
    n = smart_needed(["smartctl"])
    assert grants_for(Refusal(("smartctl", "--scan", "--json", "--evil"), "denied"), [n], "u") == []
    assert grants_for(Refusal(("mdadm", "--detail"), "denied"), [n], "u") == []
    assert grants_for(Refusal((), "denied"), [n], "u") == []


def test_a_refusal_belongs_to_the_collector_whose_section_sets_its_command() -> None:
    from app.config import load_config

    cfg = load_config(None, {"collectors": all_off(smart={"smartctl": ["sudo", "-n", "/usr/sbin/smartctl"]},
                                                   mdraid={})})
    refused = Refusal(("sudo", "-n", "/usr/sbin/smartctl", "--scan"), "denied")
    assert _belongs(refused, "smart", cfg)
    assert not _belongs(refused, "mdraid", cfg)
    assert not _belongs(refused, "no-such-collector", cfg)
    assert not _belongs(Refusal(("sudo", "-n"), "denied"), "smart", cfg)


def test_the_doctors_round_writes_nothing_to_a_device() -> None:
    cfg = doctor_config(None)
    assert cfg.collectors.smart.selftest.enabled is False
    assert "smart" in plugins() and NO_WRITES["collectors"]


def test_the_doctors_config_is_the_file_given_with_self_tests_off(tmp_path: Path) -> None:
    path = tmp_path / "rackpulse.toml"
    path.write_text('host = "from-the-file"\n[collectors.smart.selftest]\nenabled = true\n')
    cfg = doctor_config(path)
    assert cfg.host == "from-the-file" and cfg.collectors.smart.selftest.enabled is False
    assert cfg.collectors.modems.signal_setup == 0


def test_a_refusal_that_cannot_start_is_remembered_with_the_error_and_output_that_is_not_utf8_is_read(
        tmp_path: Path) -> None:
    rec = Recorder()
    locked = tmp_path / "locked"
    locked.write_text("#!/bin/sh\n")
    locked.chmod(0o600)
    with pytest.raises(CollectorError) as err:
        rec([str(locked)], 5.0)
    assert rec.refused[0].said == str(err.value)
    rec = Recorder()
    rec([script(tmp_path, "t", r"printf '\377\376 permission denied\n' >&2; exit 1")], 5.0)
    assert rec.refused[0].said == "\ufffd\ufffd permission denied"


def test_a_long_refusal_line_is_cut_at_200_characters(tmp_path: Path) -> None:
    rec = Recorder()
    rec([script(tmp_path, "t", f'echo "permission denied {"x" * 300}" >&2; exit 1')], 5.0)
    assert len(rec.refused[0].said) == 200


def test_a_refusal_is_granted_by_whichever_wanted_command_it_is_not_only_the_first() -> None:
    from app.config import load_config

    cfg = load_config(None, {"collectors": all_off(smart={"smartctl": ["smartctl"]}, mdraid={"enabled": True})})
    wanted = [n for n in needed(cfg, lambda c: f"/usr/sbin/{c}")]
    assert [n.collector for n in wanted][:1] == ["mdraid"]  # another tool first
    grants = grants_for(Refusal(("smartctl", "--scan", "--json"), "Permission denied"), wanted, "u")
    assert grants and grants[0].startswith("u ALL=(root) NOPASSWD: /usr/sbin/smartctl ")


def test_a_refusal_without_a_newline_is_quoted_as_it_was_said(tmp_path: Path) -> None:
    rec = Recorder()
    rec([script(tmp_path, "t", "printf 'open failed: Permission denied' >&2; printf 'stdout here'; exit 1")], 5.0)
    assert rec.refused[0].said == "open failed: Permission denied"
