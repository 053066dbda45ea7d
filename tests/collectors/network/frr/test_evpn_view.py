"""What the EVPN part of the FRR collector makes of zebra's answers, field by field: every sample
with its labels, every inventory row, every VNI record, the warnings when one of its three
commands fails, and a deleted VNI's last words. Written against the FRR 8.4.4 captures and the
L3 VNI form of zebra's ``zl3vni_print`` (FRR zebra/zebra_vxlan.c); the real routers' test
(test_evpn.py) shows the same code against a running zebra."""

from __future__ import annotations

import json

import pytest

from collectors.base import CollectorError, CollectResult, Entity, ParseError, Sample
from collectors.network.frr.evpn import Vni, VtepMemory, evpn_view, parse_evpn_vni, parse_interfaces_up
from collectors.network.frr.state import EvpnVni
from tests.paths import FIXTURES

DIR = FIXTURES / "frr"
UP = {"administrativeStatus": "up", "operationalStatus": "up"}


def answers(listed: dict[str, object] | None = None, detail: str | None = None,
            interfaces: dict[str, object] | None = None) -> dict[str, str]:
    return {"show evpn vni json": json.dumps(listed if listed is not None
                                             else json.loads((DIR / "frr844__show_evpn_vni.json").read_text())),
            "show evpn vni detail json": detail if detail is not None
            else (DIR / "frr844__show_evpn_vni_detail.json").read_text(),
            "show interface json": json.dumps(interfaces if interfaces is not None
                                              else {"vni100": UP, "vni200": UP})}


def view(said: dict[str, str], memory: VtepMemory | None = None,
         now: float = 0.0) -> tuple[list[EvpnVni], CollectResult]:
    def ask(command: str) -> str:
        answer = said[command]
        if answer.startswith("FAIL"):
            raise CollectorError(f"vtysh -c '{command}': {answer}")
        return answer

    result = CollectResult()
    return evpn_view(ask, memory or VtepMemory(), result, now), result


def samples(result: CollectResult) -> set[tuple[str, float, tuple[tuple[str, str], ...]]]:
    return {(s.metric, s.value, s.labels) for s in result.samples}


def labels(vni: str, interface: str, type_: str = "L2") -> tuple[tuple[str, str], ...]:
    return (("interface", interface), ("type", type_), ("vni", vni))


def test_two_healthy_l2_vnis_give_their_samples_inventory_and_records() -> None:
    vnis, result = view(answers())
    assert samples(result) == {
        ("rackpulse_evpn_vni_up", 1.0, labels("100", "vni100")),
        ("rackpulse_evpn_vni_remote_vteps", 1.0, labels("100", "vni100")),
        ("rackpulse_evpn_vni_lost_vteps", 0.0, labels("100", "vni100")),
        ("rackpulse_evpn_vni_macs", 0.0, labels("100", "vni100")),
        ("rackpulse_evpn_vni_arp_nd", 0.0, labels("100", "vni100")),
        ("rackpulse_evpn_vni_up", 1.0, labels("200", "vni200")),
        ("rackpulse_evpn_vni_remote_vteps", 1.0, labels("200", "vni200")),
        ("rackpulse_evpn_vni_lost_vteps", 0.0, labels("200", "vni200")),
        ("rackpulse_evpn_vni_macs", 0.0, labels("200", "vni200")),
        ("rackpulse_evpn_vni_arp_nd", 0.0, labels("200", "vni200")),
    }
    assert len(result.samples) == 10 and result.warnings == []
    assert result.entities == [Entity("evpn_vni", "100", {"remote_vteps": "10.199.0.2", "up": "yes"}),
                               Entity("evpn_vni", "200", {"remote_vteps": "10.199.0.2", "up": "yes"})]
    assert vnis == [
        EvpnVni(vni=100, type="L2", vxlan_interface="vni100", tenant_vrf="default", local_vtep="10.199.0.1",
                svi="br100", macs=0, arp_nd=0, remote_vteps=["10.199.0.2"], lost_vteps=[], up=True, state=None),
        EvpnVni(vni=200, type="L2", vxlan_interface="vni200", tenant_vrf="default", local_vtep="10.199.0.1",
                svi="br200", macs=0, arp_nd=0, remote_vteps=["10.199.0.2"], lost_vteps=[], up=True, state=None)]


def test_an_l3_vni_that_zebra_calls_down_is_down_with_its_vrf_svi_and_counts() -> None:
    listed = {"4001": {"vni": 4001, "vxlanIf": "vxlan4001", "numMacs": 2, "numArpNd": 3, "numRemoteVteps": "n/a",
                       "type": "L3", "tenantVrf": "tenant1"}}
    detail = json.dumps({"4001": {"vni": 4001, "type": "L3", "localVtepIp": "10.0.0.1", "sviIntf": "br4001",
                                  "state": "Down", "vrf": "tenant1"}})
    vnis, result = view(answers(listed, detail, {"vxlan4001": UP}))
    assert vnis == [EvpnVni(vni=4001, type="L3", vxlan_interface="vxlan4001", tenant_vrf="tenant1",
                            local_vtep="10.0.0.1", svi="br4001", macs=2, arp_nd=3, remote_vteps=[], lost_vteps=[],
                            up=False, state="Down")]
    assert ("rackpulse_evpn_vni_up", 0.0, labels("4001", "vxlan4001", "L3")) in samples(result)
    assert ("rackpulse_evpn_vni_arp_nd", 3.0, labels("4001", "vxlan4001", "L3")) in samples(result)
    assert result.entities == [Entity("evpn_vni", "4001", {"remote_vteps": "none", "up": "no"})]
    # zebra's word in any case: "UP" and "up" are up
    detail_up = detail.replace('"Down"', '"UP"')
    assert view(answers(listed, detail_up, {"vxlan4001": UP}))[0][0].up is True


def test_a_vxlan_interface_down_makes_its_vni_down_and_one_not_in_the_interface_list_counts_as_up() -> None:
    vnis, result = view(answers(interfaces={"vni100": {"administrativeStatus": "down"}}))
    assert [(v.vni, v.up) for v in vnis] == [(100, False), (200, True)]
    assert {s.labels[2][1]: s.value for s in result.samples if s.metric == "rackpulse_evpn_vni_up"} == {
        "100": 0.0, "200": 1.0}
    assert [e.attrs["up"] for e in result.entities] == ["no", "yes"]


def test_a_vni_without_mac_or_arp_counts_has_no_such_samples() -> None:
    listed = {"300": {"vni": 300, "vxlanIf": "vni300", "type": "L2"}}
    vnis, result = view(answers(listed, "", {"vni300": UP}))
    assert {s.metric for s in result.samples} == {"rackpulse_evpn_vni_up", "rackpulse_evpn_vni_remote_vteps",
                                                   "rackpulse_evpn_vni_lost_vteps"}
    assert (vnis[0].macs, vnis[0].arp_nd, vnis[0].tenant_vrf, vnis[0].local_vtep, vnis[0].svi) == (
        None, None, "default", None, None)


def test_failed_detail_and_interface_commands_are_warnings_and_the_list_still_counts() -> None:
    said = answers(detail="FAIL: timed out")
    said["show interface json"] = "FAIL: timed out"
    vnis, result = view(said)
    assert result.warnings == [
        "EVPN VNI details unavailable: vtysh -c 'show evpn vni detail json': FAIL: timed out",
        "VXLAN interface states unavailable: vtysh -c 'show interface json': FAIL: timed out"]
    assert [(v.vni, v.up, v.local_vtep, v.remote_vteps) for v in vnis] == [
        (100, True, None, ["10.199.0.2"]), (200, True, None, ["10.199.0.2"])]
    garbled = answers(detail="{truncated")
    vnis, result = view(garbled)
    assert len(result.warnings) == 1
    assert result.warnings[0].startswith("EVPN VNI details unavailable: show evpn vni detail json: malformed JSON")


def test_an_unknown_command_or_an_empty_answer_is_no_evpn() -> None:
    for listed in ("% Unknown command: show evpn vni json", "", "  \n"):
        said = answers()
        said["show evpn vni json"] = listed
        assert view(said) == ([], CollectResult())


def test_a_lost_vtep_is_counted_and_a_deleted_vni_says_its_last_words_until_forgotten() -> None:
    memory = VtepMemory(keep=600)
    view(answers(), memory, 0)
    listed = json.loads((DIR / "frr844__show_evpn_vni.json").read_text())
    listed["100"]["remoteVteps"] = []
    listed["100"]["numRemoteVteps"] = 0
    del listed["200"]
    detail = json.dumps([d for d in json.loads((DIR / "frr844__show_evpn_vni_detail.json").read_text())
                         if d["vni"] == 100])
    detail = detail.replace('"10.199.0.2"', '"__none__"').replace('["__none__"]', "[]")
    vnis, result = view(answers(listed, detail), memory, 60)
    assert [(v.vni, v.remote_vteps, v.lost_vteps, v.up, v.gone) for v in vnis] == [
        (100, [], ["10.199.0.2"], True, False), (200, [], [], False, True)]
    assert vnis[1] == EvpnVni(vni=200, type="L2", vxlan_interface="vni200", tenant_vrf="default",
                              local_vtep="10.199.0.1", svi="br200", up=False, gone=True)
    assert ("rackpulse_evpn_vni_lost_vteps", 1.0, labels("100", "vni100")) in samples(result)
    assert [(s.metric, s.value, s.labels) for s in result.samples if ("vni", "200") in s.labels] == [
        ("rackpulse_evpn_vni_up", 0.0, labels("200", "vni200")),
        ("rackpulse_evpn_vni_remote_vteps", 0.0, labels("200", "vni200"))]
    assert [e.key for e in result.entities] == ["100"]  # a gone VNI is not inventory any more
    # every VNI gone: the list is empty, the memory still speaks for them
    vnis, result = view(answers({}, "", {}), memory, 120)
    assert [(v.vni, v.gone) for v in vnis] == [(100, True), (200, True)]
    assert vnis[0].local_vtep == "10.199.0.1" and vnis[0].svi == "br100"
    assert len(result.samples) == 4
    # forgotten after keep seconds: exactly `keep` is still remembered (200 was last seen at 0, 100 at 60)
    assert [v.vni for v in view(answers({}, "", {}), memory, 600)[0]] == [100, 200]
    assert [v.vni for v in view(answers({}, "", {}), memory, 601)[0]] == [100]
    assert view(answers({}, "", {}), memory, 661)[0] == []
    assert memory.vteps == {} and memory.vnis == {}


def test_a_vtep_seen_exactly_keep_seconds_ago_is_still_lost_and_one_second_later_forgotten() -> None:
    m = VtepMemory(keep=100)
    assert m.keep == 100 and VtepMemory().keep == 86400.0
    two = {7: Vni(7, "L2", "v7", "default", None, None, ["10.0.0.2", "10.0.0.3"])}
    one = {7: Vni(7, "L2", "v7", "default", None, None, ["10.0.0.2"])}
    m.lost(two, 1000)
    assert m.lost(one, 1100) == ({7: ["10.0.0.3"]}, [])
    assert m.lost(one, 1101) == ({7: []}, [])
    assert m.vteps == {7: {"10.0.0.2": 1101}}


def test_the_vni_list_reads_every_field_and_says_what_is_wrong_with_a_bad_one() -> None:
    listed = json.dumps({"9": {"vni": 9, "numMacs": 4, "numArpNd": 5, "remoteVteps": ["10.0.0.9", 7, "10.0.0.1"]},
                         "10": {"vni": 10, "type": "", "vxlanIf": "", "tenantVrf": ""}})
    v = parse_evpn_vni(listed)
    assert (v[9].type, v[9].vxlan_interface, v[9].tenant_vrf, v[9].macs, v[9].arp_nd, v[9].remote_vteps) == (
        "L2", "", "default", 4, 5, ["10.0.0.1", "10.0.0.9"])
    assert (v[10].type, v[10].vxlan_interface, v[10].tenant_vrf) == ("L2", "", "default")
    with pytest.raises(ParseError) as err:
        parse_evpn_vni("[1, 2]")
    assert str(err.value) == "show evpn vni json: expected an object keyed by VNI"
    long = {"type": "L2", "vxlanIf": "x" * 200}
    with pytest.raises(ParseError) as err:
        parse_evpn_vni(json.dumps({"7": long}))
    assert str(err.value) == f"show evpn vni json: entry '7' has no VNI number: {str(long)[:120]!r}"
    with pytest.raises(ParseError) as err:
        parse_evpn_vni('{"7": "seven"}')
    assert "entry '7' has no VNI number: 'seven'" in str(err.value)
    with pytest.raises(ParseError) as err:
        parse_evpn_vni('{"7": {"vni": true}}')  # a boolean is not a VNI number
    assert "no VNI number" in str(err.value)
    with pytest.raises(ParseError) as err:
        parse_evpn_vni("{oops")
    assert str(err.value).startswith("show evpn vni json: malformed JSON")
    with pytest.raises(ParseError) as err:
        parse_evpn_vni('{"100": {"vni": 100}}', "{oops")
    assert str(err.value).startswith("show evpn vni detail json: malformed JSON")


def test_the_detail_adds_to_the_listed_vnis_only_and_names_the_vteps_either_way() -> None:
    listed = json.dumps({"100": {"vni": 100, "vxlanIf": "vni100"}, "1": {"vni": 1, "vxlanIf": "vni1"}})
    detail = json.dumps([
        "not an object",
        {"vni": 100, "vtepIp": "10.0.0.1", "sviInterface": "br100", "numRemoteVteps": ["10.0.0.3", "10.0.0.2"]},
        {"vni": 555, "vtepIp": "10.9.9.9"},  # not listed: ignored
        {"vtepIp": "10.8.8.8"},  # no number: ignored, and not taken for VNI 1
    ])
    v = parse_evpn_vni(listed, detail)
    assert (v[100].local_vtep, v[100].svi, v[100].remote_vteps) == ("10.0.0.1", "br100", ["10.0.0.2", "10.0.0.3"])
    assert (v[1].local_vtep, v[1].svi, v[1].remote_vteps) == (None, None, [])
    # "remoteVteps" in the detail is taken before the 8.4 "numRemoteVteps" list
    both = json.dumps([{"vni": 100, "remoteVteps": ["10.0.0.7"], "numRemoteVteps": ["10.0.0.8"]}])
    assert parse_evpn_vni(listed, both)[100].remote_vteps == ["10.0.0.7"]
    # the list's own VTEPs are kept over the detail's
    own = json.dumps({"100": {"vni": 100, "remoteVteps": ["10.0.0.5"]}})
    assert parse_evpn_vni(own, both)[100].remote_vteps == ["10.0.0.5"]


def test_interfaces_are_read_only_from_an_object() -> None:
    assert parse_interfaces_up("[]", {"vni100"}) == {}
    assert parse_interfaces_up("", {"vni100"}) == {}
    assert parse_interfaces_up(json.dumps({"vni100": "up"}), {"vni100"}) == {}
    with pytest.raises(ParseError) as err:
        parse_interfaces_up("{oops", {"vni100"})
    assert str(err.value).startswith("show interface json: malformed JSON")


def test_sample_labels_are_the_vni_its_type_and_its_interface() -> None:
    _, result = view(answers())
    assert result.samples[0] == Sample.of("rackpulse_evpn_vni_up", 1, vni="100", type="L2", interface="vni100")
