"""The demo's container engine: a compose project `media` (jellyfin, sonarr, postgres) and a
one-off backup job, served by a small HTTP server on a unix socket as a Docker engine answers
(GET only), from answer files the scene rewrites with the story: sonarr's health check fails for
a stretch of each loop. The tests use the same server with recorded answers."""

from __future__ import annotations

import hashlib
import http.server
import json
import socketserver
import tempfile
import threading
from pathlib import Path
from typing import Any

from collectors.scenes import atomic_write

ANSWERS = "demo-engine"  # the scene's answer files, under the demo's root
SOCKET = "demo-engine.sock"
UNHEALTHY = (60.0, 130.0)  # story seconds in which sonarr's health check fails


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class FakeEngine:
    """Answers GET /v1.41/version, /containers/json and /containers/<id>/{json,stats} from files in
    `folder` (version.json, containers.json, inspect-<id12>.json, stats-<id12>.json); writes down
    every request; with `hang`, holds each answer until stopped (a hung engine)."""

    def __init__(self, folder: Path, socket: Path, hang: bool = False) -> None:
        self.folder, self.socket, self.hang = folder, socket, hang
        self.requests: list[tuple[str, str]] = []
        self.release = threading.Event()
        socket.unlink(missing_ok=True)
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                outer.requests.append(("GET", self.path))
                if outer.hang:
                    outer.release.wait(30)
                body = outer.answer(self.path.split("?")[0].removeprefix("/v1.41"))
                data = body if body is not None else b'{"message": "No such container"}'
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802
                outer.requests.append(("POST", self.path))
                self.send_response(405)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

            def address_string(self) -> str:
                return "unix"

        self.server = _Server(str(socket), Handler)
        threading.Thread(target=self.server.serve_forever, name="fake-engine", daemon=True).start()

    def answer(self, path: str) -> bytes | None:
        parts = path.strip("/").split("/")
        if parts == ["version"]:
            name = "version.json"
        elif parts == ["containers", "json"]:
            name = "containers.json"
        elif len(parts) == 3 and parts[0] == "containers" and parts[2] in ("json", "stats"):
            name = f"{'inspect' if parts[2] == 'json' else 'stats'}-{parts[1][:12]}.json"
        else:
            return None
        try:
            return (self.folder / name).read_bytes()
        except OSError:
            return None

    def stop(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
        self.socket.unlink(missing_ok=True)


# -- the demo's scene -----------------------------------------------------------------------

STACK = (  # id (64 hex), name, service, image, health check?
    ("a1" * 32, "media-jellyfin-1", "jellyfin", "jellyfin/jellyfin:10.9.11", True),
    ("b2" * 32, "media-sonarr-1", "sonarr", "lscr.io/linuxserver/sonarr:4.0.11", True),
    ("c3" * 32, "media-postgres-1", "postgres", "postgres:16", True),
)
BACKUP = ("d4" * 32, "backup-once", "restic/restic:0.17.3")


def _labels(service: str | None) -> dict[str, str]:
    return {"com.docker.compose.project": "media", "com.docker.compose.service": service} if service else {}


def write_scene(root: Path, t: float) -> None:
    t = t % 240.0
    folder = root / ANSWERS
    listed = []
    for i, (cid, name, service, image, checked) in enumerate(STACK):
        failing = service == "sonarr" and UNHEALTHY[0] <= t < UNHEALTHY[1]
        health = {"Status": "unhealthy" if failing else "healthy", "FailingStreak": int((t - UNHEALTHY[0]) // 10) + 1
                  if failing else 0, "Log": [{"ExitCode": 1 if failing else 0, "Output": (
                      "curl: (7) Failed to connect to localhost port 8989: Connection refused" if failing else "OK")}]}
        state = {"Status": "running", "Running": True, "OOMKilled": False, "ExitCode": 0,
                 "StartedAt": "2026-11-20T08:00:00Z", "FinishedAt": "0001-01-01T00:00:00Z",
                 **({"Health": health} if checked else {})}
        atomic_write(folder / f"inspect-{cid[:12]}.json", json.dumps(
            {"Id": cid, "Name": "/" + name, "RestartCount": 0, "State": state,
             "HostConfig": {"RestartPolicy": {"Name": "unless-stopped"}}, "Config": {"Labels": _labels(service)}}))
        cpu = int((t + 1000 * i) * 2e8)
        atomic_write(folder / f"stats-{cid[:12]}.json", json.dumps(
            {"cpu_stats": {"cpu_usage": {"total_usage": cpu}, "system_cpu_usage": int((t + 1000 * i) * 4e9),
                           "online_cpus": 4},
             "memory_stats": {"usage": (300 + 150 * i) * 2**20, "stats": {"inactive_file": 40 * 2**20},
                              "limit": 16 * 2**30}}))
        listed.append({"Id": cid, "Names": ["/" + name], "Image": image, "State": "running",
                       "Labels": _labels(service)})
    cid, name, image = BACKUP
    atomic_write(folder / f"inspect-{cid[:12]}.json", json.dumps(
        {"Id": cid, "Name": "/" + name, "RestartCount": 0, "HostConfig": {"RestartPolicy": {"Name": "no"}},
         "State": {"Status": "exited", "Running": False, "OOMKilled": False, "ExitCode": 0,
                   "StartedAt": "2026-11-25T03:00:00Z", "FinishedAt": "2026-11-25T03:04:10Z"}}))
    listed.append({"Id": cid, "Names": ["/" + name], "Image": image, "State": "exited", "Labels": {}})
    atomic_write(folder / "containers.json", json.dumps(listed))
    atomic_write(folder / "version.json", json.dumps({"Version": "5.2.2", "Components": [
        {"Name": "Podman Engine", "Version": "5.2.2"}]}))


def socket_path(root: Path) -> Path:
    """Where the demo's engine listens: in the demo's folder, or, when that path is too long for
    a Unix socket (108 bytes on Linux: a deep TMPDIR, a test's folder), a short one in /tmp named
    after the folder, so the engine and the collector's config agree without being told."""
    here = root / SOCKET
    if len(str(here).encode()) < 100:
        return here
    return Path(tempfile.gettempdir() if len(tempfile.gettempdir()) < 40 else "/tmp") / (
        "rackpulse-" + hashlib.sha1(str(root).encode(), usedforsecurity=False).hexdigest()[:16] + ".sock")


def start_engine(root: Path) -> FakeEngine:
    """The demo's engine on root/demo-engine.sock, answering from the scene's files."""
    write_scene(root, 0.0)
    return FakeEngine(root / ANSWERS, socket_path(root))
