"""`virsh domstats --raw` and `virsh list --name` read as virsh(1) documents them (the keys of
virConnectGetAllDomainStats), with every line that is not its format quoted in the error; states
and reasons in libvirt-domain.h's words; a statistic that is no finite count is unknown, not 0;
and the words of a guest that should run and does not."""

from __future__ import annotations

import pytest

from collectors.findings import BAD, WARN, Judging
from collectors.host.libvirt.findings import all_clear, domain_findings, findings
from collectors.host.libvirt.state import DomainView, LibvirtState
from collectors.host.libvirt.virsh import (
    REASONS,
    STATES,
    DomainStats,
    VirshFormatError,
    parse_domstats,
    parse_names,
)

DOMSTATS = """Domain: 'web'
  state.state=1
  state.reason=1
  cpu.time=2500000000
  balloon.current=2097152
  net.count=2
  net.0.rx.bytes=100
  net.1.rx.bytes=50
  net.0.tx.bytes=7
  block.count=1
  block.0.rd.bytes=4096

Domain: 'db'
  state.state=5
  state.reason=2
"""


def test_each_domain_with_its_state_reason_and_figures() -> None:
    web, db = parse_domstats(DOMSTATS)
    assert (web.name, web.state_word, web.reason_word) == ("web", "running", "booted")
    assert web.number("cpu.time") == 2.5e9 and web.number("balloon.current") == 2097152.0
    assert web.total("net", "rx.bytes") == 150.0 and web.total("net", "tx.bytes") == 7.0
    assert web.total("block", "rd.bytes") == 4096.0 and web.total("block", "wr.bytes") is None
    assert (db.state_word, db.reason_word, db.values) == ("shut off", "destroyed", {"state.state": "5", "state.reason": "2"})
    assert db.total("net", "rx.bytes") is None  # no net group kept: unknown, not zero


def test_a_count_that_claims_more_devices_than_listed_sums_what_is_there() -> None:
    (d,) = parse_domstats("Domain: 'x'\n  net.count=1000000000000\n  net.0.rx.bytes=5\n  net.x.rx.bytes=9\n")
    assert d.total("net", "rx.bytes") == 5.0


@pytest.mark.parametrize("raw", ["inf", "nan", "-5", "lots"])
def test_a_statistic_that_is_no_finite_count_is_unknown_and_kept_to_be_said(raw: str) -> None:
    (d,) = parse_domstats(f"Domain: 'x'\n  cpu.time={raw}\n")
    assert d.number("cpu.time") is None and d.bad == {"cpu.time": raw}
    assert d.number("missing") is None and "missing" not in d.bad
    assert DomainStats("y", values={"v": "0"}).number("v") == 0.0


@pytest.mark.parametrize(("state", "reason", "words"), [
    (0, 0, ("no state", "reason 0")), (3, 5, ("paused", "I/O error")), (3, 6, ("paused", "watchdog")),
    (6, 1, ("crashed", "panicked")), (7, 0, ("suspended", "unknown")), (9, 0, ("state 9", "reason 0")),
    (5, 99, ("shut off", "reason 99")), (1, -1, ("running", "reason -1")), (-1, 0, ("state -1", "reason 0")),
])
def test_states_and_reasons_in_libvirts_words(state: int, reason: int, words: tuple[str, str]) -> None:
    d = DomainStats("x", state=state, reason=reason)
    assert (d.state_word, d.reason_word) == words
    assert len(STATES) == 8 and REASONS[5][2] == "destroyed"


@pytest.mark.parametrize(("text", "error"), [
    ("Domain: web\n", "line 1: a domain's name in quotes expected: 'Domain: web'"),
    ("Domain: '\n", "line 1: a domain's name in quotes expected: \"Domain: '\""),
    ("  state.state=1\n", "line 1: key=value under a Domain line expected: '  state.state=1'"),
    ("Domain: 'x'\nstate.state=1\n", "line 2: key=value under a Domain line expected: 'state.state=1'"),
    ("Domain: 'x'\n  novalue\n", "line 2: key=value under a Domain line expected: '  novalue'"),
    ("Domain: 'x'\n  state.state=up\n", "line 2: a number expected: '  state.state=up'"),
    ("Domain: 'x'\n\n  state.reason=z\n", "line 3: a number expected: '  state.reason=z'"),
])
def test_a_line_that_is_not_the_format_is_an_error_quoting_it(text: str, error: str) -> None:
    with pytest.raises(VirshFormatError) as err:
        parse_domstats(text)
    assert str(err.value) == error


def test_an_empty_answer_is_no_domains_and_a_list_is_one_name_a_line() -> None:
    assert parse_domstats("") == [] and parse_domstats("\n\n") == []
    assert parse_domstats("Domain: ''\n")[0].name == ""
    assert parse_names("web\n  db \n\n") == ["web", "db"]


def view(**change: object) -> DomainView:
    return DomainView(**{"name": "web", "state": "running", "reason": "booted", **change})  # type: ignore[arg-type]


@pytest.mark.parametrize(("change", "text"), [
    ({"state": "shut off", "reason": "destroyed", "expected": True, "autostart": True},
     "VM web (set to autostart) is shut off: destroyed"),
    ({"state": "shut off", "reason": "unknown", "expected": True}, "VM web (expected to run) is shut off"),
    ({"state": "paused", "reason": "I/O error", "expected": True}, "VM web (expected to run) is paused: I/O error"),
])
def test_a_guest_that_should_run_and_does_not_says_why(change: dict[str, object], text: str) -> None:
    (f,) = domain_findings(view(**change))
    assert (f.level, f.text, f.rule, f.subject, f.labels) == (BAD, text, "libvirt_domain_down", "web", {"domain": "web"})


@pytest.mark.parametrize(("state", "reason", "said"), [
    ("crashed", "panicked", True), ("paused", "I/O error", True), ("paused", "watchdog", True),
    ("paused", "crashed", True), ("paused", "user", False), ("shut off", "shut down", False), ("running", "booted", False),
])
def test_a_guest_nobody_expects_is_said_only_when_it_crashed_or_paused_on_a_fault(state: str, reason: str,
                                                                                 said: bool) -> None:
    found = domain_findings(view(state=state, reason=reason))
    assert [(f.level, f.text, f.rule) for f in found] == ([(WARN, f"VM web is {state}: {reason}", None)] if said else [])


def test_the_tile_counts_running_and_stopped_guests() -> None:
    j = Judging(now=0.0)
    assert all_clear(LibvirtState(), j) is None
    assert all_clear(LibvirtState(domains=[view()]), j) == "1 VM running"
    assert all_clear(LibvirtState(domains=[view(), view(name="b"), view(name="c", state="shut off")]), j) == \
        "2 VMs running, 1 stopped"
    assert all_clear(LibvirtState(domains=[view(state="paused")]), j) == "0 VMs running, 1 stopped"
    assert len(findings(LibvirtState(domains=[view(state="crashed", reason="panicked"), view()]), j)) == 1
