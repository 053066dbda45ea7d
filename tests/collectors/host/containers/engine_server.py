"""The plug-in's fake engine (collectors/host/containers/demo.py) answering from the recorded
Engine API answers in tests/fixtures/engine (written from the API reference for what Podman
cannot run here), on a unix socket in the test's folder."""

from __future__ import annotations

import shutil
from pathlib import Path

from collectors.host.containers.demo import FakeEngine
from tests.paths import FIXTURES

RECORDED = FIXTURES / "engine"


class EngineServer(FakeEngine):
    def __init__(self, tmp: Path, hang: bool = False) -> None:
        folder = tmp / "engine-answers"
        shutil.copytree(RECORDED, folder)
        super().__init__(folder, tmp / "docker.sock", hang)

    def change(self, name: str, edit) -> None:  # type: ignore[no-untyped-def]
        """Edit one recorded answer in place (a restart, a new CPU reading)."""
        import json

        f = self.folder / name
        doc = json.loads(f.read_text())
        edit(doc)
        f.write_text(json.dumps(doc))
