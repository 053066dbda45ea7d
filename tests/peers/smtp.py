"""A real SMTP server (aiosmtpd, from PyPI) as a child process on a free port: each message it
accepts is written to a folder as an .eml file; `refuse` makes it answer the first messages
with a temporary failure (451), as a greylisting or busy mail server does.

    python -m tests.peers.smtp PORT FOLDER [REFUSE]
"""

from __future__ import annotations

import email
import email.policy
import subprocess
import sys
import time
from email.message import EmailMessage
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


class Keeper:
    def __init__(self, folder: Path, refuse: int) -> None:
        self.folder, self.refuse, self.seen = folder, refuse, 0

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 - aiosmtpd's name
        self.seen += 1
        if self.seen <= self.refuse:
            return "451 4.3.0 Try again later"
        n = len(list(self.folder.glob("*.eml")))
        tmp = self.folder / f".{n:03d}.tmp"
        tmp.write_bytes(envelope.content)
        tmp.rename(self.folder / f"{n:03d}.eml")  # whole or not at all, for the reader
        return "250 OK"


class SmtpPeer:
    def __init__(self, folder: Path, port: int, refuse: int = 0) -> None:
        self.folder, self.port = folder, port
        folder.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.peers.smtp", str(port), str(folder), str(refuse)],
                                     cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # "ready" once it listens
        if "ready" not in line:
            self.stop()
            raise RuntimeError(f"the SMTP server did not start: {line}")

    def messages(self) -> list[EmailMessage]:
        return [email.message_from_bytes(p.read_bytes(), policy=email.policy.default)  # type: ignore[misc]
                for p in sorted(self.folder.glob("*.eml"))]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def main() -> None:
    from aiosmtpd.controller import Controller

    port, folder, refuse = int(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 0
    controller = Controller(Keeper(folder, refuse), hostname="127.0.0.1", port=port)
    controller.start()
    print("ready", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        controller.stop()


if __name__ == "__main__":
    main()
