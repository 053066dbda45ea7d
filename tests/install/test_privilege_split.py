"""The privilege split, for real: `rackpulse serve` as an ordinary user (made with useradd here),
with the capability bounding set of deploy/systemd/rackpulse.service, reads SMART and md data
from stand-ins of smartctl and mdadm that refuse unless their euid is 0, through `sudo -n` and
the drop-in `rackpulse init --sudoers` wrote. `rackpulse doctor` says what it could not read
and the line that grants it, before; and that it read everything, after."""

from __future__ import annotations

import json
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent_hosts import ROOT, get_json, stop, to_toml, wait_for
from tests.peers import free_port

USER = "rackpulse-split-test"
DROP_IN = Path("/etc/sudoers.d/rackpulse-split-test")  # no "." in the name: sudo would skip it
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
UNIT = ROOT / "deploy" / "systemd" / "rackpulse.service"

REFUSE_UNLESS_ROOT = """#!/bin/sh
# {name} stand-in: like the real one opening a device, it is refused unless it runs as root.
if [ "$(id -u)" != 0 ]; then
{refusal}
fi
{answer}
"""


def bounding_set() -> str:
    """The unit's CapabilityBoundingSet= as setpriv's --bounding-set."""
    line = re.search(r"^CapabilityBoundingSet=(.*)$", UNIT.read_text(), re.M)
    assert line, "the unit sets no CapabilityBoundingSet="
    caps = [c.removeprefix("CAP_").lower() for c in line.group(1).split()]
    return ",".join(["-all", *(f"+{c}" for c in caps)])


def as_user(argv: list[str], scratch: Path) -> list[str]:
    return ["unshare", "--mount", "--propagation", "private", "--", sys.executable,
            str(Path(__file__).with_name("as_user.py")), USER, bounding_set(), str(scratch), "--", *argv]


@pytest.fixture
def world() -> Iterator[Path]:
    """A folder every user may read (tmp_path is root's alone): the stand-ins, the host tree, the config."""
    if subprocess.run(["id", USER], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER], check=True)
    top = Path(tempfile.mkdtemp(prefix="rp-split-"))
    os.chmod(top, 0o755)
    try:
        yield top
    finally:
        DROP_IN.unlink(missing_ok=True)
        shutil.rmtree(top, ignore_errors=True)
        subprocess.run(["userdel", USER], capture_output=True)


def make_tools(top: Path) -> dict[str, str]:
    tools = top / "tools"
    (tools / "answers").mkdir(parents=True)
    # `smartctl --scan --json` as smartctl 7 prints it (its JSON output, documented in smartctl(8)).
    (tools / "answers" / "scan.json").write_text(json.dumps({"devices": [
        {"name": "/dev/sda", "info_name": "/dev/sda [SAT]", "type": "sat", "protocol": "ATA"}]}))
    shutil.copy(FIXTURES / "smartctl" / "scrutiny__smart-ata.json", tools / "answers" / "sda.json")
    for n in (125, 126, 127):
        shutil.copy(FIXTURES / "mdadm" / f"nagios-plugin-check_raid__mdadm__white-mdadm-{n}", tools / "answers" / f"md{n}")
    answers = tools / "answers"
    (tools / "smartctl").write_text(REFUSE_UNLESS_ROOT.format(
        name="smartctl",
        refusal='  echo \'{"smartctl": {"exit_status": 2, "messages": [{"string": "Smartctl open device: '
                '/dev/sda failed: Permission denied", "severity": "error"}]}}\'\n  exit 2',
        answer=f'case "$*" in\n  "--scan --json") cat {answers}/scan.json ;;\n  *) cat {answers}/sda.json ;;\nesac'))
    (tools / "mdadm").write_text(REFUSE_UNLESS_ROOT.format(
        name="mdadm", refusal='  echo "mdadm: cannot open $2: Permission denied" >&2\n  exit 1',
        answer=f'cat "{answers}/$(basename "$2")"'))
    for t in ("smartctl", "mdadm"):
        os.chmod(tools / t, 0o755)
    host = top / "host"
    (host / "proc").mkdir(parents=True)
    shutil.copy(FIXTURES / "mdstat" / "nagios-plugin-check_raid__mdadm__white-mdstat", host / "proc" / "mdstat")
    return {"smartctl": str(tools / "smartctl"), "mdadm": str(tools / "mdadm")}


def write_config(top: Path, port: int, smartctl: list[str], mdadm: list[str]) -> Path:
    from collectors import plugins

    data = top / "data"
    data.mkdir(exist_ok=True)
    shutil.chown(data, USER, USER)
    os.chmod(data, 0o700)
    cfg = {"host": "nas", "host_root": str(top / "host"), "web": {"port": port},
           "storage": {"url": f"sqlite:///{data / 'rackpulse.db'}"},
           "collectors": {**{n: {"enabled": False} for n in plugins()},
                          "smart": {"enabled": True, "interval": 5, "smartctl": smartctl, "parallel": 1},
                          "mdraid": {"enabled": True, "interval": 5, "mdadm": mdadm}}}
    path = top / "rackpulse.toml"
    path.write_text(to_toml(cfg))
    os.chmod(path, 0o644)
    return path


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "app.cli", *args]


def run_as_user(top: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ["PATH"], "PYTHONDONTWRITEBYTECODE": "1", "HOME": str(top / "data")}
    return subprocess.run(as_user(cli(*args), top / "scratch"), cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)


def status_of(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {k: v.strip() for k, _, v in (line.partition(":") for line in lines)}


def test_serve_as_an_ordinary_user_reads_smart_and_md_through_sudo_with_no_capability(world: Path) -> None:
    top, port = world, free_port()
    (top / "scratch").mkdir()
    tools = make_tools(top)

    # Before the drop-in: the doctor, as the service's user, says what it could not read and how to grant it.
    config = write_config(top, port, [tools["smartctl"]], [tools["mdadm"]])
    before = run_as_user(top, "doctor", "--config", str(config), "--user", USER)
    assert before.returncode == 1, before.stdout + before.stderr
    assert f"as {USER}" in before.stdout
    assert f"refused: {tools['smartctl']} --scan --json: Smartctl open device: /dev/sda failed: Permission denied" \
        in before.stdout
    assert f"grant: {USER} ALL=(root) NOPASSWD: {tools['smartctl']} ^--scan --json$" in before.stdout
    assert f'grant: smartctl = ["sudo", "-n", "{tools["smartctl"]}"]' in before.stdout
    assert f"grant: {USER} ALL=(root) NOPASSWD: {tools['mdadm']} ^--detail /dev/md[_a-z0-9]+$" in before.stdout

    # The drop-in, as root: checked by visudo, only readable, and the argv lines to change.
    wrote = subprocess.run(cli("init", "--sudoers", "--config", str(config), "--user", USER, "--output", str(DROP_IN)),
                           cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert wrote.returncode == 0, wrote.stderr
    assert oct(DROP_IN.stat().st_mode & 0o777) == "0o440"
    assert f'smartctl = ["sudo", "-n", "{tools["smartctl"]}"]' in wrote.stderr
    assert subprocess.run(["visudo", "-cf", str(DROP_IN)], capture_output=True).returncode == 0

    config = write_config(top, port, ["sudo", "-n", tools["smartctl"]], ["sudo", "-n", tools["mdadm"]])
    after = run_as_user(top, "doctor", "--config", str(config), "--user", USER)
    assert after.returncode == 0, after.stdout + after.stderr
    assert "smart        read: everything it tried" in after.stdout
    assert "mdraid       read: everything it tried" in after.stdout

    # Only the declared argument lists: the same stand-in with other arguments is refused by sudo.
    other = subprocess.run(as_user(["sudo", "-n", tools["smartctl"], "-s", "off", "/dev/sda"], top / "scratch"),
                           capture_output=True, text=True, timeout=60)
    assert other.returncode != 0 and "password is required" in other.stderr

    env = {"PATH": os.environ["PATH"], "PYTHONDONTWRITEBYTECODE": "1", "HOME": str(top / "data")}
    log = open(top / "serve.log", "wb")  # noqa: SIM115 - the child owns it
    serve = subprocess.Popen(as_user(cli("serve", "--config", str(config)), top / "scratch"), cwd=ROOT, env=env,
                             stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"

        def states() -> dict[str, object] | None:
            got = get_json(f"{base}/api/state")["states"]
            smart, md = got.get("smart") or {}, got.get("mdraid") or {}
            return got if smart.get("disks") and md.get("arrays") else None

        # start-up, then one round of both collectors (interval 5 s, smartctl's own timeout 60 s)
        got = wait_for(states, 120, "SMART and md data")
        disks = got["smart"]["disks"]  # type: ignore[index]
        arrays = {a["name"]: a for a in got["mdraid"]["arrays"]}  # type: ignore[index]
        assert [d["serial"] for d in disks] == [json.loads((top / "tools/answers/sda.json").read_text())["serial_number"]]
        # the UUID comes only from `mdadm --detail`, which only root may run
        assert arrays["md127"]["uuid"], arrays["md127"]
        proc = status_of(serve.pid)
        assert proc["Name"].startswith("python"), proc["Name"]
        uid = pwd.getpwnam(USER).pw_uid
        assert proc["Uid"].split() == [str(uid)] * 4
        assert int(proc["CapEff"], 16) == 0 and int(proc["CapPrm"], 16) == 0
        assert int(proc["CapBnd"], 16) != 0  # the unit's set: what sudo's commands may still use
    finally:
        stop(serve)
        log.close()
