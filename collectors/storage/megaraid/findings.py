"""What is wrong behind a MegaRAID/PERC controller, in the words the tile, the alert and the
webhook share."""

from __future__ import annotations

from collections.abc import Sequence

from collectors.findings import (
    BAD,
    OK,
    SOON_DATA,
    SOON_HARDWARE,
    WARN,
    BayDevice,
    ChartSpec,
    Finding,
    Judging,
    RuleSpec,
    Tile,
    about,
    level_of,
)
from collectors.plugin import View
from collectors.storage.common import describe
from collectors.storage.megaraid.collector import CONTROLLER_OK
from collectors.storage.megaraid.state import Controller, MegaraidState, PhysicalDrive
from collectors.storage.megaraid.storcli import PD_BAD

RULES = (
    RuleSpec("megaraid_vd_degraded", "critical", 0, 12, urgency=SOON_DATA, title="MegaRAID virtual drive degraded"),
    RuleSpec("megaraid_pd_failed", "critical", 0, 12, urgency=SOON_HARDWARE, title="MegaRAID drive failed"),
    RuleSpec("megaraid_controller", "critical", 0, 12, title="MegaRAID controller problem"),
    RuleSpec("megaraid_bbu", "warning", 0, 24, title="MegaRAID battery problem"),
    RuleSpec("megaraid_pd_errors", "warning", 0, 24, title="MegaRAID drive errors"),
)
# storcli's abbreviations (its "show all" legend), as words.
STATE_WORDS = {"Optl": "optimal", "Dgrd": "degraded", "Pdgd": "partially degraded", "Rbld": "rebuilding",
               "OfLn": "offline", "Rec": "recovering", "UBad": "unconfigured bad", "Offln": "offline",
               "Failed": "failed", "Msng": "missing", "Onln": "online", "UGood": "unconfigured good",
               "UBUnsp": "unconfigured bad, unsupported", "UGUnsp": "unconfigured good, unsupported",
               "GHS": "global hot spare", "DHS": "dedicated hot spare", "JBOD": "JBOD", "Cpybck": "copyback",
               "Sntze": "sanitizing", "Cac": "CacheCade", "HD": "hidden", "TRANS": "transforming"}


def pd_words(pd: PhysicalDrive) -> str:
    state = STATE_WORDS.get(pd.state, pd.state)
    progress = ""
    if pd.state == "Rbld" and pd.rebuild_ratio is not None:
        progress = f" {pd.rebuild_ratio * 100:.0f}%"
    return f"drive {pd.eid_slot} {state}{progress} ({describe(pd)})"


def _labels(ctl: str, pds: list[PhysicalDrive], **more: str) -> dict[str, str | None]:
    base: dict[str, str | None] = {"controller": ctl, **more}
    if len(pds) == 1:
        pd = pds[0]
        base.update(slot=pd.eid_slot, serial=pd.serial, bay=pd.bay, model=pd.model)
    return base


def controller_findings(c: Controller, judging: Judging) -> list[Finding]:
    ctl, out = c.name, []
    mine = {"controller": ctl}
    if c.status not in CONTROLLER_OK:
        out.append(Finding(BAD, f"MegaRAID {ctl} ({c.model}) {c.status}", "megaraid_controller", ctl, mine))
    covered: set[str] = set()
    for vd in c.vds:
        if vd.state == "Optl":
            continue
        dg = vd.dg_vd.split("/")[0]
        members = [p for p in c.pds if str(p.dg) == dg and p.state != "Onln"]
        members += [p for p in c.pds if p.state in PD_BAD and str(p.dg) in ("-", "")]
        pulls = [p for p in members if p.state in PD_BAD]
        covered.update(p.key for p in members)
        where = "; ".join(pd_words(p) for p in members)
        name = f" '{vd.name}'" if vd.name else ""
        text = (f"MegaRAID {ctl} VD {vd.dg_vd} ({vd.raid}{name}) {STATE_WORDS.get(vd.state, vd.state)}"
                + (f": {where}" if where else ""))
        out.append(Finding(BAD, text, "megaraid_vd_degraded", f"{ctl}/{vd.dg_vd}", _labels(ctl, pulls, vd=vd.dg_vd)))
    for pd in c.pds:
        if pd.state in PD_BAD and pd.key not in covered:
            out.append(Finding(BAD, f"MegaRAID {ctl}: {pd_words(pd)}", "megaraid_pd_failed", f"{ctl}/{pd.eid_slot}",
                               _labels(ctl, [pd])))
        elif pd.state == "Rbld" and pd.key not in covered:
            out.append(Finding(WARN, f"MegaRAID {ctl}: {pd_words(pd)}", labels=mine))
        counts = [pd.media_errors or 0, pd.other_errors or 0, pd.predictive_failures or 0]
        rose = judging.rose(f"megaraid:{pd.key}:{pd.serial}", sum(counts))  # a new drive starts afresh
        if rose:
            out.append(Finding(WARN, f"MegaRAID {ctl}: drive {pd.eid_slot} errors rose by {rose} ({counts[0]} media, "
                                     f"{counts[1]} other, {counts[2]} predictive failures; {describe(pd)})",
                               "megaraid_pd_errors", f"{ctl}/{pd.eid_slot}", _labels(ctl, [pd])))
        elif counts[2]:
            out.append(Finding(WARN, f"MegaRAID {ctl}: drive {pd.eid_slot} predicts its failure "
                                     f"({counts[2]} predictive failures; {describe(pd)})", labels=mine))
    if c.bbu and c.bbu.state != "Optimal":
        out.append(Finding(WARN, f"MegaRAID {ctl}: {c.bbu.kind} {c.bbu.model} {c.bbu.state}", "megaraid_bbu", ctl,
                           mine))
    return out


def findings(state: MegaraidState, judging: Judging) -> list[Finding]:
    return [f for c in state.controllers for f in controller_findings(c, judging)]


def all_clear(state: MegaraidState, judging: Judging) -> str | None:
    ctrls = state.controllers
    vds = sum(len(c.vds) for c in ctrls)
    if not ctrls:
        return None
    return f"{vds} virtual {'drive' if vds == 1 else 'drives'} optimal" if vds else f"{len(ctrls)} controllers OK"


def view(state: MegaraidState, found: Sequence[Finding]) -> View:
    """Each controller with how it stands (the level of the findings about it), and storcli's words."""
    return {"controllers": [(c, level_of(about(found, controller=c.name))) for c in state.controllers],
            "words": STATE_WORDS}


TILE = Tile("RAID controller", "/disks#megaraid", all_clear)
CHARTS: dict[str, ChartSpec] = {"megaraid_pd": (("controller", "eid_slot"), [
    ("Media errors", "rackpulse_megaraid_pd_media_errors_total", {"serial": "attr:serial"}),
    ("Temperature", "rackpulse_megaraid_pd_temperature_celsius", {"serial": "attr:serial"}),
])}


def bay_devices(state: MegaraidState) -> list[BayDevice]:
    out = []
    for c in state.controllers:
        for pd in c.pds:
            bad = pd.state in PD_BAD
            level = BAD if bad else WARN if pd.state == "Rbld" or pd.predictive_failures else OK
            out.append(BayDevice(pd.bay, pd.serial, pd.model, f"{c.name} slot {pd.eid_slot}",
                                 f"RAID {STATE_WORDS.get(pd.state, pd.state)}", level, f"RAID controller {c.name}",
                                 pull=bad, entity=("megaraid_pd", f"{c.name}/{pd.eid_slot}")))
    return out
