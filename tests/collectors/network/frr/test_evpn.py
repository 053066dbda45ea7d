"""EVPN VNIs over VXLAN: parsed from real FRR 8.4.4 and frr_exporter captures (and an L3 VNI
written from zebra's zl3vni_print), and read from two real FRR routers in network namespaces
with VXLAN devices, one of which is stopped while the other's collector watches."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from collectors.base import CommandResult, ParseError
from collectors.findings import Judging
from collectors.network.frr.collector import FrrCollector
from collectors.network.frr.evpn import Vni, VtepMemory, parse_evpn_vni, parse_interfaces_up
from collectors.network.frr.findings import findings
from tests.paths import FIXTURES
from tests.peers import running
from tests.peers.frr import EvpnPair, collect_until

DIR = FIXTURES / "frr"

# `show evpn vni json` and `... detail json` for an L3 VNI, in the keys zebra's zl3vni_print
# and zl3vni_print_hash write (FRR zebra/zebra_vxlan.c).
L3 = '{"4001": {"vni": 4001, "vxlanIf": "vxlan4001", "numMacs": 2, "numArpNd": 2, "numRemoteVteps": "n/a", ' \
     '"type": "L3", "tenantVrf": "tenant1"}}'
L3_DETAIL = '{"4001": {"vni": 4001, "type": "L3", "localVtepIp": "10.0.0.1", "vxlanIntf": "vxlan4001", ' \
            '"sviIntf": "br4001", "state": "Down", "vrf": "tenant1", "l2Vnis": [100]}}'


def test_the_vni_list_and_its_detail_give_each_vni_its_vteps_interfaces_and_counts() -> None:
    vnis = parse_evpn_vni((DIR / "frr844__show_evpn_vni.json").read_text(),
                          (DIR / "frr844__show_evpn_vni_detail.json").read_text())
    assert sorted(vnis) == [100, 200]
    v = vnis[100]
    assert (v.type, v.vxlan_interface, v.remote_vteps, v.local_vtep, v.svi, v.macs) == (
        "L2", "vni100", ["10.199.0.2"], "10.199.0.1", "br100", 0)
    exporter = parse_evpn_vni((DIR / "frr_exporter__show_evpn_vni.json").read_text())
    assert exporter[174374].macs == 42 and exporter[172192].remote_vteps == ["10.0.0.13"]
    l3 = parse_evpn_vni(L3, L3_DETAIL)[4001]
    assert (l3.type, l3.tenant_vrf, l3.state, l3.svi, l3.local_vtep, l3.remote_vteps) == (
        "L3", "tenant1", "Down", "br4001", "10.0.0.1", [])
    assert parse_evpn_vni("") == {}  # a router without EVPN prints nothing
    with pytest.raises(ParseError, match="no VNI number"):
        parse_evpn_vni('{"7": {"type": "L2"}}')


def test_an_interface_is_up_only_when_administratively_and_operationally_up() -> None:
    doc = json.dumps({"vni100": {"administrativeStatus": "down"},
                      "vni200": {"administrativeStatus": "up", "operationalStatus": "up"},
                      "vni300": {"administrativeStatus": "up", "operationalStatus": "down"}})
    assert parse_interfaces_up(doc, {"vni100", "vni200", "vni300", "absent"}) == {
        "vni100": False, "vni200": True, "vni300": False}


def test_a_vtep_that_was_there_is_lost_until_it_returns_or_is_forgotten() -> None:
    m = VtepMemory(keep=3600)
    both = {100: Vni(100, "L2", "vni100", "default", 0, 0, ["10.0.0.2", "10.0.0.3"])}
    assert m.lost(both, 0) == ({100: []}, [])
    one = {100: Vni(100, "L2", "vni100", "default", 0, 0, ["10.0.0.2"])}
    assert m.lost(one, 60) == ({100: ["10.0.0.3"]}, [])
    assert m.lost(both, 120)[0] == {100: []}  # back
    assert m.lost(one, 200)[0] == {100: ["10.0.0.3"]}
    assert m.lost(one, 200 + 3601)[0] == {100: []}  # gone for longer than keep: forgotten
    lost, gone = m.lost({}, 4000)
    assert [v.vni for v in gone] == [100]  # the VNI itself went away


def test_evpn_findings_say_a_lost_vtep_and_a_vni_down_and_nothing_when_all_is_there() -> None:
    from collectors.network.frr.state import EvpnVni, FrrState

    def said(*vnis: EvpnVni) -> list[tuple[str | None, str]]:
        return [(f.rule, f.text) for f in findings(FrrState(evpn=list(vnis)), Judging(host="leaf1"))]

    assert said(EvpnVni(vni=100, vxlan_interface="vni100", remote_vteps=["10.0.0.2"])) == []
    assert said(EvpnVni(vni=100, remote_vteps=["10.0.0.2"], lost_vteps=["10.0.0.3"])) == [
        ("evpn_vtep_lost", "EVPN VNI 100 lost remote VTEP 10.0.0.3 (1 left)")]
    assert said(EvpnVni(vni=200, vxlan_interface="vni200", up=False)) == [
        ("evpn_vni_down", "EVPN VNI 200 has its VXLAN interface vni200 down")]
    assert said(EvpnVni(vni=300, up=False, gone=True)) == [("evpn_vni_down", "EVPN VNI 300 is no longer known to zebra")]


def test_a_router_without_evpn_has_no_vnis_and_no_warning() -> None:
    summary = (DIR / "frr844__show_bgp_vrf_all_summary.json").read_bytes()

    def runner(argv, timeout):  # type: ignore[no-untyped-def]
        if "evpn" in argv[-1] or "bfd" in argv[-1]:
            return CommandResult(tuple(argv), 0, b"", b"")
        return CommandResult(tuple(argv), 0, summary if "summary" in argv[-1] else b"{}", b"")

    r = FrrCollector(["vtysh"], runner=runner).collect()
    assert r.state.evpn == [] and r.warnings == []


@pytest.fixture(scope="module")
def routers() -> Iterator[EvpnPair]:
    with running(EvpnPair, "frr-evpn") as pair:
        yield pair


def vnis_until(c: FrrCollector, predicate, what: str):  # type: ignore[no-untyped-def]
    return collect_until(c, lambda r: predicate({v.vni: v for v in r.state.evpn}), what)


def test_real_vnis_lose_the_stopped_routers_vtep_and_a_downed_vxlan_device(routers: EvpnPair) -> None:
    c = FrrCollector(routers.vtysh("A"))
    def converged(r) -> bool:  # type: ignore[no-untyped-def]
        v = {x.vni: x for x in r.state.evpn}
        l2vpn = [p for p in r.state.peers if p.afi == "l2VpnEvpn"]
        return (set(v) == {100, 200} and all(x.remote_vteps == ["10.199.0.2"] for x in v.values())
                and bool(l2vpn) and bool(l2vpn[0].prefixes_received))

    # the VTEPs show as soon as B's type-3 routes are in; the session's count settles with them
    r = collect_until(c, converged, "both VNIs with B as remote VTEP, the l2vpn session's routes in")
    assert {v.vni: v.local_vtep for v in r.state.evpn} == {100: "10.199.0.1", 200: "10.199.0.1"}
    # the l2vpn evpn session is in the BGP table with its prefixes (`show bgp l2vpn evpn summary json`'s)
    evpn_summary = json.loads(routers.vty("show bgp l2vpn evpn summary json"))["peers"]["10.199.0.2"]
    (session,) = [p for p in r.state.peers if p.afi == "l2VpnEvpn"]
    assert session.up and session.prefixes_received == evpn_summary["pfxRcd"] > 0
    assert findings(r.state, Judging(host="A")) == []
    routers.stop("bgpdB")
    r = vnis_until(c, lambda v: all(not x.remote_vteps for x in v.values()), "B's VTEP withdrawn")
    lost = [f for f in findings(r.state, Judging(host="A")) if f.rule == "evpn_vtep_lost"]
    assert sorted(f.subject for f in lost) == ["100", "200"] and "10.199.0.2" in lost[0].text
    routers.procs["bgpdB"] = routers._daemon("B", "bgpd")
    r = vnis_until(c, lambda v: all(x.remote_vteps == ["10.199.0.2"] for x in v.values()), "B's VTEP back")
    assert not [f for f in findings(r.state, Judging(host="A")) if f.rule == "evpn_vtep_lost"]
    routers.set_link("A", "vni100", "down")
    r = vnis_until(c, lambda v: not v[100].up, "VNI 100 down")
    (down,) = [f for f in findings(r.state, Judging(host="A")) if f.rule == "evpn_vni_down"]
    assert down.subject == "100" and "vni100 down" in down.text
    up = {dict(s.labels)["vni"]: s.value for s in r.samples if s.metric == "rackpulse_evpn_vni_up"}
    assert up == {"100": 0, "200": 1}


def test_a_deleted_vni_stays_in_metrics_as_down_for_the_memory_window_then_leaves() -> None:
    """`no vni 200`: its series must say 0, not vanish (a dashboard and a Prometheus rule would see
    nothing wrong), until the memory window forgets it."""
    from collectors.base import CollectResult
    from collectors.network.frr.evpn import evpn_view

    listed = json.loads((DIR / "frr844__show_evpn_vni.json").read_text())
    detail = (DIR / "frr844__show_evpn_vni_detail.json").read_text()
    answers = {"show evpn vni json": json.dumps(listed), "show evpn vni detail json": detail,
               "show interface json": json.dumps({"vni100": {"administrativeStatus": "up", "operationalStatus": "up"},
                                                  "vni200": {"administrativeStatus": "up", "operationalStatus": "up"}})}
    memory = VtepMemory(keep=3600)

    def up_of(now: float) -> dict[str, float]:
        result = CollectResult()
        evpn_view(answers.__getitem__, memory, result, now)
        return {dict(s.labels)["vni"]: s.value for s in result.samples if s.metric == "rackpulse_evpn_vni_up"}

    assert up_of(0) == {"100": 1, "200": 1}
    del listed["200"]
    answers["show evpn vni json"] = json.dumps(listed)
    assert up_of(60) == {"100": 1, "200": 0}
    assert up_of(60 + 3601) == {"100": 1}  # forgotten with the memory
