"""3G/LTE modems through mmcli: the parser on outputs written from ModemManager's documented
keys (3G HSPA, LTE, no SIM, extended signal on and off), and the collector over a stand-in
mmcli and a bonding tree: each modem beside its bond slave, named by IMEI across re-attaches,
gone when ModemManager no longer lists it. ModemManager cannot run here (no modem, no D-Bus
system bus in the test machine), so no real peer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collectors.base import CommandNotFound, CommandResult, NoData, ParseError
from collectors.findings import BAD, Judging
from collectors.network.modems.collector import ModemsCollector
from collectors.network.modems.config import ModemsConfig
from collectors.network.modems.findings import findings
from collectors.network.modems.parse import parse_modem, parse_modem_list, parse_signal
from tests.paths import FIXTURES

DIR = FIXTURES / "modems"
UMTS_IMEI, LTE_IMEI, NO_SIM_IMEI = "356938035643809", "353533102817453", "861536030196001"


def read(name: str) -> str:
    return (DIR / name).read_text()


def test_a_3g_modem_parses_with_its_imei_device_ports_and_registration() -> None:
    m = parse_modem(read("mmcli_modem_umts.json"))
    assert (m.imei, m.key, m.state, m.registration, m.operator_name) == (
        UMTS_IMEI, UMTS_IMEI, "connected", "home", "Vodafone.de")
    assert (m.access, m.family, m.quality, m.quality_recent) == (["hsdpa", "hsupa"], "3G", 54, True)
    assert m.device.endswith("usb1/1-3") and m.net_ports == ["wwan0"] and m.sim and m.failed_reason is None


def test_an_lte_modem_and_one_without_a_sim_parse_too() -> None:
    lte = parse_modem(read("mmcli_modem_lte.json"))
    assert (lte.family, lte.registration, lte.quality_recent, lte.net_ports) == ("LTE", "roaming", False, ["wwan1"])
    none = parse_modem(read("mmcli_modem_no_sim.json"))
    assert (none.state, none.failed_reason, none.sim, none.registration, none.access, none.family) == (
        "failed", "sim-missing", None, None, [], None)


def test_extended_signal_by_technology_and_only_when_set_up() -> None:
    assert parse_signal(read("mmcli_signal_umts.json")) == (10.0, {"umts": {"rssi": -79.0, "rscp": -91.0,
                                                                              "ecio": -6.5}})
    rate, lte = parse_signal(read("mmcli_signal_lte.json"))
    assert rate == 30 and lte == {"lte": {"rssi": -87.0, "rsrq": -16.0, "rsrp": -113.0, "snr": -1.2}}
    assert parse_signal(read("mmcli_signal_not_set_up.json")) == (0.0, {})


def test_bad_mmcli_output_is_a_clear_error_quoting_it() -> None:
    assert parse_modem_list(read("mmcli_list.json"))[2] == "/org/freedesktop/ModemManager1/Modem/2"
    with pytest.raises(ParseError, match="no modem-list"):
        parse_modem_list('{"modem": {}}')
    with pytest.raises(ParseError, match="not a JSON object: .error: couldn't find modem"):
        parse_modem("error: couldn't find modem")
    with pytest.raises(ParseError, match="malformed JSON"):
        parse_modem('{"modem": {"generic": ')


class StandIn:
    """mmcli answering from a dict of modem number -> (modem JSON, signal JSON)."""

    def __init__(self, modems: dict[str, tuple[str, str]]) -> None:
        self.modems = modems
        self.calls: list[list[str]] = []

    def __call__(self, argv: list[str], timeout: float) -> CommandResult:
        args = argv[1:]
        self.calls.append(args)
        if args == ["-L", "-J"]:
            paths = [f"/org/freedesktop/ModemManager1/Modem/{n}" for n in self.modems]
            return CommandResult(tuple(argv), 0, json.dumps({"modem-list": paths}).encode(), b"")
        if args[0] == "-m" and args[1] in self.modems:
            modem, signal = self.modems[args[1]]
            if args[2:] == ["-J"]:
                return CommandResult(tuple(argv), 0, modem.encode(), b"")
            if args[2:] == ["--signal-get", "-J"]:
                return CommandResult(tuple(argv), 0, signal.encode(), b"")
            if args[2].startswith("--signal-setup="):
                return CommandResult(tuple(argv), 0, b"successfully setup extended signal quality information\n", b"")
        return CommandResult(tuple(argv), 1, b"", b"error: couldn't find modem\n")


def bond_tree(root: Path, down: str | None = None) -> Path:
    slaves = "".join(f"Slave Interface: {s}\nMII Status: {'down' if s == down else 'up'}\nSpeed: 21 Mbps\n"
                     f"Duplex: full\nLink Failure Count: {7 if s == down else 1}\nPermanent HW addr: 02:00:00:00:00:0{i}\n"
                     f"Slave queue ID: 0\n\n" for i, s in enumerate(("eoip1", "eoip2", "eoip3")))
    (root / "proc/net/bonding").mkdir(parents=True, exist_ok=True)
    (root / "proc/net/bonding/bond0").write_text(
        "Ethernet Channel Bonding Driver: v6.1.0\n\nBonding Mode: load balancing (xor)\nMII Status: up\n"
        "MII Polling Interval (ms): 100\n\n" + slaves)
    return root


LINKS = [{"imei": UMTS_IMEI, "interface": "eoip1", "name": "3G link 1"},
         {"imei": LTE_IMEI, "interface": "eoip2", "name": "LTE link"},
         {"imei": NO_SIM_IMEI, "interface": "eoip3"}]


def collector(tmp_path: Path, stand_in: StandIn, **cfg: object) -> ModemsCollector:
    config = ModemsConfig.model_validate({"enabled": True, "links": LINKS} | cfg)
    return ModemsCollector(config, bond_tree(tmp_path, down="eoip2"), stand_in, clock=lambda: 1_800_000_000.0)


def three() -> StandIn:
    return StandIn({"0": (read("mmcli_modem_umts.json"), read("mmcli_signal_umts.json")),
                    "1": (read("mmcli_modem_lte.json"), read("mmcli_signal_lte.json")),
                    "2": (read("mmcli_modem_no_sim.json"), read("mmcli_signal_not_set_up.json"))})


def test_each_modem_sits_beside_its_bond_slave_with_its_signal_and_what_is_wrong(tmp_path: Path) -> None:
    r = collector(tmp_path, three()).collect()
    by = {m.interface: m for m in r.state.modems}
    hspa, lte, nosim = by["eoip1"], by["eoip2"], by["eoip3"]
    assert (hspa.name, hspa.bond, hspa.slave_up, hspa.slave_flaps, hspa.rscp, hspa.poor) == (
        "3G link 1", "bond0", True, 1, -91.0, [])
    assert (lte.slave_up, lte.slave_flaps, lte.rsrp, lte.operator) == (False, 7, -113.0, "Telekom.de")
    assert lte.poor == ["RSRP -113 dBm", "RSRQ -16 dB", "SNR -1.2 dB"]
    assert not nosim.has_sim and nosim.number == "2"
    said = {(f.rule, f.labels["interface"]) for f in findings(r.state, Judging(host="gw"))}
    assert said == {("modem_signal_poor", "eoip2"), ("modem_unregistered", "eoip3")}
    dbm = {(dict(s.labels)["interface"], dict(s.labels)["measure"]): s.value for s in r.samples
           if s.metric == "rackpulse_modem_signal_dbm"}
    assert dbm[("eoip1", "rscp")] == -91.0 and dbm[("eoip2", "rsrp")] == -113.0


def test_a_modem_that_vanishes_is_gone_and_returns_under_another_number_as_itself(tmp_path: Path) -> None:
    stand_in = three()
    c = collector(tmp_path, stand_in)
    c.collect()
    umts = stand_in.modems.pop("0")
    r = c.collect()
    (gone,) = [m for m in r.state.modems if m.gone]
    assert (gone.key, gone.interface, gone.state) == (UMTS_IMEI, "eoip1", "gone")
    (f,) = [f for f in findings(r.state, Judging(host="gw")) if f.rule == "modem_gone"]
    assert f.subject == UMTS_IMEI and "3G link 1" in f.text and "bond0/eoip1" in f.text
    assert {"rackpulse_modem_present"} == {s.metric for s in r.samples if dict(s.labels)["interface"] == "eoip1"}
    stand_in.modems["7"] = (umts[0].replace("/Modem/0", "/Modem/7"), umts[1])  # re-attached: a new number
    r = c.collect()
    (back,) = [m for m in r.state.modems if m.key == UMTS_IMEI]
    assert (back.gone, back.number, back.interface) == (False, "7", "eoip1")
    assert not [f for f in findings(r.state, Judging(host="gw")) if f.rule == "modem_gone"]


def test_a_linked_modem_never_seen_is_gone_from_the_start(tmp_path: Path) -> None:
    r = collector(tmp_path, StandIn({}), links=[*LINKS, {"imei": "352099001761481", "interface": "eoip6"}]).collect()
    assert {m.interface for m in r.state.modems if m.gone} == {"eoip1", "eoip2", "eoip3", "eoip6"}


def test_extended_signal_is_set_up_once_and_only_when_allowed(tmp_path: Path) -> None:
    stand_in = three()
    c = collector(tmp_path, stand_in)
    c.collect()
    assert not any(a[2].startswith("--signal-setup") for a in stand_in.calls if len(a) > 2)
    stand_in = StandIn({"0": (read("mmcli_modem_umts.json"), read("mmcli_signal_not_set_up.json"))})
    c = collector(tmp_path, stand_in, signal_setup=10)
    m = c.collect().state.modems[0]
    assert m.rscp is None and m.quality == 54  # no extended signal yet: the quality percentage only
    c.collect()
    assert [a for a in stand_in.calls if len(a) > 2 and a[2].startswith("--signal")].count(
        ["-m", "0", "--signal-setup=10"]) == 1


def test_no_mmcli_or_no_modemmanager_is_no_data_not_a_failure(tmp_path: Path) -> None:
    def missing(argv: list[str], timeout: float) -> CommandResult:
        raise CommandNotFound("mmcli: not found")

    with pytest.raises(NoData, match="not installed"):
        collector(tmp_path, missing).collect()  # type: ignore[arg-type]

    def no_daemon(argv: list[str], timeout: float) -> CommandResult:
        return CommandResult(tuple(argv), 1, b"", b"error: couldn't find the ModemManager process in the bus\n")

    with pytest.raises(NoData, match="ModemManager is not running"):
        collector(tmp_path, no_daemon).collect()  # type: ignore[arg-type]


def test_one_modem_answering_garbage_leaves_the_others_and_says_which(tmp_path: Path) -> None:
    stand_in = three()
    stand_in.modems["1"] = ("<html>", "")
    r = collector(tmp_path, stand_in).collect()
    assert any(w.startswith("modem 1:") and "not a JSON object" in w for w in r.warnings)
    assert {m.interface for m in r.state.modems if not m.gone} == {"eoip1", "eoip3"}


def test_a_dual_slot_modem_whose_active_slot_is_empty_says_no_sim_and_is_not_judged_on_signal(tmp_path: Path) -> None:
    """ModemManager 1.16+ on a dual-SIM-slot modem keeps a SIM object path while the active slot is
    empty and fails the modem with "sim-missing": that is no SIM, said as such (critical), not a weak
    signal read off a modem that cannot register."""
    doc = json.loads(read("mmcli_modem_no_sim.json"))
    g = doc["modem"]["generic"]
    g["sim"] = "/org/freedesktop/ModemManager1/SIM/0"
    g["sim-slots"] = ["/org/freedesktop/ModemManager1/SIM/0", "--"]
    weak = json.dumps({"modem": {"signal": {"refresh": {"rate": "10"},
                                            "lte": {"rsrp": "-125.00", "rsrq": "-19.00", "rssi": "-101.00",
                                                    "snr": "-5.00"}}}})
    stand_in = StandIn({"2": (json.dumps(doc), weak)})
    r = collector(tmp_path, stand_in).collect()
    (m,) = [m for m in r.state.modems if m.interface == "eoip3"]
    assert not m.has_sim and m.poor == []
    said = [(f.rule, f.level, f.text) for f in findings(r.state, Judging(host="gw")) if f.labels["interface"] == "eoip3"]
    assert said == [("modem_unregistered", BAD, "modem IMEI 861536030196001 (bond0/eoip3) has no SIM card (sim-missing)")]
