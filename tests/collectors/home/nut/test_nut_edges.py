"""NUT at its edges: upsd's replies and UPS-MIB's values in every form, each error in its exact words."""

from __future__ import annotations

import pytest

from collectors.base import CollectorError, ParseError
from collectors.home.nut.collector import UpsState, parse_list_ups, parse_list_var, ups_state
from collectors.home.nut.upsmib import ups_mib_to_nut


@pytest.mark.parametrize("lines, message", [
    (["ERR DRIVER-NOT-CONNECTED"], "ups: Driver not connected (the UPS driver is not running or lost the UPS)"),
    (["ERR SOMETHING-NEW"], "ups: SOMETHING-NEW"),
    ([], "empty reply to LIST VAR"),
    (["BEGIN LIST VAR ups", "END LIST VAR other"],
     "ups: LIST VAR reply not framed by BEGIN/END: 'BEGIN LIST VAR ups' ... 'END LIST VAR other'"),
    (["BEGIN LIST VAR ups", 'VAR other battery.charge "1"', "END LIST VAR ups"],
     "ups: unexpected line in LIST VAR: 'VAR other battery.charge \"1\"'"),
])
def test_each_bad_list_var_reply_is_an_error_in_these_words(lines: list[str], message: str) -> None:
    with pytest.raises(CollectorError) as err:
        parse_list_var(lines, "ups")
    assert str(err.value) == message


def test_list_ups_names_every_ups_with_its_description() -> None:
    assert parse_list_ups(["BEGIN LIST UPS", 'UPS ups12v "12 V \\"rack\\" battery"', 'UPS eaton ""',
                           "END LIST UPS"]) == {"ups12v": '12 V "rack" battery', "eaton": ""}


@pytest.mark.parametrize("lines, error, message", [
    (["ERR ACCESS-DENIED"], CollectorError, "access denied (check upsd.users and the login in the config)"),
    (["ERR ODD"], CollectorError, "ERR ODD"),
    ([], ParseError, "LIST UPS reply not framed by BEGIN/END: []"),
    (["BEGIN LIST UPS"], ParseError, "LIST UPS reply not framed by BEGIN/END: ['BEGIN LIST UPS']"),
    (["BEGIN LIST UPS", "UPS x", "END LIST UPS"], ParseError, "unexpected line in LIST UPS: 'UPS x'"),
])
def test_each_bad_list_ups_reply_is_an_error_in_these_words(lines: list[str], error: type[Exception],
                                                            message: str) -> None:
    with pytest.raises(error) as err:
        parse_list_ups(lines)
    assert str(err.value) == message and type(err.value) is error


def test_a_ups_state_carries_its_flags_and_reads_numbers_that_are_numbers() -> None:
    st = ups_state("ups12v", {"ups.status": "OB DISCHRG LB", "battery.charge": "9", "battery.runtime": "n/a"})
    assert st == UpsState("ups12v", frozenset({"OB", "DISCHRG", "LB"}), st.vars)
    assert (st.num("battery.charge"), st.num("battery.runtime"), st.num("ups.load")) == (9.0, None, None)
    assert ups_state("u", {}).flags == frozenset()


def test_a_ups_whose_driver_has_not_reported_yet_says_so() -> None:
    with pytest.raises(CollectorError) as err:
        ups_state("ups12v", {"ups.status": "WAIT"})
    assert str(err.value) == "ups12v: upsd is still waiting for the driver's first data (ups.status WAIT)"


@pytest.mark.parametrize("source, battery, status", [
    (2, 2, "OFF"), (3, 2, "OL"), (4, 1, "OL BYPASS"), (5, 2, "OB DISCHRG"), (6, 2, "OL BOOST"), (7, 2, "OL TRIM"),
    (3, 3, "OL LB"), (5, 4, "OB DISCHRG LB"), (1, 3, "LB"),
])
def test_every_ups_mib_output_source_maps_to_nuts_status(source: int, battery: int, status: str) -> None:
    assert ups_mib_to_nut({"output_source": source, "battery_status": battery}) == {"ups.status": status}


def test_ups_mib_values_are_scaled_like_nuts_and_missing_ones_left_out() -> None:
    got = ups_mib_to_nut({"output_source": 3, "battery_status": 2, "charge_remaining": 100, "battery_voltage": 136,
                          "input_voltage": 230, "output_voltage": 229, "output_load": 17, "minutes_remaining": 0})
    assert got == {"ups.status": "OL", "battery.charge": "100", "battery.voltage": "13.6", "input.voltage": "230",
                   "output.voltage": "229", "ups.load": "17", "battery.runtime": "0"}


@pytest.mark.parametrize("source", [None, 1, 8])
def test_an_agent_without_a_usable_output_source_is_not_a_ups(source: int | None) -> None:
    with pytest.raises(CollectorError) as err:
        ups_mib_to_nut({"output_source": source, "battery_status": 2})
    assert str(err.value) == f"UPS-MIB: unusable upsOutputSource {source!r} (is this a UPS-MIB agent?)"

