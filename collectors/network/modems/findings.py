"""What is wrong with a 3G/LTE modem, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

from collections.abc import Sequence

from collectors.findings import BAD, WARN, Finding, Judging, RuleSpec, Tile, about, level_of
from collectors.network.modems.collector import REGISTERED
from collectors.network.modems.state import Modem, ModemsState
from collectors.plugin import View

# Searching for a network after a re-attach takes a minute or two; signal moves with the
# weather and the traffic, so it must stay poor a while before anyone is told.
RULES = (
    RuleSpec("modem_unregistered", "warning", 180, 12, title="Modem not registered"),
    RuleSpec("modem_signal_poor", "warning", 600, 24, title="Modem signal poor"),
    RuleSpec("modem_gone", "critical", 60, 12, title="Modem gone"),
)


def labels(m: Modem) -> dict[str, str]:
    return {"modem": m.name or m.key, "interface": m.interface or ""}


def _name(m: Modem) -> str:
    what = m.name or (f"IMEI {m.imei}" if m.imei else m.device)
    return f"modem {what}" + (f" ({m.bond}/{m.interface})" if m.bond else f" ({m.interface})" if m.interface else "")


def findings(state: ModemsState, judging: Judging) -> list[Finding]:
    out = []
    for m in state.modems:
        if m.gone:
            out.append(Finding(BAD, f"{_name(m)} is gone: ModemManager no longer lists it (unplugged, or its USB "
                                    "port reset)", "modem_gone", m.key, labels(m)))
            continue
        if not m.has_sim:
            out.append(Finding(BAD, f"{_name(m)} has no SIM card" + (f" ({m.failed_reason})" if m.failed_reason else ""),
                               "modem_unregistered", m.key, labels(m)))
        elif m.registration not in REGISTERED:
            why = f"state {m.state}" + (f", {m.failed_reason}" if m.failed_reason else "")
            out.append(Finding(WARN, f"{_name(m)} is not registered on a network (registration "
                                     f"{m.registration or 'unknown'}, {why})", "modem_unregistered", m.key, labels(m)))
        if m.poor:
            out.append(Finding(WARN, f"{_name(m)} has a poor {m.family or ''} signal: {', '.join(m.poor)}".replace("  ", " "),
                               "modem_signal_poor", m.key, labels(m)))
    return out


def all_clear(state: ModemsState, judging: Judging) -> str | None:
    if not state.modems:
        return None
    registered = sum(1 for m in state.modems if m.registration in REGISTERED)
    return f"{registered} of {len(state.modems)} modems registered"


def view(state: ModemsState, found: Sequence[Finding]) -> View:
    return {"modems": [(m, level_of(about(found, **labels(m)))) for m in state.modems]}


TILE = Tile("Modems", "/network#modems", all_clear)
