"""`rackpulse doctor`: run as the service's user, it runs every enabled collector once and says
for each what it could read, what it could not, and the one line that grants what is missing
(the sudoers entry, the argv through sudo, the group).

It runs nothing that writes: self-tests and a modem's signal set-up are turned off for its round,
and it stores nothing (the database is not opened for collection)."""

from __future__ import annotations

import asyncio
import getpass
import logging
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from app.config import Config, load_config
from app.install.sudoers import Needed, needed
from collectors.base import CollectorError, CommandResult, run_command
from collectors.privilege import without_sudo

# What tools print when the kernel or sudo said no (smartctl says it in its JSON, on stdout).
REFUSED = re.compile(r"permission denied|operation not permitted|a password is required|must be root|"
                     r"requires root|are you root|not permitted|access denied|eacces", re.IGNORECASE)
JSON_STRING = re.compile(r'"string":\s*"((?:[^"\\]|\\.)*)"')
# Off for the doctor's round: the only collector settings that send a device something other than a read.
NO_WRITES: dict[str, object] = {"collectors": {"smart": {"selftest": {"enabled": False}}, "modems": {"signal_setup": 0}}}


@dataclass
class Refusal:
    argv: tuple[str, ...]
    said: str


@dataclass
class Recorder:
    """The real runner, remembering each command that was refused."""

    refused: list[Refusal] = field(default_factory=list)

    def __call__(self, argv: Sequence[str], timeout: float) -> CommandResult:
        try:
            res = run_command(argv, timeout)
        except CollectorError as exc:
            if REFUSED.search(str(exc)):
                self.refused.append(Refusal(tuple(argv), str(exc)))
            raise
        text = (res.stderr[:4096] + b"\n" + res.stdout[:4096]).decode("utf-8", "replace")
        if res.returncode != 0 and (m := REFUSED.search(text)):
            # the sentence that says it: a JSON message's string (smartctl --json), else its line
            quoted = [q for q in JSON_STRING.findall(text) if REFUSED.search(q)]
            line = quoted[0] if quoted else next((x.strip() for x in text.splitlines() if m.group(0) in x), m.group(0))
            self.refused.append(Refusal(tuple(argv), line.strip()[:200]))
        return res


def doctor_config(path: Path | None) -> Config:
    return load_config(path, NO_WRITES) if path else load_config(None, NO_WRITES)


def grants_for(refusal: Refusal, wanted: Sequence[Needed], user: str) -> list[str]:
    """The lines that grant a refused command: its plug-in's declared privilege whose command
    and arguments it is, as a sudoers entry (and the argv through sudo), or a group."""
    command = without_sudo(refusal.argv)
    out: list[str] = []
    for n in wanted:
        mine = without_sudo(n.argv)
        if not mine or not command or os.path.basename(command[0]) != os.path.basename(mine[0]):
            continue
        args = " ".join(command[1:])
        if n.privilege.group or any(re.fullmatch(a, args) for a in n.privilege.patterns(n.section)):
            out.append(n.grant(user))
            if line := n.argv_line():
                out.append(line)
    return out


def run(cfg: Config, user: str, out: TextIO = sys.stdout) -> int:
    """Print the report; 0 when every enabled collector read everything it tried."""
    from app.disks.bay_labels import host_bays
    from app.scheduler import Scheduler, Snapshot
    from collectors import build_collectors, host_context

    me = getpass.getuser()
    print(f"rackpulse doctor: as {me} (uid {os.geteuid()}), config {cfg.source or 'built-in defaults'}", file=out)
    if os.geteuid() == 0:
        print("  you are root: the service's user may read less. Run it as that user: "
              f"sudo -u {user} rackpulse doctor --config {cfg.source or '...'}", file=out)
    else:
        user = me  # the grants name the user it runs as (they named "rackpulse" for anyone)
    recorder = Recorder()
    colls = build_collectors(cfg, recorder, host=host_context(cfg, host_bays(cfg)))
    snap = Snapshot(host=cfg.host)
    # the report says what each collector could not read: the scheduler's own ERROR lines above
    # its header said it again, in another voice
    loggers = [logging.getLogger(n) for n in ("rackpulse", "collectors")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)
    try:
        asyncio.run(Scheduler(colls, cfg.schedules(colls), snap).run_all_once())
    finally:
        for lg, was in zip(loggers, levels, strict=True):
            lg.setLevel(was)
    wanted = list(needed(cfg))
    missing = 0
    for name, st in snap.statuses.items():
        mine = [r for r in recorder.refused if _belongs(r, name, cfg)]
        if st.up and not mine and not st.warnings:
            print(f"{name:<12} read: {'no data here (source absent)' if st.no_data else 'everything it tried'}", file=out)
            continue
        missing += 1
        if st.up:
            print(f"{name:<12} read, but not everything:", file=out)
        else:
            print(f"{name:<12} could not read: {st.last_error}", file=out)
        for w in ([] if mine else st.warnings[:3]):  # a refusal below says the same, with its grant
            print(f"{'':12}   {w}", file=out)
        grants: list[str] = []
        for i, r in enumerate(mine):
            if i < 3:
                print(f"{'':12}   refused: {' '.join(r.argv)}: {r.said}", file=out)
            elif i == 3:
                print(f"{'':12}   ... and {len(mine) - 3} more refused", file=out)
            grants += [g for g in grants_for(r, [n for n in wanted if n.collector == name], user) if g not in grants]
        for g in grants:
            print(f"{'':12}   grant: {g}", file=out)
        if grants and any("NOPASSWD" in g for g in grants):
            print(f"{'':12}   (`rackpulse init --sudoers --config {cfg.source or '...'}` writes every such entry)", file=out)
    if not snap.statuses:
        print("no collector is enabled", file=out)
    return 1 if missing else 0


def _belongs(refusal: Refusal, name: str, cfg: Config) -> bool:
    """Whether a refused command is one of collector `name`'s (by the commands its section sets)."""
    section = getattr(cfg.collectors, name, None)
    command = without_sudo(refusal.argv)
    if section is None or not command:
        return False
    for value in section.model_dump().values():
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            mine = without_sudo(value)
            if mine and os.path.basename(mine[0]) == os.path.basename(command[0]):
                return True
    return False
