"""What the storage collector tests share: a runner that answers like the tools from captured
files, and a host tree with /dev/disk links."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from collectors.base import CommandNotFound, CommandResult
from tests.paths import FIXTURES  # noqa: F401 - re-exported for the storage tests

Answer = tuple[int, bytes, bytes] | Exception


def runner(answers: dict[str, Answer | Callable[[], Answer]], calls: list[list[str]] | None = None):  # type: ignore[no-untyped-def]
    """Answers by the arguments after the tool's name, joined ("status -p"); anything else is
    "command not found" when the table is empty and an unknown command otherwise."""
    def run(argv: Sequence[str], timeout: float) -> CommandResult:
        if calls is not None:
            calls.append(list(argv))
        key = " ".join(argv[1:])
        if not answers:
            raise CommandNotFound(f"command not found: {argv[0]!r}")
        got = answers.get(key)
        if callable(got):
            got = got()
        if got is None:
            return CommandResult(tuple(argv), 1, b"", f"unknown command {key}\n".encode())
        if isinstance(got, Exception):
            raise got
        rc, out, err = got
        return CommandResult(tuple(argv), rc, out, err)
    return run


def fixture(kind: str, name: str) -> bytes:
    return (FIXTURES / kind / name).read_bytes()


def host_tree(root: Path, by_id: dict[str, str], by_path: dict[str, str] | None = None) -> Path:
    for folder, links in (("by-id", by_id), ("by-path", by_path or {})):
        d = root / "dev" / "disk" / folder
        d.mkdir(parents=True, exist_ok=True)
        for name, dev in links.items():
            os.symlink(f"../../{dev}", d / name)
    return root
