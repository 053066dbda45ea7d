"""What `rackpulse init` gives each plug-in's starter: the host's tree to look at, read the way
the collectors read it (regular files only, under host_root), and a way to quote what the host
named. A starter returns its part of the starter config as TOML lines, each commented with what
was found and what to change; nothing is changed and nothing is asked of any device."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import tomli_w

from collectors.base import host_path, read_text

BIN_DIRS = ("/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/sbin", "/usr/local/bin", "/opt/MegaRAID/storcli")
# Control characters, and bytes that are not UTF-8 (read as lone surrogates).
_CONTROL = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")


def q(value: str) -> str:
    """A TOML string, as a TOML writer quotes it: a name the host chose (an interface, a mount
    point, a serial) stays one value, whatever quotes, brackets or newlines it holds."""
    return tomli_w.dumps({"v": value}).removeprefix("v = ").rstrip("\n")


@dataclass
class HostTree:
    root: Path
    notes: list[str] = field(default_factory=list)  # what could not be read, said in the file

    @property
    def live(self) -> bool:
        """Whether this is the running host (not a copy of a tree): only then may a starter
        knock on a local port."""
        return self.root == Path("/")

    def read(self, path: str) -> str | None:
        try:
            return read_text(host_path(self.root, path))
        except OSError:
            return None

    def exists(self, path: str) -> bool:
        return host_path(self.root, path).exists()

    def listdir(self, path: str) -> list[str]:
        """The names in a folder that a config may hold: one with a control character or bytes
        that are not UTF-8 is no device a person named (tun0 + newline + [collectors.ceph] ...),
        so it is left out, and said in the file's notes."""
        where = host_path(self.root, path)
        try:
            names = sorted(os.listdir(where))
        except OSError:
            return []
        odd = [n for n in names if _CONTROL.search(n)]
        if odd:
            self.notes.append(f"{where}: left out {len(odd)} name(s) with control characters or bytes that are "
                              "not UTF-8")
        return [n for n in names if n not in odd]

    def tool(self, name: str) -> str | None:
        """Where a command is installed on the host, or None."""
        return next((f"{d}/{name}" for d in BIN_DIRS if self.exists(f"{d}/{name}")), None)
