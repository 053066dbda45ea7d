"""What is wrong with a libvirt guest: one that should run (autostart, or named in
expect_running) and does not, in words that say why (destroyed, crashed, paused on an I/O error)."""

from __future__ import annotations

from collectors.findings import BAD, WARN, ChartSpec, Finding, Judging, RuleSpec, Tile
from collectors.host.libvirt.state import DomainView, LibvirtState

RULES = (
    RuleSpec("libvirt_domain_down", "critical", title="Virtual machine down"),
)


def domain_findings(d: DomainView) -> list[Finding]:
    labels = {"domain": d.name}
    if d.expected and not d.running:
        why = "set to autostart" if d.autostart else "expected to run"
        reason = f": {d.reason}" if d.reason != "unknown" else ""
        return [Finding(BAD, f"VM {d.name} ({why}) is {d.state}{reason}", "libvirt_domain_down", d.name, labels)]
    if d.state == "crashed" or (d.state == "paused" and d.reason in ("I/O error", "watchdog", "crashed")):
        return [Finding(WARN, f"VM {d.name} is {d.state}: {d.reason}", labels=labels)]
    return []


def findings(state: LibvirtState, judging: Judging) -> list[Finding]:
    return [f for d in state.domains for f in domain_findings(d)]


def all_clear(state: LibvirtState, judging: Judging) -> str | None:
    if not state.domains:
        return None
    running = sum(d.running for d in state.domains)
    stopped = len(state.domains) - running
    return f"{running} VM{'s' if running != 1 else ''} running" + (f", {stopped} stopped" if stopped else "")


TILE = Tile("VMs", "/host#libvirt", all_clear)


# Each guest's page (/entity/vm/<name>): its state and what it used, by its name.
CHARTS: dict[str, ChartSpec] = {"vm": (("domain",), [
    ("State", "rackpulse_libvirt_domain_state", {"domain": 0}),
    ("CPU", "rackpulse_libvirt_domain_cpu_seconds_total", {"domain": 0}),
    ("Memory", "rackpulse_libvirt_domain_memory_bytes", {"domain": 0}),
    ("Memory in use (RSS)", "rackpulse_libvirt_domain_memory_rss_bytes", {"domain": 0}),
    ("Network received", "rackpulse_libvirt_domain_network_receive_bytes_total", {"domain": 0}),
    ("Network sent", "rackpulse_libvirt_domain_network_transmit_bytes_total", {"domain": 0}),
    ("Disk read", "rackpulse_libvirt_domain_block_read_bytes_total", {"domain": 0}),
    ("Disk written", "rackpulse_libvirt_domain_block_write_bytes_total", {"domain": 0})])}
