"""`rackpulse init --sudoers`: a sudoers drop-in that lets the service's user run exactly the
commands its enabled collectors need as root (each plug-in's `privileges`), checked with
`visudo -cf` before it is put in place, and the argv each section must then have.

Why sudo, and not a root agent beside the server: the data stays this host's (one snapshot,
one set of pages), the unit stays one, and it is how the ecosystem does it (telegraf's
smart input, smartctl_exporter's docs). The privileged part is the command sudo runs: it has
no listener and reads no request; the web server itself has uid ≠ 0 and no capability.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from collectors import plugins
from collectors.privilege import Privilege, uses_sudo, without_sudo

if TYPE_CHECKING:
    from app.config import Config

DROP_IN = Path("/etc/sudoers.d/rackpulse")
# Every few minutes per disk: without these, auth.log gets a session line for each smartctl.
DEFAULTS = "Defaults:{user} !syslog, !pam_session, !lecture"


@dataclass(frozen=True)
class Needed:
    """One privileged command an enabled collector runs: where its argv is set, and how granted."""

    collector: str
    privilege: Privilege
    argv: list[str]  # as the config has it now
    executable: str | None  # its absolute path, None when not found
    section: Any = None  # the collector's config section

    @property
    def option(self) -> str:
        return f"collectors.{self.collector}.{self.privilege.option}"

    def grant(self, user: str) -> str:
        return self.privilege.grant(user, self.executable or without_sudo(self.argv)[0], self.section)

    def argv_line(self) -> str | None:
        """The config line that runs it through sudo, or None when the config does already
        (or a group grants it)."""
        if self.privilege.group or uses_sudo(self.argv):
            return None
        rest = without_sudo(self.argv)
        words = ", ".join(f'"{w}"' for w in ["sudo", "-n", self.executable or rest[0], *rest[1:]])
        return f"{self.privilege.option} = [{words}]   # [collectors.{self.collector}]"


def needed(cfg: Config, which: Callable[[str], str | None] = shutil.which) -> Iterator[Needed]:
    """The privileged commands of every collector `cfg` enables, in the config's order."""
    for name in type(cfg.collectors).model_fields:
        section = getattr(cfg.collectors, name)
        plugin = plugins().get(name)
        if plugin is None or not section.enabled:
            continue
        for p in plugin.needs.privileges:
            if not p.needed(section):
                continue
            argv = list(getattr(section, p.option))
            command = without_sudo(argv)
            exe = which(command[0]) if command else None
            yield Needed(name, p, argv, os.path.realpath(exe) if exe else None, section)


def render(cfg: Config, user: str, which: Callable[[str], str | None] = shutil.which) -> str:
    """The drop-in's text: one commented entry per privileged command; groups only as a note."""
    lines = [
        "# Written by `rackpulse init --sudoers`: what rackpulse's collectors may run as root, and",
        "# nothing else (argument lists are anchored regular expressions: sudo 1.9.10 or later).",
        "# Regenerate after enabling a collector. Delete the Defaults line to log every run.",
        DEFAULTS.format(user=user),
    ]
    missing: list[str] = []
    for n in needed(cfg, which):
        if n.executable is None and not n.privilege.group:  # nothing to grant: said once, below
            name = without_sudo(n.argv)[0]
            missing += [name] if name not in missing else []
            continue
        lines += ["", f"# {n.collector}: {n.privilege.why}"]
        lines.append(f"# not sudo: {n.grant(user)}" if n.privilege.group else n.grant(user))
    if missing:
        lines += ["", f"# not installed, so not granted: {', '.join(missing)} (run this again after installing)"]
    return "\n".join(lines) + "\n"


def argv_lines(cfg: Config, which: Callable[[str], str | None] = shutil.which) -> list[str]:
    """The config lines to change so the installed commands run through sudo, each once (smart's
    two grants share its one `smartctl` argv: the line was printed twice)."""
    out: list[str] = []
    for n in needed(cfg, which):
        line = n.argv_line() if n.executable is not None else None
        if line and line not in out:
            out.append(line)
    return out


class SudoersError(Exception):
    pass


def install(text: str, target: Path = DROP_IN, visudo: str = "visudo") -> None:
    """Check `text` with `visudo -cf` and put it at `target` (0440, atomically); a file sudo
    would refuse is never put in place (a broken drop-in can lock root out of sudo)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".rackpulse-", dir=target.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o440)
        try:
            check = subprocess.run([visudo, "-cf", tmp], capture_output=True, text=True, timeout=30)  # noqa: S603
        except FileNotFoundError:
            raise SudoersError(f"{visudo} not found: install sudo") from None
        if check.returncode != 0:
            said = (check.stderr or check.stdout).strip().replace(tmp, str(target))
            raise SudoersError(f"visudo refused the drop-in, nothing written: {said}")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
