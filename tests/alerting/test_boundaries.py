"""The exact edges of the thresholds, each side: a finding that fires one step too early or too
late passed the whole suite before (found by changing `>=` to `>` by hand)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from collectors import plugins
from collectors.findings import Judging
from tests.states import one

NOW = 1_790_000_000.0


def ping(loss: float, warning: float = 0.2) -> dict[str, Any]:
    return {"name": "3g", "kind": "ping", "target": "10.0.250.1", "interface": None, "ok": True, "sent": 20,
            "loss": loss, "loss_warning": warning, "rtt_ms": {"avg": 10.0, "p95": 12.0}, "rtt_warning_ms": 300.0}


def tcp(expires_in: float) -> dict[str, Any]:
    return {"name": "ups", "kind": "tcp", "target": "127.0.0.1:3493", "ok": True, "cert_expires": NOW + expires_in,
            "cert_subject": "CN=ups.lan"}


def rules(*probes: dict[str, Any], warning_days: float = 14.0) -> list[tuple[str | None, str]]:
    state = {"probes": list(probes), "tls_warning_days": warning_days}
    return [(f.rule, f.level) for f in plugins()["probes"].findings(one("probes", state), Judging(now=NOW))]


@pytest.mark.parametrize("loss, fires", [(0.2, True), (0.1999, False), (0.25, True), (0.0, False)])
def test_probe_loss_fires_at_its_warning_share_and_not_below(loss: float, fires: bool) -> None:
    assert (("probe_loss", "warning") in rules(ping(loss))) is fires


@pytest.mark.parametrize("days, expected", [
    (14.0, None),  # exactly the warning days: not yet
    (14.0 - 1 / 86400, "warning"),  # a second inside
    (2.0, "warning"), (2.0 - 1 / 86400, "failing"),  # under two days: failing
    (-1.0, "failing"),  # expired
])
def test_tls_expiry_warns_inside_its_days_and_fails_inside_two(days: float, expected: str | None) -> None:
    got = [level for rule, level in rules(tcp(days * 86400)) if rule == "tls_expiring"]
    assert got == ([expected] if expected else [])


def test_tls_expiry_says_expired_today_and_days(  # the words, at their edges
) -> None:
    def words(days: float) -> str:
        state = {"probes": [tcp(days * 86400)], "tls_warning_days": 14.0}
        return plugins()["probes"].findings(one("probes", state), Judging(now=NOW))[0].text

    assert "expires in 5 days" in words(5.5) and "expires today" in words(0.5) and " expired " in words(-0.1)
    assert time.strftime("%Y-%m-%d", time.gmtime(NOW + 5.5 * 86400)) in words(5.5)
