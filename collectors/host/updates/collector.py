"""Updates: what the host owes. apt's simulation (`apt-get -s upgrade`: no lock, no root, the lists
apt already has) or dnf's `check-update --refresh=false`; the package lists' age; a reboot owed,
from /run/reboot-required (and its .pkgs) and, where that file is never written, from a kernel in
/lib/modules or /boot newer than the running one. Neither apt-get nor dnf here: "no data"."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from collectors.base import (
    Collector,
    CollectorError,
    CollectResult,
    CommandNotFound,
    MetricSpec,
    NoData,
    Runner,
    Sample,
    host_path,
    run_command,
)
from collectors.context import HostContext
from collectors.host.updates import parse
from collectors.host.updates.config import UpdatesConfig
from collectors.host.updates.state import PendingView, UpdatesState
from collectors.state import State

METRICS: dict[str, MetricSpec] = {
    "rackpulse_updates_pending": MetricSpec("Packages an upgrade would install now, all or security ones (kind)."),
    "rackpulse_updates_kept_back": MetricSpec("Packages an upgrade keeps back (held, or needing new dependencies)."),
    "rackpulse_updates_lists_age_seconds": MetricSpec("Seconds since the package lists were last updated."),
    "rackpulse_updates_security_pending_seconds": MetricSpec("How long the oldest pending security update has been "
                                                             "pending (since rackpulse first saw it)."),
    "rackpulse_reboot_required": MetricSpec("1 while the host owes a reboot.", states=("no", "owed")),
}


def first_line(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace").strip()
    return text.splitlines()[-1][:200] if text else ""


class UpdatesCollector(Collector):
    name: ClassVar[str] = "updates"
    metrics: ClassVar[dict[str, MetricSpec]] = METRICS

    def __init__(self, cfg: UpdatesConfig, runner: Runner = run_command, host_root: Path = Path("/"),
                 clock: Callable[[], float] = time.time) -> None:
        self.cfg, self.runner, self.root, self.clock = cfg, runner, host_root, clock
        self.first_seen: dict[str, float] = {}  # "name new" -> when first seen pending

    def restore(self, state: State) -> None:
        if isinstance(state, UpdatesState):
            self.first_seen = {f"{p.name} {p.new}": p.since for p in state.pending if p.since is not None}

    def collect(self) -> CollectResult:
        manager, pending, kept = self._pending()
        now = self.clock()
        seen = {f"{p.name} {p.new}": self.first_seen.get(f"{p.name} {p.new}", now) for p in pending}
        self.first_seen = seen
        views = [PendingView(name=p.name, new=p.new, current=p.current, origin=p.origin, security=p.security,
                             since=seen[f"{p.name} {p.new}"]) for p in pending]
        running, newest, why, pkgs = self._reboot()
        state = UpdatesState(manager=manager, pending=views, kept_back=kept,
                             lists_age=self._lists_age(now) if manager == "apt" else None,
                             lists_max_age=self.cfg.lists_max_age, security_grace=self.cfg.security_grace,
                             reboot_required=bool(why), reboot_why=why, reboot_packages=pkgs,
                             running_kernel=running, newest_kernel=newest)
        r = CollectResult(state=state)
        r.samples += [Sample.of("rackpulse_updates_pending", len(views), kind="all"),
                      Sample.of("rackpulse_updates_pending", sum(p.security for p in views), kind="security"),
                      Sample.of("rackpulse_updates_kept_back", len(kept)),
                      Sample.of("rackpulse_reboot_required", bool(why))]
        if state.lists_age is not None:
            r.samples.append(Sample.of("rackpulse_updates_lists_age_seconds", state.lists_age))
        since = [p.since for p in views if p.security and p.since is not None]
        if since:
            r.samples.append(Sample.of("rackpulse_updates_security_pending_seconds", max(0.0, now - min(since))))
        return r

    def _pending(self) -> tuple[str, list[parse.Pending], list[str]]:
        if self.cfg.manager in ("auto", "apt"):
            try:
                res = self.runner([*self.cfg.apt_get, "-s", "-o", "Debug::NoLocking=1", "upgrade"],
                                  self.cfg.command_timeout)
            except CommandNotFound:
                if self.cfg.manager == "apt":
                    raise NoData("apt-get is not installed here") from None
            else:
                if res.returncode != 0:
                    raise CollectorError(f"apt-get -s upgrade exited {res.returncode}: {first_line(res.stderr)}")
                pending, kept = parse.parse_apt_simulation(res.stdout.decode("utf-8", "replace"))
                return "apt", pending, kept
        return "dnf", *self._dnf()

    def _dnf(self) -> tuple[list[parse.Pending], list[str]]:
        try:
            res = self.runner([*self.cfg.dnf, "check-update", "--refresh=false", "-q"], self.cfg.command_timeout)
        except CommandNotFound:
            raise NoData("neither apt-get nor dnf is installed here") from None
        if res.returncode not in (0, 100):
            raise CollectorError(f"dnf check-update exited {res.returncode}: {first_line(res.stderr)}")
        pending = parse.parse_dnf_check_update(res.stdout.decode("utf-8", "replace"))
        sec = self.runner([*self.cfg.dnf, "updateinfo", "list", "--security", "-q"], self.cfg.command_timeout)
        names = parse.parse_dnf_security(sec.stdout.decode("utf-8", "replace")) if sec.returncode == 0 else set()
        return [parse.Pending(p.name, p.new, origin=p.origin, security=p.name in names) for p in pending], []

    def _lists_age(self, now: float) -> float | None:
        folder = host_path(self.root, self.cfg.lists_dir)
        try:
            times = [e.stat().st_mtime for e in os.scandir(folder)
                     if e.is_file() and e.name not in ("lock",) and not e.name.endswith(".lock")]
        except OSError:
            return None
        return max(0.0, now - max(times)) if times else None

    def _reboot(self) -> tuple[str | None, str | None, list[str], list[str]]:
        """(running kernel, newest installed, why a reboot is owed, the packages that asked for it)."""
        why, pkgs = [], []
        for flag in ("/run/reboot-required", "/var/run/reboot-required"):
            if host_path(self.root, flag).exists():
                why.append(f"{flag} is there")
                try:
                    pkgs = sorted(set(host_path(self.root, flag + ".pkgs").read_text().split()))[:50]
                except OSError:
                    pkgs = []
                break
        try:
            running: str | None = host_path(self.root, "/proc/sys/kernel/osrelease").read_text().strip() or None
        except OSError:
            running = None
        installed = self._kernels()
        newest = max(installed, key=parse.version_key) if installed else None
        if running and newest and newest != running and parse.version_key(newest) > parse.version_key(running):
            why.append(f"kernel {newest} is installed, {running} is running")
        return running, newest, why, pkgs

    def _kernels(self) -> list[str]:
        found = set()
        try:
            found |= {e.name for e in os.scandir(host_path(self.root, "/lib/modules")) if e.is_dir()}
        except OSError:
            pass
        try:
            found |= {e.name.removeprefix("vmlinuz-") for e in os.scandir(host_path(self.root, "/boot"))
                      if e.name.startswith("vmlinuz-")}
        except OSError:
            pass
        return sorted(found)


def build(c: UpdatesConfig, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.updates]."""
    return UpdatesCollector(c, runner, host.root)
