"""What is wrong with the host, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

from typing import Any

from collectors.findings import BAD, WARN, ChartSpec, Finding, Judging, RuleSpec, Tile, items

RULES = (RuleSpec("filesystem_full", "warning", 300, 24), RuleSpec("filesystem_readonly", "critical", 60, 12),
         RuleSpec("memory_low", "warning", 300), RuleSpec("interface_errors", "warning"))
# Errors an interface may make within an hour before it is worth a notification (a weak link
# makes a few; a bad cable or a failing port makes many).
ERRORS_PER_HOUR = 10
# The thresholds the collector's section set; its state carries them so the pages and the
# server judging an agent's host read the same ones.
FULL_RATIO, LOW_RATIO = 0.90, 0.10


def human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1000:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} EB"


def filesystem_findings(fs: dict[str, Any], full_ratio: float) -> list[Finding]:
    if fs.get("error"):
        return [Finding(WARN, f"{fs['mountpoint']}: {fs['error']}")]
    out = []
    point = fs["mountpoint"]
    labels = {"mountpoint": point, "device": fs["device"], "fstype": fs["fstype"]}
    ratio, hours = fs["used_ratio"], fs["hours_to_full"]
    if ratio is not None and ratio >= full_ratio:
        out.append(Finding(BAD if ratio >= 0.98 else WARN, f"{point} {ratio * 100:.0f}% full ({human(fs['avail'])} "
                           f"free of {human(fs['size'])})", "filesystem_full", point, labels))
    elif hours is not None and hours < 24:
        out.append(Finding(WARN, f"{point} full within {hours:.0f} h at the current rate ({human(fs['avail'])} "
                           "free)", "filesystem_full", point, labels))
    if fs["readonly"] and not fs["expect_readonly"]:
        out.append(Finding(BAD, f"{point} is read-only ({fs['device']}, {fs['fstype']}): a filesystem the kernel "
                           "remounted after errors, or one to list under expect_readonly", "filesystem_readonly",
                           point, labels))
    return out


def findings(state: dict[str, Any], judging: Judging) -> list[Finding]:
    if not state:
        return []
    limits = state.get("limits", {})
    out = [f for fs in items(state, "filesystems")
           for f in filesystem_findings(fs, limits.get("filesystem_full_ratio", FULL_RATIO))]
    mem = state["memory"]
    low = limits.get("memory_low_ratio", LOW_RATIO)
    if mem.get("total") and mem.get("available") is not None and mem["available"] < mem["total"] * low:
        out.append(Finding(WARN, f"memory low: {human(mem['available'])} available of {human(mem['total'])}"
                           + (f", {human(mem['swap_used'])} swap used" if mem.get("swap_used") else ""),
                           "memory_low", judging.host or "memory"))
    for i in items(state, "interfaces"):
        rose = judging.rose(f"iferr:{i['name']}", (i["rx_errs"] or 0) + (i["tx_errs"] or 0))
        if rose >= ERRORS_PER_HOUR:
            out.append(Finding(WARN, f"interface {i['name']}: {rose} errors in the last hour", "interface_errors",
                               i["name"], {"interface": i["name"]}))
    return out


def all_clear(state: dict[str, Any], judging: Judging) -> str | None:
    if not state:
        return None
    parts = []
    if state["load"]:
        parts.append(f"load {state['load']['1m']:.2f}")
    if state["cpu"].get("busy_ratio") is not None:
        parts.append(f"CPU {state['cpu']['busy_ratio'] * 100:.0f}% busy")
    mem = state["memory"]
    if mem.get("total") and mem.get("available") is not None:
        parts.append(f"memory {100 - mem['available'] / mem['total'] * 100:.0f}% used")
    fullest = max((f for f in items(state, "filesystems") if f.get("used_ratio") is not None),
                  key=lambda f: f["used_ratio"], default=None)
    if fullest:
        parts.append(f"fullest {fullest['mountpoint']} {fullest['used_ratio'] * 100:.0f}%")
    temps = state.get("temperatures") or []
    if temps:
        parts.append(f"hottest {temps[0]['chip']} {temps[0]['sensor']} {temps[0]['celsius']:.0f} °C")
    return ", ".join(parts) or None


TILE = Tile("Host", "/host", all_clear)

CHARTS: dict[str, ChartSpec] = {}
