"""What is wrong behind a MegaRAID/PERC controller, in the words the tile, the alert and the
webhook share."""

from __future__ import annotations

from typing import Any

from collectors.findings import (
    BAD,
    OK,
    WARN,
    ChartSpec,
    Finding,
    Judging,
    RuleSpec,
    Tile,
    items,
    level_of,
)
from collectors.storage.common import describe
from collectors.storage.megaraid.collector import CONTROLLER_OK
from collectors.storage.megaraid.storcli import PD_BAD

RULES = (
    RuleSpec("megaraid_vd_degraded", "critical", 0, 12),
    RuleSpec("megaraid_pd_failed", "critical", 0, 12),
    RuleSpec("megaraid_controller", "critical", 0, 12),
    RuleSpec("megaraid_bbu", "warning", 0, 24),
    RuleSpec("megaraid_pd_errors", "warning", 0, 24),
)
STATE_WORDS = {"Optl": "optimal", "Dgrd": "degraded", "Pdgd": "partially degraded", "Rbld": "rebuilding",
               "OfLn": "offline", "Rec": "recovering", "UBad": "unconfigured bad", "Offln": "offline",
               "Failed": "failed", "Msng": "missing", "Onln": "online", "UGood": "unconfigured good"}


def pd_words(pd: dict[str, Any]) -> str:
    state = STATE_WORDS.get(pd["state"], pd["state"])
    progress = ""
    if pd["state"] == "Rbld" and pd.get("rebuild_ratio") is not None:
        progress = f" {pd['rebuild_ratio'] * 100:.0f}%"
    return f"drive {pd['eid_slot']} {state}{progress} ({describe(pd)})"


def _labels(ctl: str, pds: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    base = {"controller": ctl, **more}
    if len(pds) == 1:
        pd = pds[0]
        base.update(slot=pd["eid_slot"], serial=pd.get("serial"), bay=pd.get("bay"), model=pd.get("model"))
    return base


def controller_findings(c: dict[str, Any], judging: Judging | None = None) -> list[Finding]:
    ctl, out = c["name"], []
    if c["status"] not in CONTROLLER_OK:
        out.append(Finding(BAD, f"MegaRAID {ctl} ({c['model']}) {c['status']}", "megaraid_controller", ctl,
                           {"controller": ctl}))
    covered: set[str] = set()
    for vd in c["vds"]:
        if vd["state"] == "Optl":
            continue
        dg = vd["dg_vd"].split("/")[0]
        members = [p for p in c["pds"] if str(p["dg"]) == dg and p["state"] != "Onln"]
        members += [p for p in c["pds"] if p["state"] in PD_BAD and str(p["dg"]) in ("-", "")]
        pulls = [p for p in members if p["state"] in PD_BAD]
        covered.update(p["key"] for p in members)
        where = "; ".join(pd_words(p) for p in members)
        name = f" '{vd['name']}'" if vd["name"] else ""
        text = (f"MegaRAID {ctl} VD {vd['dg_vd']} ({vd['raid']}{name}) {STATE_WORDS.get(vd['state'], vd['state'])}"
                + (f": {where}" if where else ""))
        out.append(Finding(BAD, text, "megaraid_vd_degraded", f"{ctl}/{vd['dg_vd']}",
                           _labels(ctl, pulls, vd=vd["dg_vd"])))
    for pd in c["pds"]:
        if pd["state"] in PD_BAD and pd["key"] not in covered:
            out.append(Finding(BAD, f"MegaRAID {ctl}: {pd_words(pd)}", "megaraid_pd_failed", f"{ctl}/{pd['eid_slot']}",
                               _labels(ctl, [pd])))
        elif pd["state"] == "Rbld" and pd["key"] not in covered:
            out.append(Finding(WARN, f"MegaRAID {ctl}: {pd_words(pd)}"))
        counts = [pd.get(k) or 0 for k in ("media_errors", "other_errors", "predictive_failures")]
        rose = judging.rose(f"megaraid:{pd['key']}", sum(counts)) if judging else 0
        if rose:
            out.append(Finding(WARN, f"MegaRAID {ctl}: drive {pd['eid_slot']} errors rose by {rose} ({counts[0]} media, "
                                     f"{counts[1]} other, {counts[2]} predictive failures; {describe(pd)})",
                               "megaraid_pd_errors", f"{ctl}/{pd['eid_slot']}", _labels(ctl, [pd])))
        elif counts[2]:
            out.append(Finding(WARN, f"MegaRAID {ctl}: drive {pd['eid_slot']} predicts its failure "
                                     f"({counts[2]} predictive failures; {describe(pd)})"))
    bbu = c.get("bbu")
    if bbu and bbu["state"] != "Optimal":
        out.append(Finding(WARN, f"MegaRAID {ctl}: {bbu['kind']} {bbu['model']} {bbu['state']}", "megaraid_bbu", ctl,
                           {"controller": ctl}))
    return out


def controller_level(c: dict[str, Any]) -> str:
    return level_of(controller_findings(c))


def findings(state: dict[str, Any], judging: Judging) -> list[Finding]:
    return [f for c in items(state, "controllers") for f in controller_findings(c, judging)]


def all_clear(state: dict[str, Any], judging: Judging) -> str | None:
    ctrls = items(state, "controllers")
    vds = sum(len(c["vds"]) for c in ctrls)
    if not ctrls:
        return None
    return f"{vds} virtual {'drive' if vds == 1 else 'drives'} optimal" if vds else f"{len(ctrls)} controllers OK"


def view(state: dict[str, Any]) -> dict[str, Any]:
    return {"controllers": [{**c, "health": controller_level(c)} for c in items(state, "controllers")],
            "words": STATE_WORDS}


TILE = Tile("RAID controller", "/disks#megaraid", all_clear)
CHARTS: dict[str, ChartSpec] = {"megaraid_pd": (("controller", "eid_slot"), [
    ("Media errors", "rackpulse_megaraid_pd_media_errors_total", {"serial": "attr:serial"}),
    ("Temperature", "rackpulse_megaraid_pd_temperature_celsius", {"serial": "attr:serial"}),
])}


def bay_devices(state: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for c in items(state, "controllers"):
        for pd in c["pds"]:
            bad = pd["state"] in PD_BAD
            level = BAD if bad else WARN if pd["state"] == "Rbld" or pd.get("predictive_failures") else OK
            out.append({"bay": pd.get("bay"), "serial": pd.get("serial"), "model": pd.get("model"),
                        "device": f"{c['name']} slot {pd['eid_slot']}",
                        "state": f"RAID {STATE_WORDS.get(pd['state'], pd['state'])}", "level": level, "pull": bad,
                        "where": f"RAID controller {c['name']}",
                        "entity": ("megaraid_pd", f"{c['name']}/{pd['eid_slot']}")})
    return out
