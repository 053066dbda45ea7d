"""Files rackpulse rewrites (bay labels, `rackpulse init`'s config) under concurrent writers and
a crash: never torn, never a lost label, never one shared temp file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest

from app.disks import bay_labels
from app.files import atomic_write

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("writers", [30, 40])
def test_concurrent_bay_label_saves_keep_every_label_and_valid_json(tmp_path: Path, writers: int) -> None:
    path = tmp_path / "bay-labels.json"
    disks = [SimpleNamespace(serial=f"SER{i:03d}") for i in range(writers)]
    with ThreadPoolExecutor(writers) as pool:
        list(pool.map(lambda i: bay_labels.save(path, disks[i], f"shelf 1, bay {i}"), range(writers)))
    rows = json.loads(path.read_text())
    assert sorted(r["serial"] for r in rows) == sorted(d.serial for d in disks)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_concurrent_saves_from_two_processes_keep_every_label(tmp_path: Path) -> None:
    path = tmp_path / "bay-labels.json"
    script = ("import sys\nfrom pathlib import Path\nfrom types import SimpleNamespace\nfrom app.disks import bay_labels\n"
              "for i in range(25):\n"
              "    bay_labels.save(Path(sys.argv[1]), SimpleNamespace(serial=f'{sys.argv[2]}{i}'), f'bay {sys.argv[2]}{i}')\n")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(path), who], cwd=ROOT) for who in ("A", "B")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    assert len(json.loads(path.read_text())) == 50


def test_a_writer_killed_mid_write_leaves_the_old_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "bay-labels.json"
    bay_labels.save(path, SimpleNamespace(serial="OLD1"), "shelf 1, bay 1")
    before = path.read_bytes()
    # A child that starts a rewrite and is SIGKILLed while its temp file is half written.
    script = ("import os, sys, tempfile\nfrom pathlib import Path\nimport app.files as f\n"
              "real = os.fsync\n"
              "def stop(fd):\n    os.kill(os.getpid(), 9)\n"
              "os.fsync = stop\n"
              "f.atomic_write(Path(sys.argv[1]), '[{\"label\": \"half')\n")
    proc = subprocess.run([sys.executable, "-c", script, str(path)], cwd=ROOT, timeout=60)
    assert proc.returncode == -9
    assert path.read_bytes() == before
    assert bay_labels.load(path) == [{"label": "shelf 1, bay 1", "serial": "OLD1"}]
    # The next save after the crash works and keeps the old label.
    bay_labels.save(path, SimpleNamespace(serial="NEW2"), "shelf 1, bay 2")
    assert {r["serial"] for r in bay_labels.load(path)} == {"OLD1", "NEW2"}


def test_atomic_write_gives_the_file_the_mode_asked_and_leaves_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "x" / "secret.json"
    atomic_write(path, b"{}")
    assert path.read_bytes() == b"{}" and (os.stat(path).st_mode & 0o777) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["secret.json"]
