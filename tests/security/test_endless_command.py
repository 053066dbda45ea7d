"""A collector command that never stops printing (a broken `vtysh`, here `yes`) is killed at
its output cap: its collector is down with a clear error, the server's memory stays bounded
and the other collectors run on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.demo.agent import to_toml
from collectors.base import CollectorError, run_command
from tests.agent_hosts import get_json, rackpulse, rss_mb, stop, wait_for
from tests.alerting.test_serve_episodes import FAILED
from tests.peers import free_port


def test_an_endless_command_is_killed_at_its_output_cap() -> None:
    with pytest.raises(CollectorError, match=r"output exceeded 1048576 bytes \(command_max_bytes\); command killed: yes"):
        run_command(["yes"], timeout=30, max_bytes=1 << 20)


def test_a_command_within_the_cap_is_read_whole() -> None:
    res = run_command(["seq", "200000"], timeout=30, max_bytes=2 << 20)
    assert res.returncode == 0 and res.stdout.endswith(b"\n199999\n200000\n")




def test_an_endless_vtysh_leaves_the_server_bounded_and_the_other_collectors_running(tmp_path: Path) -> None:
    (tmp_path / "root" / "proc").mkdir(parents=True)
    (tmp_path / "root" / "proc" / "mdstat").write_text(FAILED)
    port = free_port()
    off = {"enabled": False}
    cfg = {"host": "nas", "host_root": str(tmp_path / "root"), "web": {"port": port},
           "storage": {"url": f"sqlite:///{tmp_path / 'r.db'}"},
           "collectors": {**{n: off for n in ("smart", "bonding", "openvpn", "snmp", "nut", "hwmon", "heatpump")},
                          "mdraid": {"interval": 0.5, "detail": False},
                          # `yes -- -c "show ..."` prints its arguments forever, as fast as it can.
                          "frr": {"enabled": True, "vtysh": ["yes", "--"], "interval": 1, "timeout": 30,
                                  "command_timeout": 20}}}
    (tmp_path / "rackpulse.toml").write_text(to_toml(cfg))
    proc = rackpulse("serve", "--config", str(tmp_path / "rackpulse.toml"), log=tmp_path / "serve.log")
    base = f"http://127.0.0.1:{port}"
    try:
        def frr_failed_and_mdraid_ran():  # type: ignore[no-untyped-def]
            st = {c["name"]: c for c in get_json(f"{base}/api/state")["collectors"]}
            failed = st["frr"]["up"] is False and "output exceeded" in (st["frr"]["last_error"] or "")
            return st if failed and st["mdraid"]["last_success"] is not None else None

        st = wait_for(frr_failed_and_mdraid_ran, 60, "frr to fail at its output cap while mdraid collects")
        assert "(command_max_bytes); command killed: yes -- -c show" in st["frr"]["last_error"]
        md_then = st["mdraid"]["last_success"]
        def both_ran_again():  # type: ignore[no-untyped-def]
            st = get_json(f"{base}/api/state")
            by = {c["name"]: c for c in st["collectors"]}
            return st if by["mdraid"]["last_success"] > md_then + 2 and by["frr"]["up"] is False else None

        state = wait_for(both_ran_again, 60, "more runs of both collectors")  # frr: more 16 MiB runs killed
        md = next(c for c in state["collectors"] if c["name"] == "mdraid")
        assert md["up"] is True
        assert state["arrays"][0]["degraded"] is True  # and it still reads the array
        assert rss_mb(proc.pid) < 300
        # The killed commands are gone, not left running beside the server.
        assert len([p for p in os.listdir("/proc") if p.isdigit() and _parent(int(p)) == proc.pid
                    and _state(int(p)) != "Z"]) <= 1  # at most the run going on right now
    finally:
        stop(proc)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "gone"


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return -1


def test_a_command_that_ignores_sigterm_is_killed_without_an_uncapped_read() -> None:
    # `trap '' TERM; exec yes`: after the cap it gets SIGTERM, ignores it and keeps printing.
    # The kill must not read it while it is given its grace: its output goes nowhere, then SIGKILL.
    script = (
        "import time\n"
        "from collectors.base import CollectorError, run_command\n"
        "t = time.monotonic()\n"
        "try:\n"
        "    run_command(['sh', '-c', \"trap '' TERM; exec yes\"], timeout=30, max_bytes=1 << 20)\n"
        "except CollectorError as exc:\n"
        "    print('error:', exc)\n"
        "print('seconds:', round(time.monotonic() - t, 1))\n"
        # VmHWM, not ru_maxrss: Linux carries the parent's peak into ru_maxrss across fork and exec,
        # so a child of a large pytest would report pytest's size.
        "hwm = [ln for ln in open('/proc/self/status') if ln.startswith('VmHWM:')][0].split()[1]\n"
        "print('maxrss_mb:', int(hwm) // 1024)\n"
    )
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         cwd=Path(__file__).resolve().parents[2]).stdout
    figures = dict(line.split(": ", 1) for line in out.splitlines())
    assert figures["error"].startswith("output exceeded 1048576 bytes")
    assert int(figures["maxrss_mb"]) < 150, out  # the 9 GB of the uncapped read would show here
    assert float(figures["seconds"]) < 60, out  # SIGKILL after the grace: it does not run on
