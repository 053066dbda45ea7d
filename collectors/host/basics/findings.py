"""What is wrong with the host, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

from collectors.findings import BAD, SOON_HARDWARE, WARN, ChartSpec, Finding, Judging, RuleSpec, Tile
from collectors.host.basics.state import Filesystem, HostState
from collectors.measure import measure

RULES = (
    RuleSpec("filesystem_full", "warning", 300, 24, title="Filesystem nearly full"),
    RuleSpec("filesystem_readonly", "critical", 60, 12, urgency=SOON_HARDWARE, title="Filesystem gone read-only"),
    RuleSpec("memory_low", "warning", 300, title="Memory low"),
    RuleSpec("interface_errors", "warning", title="Network interface errors"),
)
# Errors an interface may make within an hour before it is worth a notification (a weak link
# makes a few; a bad cable or a failing port makes many).
ERRORS_PER_HOUR = 10
# The thresholds the collector's section set; its state carries them so the pages and the
# server judging an agent's host read the same ones.
FULL_RATIO, LOW_RATIO = 0.90, 0.10


def human(n: float | None) -> str:
    if n is None:
        return "? B"
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1000:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} EB"


def filesystem_findings(fs: Filesystem, full_ratio: float, judging: Judging | None = None) -> list[Finding]:
    if fs.error:
        return [Finding(WARN, f"{fs.mountpoint}: {fs.error}", labels={"mountpoint": fs.mountpoint})]
    out = []
    point = fs.mountpoint
    labels = {"mountpoint": point, "device": fs.device, "fstype": fs.fstype}
    ratio, hours = fs.used_ratio, fs.hours_to_full
    j = judging or Judging()
    # Percent full: warning from the plug-in's full_ratio, critical from 98 % (the tile's red).
    full = None if ratio is None else j.level("filesystem_full", ratio * 100, full_ratio * 100, 98.0)
    if ratio is not None and full is not None:
        out.append(Finding(BAD if full == "critical" else WARN, f"{point} {ratio * 100:.0f}% full "
                           f"({human(fs.avail)} free of {human(fs.size)})", "filesystem_full", point, labels,
                           j.alert_severity("filesystem_full", full)))
    elif hours is not None and hours < 24:
        out.append(Finding(WARN, f"{point} full within {hours:.0f} h at the current rate ({human(fs.avail)} "
                           "free)", "filesystem_full", point, labels))
    if fs.readonly and not fs.expect_readonly:
        out.append(Finding(BAD, f"{point} is read-only ({fs.device}, {fs.fstype}): a filesystem the kernel "
                           "remounted after errors, or one to list under expect_readonly", "filesystem_readonly",
                           point, labels))
    return out


def findings(state: HostState, judging: Judging) -> list[Finding]:
    if state.cpu is None:
        return []
    limits = state.limits
    full = limits.filesystem_full_ratio if limits.filesystem_full_ratio is not None else FULL_RATIO
    out = [f for fs in state.filesystems for f in filesystem_findings(fs, full, judging)]
    mem = state.memory
    low = limits.memory_low_ratio if limits.memory_low_ratio is not None else LOW_RATIO
    if mem.total and mem.available is not None and mem.available < mem.total * low:
        out.append(Finding(WARN, f"memory low: {human(mem.available)} available of {human(mem.total)}"
                           + (f", {human(mem.swap_used)} swap used" if mem.swap_used else ""),
                           "memory_low", judging.host or "memory"))
    for i in state.interfaces:
        rose = judging.rose(f"iferr:{i.name}", (i.rx_errs or 0) + (i.tx_errs or 0))
        if rose >= ERRORS_PER_HOUR:
            out.append(Finding(WARN, f"interface {i.name}: {rose} errors in {judging.window}", "interface_errors",
                               i.name, {"interface": i.name}))
    return out


def all_clear(state: HostState, judging: Judging) -> str | None:
    if state.cpu is None:
        return None
    parts = []
    # CPU busy and load side by side, with the cores that make sense of the load.
    cpu = [f"{state.cpu.busy_ratio * 100:.0f}% busy" if state.cpu.busy_ratio is not None else "",
           f"load {state.load['1m']:.2f}" if state.load.get("1m") is not None else "",
           f"{state.cpu.cores} cores" if state.cpu.cores else ""]
    if any(cpu[:2]):
        parts.append("CPU " + ", ".join(w for w in cpu if w))
    mem = state.memory
    if mem.total and mem.available is not None:
        parts.append(f"memory {100 - mem.available / mem.total * 100:.0f}% used")
    fullest = max((f for f in state.filesystems if f.used_ratio is not None),
                  key=lambda f: f.used_ratio or 0.0, default=None)
    if fullest and fullest.used_ratio is not None:
        parts.append(f"fullest {fullest.mountpoint} {fullest.used_ratio * 100:.0f}%")
    hottest = state.temperatures[0] if state.temperatures else None
    if hottest and hottest.celsius is not None:
        parts.append(f"hottest {hottest.chip} {hottest.sensor} {measure(hottest.celsius, '°C')}")
    return ", ".join(parts) or None


TILE = Tile("Host", "/host", all_clear)

CHARTS: dict[str, ChartSpec] = {}
