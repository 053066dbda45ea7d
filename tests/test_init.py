"""`rackpulse init` writes a starter config from what a host has, read from fixture trees the
tests already use: the demo host (a 12-disk HBA, an NVMe mirror, md0/md1, a bond, an OpenVPN
instance, hwmon), an enclosure, nothing at all. The file loads as a config, and an existing
one is never replaced without --force."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from app.config import load_config
from app.starter.discover import discover, propose_bays
from app.starter.toml import render
from collectors.disks.location import DiskLocation
from demo import story
from tests.cli import run_cli


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


HOSTILE_NAME = 'tun0\n[collectors.ceph]\nceph = ["sh", "-c", "id"]\n#'  # a file name holds no '/'


def test_a_hostile_interface_name_cannot_write_config_into_the_starter_file(tmp_path: Path) -> None:
    """An interface named with newlines and TOML used to stand in a comment unquoted: the next
    `collect --once` ran its command as root. Now each name stays inside its one comment line."""
    net = tmp_path / "sys/class/net" / HOSTILE_NAME
    net.mkdir(parents=True)
    (net / "tun_flags").write_text("0x1001\n")
    text = render(discover(tmp_path), tmp_path)
    assert not any(line.startswith(("[collectors.ceph]", "ceph =")) for line in text.splitlines())
    assert "left out 1 name(s) with control characters" in text  # said in the file's notes
    f = tmp_path / "rackpulse.toml"
    f.write_text(text)
    assert load_config(f).collectors.ceph.ceph == ["ceph"]  # type: ignore[attr-defined]


def test_init_on_a_hostile_tree_ends_and_writes_a_config_that_runs_nothing(tmp_path: Path) -> None:
    """Names with quotes, brackets and newlines, FIFOs where files belong, a symlink loop and
    /dev/zero: `rackpulse init` ends, and what it writes loads and sets nothing it did not choose."""
    import os
    import subprocess
    import sys

    root = tmp_path / "root"
    (root / "etc/nut").mkdir(parents=True)
    (root / "proc/net/bonding").mkdir(parents=True)
    (root / "etc/openvpn").mkdir(parents=True)
    os.mkfifo(root / "etc/hostname")  # nothing ever writes: an open() without O_NONBLOCK waits forever
    os.mkfifo(root / "proc/mdstat")
    (root / "proc/mounts").symlink_to("/dev/zero")
    (root / "etc/nut/ups.conf").symlink_to(root / "etc/nut/ups.conf")  # a loop
    (root / "proc/net/bonding" / 'bond0"]\n[collectors.ceph]').write_text("x")
    (root / "proc/net/bonding" / 'bond1" , "x').write_text("x")  # quotes: a value, not two
    (root / "etc/openvpn" / 'site"b[1].conf').write_text('status "/run/a b" 10\ndev tun9\n')
    net = root / "sys/class/net" / 'tun"[0]'
    net.mkdir(parents=True)
    (net / "tun_flags").write_text("0x1001\n")
    out = tmp_path / "rackpulse.toml"
    r = subprocess.run([sys.executable, "-m", "app.cli", "init", "--host-root", str(root), "--output", str(out)],
                       capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parents[1])
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert not any(line.startswith(("[collectors.ceph]", "ceph =")) for line in text.splitlines())
    cfg = load_config(out)
    assert cfg.collectors.ceph.ceph == ["ceph"]  # type: ignore[attr-defined]
    assert sorted(cfg.collectors.bonding.bonds) == ['bond1" , "x']  # type: ignore[attr-defined]
    assert [i.name for i in cfg.collectors.openvpn.instances] == ['site"b[1]']  # type: ignore[attr-defined]
    assert cfg.host == "my-host"  # the FIFO was not read
