"""storcli/perccli JSON (`J`): controllers, virtual drives, physical drives by EID:slot, the
BBU or CacheVault, and each drive's serial and error counters from `/cALL/eALL/sALL show all J`.

State words are storcli's own (its legend): VD Optl, Dgrd, Pdgd (partially degraded), Rbld,
OfLn, Rec; PD Onln, UGood, UBad, Rbld, Offln, Failed, Msng, GHS/DHS (hot spares), JBOD, Cpybck."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import Any

from collectors import finite
from collectors.base import NoData, ParseError
from collectors.storage.common import duration_seconds, integer, json_shape

VD_STATES = ("Optl", "Dgrd", "Pdgd", "Rbld", "OfLn", "Rec")
PD_BAD = ("UBad", "Offln", "Failed", "Msng", "UBUnsp")
NO_CONTROLLER = ("No Controller found", "no controller", "Controller 0 not found")


@dataclass
class VirtualDrive:
    dg_vd: str  # "0/0": drive group / virtual drive
    raid: str  # RAID6
    state: str  # Optl ...
    size: str
    name: str = ""


@dataclass
class PhysicalDrive:
    eid_slot: str  # "252:4", or ":4" for a drive on no enclosure
    did: int | None
    state: str
    dg: str  # drive group number, "-" for none
    size: str
    interface: str = ""
    media: str = ""
    model: str = ""
    serial: str | None = None
    wwn: str | None = None
    firmware: str | None = None
    media_errors: int | None = None
    other_errors: int | None = None
    predictive_failures: int | None = None
    temperature: float | None = None
    smart_alert: bool | None = None
    rebuild_ratio: float | None = None
    rebuild_remaining_seconds: float | None = None

    @property
    def enclosure(self) -> str:
        return self.eid_slot.partition(":")[0].strip()

    @property
    def slot(self) -> str:
        return self.eid_slot.partition(":")[2].strip()


@dataclass
class Controller:
    index: int
    model: str = ""
    serial: str = ""
    status: str = ""  # Optimal, OK, Needs Attention, Degraded ...
    vds: list[VirtualDrive] = field(default_factory=list)
    pds: list[PhysicalDrive] = field(default_factory=list)
    bbu: dict[str, str] | None = None  # {"kind": "BBU"|"CacheVault", "model", "state", "temperature"}
    problem: str = ""  # what storcli said when it answered "Failure" but still gave data


def _controllers(text: str, what: str) -> list[dict[str, Any]]:
    try:
        doc = finite.loads(text)
    except ValueError as exc:
        raise ParseError(f"{what}: not JSON ({exc}): {text[:80]!r}") from None
    ctrls = doc.get("Controllers") if isinstance(doc, dict) else None
    if not isinstance(ctrls, list):
        raise ParseError(f"{what}: no \"Controllers\" list: {text[:80]!r}")
    return [c for c in ctrls if isinstance(c, dict)]


# Any: a tool's JSON output, read key by key (each value checked where it is used)
def _failure(c: dict[str, Any]) -> str:
    st = c.get("Command Status") or {}
    detail = st.get("Detailed Status") or []
    msgs = [str(d.get("ErrMsg") or d.get("Status")) for d in detail if isinstance(d, dict)]
    return "; ".join(msgs) or str(st.get("Description") or "Failure")


@json_shape("storcli /call show all J")
def parse_show_all(text: str) -> list[Controller]:
    """`storcli /call show all J` (or `/cX show J`)."""
    out: list[Controller] = []
    for c in _controllers(text, "storcli /call show all J"):
        st = c.get("Command Status") or {}
        data = c.get("Response Data") or {}
        failed = str(st.get("Status", "")).lower() == "failure"
        if failed and not data:
            desc = _failure(c)
            if any(s.lower() in desc.lower() for s in NO_CONTROLLER):
                raise NoData(f"storcli: {desc}")
            raise ParseError(f"storcli /call show all J: controller {st.get('Controller', '?')}: {desc}")
        basics = data.get("Basics") or {}
        index = integer(st.get("Controller", basics.get("Controller", len(out))))
        ctl = Controller(index=index if index is not None else len(out),
                         model=str(basics.get("Model") or data.get("Product Name") or "").strip(),
                         serial=str(basics.get("Serial Number") or data.get("Serial Number") or "").strip(),
                         status=str((data.get("Status") or {}).get("Controller Status", "")).strip(),
                         problem=_failure(c) if failed else "")
        for row in data.get("VD LIST") or []:
            ctl.vds.append(VirtualDrive(dg_vd=str(row.get("DG/VD", "")), raid=str(row.get("TYPE", "")),
                                        state=str(row.get("State", "")), size=str(row.get("Size", "")),
                                        name=str(row.get("Name") or "")))
        for row in data.get("PD LIST") or []:
            ctl.pds.append(_pd(row))
        for key, kind in (("BBU_Info", "BBU"), ("Cachevault_Info", "CacheVault")):
            rows = data.get(key)
            if isinstance(rows, list) and rows:
                r = rows[0]
                ctl.bbu = {"kind": kind, "model": str(r.get("Model", "")), "state": str(r.get("State", "")),
                           "temperature": str(r.get("Temp", ""))}
        out.append(ctl)
    return out


# Any: a tool's JSON output, read key by key (each value checked where it is used)
def _pd(row: dict[str, Any]) -> PhysicalDrive:
    return PhysicalDrive(eid_slot=str(row.get("EID:Slt", "")).strip(), did=integer(row.get("DID")),
                         state=str(row.get("State", "")).strip(), dg=str(row.get("DG", "-")),
                         size=str(row.get("Size", "")), interface=str(row.get("Intf", "")),
                         media=str(row.get("Med", "")), model=str(row.get("Model", "")).strip())


@dataclass(frozen=True)
class DriveDetails:
    """What `show all` says of one drive beyond its row in the PD list."""

    serial: str | None
    wwn: str | None
    model: str | None
    firmware: str | None
    media_errors: int | None
    other_errors: int | None
    predictive_failures: int | None
    temperature: float | None
    smart_alert: bool | None


_DRIVE_KEY = re.compile(r"^Drive /c(\d+)(?:/e(\d+))?/s(\d+)(?: - Detailed Information)?$")


@json_shape("storcli /call/eall/sall show all J")
def parse_drives(text: str) -> dict[tuple[int, str], DriveDetails]:
    """`storcli /call/eall/sall show all J`: each drive's serial, WWN, errors ... by (controller, "EID:Slt")."""
    out: dict[tuple[int, str], DriveDetails] = {}
    for c in _controllers(text, "storcli /call/eall/sall show all J"):
        for key, value in (c.get("Response Data") or {}).items():
            m = _DRIVE_KEY.match(key)
            if not m or not key.endswith("Detailed Information") or not isinstance(value, dict):
                continue
            ident = (int(m[1]), f"{m[2] or ''}:{m[3]}")
            prefix = key.removesuffix(" - Detailed Information")
            state = value.get(f"{prefix} State") or {}
            attrs = value.get(f"{prefix} Device attributes") or {}
            temp = re.match(r"\s*(-?\d+)C", str(state.get("Drive Temperature", "")))
            alert = state.get("S.M.A.R.T alert flagged by drive")
            out[ident] = DriveDetails(
                serial=str(attrs.get("SN", "")).strip() or None,
                wwn=str(attrs.get("WWN", "")).strip().lower() or None,
                model=str(attrs.get("Model Number", "")).strip() or None,
                firmware=str(attrs.get("Firmware Revision", "")).strip() or None,
                media_errors=integer(state.get("Media Error Count")),
                other_errors=integer(state.get("Other Error Count")),
                predictive_failures=integer(state.get("Predictive Failure Count")),
                temperature=float(temp[1]) if temp else None,
                smart_alert=None if alert is None else str(alert).strip().lower() == "yes",
            )
    return out


@json_shape("storcli show rebuild J")
def parse_rebuild(text: str) -> dict[tuple[int, str], tuple[float | None, float | None]]:
    """`storcli /call/eall/sall show rebuild J`: {(controller, "EID:Slt"): (ratio, seconds left)}."""
    out: dict[tuple[int, str], tuple[float | None, float | None]] = {}
    for c in _controllers(text, "storcli /call/eall/sall show rebuild J"):
        rows = (c.get("Response Data") or [])
        if isinstance(rows, dict):
            rows = next((v for v in rows.values() if isinstance(v, list)), [])
        for row in rows:
            if not isinstance(row, dict):
                continue
            m = re.match(r"/c(\d+)(?:/e(\d+))?/s(\d+)", str(row.get("Drive-ID", "")))
            if not m:
                continue
            pct = next((v for k, v in row.items() if "Progress" in k), None)
            left = next((v for k, v in row.items() if "Time Left" in k or "Estimated" in k), None)
            ratio = integer(pct)
            out[(int(m[1]), f"{m[2] or ''}:{m[3]}")] = (
                ratio / 100 if ratio is not None else None,
                duration_seconds(str(left)) if left not in (None, "-") else None)
    return out


def merge(ctrls: list[Controller], drives: dict[tuple[int, str], DriveDetails]) -> None:
    """Each drive's details onto its row (the PD list's model wins where it has one)."""
    for ctl in ctrls:
        for pd in ctl.pds:
            d = drives.get((ctl.index, pd.eid_slot))
            if d is None:
                continue
            for f in fields(d):
                v = getattr(d, f.name)
                if v is not None and (f.name != "model" or not pd.model):
                    setattr(pd, f.name, v)
