"""What is wrong with switch ports, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

from collectors.findings import BAD, WARN, ChartSpec, Finding, Judging, RuleSpec, Tile
from collectors.network.snmp.state import SnmpState

RULES = (
    RuleSpec("switch_port_flapping", "warning", title="Switch port flapping"),
)
# A port that went down and came back within the flap window is worth a look on the tile, below
# the alert's count. Only the window counts: a port that bounced last week and has held since is
# fine, and its history is the "Flaps" chart, not a warning that never ages out.
SHOWN_FLAPS = 2


def findings(state: SnmpState, judging: Judging) -> list[Finding]:
    out = []
    for t in state.targets:
        if not t.up:
            out.append(Finding(BAD, f"switch {t.name} unreachable: {t.error}", labels={"target": t.name}))
        for p in t.ports:
            alias = f"({p.alias}) " if p.alias else ""
            labels = {"target": t.name, "interface": p.name}
            rose = judging.rose(f"port:{t.name}/{p.name}", p.flaps or 0)
            if rose >= judging.flap_count:
                out.append(Finding(WARN, f"{t.name} port {p.name} {alias}changed state {rose} times in "
                                   f"{judging.window}", "switch_port_flapping", f"{t.name}/{p.name}", labels))
            elif rose >= SHOWN_FLAPS:
                out.append(Finding(WARN, f"{t.name} port {p.name} {alias}changed state {rose} times in "
                                   f"{judging.window}", labels=labels))
    return out


def all_clear(state: SnmpState, judging: Judging) -> str | None:
    return f"{sum(len(t.ports) for t in state.targets)} ports" if state.targets else None


TILE = Tile("Switch ports", "/network#switches", all_clear)

CHARTS: dict[str, ChartSpec] = {"switch_port": (("target", "interface"), [
    ("Port", "rackpulse_snmp_interface_oper_up", {"target": 0, "interface": 1}),
    ("Flaps", "rackpulse_snmp_interface_flaps_total", {"target": 0, "interface": 1})])}
