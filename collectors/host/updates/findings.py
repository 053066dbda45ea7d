"""What the host owes, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

from collections.abc import Sequence

from collectors.findings import WARN, ChartSpec, Finding, Judging, RuleSpec, Tile
from collectors.host.updates.state import UpdatesState
from collectors.plugin import View
from collectors.proxmoxapi import age

RULES = (
    RuleSpec("updates_security_pending", "warning", 0, 24, title="Security updates pending"),
    RuleSpec("reboot_required", "warning", 0, 24, title="Reboot owed"),
    RuleSpec("package_lists_stale", "warning", 0, 24, title="Package lists not updated"),
)


def _names(names: Sequence[str], most: int = 5) -> str:
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def findings(state: UpdatesState, judging: Judging) -> list[Finding]:
    now, out = judging.now, []
    grace = state.security_grace or 0.0
    due = [p for p in state.pending if p.security and p.since is not None and now - p.since >= grace]
    if due:
        oldest = min(p.since or now for p in due)
        out.append(Finding(WARN, f"{len(due)} security update{'s' if len(due) != 1 else ''} pending for "
                                 f"{age(now - oldest)}: {_names([p.name for p in due])}",
                           "updates_security_pending", "security", {"packages": ",".join(p.name for p in due[:20])}))
    if state.reboot_required:
        pkgs = f" (for {_names(state.reboot_packages)})" if state.reboot_packages else ""
        out.append(Finding(WARN, f"a reboot is owed{pkgs}: {'; '.join(state.reboot_why)}", "reboot_required",
                           "reboot", {"packages": ",".join(state.reboot_packages[:20]) or None}))
    if state.lists_age is not None and state.lists_max_age is not None and state.lists_age > state.lists_max_age:
        out.append(Finding(WARN, f"the package lists are {age(state.lists_age)} old (older than "
                                 f"{age(state.lists_max_age)}): the nightly `apt update` has stopped",
                           "package_lists_stale", "lists"))
    return out


def all_clear(state: UpdatesState, judging: Judging) -> str | None:
    if not state.manager:
        return None
    n, sec = len(state.pending), sum(p.security for p in state.pending)
    if not n:
        return "up to date" + (", no reboot owed" if not state.reboot_required else "")
    return f"{n} update{'s' if n != 1 else ''} pending" + (f", {sec} for security" if sec else "")


def view(state: UpdatesState, found: Sequence[Finding]) -> View:
    return dict(state)


TILE = Tile("Updates", "/host#updates", all_clear)
CHARTS: dict[str, ChartSpec] = {}
