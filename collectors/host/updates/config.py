"""[collectors.updates]: what this host owes: pending and security updates (apt's simulation, or
dnf), the package lists' age, and a reboot owed (the flag file, or a newer kernel than the one
running). Read-only: never `apt update`, `apt upgrade` or `dnf upgrade`."""

from __future__ import annotations

from typing import Literal

from collectors.config import Argv, CollectorBase, Seconds

DAY = 86400.0


class UpdatesConfig(CollectorBase):
    # A simulation reads the package lists apt already has: cheap, but nothing changes faster
    # than the nightly `apt update` anyway.
    interval: Seconds = 1800.0
    timeout: Seconds = 120.0
    command_timeout: Seconds = 90.0
    manager: Literal["auto", "apt", "dnf"] = "auto"  # auto: apt where apt-get is, else dnf
    # `apt-get -s -o Debug::NoLocking=1 upgrade` (a simulation: no lock, no root needed)
    apt_get: Argv = ["apt-get"]
    # `dnf check-update --refresh=false` (exit 100: updates) and `dnf updateinfo list --security`
    dnf: Argv = ["dnf"]
    lists_dir: str = "/var/lib/apt/lists"  # under host_root: the package lists' age
    # updates_security_pending once a security update has been pending this long
    security_grace: Seconds = 3 * DAY
    # package_lists_stale: the lists (apt) older than this: the nightly `apt update` stopped
    lists_max_age: Seconds = 7 * DAY
