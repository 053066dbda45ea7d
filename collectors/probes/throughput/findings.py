"""What is wrong with the links' throughput, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

from typing import Any

from collectors.findings import WARN, ChartSpec, Finding, Judging, RuleSpec, Tile, items

RULES = (RuleSpec("throughput_low", "warning"),)


def test_findings(t: dict[str, Any]) -> list[Finding]:
    if not t["ok"]:
        return [Finding(WARN, f"throughput test {t['name']} ({t['server']}) failed: {t['error']}")]
    if t["ratio"] is not None and t["ratio"] < t["low_ratio"]:
        return [Finding(WARN, f"throughput test {t['name']} ({t['direction']}, {t['server']}): {t['mbps']:.1f} Mbit/s, "
                              f"{t['ratio'] * 100:.0f}% of its {t['baseline_mbps']:g} Mbit/s baseline",
                        "throughput_low", t["name"], {"test": t["name"], "direction": t["direction"]})]
    return []


def findings(state: dict[str, Any], judging: Judging) -> list[Finding]:
    return [f for t in items(state, "tests") for f in test_findings(t)] if state else []


def all_clear(state: dict[str, Any], judging: Judging) -> str | None:
    tests = [t for t in items(state, "tests") if t["ok"]] if state else []
    if not tests:
        return None
    return "; ".join(f"{t['name']} {t['mbps']:.0f} Mbit/s" for t in tests[:3])


TILE = Tile("Throughput", "/probes", all_clear)
CHARTS: dict[str, ChartSpec] = {}
