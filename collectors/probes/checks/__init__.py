"""Probes: ping (fping), HTTP and TCP checks and TLS certificate expiry, from this host."""

import time
from pathlib import Path
from typing import Any

from collectors.findings import items
from collectors.plugin import CollectorPlugin, Section
from collectors.probes.checks import findings
from collectors.probes.checks.collector import ProbesCollector, build
from collectors.probes.checks.config import ProbesConfig


def _ms(v: float | None) -> str:
    return "–" if v is None else f"{v:.1f}" if v < 10 else f"{v:.0f}"


def view(state: dict[str, Any]) -> dict[str, Any]:
    """The probes as the page lists them: round trips in one phrase, days left on a certificate."""
    now, out = time.time(), []
    days = state.get("tls_warning_days", 14.0) if state else 14.0
    for p in items(state, "probes") if state else []:
        rtt = p.get("rtt_ms") or {}
        cert_days = int((p["cert_expires"] - now) // 86400) if p.get("cert_expires") else None
        out.append({**p, "rtt_text": " / ".join(_ms(rtt.get(k)) for k in ("min", "avg", "p95", "max")) + " ms",
                    "cert_days": cert_days, "warn": bool(findings.probe_findings(p, days, now))})
    return {"probes": out}


SECTION = Section("probes", "Probes", Path(__file__).parent, view)
PLUGIN = CollectorPlugin("probes", ProbesCollector, build, ProbesConfig, domain="probes",
                         findings=findings.findings, rules=findings.RULES, tile=findings.TILE, section=SECTION)
