"""FRR, when `rackpulse init` finds it, as the starter config's [collectors.frr]: enabled only when
a bgpd runs now, so a first `serve` is not red over a vtysh that has no BGP to show (Debian's
frr package installs vtysh and the config with bgpd off in /etc/frr/daemons)."""

from __future__ import annotations

from collectors.starter import HostTree

# Where FRR's daemons write their pid files (frr_pidfile: the configured state dir, /var/run/frr
# by default; /var/run is /run on every current distribution, but a tree may hold either).
RUN_DIRS = ("/run/frr", "/var/run/frr")


def bgpd_running(tree: HostTree) -> str | None:
    """The pid file of a bgpd that runs now (its pid's /proc/PID/comm says bgpd), or None: a pid
    file left by a bgpd that crashed names a process that is gone or is another program."""
    for d in RUN_DIRS:
        pid = (tree.read(f"{d}/bgpd.pid") or "").strip()
        if pid.isdigit() and (tree.read(f"/proc/{pid}/comm") or "").strip() == "bgpd":
            return f"{d}/bgpd.pid"
    return None


def starter(tree: HostTree) -> list[str]:
    vtysh = tree.tool("vtysh")
    if not (vtysh or tree.exists("/etc/frr/frr.conf")):
        return []
    if pidfile := bgpd_running(tree):
        return ["[collectors.frr]", f"## FRR's bgpd runs ({pidfile}): its BGP sessions per VRF and address family.",
                "enabled = true"]
    return ["[collectors.frr]",
            f"## FRR is installed ({vtysh or '/etc/frr/frr.conf'}) but no bgpd runs now, so this stays off:",
            "## set bgpd=yes in /etc/frr/daemons, restart frr, then enable it here.",
            "enabled = false"]
