"""What is wrong with the links' throughput, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

from collections.abc import Sequence

from collectors.findings import WARN, ChartSpec, Finding, Judging, RuleSpec, Tile, about, level_of
from collectors.plugin import View
from collectors.probes.throughput.state import IperfRun, ThroughputState

RULES = (
    RuleSpec("throughput_low", "warning", title="Throughput low"),
)


def test_findings(t: IperfRun) -> list[Finding]:
    labels = {"test": t.name, "direction": t.direction}
    if not t.ok:
        return [Finding(WARN, f"throughput test {t.name} ({t.server}) failed: {t.error}", labels=labels)]
    if t.ratio is not None and t.low_ratio is not None and t.ratio < t.low_ratio:
        mbps = "?" if t.mbps is None else f"{t.mbps:.1f}"
        baseline = "?" if t.baseline_mbps is None else f"{t.baseline_mbps:g}"
        return [Finding(WARN, f"throughput test {t.name} ({t.direction}, {t.server}): {mbps} Mbit/s, "
                              f"{t.ratio * 100:.0f}% of its {baseline} Mbit/s baseline",
                        "throughput_low", t.name, labels)]
    return []


def findings(state: ThroughputState, judging: Judging) -> list[Finding]:
    return [f for t in state.tests for f in test_findings(t)]


def all_clear(state: ThroughputState, judging: Judging) -> str | None:
    tests = [t for t in state.tests if t.ok and t.mbps is not None]
    if not tests:
        return None
    return "; ".join(f"{t.name} {t.mbps:.0f} Mbit/s" for t in tests[:3])


def view(state: ThroughputState, found: Sequence[Finding]) -> View:
    """Each test with how it stands: the level of the findings about it."""
    return {"tests": [(t, level_of(about(found, test=t.name))) for t in state.tests]}


TILE = Tile("Throughput", "/probes", all_clear)
CHARTS: dict[str, ChartSpec] = {}
