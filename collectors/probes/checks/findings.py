"""What is wrong with the probes, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from collectors.findings import (
    BAD,
    WARN,
    ChartSpec,
    Finding,
    Judging,
    Monitor,
    RuleSpec,
    Tile,
    about,
    level_of,
)
from collectors.plugin import View
from collectors.probes.checks.state import Probe, ProbesState

# probe_down waits two failed polls' worth of time (a single lost HTTP answer is not an outage);
# loss and latency must hold five minutes (a bond of 3G links has bad minutes, not bad hours).
RULES = (
    RuleSpec("probe_down", "critical", 120, title="Probe down"),
    RuleSpec("probe_loss", "warning", 300, title="Probe losing packets"),
    RuleSpec("probe_latency", "warning", 300, title="Probe slow"),
    RuleSpec("tls_expiring", "warning", 0, 24, title="TLS certificate expiring"),
)
TLS_WARNING_DAYS = 14.0


def _number(v: float | None) -> str:
    return "–" if v is None else f"{v:.0f}" if v >= 10 else f"{v:.1f}"


def _ms(v: float | None) -> str:
    return "–" if v is None else f"{_number(v)} ms"


def probe_findings(p: Probe, warning_days: float, now: float, judging: Judging | None = None) -> list[Finding]:
    """Down, lossy, slow, a certificate near its end. Loss (in percent), latency (ms) and days to
    expiry take two levels from [alerts.rules.<rule>] warning and critical."""
    j = judging or Judging()
    name, labels = p.name, {"probe": p.name, "kind": p.kind, "target": p.target}
    out = []
    if not p.ok:
        out.append(Finding(BAD, f"{p.kind} {name} ({p.target}) is down: {p.error or 'no answer'}",
                           "probe_down", name, labels))
    elif p.kind == "ping":
        lossy = None if p.loss is None else j.level(
            "probe_loss", p.loss * 100, None if p.loss_warning is None else p.loss_warning * 100)
        if p.loss is not None and lossy is not None:
            sent = "?" if p.sent is None else p.sent
            out.append(Finding(BAD if lossy == "critical" else WARN,
                               f"ping {name} ({p.target}{' via ' + p.interface if p.interface else ''})"
                               f" lost {p.loss * 100:.0f}% of {sent} pings", "probe_loss", name, labels,
                               j.alert_severity("probe_loss", lossy)))
        avg = p.rtt_ms.avg
        slow = None if avg is None else j.level("probe_latency", avg, p.rtt_warning_ms)
        if avg is not None and slow is not None:
            out.append(Finding(BAD if slow == "critical" else WARN, f"ping {name} ({p.target}) answers in "
                               f"{_ms(avg)} on average (p95 {_ms(p.rtt_ms.p95)}; warning from "
                               f"{_ms(p.rtt_warning_ms)})", "probe_latency", name, labels,
                               j.alert_severity("probe_latency", slow)))
    if p.cert_expires is not None:
        days = (p.cert_expires - now) / 86400
        # Days left, lower is worse: below warning_days a warning, below 2 days the tile's red.
        near = j.level("tls_expiring", days, warning_days, 2.0, below=True)
        if near is not None:
            when = "expired" if days < 0 else f"expires in {int(days)} days" if days >= 1 else "expires today"
            out.append(Finding(BAD if near == "critical" else WARN, f"TLS certificate of {name} ({p.target}) {when}"
                               f" ({time.strftime('%Y-%m-%d', time.gmtime(p.cert_expires))})", "tls_expiring",
                               name, {**labels, "subject": p.cert_subject}, j.alert_severity("tls_expiring", near)))
    return out


def _days(state: ProbesState) -> float:
    return state.tls_warning_days if state.tls_warning_days is not None else TLS_WARNING_DAYS


def findings(state: ProbesState, judging: Judging) -> list[Finding]:
    now = judging.now  # the moment of this judgement (a test can set it; the Judge sets it per collection)
    return [f for p in state.probes for f in probe_findings(p, _days(state), now, judging)]


def all_clear(state: ProbesState, judging: Judging) -> str | None:
    probes = state.probes
    if not probes:
        return None
    pings = [p for p in probes if p.kind == "ping" and p.ok and p.rtt_ms.avg is not None]
    words = f"{len(probes)} probe{'s' if len(probes) != 1 else ''} up"
    if pings:
        worst = max(pings, key=lambda p: p.rtt_ms.avg or 0.0)
        words += f"; slowest ping {worst.name} {_ms(worst.rtt_ms.avg)}"
    return words


@dataclass(frozen=True)
class ProbeLine:
    """A probe as the page lists it: round trips in one phrase, days left on a certificate, and
    how it stands (the level of the findings about it, what its tile and alerts say)."""

    probe: Probe
    rtt_text: str
    cert_days: int | None
    level: str


def view(state: ProbesState, found: Sequence[Finding]) -> View:
    now, lines = time.time(), []
    for p in state.probes:
        r = p.rtt_ms
        cert_days = int((p.cert_expires - now) // 86400) if p.cert_expires else None
        lines.append(ProbeLine(p, " / ".join(_number(v) for v in (r.min, r.avg, r.p95, r.max)) + " ms", cert_days,
                               level_of(about(found, probe=p.name))))
    return {"probes": lines}


def monitors(state: ProbesState) -> list[Monitor]:
    """Each probe for /status, with the series its uptime is read from: a ping's loss (the share
    of its pings answered), any other probe's success."""
    return [Monitor(p.name, p.kind, p.ok, p.target, p.error, "rackpulse_probe_loss_ratio", {"probe": p.name}, "loss")
            if p.kind == "ping" else
            Monitor(p.name, p.kind, p.ok, p.target, p.error, "rackpulse_probe_success", {"probe": p.name, "kind": p.kind})
            for p in state.probes]


TILE = Tile("Probes", "/probes", all_clear)
CHARTS: dict[str, ChartSpec] = {}
