"""The containers collector against a real engine: Podman's Docker-compatible API service on the
test's own socket, with containers created from a tiny busybox image (podman run cannot start one
on this machine kind: ../shared/docs/test-peers.md), each in its own storage under the test's folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from collectors.findings import Judging
from collectors.host.containers.collector import ContainersCollector
from collectors.host.containers.config import ContainersConfig
from collectors.host.containers.findings import findings


class Podman:
    def __init__(self, tmp: Path) -> None:
        self.runroot = tempfile.mkdtemp(prefix="rp-podman-")  # podman wants its runroot under 50 characters
        self.base = ["podman", "--root", str(tmp / "storage"), "--runroot", self.runroot,
                     "--storage-driver", "vfs", "--cgroup-manager", "cgroupfs", "--events-backend", "none"]
        self.socket = tmp / "podman.sock"
        rootfs = tmp / "rootfs"
        (rootfs / "bin").mkdir(parents=True)
        shutil.copy(shutil.which("busybox") or "/bin/busybox", rootfs / "bin" / "busybox")
        os.symlink("busybox", rootfs / "bin" / "sleep")
        tar = subprocess.run(["tar", "-C", str(rootfs), "-c", "."], capture_output=True, check=True).stdout
        self.podman("import", "-", "localhost/tiny:1", stdin=tar)
        self.service = subprocess.Popen([*self.base, "system", "service", "--time=0", f"unix://{self.socket}"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + ContainersConfig().timeout  # the collector's own budget for a run
        while not self.socket.exists() and time.monotonic() < deadline:
            time.sleep(0.05)

    def podman(self, *args: str, stdin: bytes | None = None) -> None:
        r = subprocess.run([*self.base, *args], input=stdin, capture_output=True)
        assert r.returncode == 0, f"podman {args[0]}: {r.stderr.decode(errors='replace')[-500:]}"

    def create(self, name: str, *labels: str) -> None:
        self.podman("create", "--name", name, *[a for label in labels for a in ("--label", label)],
                    "localhost/tiny:1", "/bin/sleep", "600")

    def run(self, name: str, *options: str) -> None:
        """A running container: with runc, the limits this machine allows (crun cannot start one here)."""
        self.podman("--runtime", "runc", "run", "-d", "--name", name, "--ulimit", "nofile=1024:1024",
                    "--ulimit", "nproc=1024:1024", *options, "localhost/tiny:1", "/bin/sleep", "600")

    def stop(self) -> None:
        subprocess.run([*self.base, "rm", "--all", "--force"], capture_output=True)
        self.service.terminate()
        try:
            self.service.wait(10)
        except subprocess.TimeoutExpired:
            self.service.kill()
        shutil.rmtree(self.runroot, ignore_errors=True)


@pytest.fixture
def podman(tmp_path: Path) -> Iterator[Podman]:
    p = Podman(tmp_path)
    yield p
    p.stop()


def test_created_containers_are_listed_with_their_compose_project_and_service(podman: Podman) -> None:
    podman.create("media-web-1", "com.docker.compose.project=media", "com.docker.compose.service=web")
    podman.create("scratch")
    r = ContainersCollector(ContainersConfig(socket=str(podman.socket))).collect()
    got = sorted((c.name, c.state, c.project, c.service, c.image) for c in r.state.containers)  # type: ignore[union-attr]
    assert got == [("media-web-1", "created", "media", "web", "localhost/tiny:1"),
                   ("scratch", "created", None, None, "localhost/tiny:1")]
    assert r.state.engine and "Podman" in r.state.engine  # type: ignore[union-attr]
    assert findings(r.state, Judging()) == []  # type: ignore[arg-type]  # created, not failed
    running = {dict(s.labels)["container"]: s.value for s in r.samples if s.metric == "rackpulse_container_running"}
    assert running == {"media-web-1": 0.0, "scratch": 0.0}


def test_a_removed_container_leaves_the_next_run(podman: Podman) -> None:
    podman.create("gone-soon")
    c = ContainersCollector(ContainersConfig(socket=str(podman.socket)))
    assert [x.name for x in c.collect().state.containers] == ["gone-soon"]  # type: ignore[union-attr]
    podman.podman("rm", "gone-soon")
    assert c.collect().state.containers == []  # type: ignore[union-attr]


def test_a_restart_always_container_stopped_on_request_is_a_warning_not_a_critical_exit(podman: Podman) -> None:
    """`podman stop` of a container with restart policy always: the engine leaves it stopped, as asked.
    That is worth a look (a warning, or nothing with stopped_on_request = "ignore"), not the
    critical "exited, it should be running" of a crash."""
    podman.run("media-web-1", "--restart=always")
    podman.podman("--runtime", "runc", "stop", "-t", "1", "media-web-1")
    r = ContainersCollector(ContainersConfig(socket=str(podman.socket))).collect()
    (c,) = r.state.containers  # type: ignore[union-attr]
    assert (c.state, c.restart_policy, c.stopped_on_request) == ("exited", "always", True) and c.exit_code
    (f,) = findings(r.state, Judging())  # type: ignore[arg-type]
    assert (f.rule, f.level, f.severity) == ("container_exited", "warning", "warning")
    assert "was stopped" in f.text
    quiet = ContainersCollector(ContainersConfig(socket=str(podman.socket), stopped_on_request="ignore")).collect()
    assert findings(quiet.state, Judging()) == []  # type: ignore[arg-type]
