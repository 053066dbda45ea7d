"""What is wrong on a Proxmox VE cluster, in words that name the guest, its node and its last
backup: a guest that should run and does not, a backup too old or failed, a storage filling up,
quorum lost, a node away, a replication failing, and what the token may not read."""

from __future__ import annotations

from collectors.findings import BAD, WARN, ChartSpec, Finding, Judging, RuleSpec, Tile
from collectors.host.proxmox.state import ProxmoxState, PveGuest
from collectors.proxmoxapi import age

RULES = (
    RuleSpec("pve_guest_down", "critical", title="Proxmox guest down"),
    RuleSpec("pve_backup_stale", "warning", title="Proxmox backup overdue"),
    RuleSpec("pve_backup_failed", "critical", title="Proxmox backup failed"),
    RuleSpec("pve_storage_full", "warning", title="Proxmox storage nearly full"),
    RuleSpec("pve_quorum_lost", "critical", title="Proxmox cluster lost quorum"),
    RuleSpec("pve_replication_failed", "warning", title="Proxmox replication failed"),
    RuleSpec("pve_node_offline", "critical", title="Proxmox node offline"),
    RuleSpec("pve_token_denied", "warning", title="Proxmox API token refused"),
)
# A storage's use, %, from which pve_storage_full is a warning and critical ([alerts.rules.pve_storage_full]).
STORAGE_WARNING, STORAGE_CRITICAL = 85.0, 95.0
DEFAULT_MAX_AGE = 26 * 3600.0


def max_age(state: ProxmoxState) -> float:
    return state.backup_max_age if state.backup_max_age is not None else DEFAULT_MAX_AGE


def _why_expected(g: PveGuest) -> str:
    if g.onboot:
        return "set to start at boot"
    return "an HA resource that should be started" if g.hastate == "started" else "watched"


def guest_findings(g: PveGuest, now: float, max_age: float) -> list[Finding]:
    labels = {"vmid": g.vmid, "guest": g.name, "node": g.node}
    backups = {**labels, "source": "backups"}  # what the storages' listings and the tasks say
    subject = str(g.vmid)
    out = []
    if g.expected and not g.running:
        out.append(Finding(BAD, f"{g.label} on {g.node} is {g.status}; it is {_why_expected(g)}", "pve_guest_down",
                           subject, labels))
    elif g.hastate == "error":
        out.append(Finding(BAD, f"{g.label} on {g.node}: the HA manager put it in the error state", labels=labels))
    backup_age = g.backup_age(now)
    if g.backup_failed and g.backup_failed_at is not None:
        last = f"; its last good backup is {age(backup_age)} old" if backup_age is not None else \
            "; it has no backup" if g.backup is None else ""
        out.append(Finding(BAD, f"{g.label}: its backup {age(now - g.backup_failed_at)} ago failed "
                                f"({g.backup_failed}){last}", "pve_backup_failed", subject, backups))
    elif g.backup is not None and g.backup.verified == "failed":
        when = f"{age(backup_age)} old, " if backup_age is not None else ""
        out.append(Finding(BAD, f"{g.label}: its newest backup ({when}on {g.backup.storage}) "
                                f"failed verification", "pve_backup_failed", subject, backups))
    if g.backup_expected:
        if g.backup is None:
            out.append(Finding(WARN, f"{g.label} on {g.node} has no backup on any storage the token may read",
                               "pve_backup_stale", subject, backups))
        elif backup_age is not None and backup_age > max_age:
            out.append(Finding(WARN, f"{g.label} on {g.node}: its newest backup is {age(backup_age)} old "
                                     f"(on {g.backup.storage}), older than {age(max_age)}",
                               "pve_backup_stale", subject, backups))
    return out


def findings(state: ProxmoxState, judging: Judging) -> list[Finding]:
    now = judging.now
    out = [Finding(WARN, f"Proxmox VE: {d}", "pve_token_denied", d.split(",")[0], {}) for d in state.denied]
    if state.quorate is False:
        out.append(Finding(BAD, f"cluster {state.cluster} has lost quorum: its nodes cannot start, stop or change "
                                f"guests", "pve_quorum_lost", state.cluster or "", {"cluster": state.cluster}))
    for n in state.nodes:
        if not n.online:
            out.append(Finding(BAD, f"Proxmox node {n.name} is offline", "pve_node_offline", n.name, {"node": n.name}))
    for g in state.guests:
        out += guest_findings(g, now, max_age(state))
    for t in state.backup_job_failures:
        when = f" {age(now - t.start)} ago" if t.start is not None else ""
        out.append(Finding(BAD, f"the backup job on node {t.node}{when} failed ({t.status})",
                           "pve_backup_failed", f"job on {t.node}", {"node": t.node, "source": "backups"}))
    for s in state.storages:
        pct = s.used_percent
        sev = None if pct is None else judging.level("pve_storage_full", pct, STORAGE_WARNING, STORAGE_CRITICAL)
        if sev is not None and pct is not None:
            where = "shared" if s.shared else f"on {s.node}"
            out.append(Finding(BAD if sev == "critical" else WARN, f"storage {s.name} ({where}) is {pct:.0f}% full",
                               "pve_storage_full", s.name, {"storage": s.name},
                               judging.alert_severity("pve_storage_full", sev)))
    for r in state.replication:
        if r.fail_count or r.error:
            times = "" if r.fail_count is None else f" {r.fail_count} time{'s' if r.fail_count != 1 else ''}"
            out.append(Finding(WARN, f"replication {r.id} of guest {r.guest} to {r.target} failed{times}"
                                     + (f": {r.error}" if r.error else ""),
                               "pve_replication_failed", r.id, {"job": r.id, "guest": r.guest, "source": "replication"}))
    return out


def all_clear(state: ProxmoxState, judging: Judging) -> str | None:
    """The tile's sentence: "14 guests running, 1 stopped (onboot), backups: 2 older than 26 h"."""
    if not state.guests:
        return None
    running = sum(g.running for g in state.guests)
    stopped = [g for g in state.guests if not g.running]
    words = f"{running} guest{'s' if running != 1 else ''} running"
    if stopped:
        onboot = sum(g.expected for g in stopped)
        words += f", {len(stopped)} stopped" + ("" if not onboot else " (onboot)" if onboot == len(stopped)
                                                 else f" ({onboot} onboot)")
    limit = max_age(state)
    old = sum(g.backup_expected and (g.backup is None or (g.backup_age(judging.now) or 0) > limit) for g in state.guests)
    return words + (f", backups: {old} older than {age(limit)}" if old else ", backups fresh")


TILE = Tile("Proxmox", "/host#proxmox", all_clear)


# Each guest's page (/entity/pve_vm/<VMID>, /entity/pve_ct/<VMID>): its history by its VMID, on
# whichever node it ran (a migrated guest keeps its charts).
GUEST_CHARTS: list[tuple[str, str, dict[str, int | str]]] = [("Running", "rackpulse_pve_guest_running", {"vmid": 0}),
                ("CPU", "rackpulse_pve_guest_cpu_ratio", {"vmid": 0}),
                ("Memory used", "rackpulse_pve_guest_memory_used_bytes", {"vmid": 0}),
                ("Network received", "rackpulse_pve_guest_network_receive_bytes_total", {"vmid": 0}),
                ("Network sent", "rackpulse_pve_guest_network_transmit_bytes_total", {"vmid": 0}),
                ("Disk read", "rackpulse_pve_guest_disk_read_bytes_total", {"vmid": 0}),
                ("Disk written", "rackpulse_pve_guest_disk_write_bytes_total", {"vmid": 0})]
CHARTS: dict[str, ChartSpec] = {"pve_vm": (("vmid",), GUEST_CHARTS), "pve_ct": (("vmid",), GUEST_CHARTS)}
