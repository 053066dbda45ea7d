"""`rackpulse init` on a host tree an attacker shaped: names with newlines, quotes and brackets,
FIFOs where files belong, a symlink loop, /dev/zero. It ends, and what it writes sets nothing it
did not choose (a newline in an interface name once wrote a [collectors.ceph] that ran as root)."""

from __future__ import annotations

from pathlib import Path

from app.config import load_config
from app.starter.discover import discover
from app.starter.toml import render

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
                       capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert not any(line.startswith(("[collectors.ceph]", "ceph =")) for line in text.splitlines())
    cfg = load_config(out)
    assert cfg.collectors.ceph.ceph == ["ceph"]  # type: ignore[attr-defined]
    assert sorted(cfg.collectors.bonding.bonds) == ['bond1" , "x']  # type: ignore[attr-defined]
    assert [i.name for i in cfg.collectors.openvpn.instances] == ['site"b[1]']  # type: ignore[attr-defined]
    assert cfg.host == "my-host"  # the FIFO was not read
