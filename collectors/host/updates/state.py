"""What the updates collector knows of the host's debts: typed."""

from __future__ import annotations

from collectors.state import Record, State


class PendingView(Record):
    name: str
    new: str
    current: str | None = None
    origin: str = ""
    security: bool = False
    since: float | None = None  # when this collector first saw it pending (security_grace counts from it)


class UpdatesState(State):
    manager: str = ""  # apt or dnf
    pending: list[PendingView] = []
    kept_back: list[str] = []
    lists_age: float | None = None  # seconds since the package lists were last updated (apt)
    lists_max_age: float | None = None
    security_grace: float | None = None
    reboot_required: bool = False
    reboot_why: list[str] = []  # "/run/reboot-required", "kernel 6.1.0-28 installed, 6.1.0-26 running"
    reboot_packages: list[str] = []  # from /run/reboot-required.pkgs
    running_kernel: str | None = None
    newest_kernel: str | None = None
