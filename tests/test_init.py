"""`rackpulse init` writes a starter config from what a host has, read from fixture trees the
tests already use: the demo host (a 12-disk HBA, an NVMe mirror, md0/md1, a bond, an OpenVPN
instance, hwmon), an enclosure, nothing at all. The file loads as a config, and an existing
one is never replaced without --force."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from app.config import load_config
from app.demo import story
from app.starter.discover import discover, propose_bays
from app.starter.toml import render
from collectors.location import DiskLocation
from collectors.plugin import Setup
from tests.cli import ROOT, run_cli


def demo_host(root: Path) -> Path:
    story.write_tree(root, story.story_state(10))
    (root / "etc").mkdir(exist_ok=True)
    (root / "etc/hostname").write_text("nas01.lan\n")
    (root / "etc/nut").mkdir()
    (root / "etc/nut/ups.conf").write_text("[ups12v]\n  driver = usbhid-ups\n  port = auto\n")
    (root / "sys/class/net/tun0").mkdir(parents=True, exist_ok=True)
    (root / "sys/class/net/tun0/tun_flags").write_text("0x1001\n")
    return root


def test_the_demo_host_gives_a_config_that_loads_with_a_bay_per_port(tmp_path: Path) -> None:
    text = render(discover(demo_host(tmp_path)), tmp_path)
    f = tmp_path / "rackpulse.toml"
    f.write_text(text)
    cfg = load_config(f)
    assert cfg.host == "nas01"
    bays = [(b.label, b.path) for b in cfg.disks.bays]
    assert bays[:3] == [("NVMe slot 1", "pci-0000:00:00.0-nvme-1"), ("NVMe slot 2", "pci-0000:01:00.0-nvme-1"),
                        ("port 0", "pci-0000:03:00.0-sas-phy0-lun-0")]
    assert len(bays) == 14 and bays[-1] == ("port 11", "pci-0000:03:00.0-sas-phy11-lun-0")
    assert 'path = "pci-0000:03:00.0-sas-phy7-lun-0"  # now sdh: WDC WD80EFZZ-68BTXN0, serial ZA1049HK' in text
    assert "## md0: raid6, members" in text and "## md1: raid1, members nvme1n1p2 nvme0n1p2" in text
    assert cfg.collectors.bonding.bonds == ["bond0"]
    (vpn,) = cfg.collectors.openvpn.instances
    assert (vpn.name, vpn.status_file, vpn.config_file) == ("site-b", "/run/openvpn/site-b.status",
                                                            "/etc/openvpn/server/site-b.conf")
    assert "## tun/tap devices now: tun0" in text
    assert [(r.chip, r.sensor) for r in cfg.collectors.hwmon.rails][:1] == [("nct6798", "in0")]
    assert cfg.collectors.hwmon.rails[0].name == "Vcore"  # the chip's own label
    assert cfg.collectors.nut.upsd[0].ups == ["ups12v"]


def test_disks_in_an_enclosure_get_its_slots_and_two_hbas_are_told_apart() -> None:
    disks = [DiskLocation("sda", serial="A", enclosure_slot="0:0:12:0/Slot07"),
             DiskLocation("sdb", serial="B", by_path="pci-0000:03:00.0-sas-phy2-lun-0"),
             DiskLocation("sdc", serial="C", by_path="pci-0000:04:00.0-sas-phy2-lun-0"),
             DiskLocation("sdd", serial="D", by_path="pci-0000:00:17.0-ata-3.0")]
    assert [b.label for b in propose_bays(disks)] == ["enclosure 0:0:12:0, Slot07", "controller 1, port 3",
                                                      "controller 2, port 2", "controller 3, port 2"]


def test_an_empty_host_gives_a_config_that_loads_and_says_what_was_not_there(tmp_path: Path) -> None:
    text = render(discover(tmp_path), tmp_path)
    f = tmp_path / "c.toml"
    f.write_text(text)
    cfg = load_config(f)
    assert cfg.disks.bays == [] and "no md arrays on this host now" in text
    tomllib.loads(text)


def test_init_never_replaces_a_file_without_force(tmp_path: Path) -> None:
    demo_host(tmp_path / "host")
    out = tmp_path / "rackpulse.toml"
    out.write_text("# mine\n")
    r = run_cli("init", "--host-root", str(tmp_path / "host"), "--output", str(out))
    assert r.returncode == 2 and "--force" in r.stderr and out.read_text() == "# mine\n"
    r = run_cli("init", "--host-root", str(tmp_path / "host"), "--output", str(out), "--force")
    assert r.returncode == 0 and "14 bays to label" in r.stderr
    assert load_config(out).disks.bays[0].label == "NVMe slot 1"
    assert not any(p.name.endswith(".tmp") for p in tmp_path.iterdir())


def test_init_to_standard_output_and_a_host_root_that_is_not_there(tmp_path: Path) -> None:
    demo_host(tmp_path)
    r = run_cli("init", "--host-root", str(tmp_path), "--output", "-")
    assert r.returncode == 0 and r.stdout.startswith("# rackpulse configuration")
    r = run_cli("init", "--host-root", str(tmp_path / "nope"), "--output", "-")
    assert r.returncode == 2 and "is not a folder" in r.stderr
    assert os.path.exists(tmp_path / "proc")



def test_a_plug_in_whose_starter_fails_costs_its_own_part_and_is_said_in_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    from collectors import plugins

    def boom(tree: object) -> list[str]:
        raise RuntimeError("a third party's bug")

    monkeypatch.setitem(plugins(), "bonding", replace(plugins()["bonding"], setup=Setup(starter=boom)))
    text = render(discover(demo_host(tmp_path)), tmp_path)
    assert "[collectors.bonding]" not in text and "## could not read: bonding: could not look at the host" in text
    assert "## md0: raid6" in text and "[[collectors.openvpn.instances]]" in text  # the others still wrote theirs


def test_a_servers_bmc_and_its_cpus_energy_counters_are_found_and_the_file_still_loads(tmp_path: Path) -> None:
    root = demo_host(tmp_path / "host")
    (root / "dev").mkdir(exist_ok=True)
    (root / "dev/ipmi0").write_text("")  # the kernel's ipmi_si device (a character device on a server)
    text = render(discover(root), tmp_path)
    f = tmp_path / "rackpulse.toml"
    f.write_text(text)
    cfg = load_config(f)
    assert cfg.collectors.ipmi.local == "auto" and cfg.collectors.ipmi.bmcs == []
    assert "## This server's BMC, through /dev/ipmi0" in text and '# password_file = "/etc/rackpulse/' in text
    assert "## RAPL energy counters found: package-0. Their sum is the energy source" in text  # the demo NAS's
    assert "root's only here" not in text  # this tree's counters are readable
    empty = render(discover(tmp_path / "nothing"), tmp_path)
    assert "[collectors.ipmi]" not in empty and "[collectors.rapl]" not in empty


def _tool(root: Path, name: str, script: str = "#!/bin/sh\nexit 1\n") -> None:
    (root / "usr/bin").mkdir(parents=True, exist_ok=True)
    (root / "usr/bin" / name).write_text(script)
    (root / "usr/bin" / name).chmod(0o755)


@pytest.mark.parametrize("pid_file, comm, enabled, said", [
    (None, None, False, "no bgpd runs now"),
    ("run/frr/bgpd.pid", "zebra", False, "no bgpd runs now"),  # a pid file left behind, its pid reused
    ("run/frr/bgpd.pid", "bgpd", True, "bgpd runs (/run/frr/bgpd.pid)"),
    ("var/run/frr/bgpd.pid", "bgpd", True, "bgpd runs (/var/run/frr/bgpd.pid)"),
], ids=["vtysh alone", "a stale pid file", "bgpd running", "bgpd under /var/run"])
def test_frr_is_enabled_by_init_only_while_a_bgpd_runs(
        tmp_path: Path, pid_file: str | None, comm: str | None, enabled: bool, said: str) -> None:
    _tool(tmp_path, "vtysh")
    if pid_file:
        (tmp_path / pid_file).parent.mkdir(parents=True)
        (tmp_path / pid_file).write_text("4242\n")
        (tmp_path / "proc/4242").mkdir(parents=True)
        (tmp_path / "proc/4242/comm").write_text(f"{comm}\n")
    text = render(discover(tmp_path), tmp_path)
    (tmp_path / "c.toml").write_text(text)
    assert load_config(tmp_path / "c.toml").collectors.frr.enabled is enabled
    assert said in text


def test_a_host_without_frr_gets_no_frr_section(tmp_path: Path) -> None:
    assert "[collectors.frr]" not in render(discover(tmp_path), tmp_path)


def test_the_first_serve_after_init_on_a_bare_host_with_a_vtysh_that_answers_nothing_has_nothing_failing(
        tmp_path: Path) -> None:
    """As a newcomer's first run: `init` on a host with nothing but FRR's vtysh (bgpd off), then
    `serve` on that file with a PATH holding only that vtysh. Every collector the starter leaves
    on runs once, and each is up or has nothing to read; nothing is critical."""
    import subprocess
    import sys

    from tests.agent_hosts import get_json, stop, wait_for
    from tests.peers import free_port

    host, stubs = tmp_path / "host", tmp_path / "stubs"
    _tool(host, "vtysh")
    _tool(stubs, "vtysh")
    path = stubs / "usr/bin"  # the serve's whole PATH: no smartctl, mdadm, podman, virsh ... here
    cfg_file = tmp_path / "rackpulse.toml"
    assert run_cli("init", "--host-root", str(host), "--output", str(cfg_file)).returncode == 0
    port = free_port()
    text = cfg_file.read_text().replace("[web]", f"[web]\nport = {port}", 1).replace(
        '# url = "sqlite:///rackpulse.db"', f'url = "sqlite:///{tmp_path / "r.db"}"', 1)
    cfg_file.write_text(text)
    cfg = load_config(cfg_file)
    on = [n for n in type(cfg.collectors).model_fields if getattr(cfg.collectors, n).enabled]
    assert "frr" not in on and "smart" in on
    # Every collector runs at start; the slowest first answer is its run's timeout.
    first_runs = max(getattr(cfg.collectors, n).timeout for n in on) + max(getattr(cfg.collectors, n).interval for n in on)
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--config", str(cfg_file)],
                            env={"PATH": str(path), "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}/api/state"

        def all_ran() -> dict | None:
            state = get_json(url)
            return state if {c["name"] for c in state["collectors"] if c["runs"]} >= set(on) else None

        state = wait_for(all_ran, timeout=60 + first_runs, what="every collector's first run")
    finally:
        stop(proc)
    failing = {c["name"]: c["last_error"] for c in state["collectors"] if not (c["up"] or c["no_data"])}
    assert failing == {}
    critical = [(n, f["text"]) for n, found in state["findings"].items() for f in found if f["level"] == "critical"]
    assert critical == []
    smart = next(c for c in state["collectors"] if c["name"] == "smart")
    assert "smartmontools not installed" in smart["last_error"]


def test_the_arrays_mount_points_are_offered_as_data_sets_and_uncommented_they_load(tmp_path: Path) -> None:
    root = demo_host(tmp_path)
    (root / "proc/mounts").write_text("/dev/sda2 / ext4 rw 0 0\n/dev/md0 /srv ext4 rw,relatime 0 0\n"
                                      "tank/photos /tank/photos zfs rw,xattr 0 0\nproc /proc proc rw 0 0\n")
    text = render(discover(root), tmp_path)
    assert '# path = "/srv"  # /dev/md0, ext4' in text and '# path = "/tank/photos"  # tank/photos, zfs' in text
    assert '"/"' not in text.split("## Data sets on /data")[1]  # the root's plain disk is no array
    f = tmp_path / "rackpulse.toml"
    f.write_text(text.replace("# [[data.sets]]", "[[data.sets]]").replace('# name = "', 'name = "')
                 .replace('# path = "', 'path = "'))
    cfg = load_config(f)
    assert [(s.name, s.path) for s in cfg.data.sets] == [("srv", "/srv"), ("tank-photos", "/tank/photos")]
