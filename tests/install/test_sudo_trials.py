"""What the drop-in `rackpulse init --sudoers` writes admits, asked of the real sudo: `sudo -l -U
<user> <command> <args>` as root says whether that user may run exactly that, for every case a
review tried. smartctl's `-d jmb39x,0,force` reads and writes LBA 33 of the disk (smartctl(8)),
and a device "under /dev" was any node there: a link in /dev/shm to /etc/shadow was opened as
root. And render() itself, without useradd or sudo."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.config import load_config
from app.install.sudoers import install, render
from tests.agent_hosts import to_toml

USER = "rackpulse-sudo-trials"
DROP_IN = Path("/etc/sudoers.d/rackpulse-sudo-trials")  # no "." in the name: sudo would skip it
# One user and one drop-in for the whole file: its tests run on one worker, one after another
# (on two workers, one test's clean-up removed the drop-in while another asked sudo: CI went red).
pytestmark = pytest.mark.xdist_group("sudo-trials")

ALLOWED = ["--scan --json", "--json --all -d sat /dev/sda", "--json --all --nocheck=standby -d megaraid,7 /dev/bus/0",
           "--json --all -d sat,12 /dev/sg3", "--json --all -d nvme /dev/nvme0n1", "--json --all /dev/sdab",
           "--json --all -d aacraid,0,0,3 /dev/sdc", "--json --all /dev/disk/by-id/ata-ST4000DM004-2CV104_ZFN0ABCD",
           "--json --all /dev/disk/by-path/pci-0000:03:00.0-sas-phy2-lun-0", "-t short --nocheck=standby /dev/sda",
           "-t long -d usbjmicron /dev/sdb"]
REFUSED = ["--json --all -d jmb39x,0,force /dev/sda", "--json --all -d jmb39x,0 /dev/sda",
           "--json --all -d jms56x,0 /dev/sda", "--json --all -d intelliprop,1 /dev/sda", "--json --all -d test /dev/sda",
           "--json --all -d sat,force /dev/sda", "--json --all /dev/shm/link", "--json --all /dev/fd/0",
           "--json --all /dev/stdin", "--json --all /etc/shadow", "--json --all /dev/disk/by-id/../../shm/x",
           "--json --all /dev/sda/../shm/x", "-s on /dev/sda", "--json --all /dev/sda --set=standby,now",
           "-X /dev/sda", "-t offline /dev/sda", "--json --all -d sat /dev/sda /etc/shadow", "--json --all /dev/mem",
           "--json --all /dev/null", "--json --all /dev/sda1/../../etc/shadow", "-t short -d jmb39x,0 /dev/sda"]
# The other plug-ins that run as root: each may run its reading calls and nothing else.
OTHERS = {"btrfs": (["filesystem show --raw", "device stats /srv", "scrub status -R /srv"],
                    ["device stats -z /srv", "scrub start /srv", "balance start /srv", "filesystem show"]),
          "storcli64": (["/call show all J", "/call/eall/sall show all J", "/call show rebuild J"],
                        ["/c0 set alarm=off", "/c0/v0 delete force", "/call show all"]),
          "wg": (["show all dump"], ["set wg0 private-key /etc/shadow", "showconf wg0", "show all private-key"])}


def _config(top: Path, smartctl: str, mdadm: str, ipmi: str | None = None, ipmi_work: str | None = None) -> object:
    from collectors import plugins

    path = top / "rackpulse.toml"
    path.write_text(to_toml({"host": "nas", "storage": {"url": f"sqlite:///{top / 'x.db'}"},
                             "collectors": {**{n: {"enabled": False} for n in plugins()},
                                            "smart": {"enabled": True, "smartctl": [smartctl],
                                                      "selftest": {"enabled": True}},
                                            "mdraid": {"enabled": True, "mdadm": [mdadm]},
                                            "ipmi": {"enabled": ipmi is not None, "local": "on",
                                                     "ipmi_sensors": [ipmi or "ipmi-sensors"],
                                                     **({"work_dir": ipmi_work} if ipmi_work else {})},
                                            "btrfs": {"enabled": True, "btrfs": [str(top / "btrfs")]},
                                            "megaraid": {"enabled": True, "storcli": [str(top / "storcli64")]},
                                            "wireguard": {"enabled": True, "wg": [str(top / "wg")]}}}))
    return load_config(path)


@pytest.fixture
def tools() -> Iterator[dict[str, str]]:
    top = Path(tempfile.mkdtemp(prefix="rp-sudo-"))
    os.chmod(top, 0o755)
    out = {}
    for name in ("smartctl", "mdadm", "ipmi-sensors", "btrfs", "storcli64", "wg"):
        (top / name).write_text("#!/bin/sh\nexit 0\n")
        os.chmod(top / name, 0o755)
        out[name] = str(top / name)
    out["top"] = str(top)
    try:
        yield out
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_render_grants_only_read_only_smartctl_types_and_device_paths(tools: dict[str, str]) -> None:
    text = render(_config(Path(tools["top"]), tools["smartctl"], tools["mdadm"]), "svc")
    smart = [line for line in text.splitlines() if line.startswith("svc ") and tools["smartctl"] in line]
    assert len(smart) == 2  # reading, and self-tests
    assert "jmb39x" not in text and "force" not in text and "[A-Za-z0-9_:+,=-]+[./]?" not in text
    assert all("/dev/(sd[a-z]" in line for line in smart if "--scan" not in line.split(", ")[-1])


@pytest.fixture
def drop_in(tools: dict[str, str]) -> Iterator[dict[str, str]]:
    if subprocess.run(["id", USER], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER], check=True)
    try:
        install(render(_config(Path(tools["top"]), tools["smartctl"], tools["mdadm"]), USER), DROP_IN)
        yield tools
    finally:
        DROP_IN.unlink(missing_ok=True)
        subprocess.run(["userdel", USER], capture_output=True)


def _may(exe: str, args: str) -> bool:
    r = subprocess.run(["sudo", "-l", "-U", USER, exe, *args.split()], capture_output=True, text=True, timeout=30)
    return r.returncode == 0


def test_sudo_admits_each_read_only_call_and_refuses_every_other_type_path_and_option(drop_in: dict[str, str]) -> None:
    smartctl, mdadm = drop_in["smartctl"], drop_in["mdadm"]
    assert [a for a in ALLOWED if not _may(smartctl, a)] == []
    assert [a for a in REFUSED if _may(smartctl, a)] == []
    assert _may(mdadm, "--detail /dev/md127")
    for tool, (yes, no) in OTHERS.items():
        assert [a for a in yes if not _may(drop_in[tool], a)] == [], tool
        assert [a for a in no if _may(drop_in[tool], a)] == [], tool
    assert [a for a in ("--detail /dev/shm/x", "--stop /dev/md127", "--detail /dev/md0 /dev/sda") if _may(mdadm, a)] == []


def test_init_sudoers_names_each_installed_tool_once_and_grants_nothing_for_one_not_installed(
        tools: dict[str, str]) -> None:
    from app.install.sudoers import argv_lines

    cfg = _config(Path(tools["top"]), tools["smartctl"], "mdadm-not-installed-here")
    text = render(cfg, "svc")
    assert "# not installed, so not granted: mdadm-not-installed-here" in text
    assert [line for line in text.splitlines() if line.startswith("svc ") and "mdadm" in line] == []
    lines = [line for line in argv_lines(cfg) if line.startswith("smartctl")]
    assert lines == [f'smartctl = ["sudo", "-n", "{os.path.realpath(tools["smartctl"])}"]   # [collectors.smart]']
    assert len(argv_lines(cfg)) == len(set(argv_lines(cfg)))


@pytest.mark.parametrize("work", [None, "/var/lib/rackpulse/ipmi"])
def test_the_ipmi_sdr_cache_is_granted_in_the_collectors_own_work_directory_alone(tools: dict[str, str],
                                                                                   work: str | None) -> None:
    """The pattern took any absolute path: the caller chose the folder root writes the cache into."""
    import tempfile

    if subprocess.run(["id", USER], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER], check=True)
    exe = tools["ipmi-sensors"]
    own = work or f"{tempfile.gettempdir()}/rackpulse-ipmi-{os.getuid()}"
    sensors = "--comma-separated-output --output-sensor-state --output-sensor-thresholds"
    try:
        install(render(_config(Path(tools["top"]), tools["smartctl"], tools["mdadm"], exe, work), USER), DROP_IN)
        assert _may(exe, f"--quiet-cache --sdr-cache-directory={own}/sdr-cache {sensors}")
        for elsewhere in ("/etc", "/root/.ssh", f"{own}/../../etc", "/var/lib/rackpulse/ipmi2",
                          "/tmp/rackpulse-ipmi-0/sdr-cache/../../../etc"):
            assert not _may(exe, f"--quiet-cache --sdr-cache-directory={elsewhere}/sdr-cache {sensors}"), elsewhere
    finally:
        DROP_IN.unlink(missing_ok=True)
        subprocess.run(["userdel", USER], capture_output=True)


def test_doctor_names_the_user_it_runs_as_in_its_grants_and_logs_nothing_above_its_report(
        tools: dict[str, str], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Run as the service's own user (not root), its grant line named "rackpulse" whoever ran it,
    under an ERROR log line from the scheduler."""
    import getpass
    import io
    import logging

    from app.install import doctor

    refusing = Path(tools["top"]) / "smartctl"
    refusing.write_text("#!/bin/sh\necho 'Smartctl open device: /dev/sda failed: Permission denied' >&2\nexit 2\n")
    cfg = _config(Path(tools["top"]), str(refusing), tools["mdadm"])
    monkeypatch.setattr(os, "geteuid", lambda: 1234)
    monkeypatch.setattr(getpass, "getuser", lambda: "nas-monitor")
    out = io.StringIO()
    with caplog.at_level(logging.DEBUG):
        assert doctor.run(cfg, "rackpulse", out) == 1  # type: ignore[arg-type]
    report = out.getvalue()
    assert "rackpulse doctor: as nas-monitor (uid 1234)" in report
    grants = [line for line in report.splitlines() if "grant: " in line and "NOPASSWD" in line]
    assert grants and all("grant: nas-monitor ALL=(root)" in g for g in grants), report
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
