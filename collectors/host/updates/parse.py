"""apt's simulation and dnf's lists, read as their sources print them: pure functions, text in,
typed records out. `apt-get -s upgrade` prints one line per package it would install,
"Inst NAME [CURRENT] (CANDIDATE ORIGIN:SUITE[, ORIGIN:SUITE...] [ARCH])" (apt-pkg/algorithms.cc,
pkgSimulate::Install), and the packages it keeps back under "The following packages have been kept
back:". `dnf check-update` exits 100 with "NAME.ARCH VERSION REPO" lines when there are updates;
`dnf updateinfo list --security` prints "ADVISORY SEVERITY/Sec. NVRA" lines."""

from __future__ import annotations

import re
from dataclasses import dataclass

from collectors.base import ParseError

_INST = re.compile(r"^Inst (?P<name>\S+)(?: \[(?P<current>[^\]]*)\])? "
                   r"\((?P<new>\S+) (?P<from>.*?) \[(?P<arch>[^\]]+)\]\)")


@dataclass(frozen=True)
class Pending:
    name: str
    new: str
    current: str | None = None  # None: a new package the upgrade pulls in
    origin: str = ""  # "Debian-Security:12/stable-security"
    security: bool = False


def is_security(origin: str) -> bool:
    """Debian's "Debian-Security:…/stable-security", Ubuntu's "…:22.04/jammy-security"."""
    return "security" in origin.lower()


def parse_apt_simulation(text: str) -> tuple[list[Pending], list[str]]:
    """(what would be installed, the packages kept back)."""
    pending, kept, in_kept = [], [], False
    for line in text.splitlines():
        if line.startswith("Inst "):
            m = _INST.match(line)
            if m is None:
                raise ParseError(f"apt-get -s: an Inst line not understood: {line[:160]!r}")
            pending.append(Pending(m["name"], m["new"], m["current"], m["from"], is_security(m["from"])))
            in_kept = False
        elif line.startswith("The following packages have been kept back"):
            in_kept = True
        elif in_kept and line.startswith(" "):
            kept += line.split()
        else:
            in_kept = False
    return pending, kept


def parse_dnf_check_update(text: str) -> list[Pending]:
    """The package lines of `dnf check-update` (exit 100); "Obsoleting Packages" and what follows
    are not updates of their own."""
    out = []
    for line in text.splitlines():
        if line.startswith("Obsoleting"):
            break
        f = line.split()
        if len(f) == 3 and "." in f[0] and not line.startswith((" ", "Last metadata")):
            out.append(Pending(f[0].rsplit(".", 1)[0], f[1], origin=f[2]))
    return out


def parse_dnf_security(text: str) -> set[str]:
    """The package names `dnf updateinfo list --security` names: "FEDORA-2026-1a2b Important/Sec.
    openssl-3.1.4-1.fc39.x86_64" is openssl."""
    names = set()
    for line in text.splitlines():
        f = line.split()
        if len(f) == 3 and f[1].endswith("/Sec."):
            nvra = f[2].rsplit(".", 1)[0]  # openssl-3.1.4-1.fc39
            names.add(nvra.rsplit("-", 2)[0])
    return names


def version_key(release: str) -> tuple[tuple[int, int | str], ...]:
    """A kernel release in its natural order: 6.1.0-28-amd64 after 6.1.0-9-amd64."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.findall(r"\d+|[A-Za-z]+", release))
