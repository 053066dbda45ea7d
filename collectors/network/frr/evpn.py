"""EVPN VNIs over VXLAN from zebra: ``show evpn vni json``, ``show evpn vni detail json`` and the
VXLAN interfaces' state from ``show interface json``.

Format source: FRR zebra/zebra_evpn.c, zebra_vxlan.c (``zebra_vxlan_print_vnis``,
``zebra_evpn_print``, ``zl3vni_print``) and zebra/interface.c (``if_dump_vty_json``), checked on
FRR 8.4.4. The VNI list is an object keyed by VNI: "vni", "type" (L2 or L3), "vxlanIf",
"numMacs", "numArpNd", "numRemoteVteps" (a number, or "n/a" for an L3 VNI), "tenantVrf" and
"remoteVteps" (a list, left out when empty). The detail form is a list on 8.x and an object
keyed by VNI before; it adds "vtepIp" (this router's), "sviInterface" and, for an L3 VNI
(``zl3vni_print``), "localVtepIp", "sviIntf" and "state" ("Up"/"Down") - and on 8.4 names the remote VTEPs in a list called "numRemoteVteps".
An interface's "administrativeStatus" is up or down; "operationalStatus" is there only when
it is administratively up. A router without EVPN prints nothing at all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from collectors.base import CollectorError, CollectResult, Entity, ParseError, Sample
from collectors.jsontext import tool_json
from collectors.network.frr.state import EvpnVni


@dataclass(slots=True)
class Vni:
    vni: int
    type: str  # L2 or L3
    vxlan_interface: str
    tenant_vrf: str
    macs: int | None
    arp_nd: int | None
    remote_vteps: list[str] = field(default_factory=list)
    local_vtep: str | None = None
    svi: str | None = None
    state: str | None = None  # an L3 VNI's, "Up" or "Down"


def _doc(text: str | bytes, what: str) -> Any:
    return tool_json(text, what)


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _addresses(v: Any) -> list[str]:
    return sorted(x for x in v if isinstance(x, str)) if isinstance(v, list) else []


def parse_evpn_vni(text: str | bytes, detail: str | bytes = b"") -> dict[int, Vni]:
    """`show evpn vni json`, completed by `show evpn vni detail json` where given."""
    doc = _doc(text, "show evpn vni json")
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise ParseError("show evpn vni json: expected an object keyed by VNI")
    out: dict[int, Vni] = {}
    for key, v in doc.items():
        number = _int(v.get("vni")) if isinstance(v, dict) else None
        if number is None:
            raise ParseError(f"show evpn vni json: entry {key!r} has no VNI number: {str(v)[:120]!r}")
        out[number] = Vni(number, _str(v.get("type")) or "L2", _str(v.get("vxlanIf")) or "",
                          _str(v.get("tenantVrf")) or "default", _int(v.get("numMacs")), _int(v.get("numArpNd")),
                          _addresses(v.get("remoteVteps")))
    more = _doc(detail, "show evpn vni detail json")
    entries = more if isinstance(more, list) else list(more.values()) if isinstance(more, dict) else []
    for d in entries:
        vni = out.get(_int(d.get("vni")) or -1) if isinstance(d, dict) else None
        if vni is None:
            continue
        vni.local_vtep = _str(d.get("vtepIp")) or _str(d.get("localVtepIp"))
        vni.svi = _str(d.get("sviInterface")) or _str(d.get("sviIntf"))  # the L3 form says Intf
        vni.state = _str(d.get("state"))
        if not vni.remote_vteps:  # 8.4 lists them under "numRemoteVteps" here
            vni.remote_vteps = _addresses(d.get("remoteVteps")) or _addresses(d.get("numRemoteVteps"))
    return out


def parse_interfaces_up(text: str | bytes, names: set[str]) -> dict[str, bool]:
    """`show interface json` -> {name: administratively and operationally up} for `names`."""
    doc = _doc(text, "show interface json")
    if not isinstance(doc, dict):
        return {}
    out = {}
    for name in names:
        i = doc.get(name)
        if isinstance(i, dict):
            out[name] = i.get("administrativeStatus") == "up" and i.get("operationalStatus") == "up"
    return out


class VtepMemory:
    """The remote VTEPs each VNI had, and the VNIs there were, for a while after they vanish:
    a VTEP that was there and is gone (a leaf rebooted, its BGP session lost) is what
    evpn_vtep_lost says. One gone for longer than `keep` seconds is forgotten (a leaf taken out
    of service stops being reported a day later)."""

    def __init__(self, keep: float = 86400.0) -> None:
        self.keep = keep
        self.vteps: dict[int, dict[str, float]] = {}  # vni -> vtep -> last seen
        self.vnis: dict[int, tuple[float, Vni]] = {}  # vni -> (last seen, as it was)

    def lost(self, vnis: dict[int, Vni], now: float) -> tuple[dict[int, list[str]], list[Vni]]:
        """Per present VNI the VTEPs it lost, and the VNIs gone from the list."""
        lost: dict[int, list[str]] = {}
        for number, v in vnis.items():
            seen = self.vteps.setdefault(number, {})
            for vtep in v.remote_vteps:
                seen[vtep] = now
            for vtep, when in list(seen.items()):
                if now - when > self.keep:
                    del seen[vtep]
            lost[number] = sorted(t for t in seen if t not in v.remote_vteps)
            self.vnis[number] = (now, v)
        gone = []
        for number, (when, v) in list(self.vnis.items()):
            if number in vnis:
                continue
            if now - when > self.keep:
                del self.vnis[number]
                self.vteps.pop(number, None)
            else:
                gone.append(v)
        return lost, sorted(gone, key=lambda v: v.vni)  # in VNI order, as the present ones: a page's rows stay put


def evpn_view(ask: Callable[[str], str], memory: VtepMemory, result: CollectResult, now: float) -> list[EvpnVni]:
    """The VNIs zebra knows, with what they lost, their samples and inventory added to `result`.
    `ask` runs one vtysh command and returns its output (raising CollectorError)."""
    listed = ask("show evpn vni json")
    # "% Unknown command": a vtysh (or a stand-in) without EVPN commands, which is no EVPN
    vnis = {} if listed.lstrip().startswith("%") else parse_evpn_vni(listed)
    if not vnis:
        lost, gone = memory.lost({}, now)
        return [_gone(v, result) for v in gone]
    try:
        vnis = parse_evpn_vni(listed, ask("show evpn vni detail json"))
    except (CollectorError, ParseError) as exc:
        result.warnings.append(f"EVPN VNI details unavailable: {exc}")
    try:
        up = parse_interfaces_up(ask("show interface json"), {v.vxlan_interface for v in vnis.values()})
    except (CollectorError, ParseError) as exc:
        result.warnings.append(f"VXLAN interface states unavailable: {exc}")
        up = {}
    lost, gone = memory.lost(vnis, now)
    out = []
    for number in sorted(vnis):
        v = vnis[number]
        ok = up.get(v.vxlan_interface, True) and (v.state is None or v.state.lower() == "up")
        labels = {"vni": str(number), "type": v.type, "interface": v.vxlan_interface}
        s = result.samples
        s.append(Sample.of("rackpulse_evpn_vni_up", 1 if ok else 0, **labels))
        s.append(Sample.of("rackpulse_evpn_vni_remote_vteps", len(v.remote_vteps), **labels))
        s.append(Sample.of("rackpulse_evpn_vni_lost_vteps", len(lost[number]), **labels))
        for metric, value in (("macs", v.macs), ("arp_nd", v.arp_nd)):
            if value is not None:
                s.append(Sample.of(f"rackpulse_evpn_vni_{metric}", value, **labels))
        result.entities.append(Entity("evpn_vni", str(number), {
            "remote_vteps": ", ".join(v.remote_vteps) or "none", "up": "yes" if ok else "no"}))
        out.append(EvpnVni(vni=number, type=v.type, vxlan_interface=v.vxlan_interface, tenant_vrf=v.tenant_vrf,
                           local_vtep=v.local_vtep, svi=v.svi, macs=v.macs, arp_nd=v.arp_nd,
                           remote_vteps=v.remote_vteps, lost_vteps=lost[number], up=ok, state=v.state))
    return out + [_gone(v, result) for v in gone]


def _gone(v: Vni, result: CollectResult) -> EvpnVni:
    """A VNI deleted within the memory window: still in /metrics, as down (its series vanishing
    would leave Prometheus and rackpulse's own rules with nothing to say it is gone)."""
    labels = {"vni": str(v.vni), "type": v.type, "interface": v.vxlan_interface}
    result.samples.append(Sample.of("rackpulse_evpn_vni_up", 0, **labels))
    result.samples.append(Sample.of("rackpulse_evpn_vni_remote_vteps", 0, **labels))
    return EvpnVni(vni=v.vni, type=v.type, vxlan_interface=v.vxlan_interface, tenant_vrf=v.tenant_vrf,
                   local_vtep=v.local_vtep, svi=v.svi, up=False, gone=True)
