"""What is wrong with the probes, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

import time
from typing import Any

from collectors.findings import BAD, WARN, ChartSpec, Finding, Judging, RuleSpec, Tile, items

# probe_down waits two failed polls' worth of time (a single lost HTTP answer is not an outage);
# loss and latency must hold five minutes (a bond of 3G links has bad minutes, not bad hours).
RULES = (RuleSpec("probe_down", "critical", 120), RuleSpec("probe_loss", "warning", 300),
         RuleSpec("probe_latency", "warning", 300), RuleSpec("tls_expiring", "warning", 0, 24))


def _number(v: float | None) -> str:
    return "–" if v is None else f"{v:.0f}" if v >= 10 else f"{v:.1f}"


def _ms(v: float | None) -> str:
    return "–" if v is None else f"{_number(v)} ms"


def probe_findings(p: dict[str, Any], warning_days: float, now: float) -> list[Finding]:
    name, labels = p["name"], {"probe": p["name"], "kind": p["kind"], "target": p["target"]}
    out = []
    if not p["ok"]:
        out.append(Finding(BAD, f"{p['kind']} {name} ({p['target']}) is down: {p.get('error') or 'no answer'}",
                           "probe_down", name, labels))
    elif p["kind"] == "ping":
        if p["loss"] is not None and p["loss"] >= p["loss_warning"]:
            out.append(Finding(WARN, f"ping {name} ({p['target']}{' via ' + p['interface'] if p['interface'] else ''})"
                               f" lost {p['loss'] * 100:.0f}% of {p['sent']} pings", "probe_loss", name, labels))
        avg = p["rtt_ms"]["avg"]
        if avg is not None and avg >= p["rtt_warning_ms"]:
            out.append(Finding(WARN, f"ping {name} ({p['target']}) answers in {_ms(avg)} on average "
                               f"(p95 {_ms(p['rtt_ms']['p95'])}; warning from {_ms(p['rtt_warning_ms'])})",
                               "probe_latency", name, labels))
    if p.get("cert_expires") is not None:
        days = (p["cert_expires"] - now) / 86400
        if days < warning_days:
            when = "expired" if days < 0 else f"expires in {int(days)} days" if days >= 1 else "expires today"
            out.append(Finding(BAD if days < 2 else WARN, f"TLS certificate of {name} ({p['target']}) {when}"
                               f" ({time.strftime('%Y-%m-%d', time.gmtime(p['cert_expires']))})", "tls_expiring",
                               name, {**labels, "subject": p.get("cert_subject")}))
    return out


def findings(state: dict[str, Any], judging: Judging) -> list[Finding]:
    if not state:
        return []
    now = judging.now  # the moment of this judgement (a test can set it; the Judge sets it per collection)
    days = state.get("tls_warning_days", 14.0)
    return [f for p in items(state, "probes") for f in probe_findings(p, days, now)]


def all_clear(state: dict[str, Any], judging: Judging) -> str | None:
    probes = items(state, "probes") if state else []
    if not probes:
        return None
    pings = [p for p in probes if p["kind"] == "ping" and p["ok"] and p["rtt_ms"]["avg"] is not None]
    words = f"{len(probes)} probe{'s' if len(probes) != 1 else ''} up"
    if pings:
        worst = max(pings, key=lambda p: p["rtt_ms"]["avg"])
        words += f"; slowest ping {worst['name']} {_ms(worst['rtt_ms']['avg'])}"
    return words


def view(state: dict[str, Any]) -> dict[str, Any]:
    """The probes as the page lists them: round trips in one phrase, days left on a certificate."""
    now, out = time.time(), []
    days = state.get("tls_warning_days", 14.0) if state else 14.0
    for p in items(state, "probes") if state else []:
        rtt = p.get("rtt_ms") or {}
        cert_days = int((p["cert_expires"] - now) // 86400) if p.get("cert_expires") else None
        out.append({**p, "rtt_text": " / ".join(_number(rtt.get(k)) for k in ("min", "avg", "p95", "max")) + " ms",
                    "cert_days": cert_days, "warn": bool(probe_findings(p, days, now))})
    return {"probes": out}


TILE = Tile("Probes", "/probes", all_clear)
CHARTS: dict[str, ChartSpec] = {}
