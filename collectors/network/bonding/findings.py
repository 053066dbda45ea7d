"""What is wrong with bonds, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

from collectors.findings import BAD, WARN, ChartSpec, Finding, Judging, RuleSpec, Tile
from collectors.network.bonding.state import BondingState

RULES = (
    RuleSpec("bond_slave_down", "warning", 60, title="Bond link down"),
    RuleSpec("bond_slave_flapping", "warning", title="Bond link flapping"),
)


def findings(state: BondingState, judging: Judging) -> list[Finding]:
    out = []
    for b in state.bonds:
        slaves = b.slaves
        all_down = bool(slaves) and not any(s.up for s in slaves)
        for s in slaves:
            subject, labels = f"{b.name}/{s.name}", {"bond": b.name, "slave": s.name}
            if not s.up:
                up = "?" if b.slaves_up is None else b.slaves_up
                # One level for tile and alert: a warning while other slaves carry the bond,
                # critical when none does (the bond itself is down).
                out.append(Finding(BAD if all_down else WARN, f"bond {b.name}: slave {s.name} down "
                                   f"({up}/{len(slaves)} up)", "bond_slave_down", subject, labels,
                                   "critical" if all_down else None))
            rose = judging.rose(f"bond:{subject}", s.link_failures or 0)
            if rose >= judging.flap_count:
                out.append(Finding(WARN, f"bond {b.name}: slave {s.name} failed {rose} times in {judging.window}",
                                   "bond_slave_flapping", subject, labels))
    return out


def all_clear(state: BondingState, judging: Judging) -> str | None:
    n = len(state.bonds)
    return f"{n} {'bond' if n == 1 else 'bonds'}, all slaves up" if n else None


TILE = Tile("Bonds", "/network#bonds", all_clear)

CHARTS: dict[str, ChartSpec] = {"bond_slave": (("bond", "slave"), [
    ("Link", "rackpulse_bond_slave_up", {"bond": 0, "slave": 1}),
    ("Link failures", "rackpulse_bond_slave_link_failures_total", {"bond": 0, "slave": 1})])}
