"""iperf3: its JSON reports parsed, then scheduled tests against a real `iperf3 -s` started here."""

from __future__ import annotations

import dataclasses
import subprocess
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from app.config import load_config
from collectors.base import CommandResult, NoData, ParseError
from collectors.findings import Judging
from collectors.probes.throughput.collector import ThroughputCollector
from collectors.probes.throughput.config import ThroughputConfig
from collectors.probes.throughput.findings import findings
from collectors.probes.throughput.iperf3 import Iperf3Error, Iperf3Result, parse_iperf3
from collectors.probes.throughput.state import ThroughputState
from tests.agent_hosts import free_port
from tests.paths import FIXTURES
from tests.peers import listening

FIX = FIXTURES / "iperf3"


@pytest.mark.parametrize(("name", "expected"), [
    ("openwisp-monitoring__iperf3__tcp.json", Iperf3Result("TCP", False, 10.000272, 44042377604.16823,
                                                           44042139781.797935, 0)),
    ("iperf3-python__results.json", Iperf3Result("TCP", False, 13.0001, 935992000.0, 934268000.0, 0)),
    ("yardstick__iperf3_sample_output.json", Iperf3Result("TCP", False, 10.0112, 156181000.0, 154521000.0, 81)),
    ("openwisp-monitoring__iperf3__udp.json", Iperf3Result("UDP", False, 10.000115, None, 1048569.7085817485, None, 0.0)),
])
def test_iperf3_reports_parse_to_whole_records(name: str, expected: Iperf3Result) -> None:
    got = parse_iperf3((FIX / name).read_text())
    assert dataclasses.replace(got, seconds=round(got.seconds, 6)) == expected


def test_a_failed_run_is_iperf3s_own_message_and_a_usage_text_is_quoted() -> None:
    with pytest.raises(Iperf3Error, match=r"^iperf3: unable to connect to server: Connection refused$"):
        parse_iperf3((FIX / "openwisp-monitoring__iperf3__error_connection-refused.json").read_text())
    with pytest.raises(ParseError, match=r"iperf3 did not print JSON: 'Usage: iperf3 \[-s\|-c host\] \[options\]'"):
        parse_iperf3((FIX / "openwisp-monitoring__iperf3__usage-error.txt").read_text())
    for text in ("", "[1, 2]", '{"start": {}, "end": {}}', '{"end": {"sum_received": {"bits_per_second": "x"}}}'):
        with pytest.raises(ParseError):
            parse_iperf3(text)


def test_the_config_takes_a_list_of_tests_or_a_section() -> None:
    as_list = load_config(None, {"collectors": {"throughput": [{"name": "wan", "server": "10.0.0.1"}]}})
    assert [t.name for t in as_list.collectors.throughput.tests] == ["wan"]
    assert as_list.collectors.throughput.tests[0].interval == 6 * 3600
    section = load_config(None, {"collectors": {"throughput": {"iperf3": ["/opt/iperf3"], "tests": [
        {"name": "vpn", "server": "10.8.0.1", "reverse": True, "baseline_mbps": 90}]}}})
    assert section.collectors.throughput.iperf3 == ["/opt/iperf3"]
    with pytest.raises(Exception, match="string_pattern_mismatch|should match pattern"):
        ThroughputConfig(tests=[{"name": "a", "server": "-R"}])
    with pytest.raises(Exception, match="unique"):
        ThroughputConfig(tests=[{"name": "a", "server": "x"}, {"name": "a", "server": "y"}])


@pytest.fixture(scope="module")
def iperf3_server() -> Iterator[int]:
    port = free_port()
    proc = subprocess.Popen(["iperf3", "-s", "-p", str(port), "-B", "127.0.0.1"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    # Listening is read from /proc, not probed: iperf3 takes a connection as a client and a probe
    # that hangs up left it resetting the test's own control connection on a loaded machine.
    deadline = time.monotonic() + 10
    while not listening(port) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    try:
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.peers
def test_a_real_iperf3_test_both_ways_against_its_baseline(iperf3_server: int) -> None:
    cfg = ThroughputConfig(tests=[
        {"name": "lan up", "server": "127.0.0.1", "port": iperf3_server, "duration": 1, "baseline_mbps": 1e9},
        {"name": "lan down", "server": "127.0.0.1", "port": iperf3_server, "duration": 1, "reverse": True}])
    coll = ThroughputCollector(cfg)
    result = coll.collect()
    tests = {t.name: t for t in result.state.tests}
    up, down = tests["lan up"], tests["lan down"]
    assert up.ok and down.ok and up.mbps > 10 and down.mbps > 10  # loopback: gigabits
    assert (up.direction, down.direction) == ("upload", "download")
    assert up.retransmits is not None and up.ratio is not None and up.ratio < 0.5  # a 1 Pbit/s baseline
    said = [f.text for f in findings(result.state, Judging())]
    assert len(said) == 1 and said[0].startswith("throughput test lan up (upload, 127.0.0.1:") and "% of its" in said[0]
    got = {(s.metric, dict(s.labels).get("direction")) for s in result.samples}
    assert {("rackpulse_throughput_bytes_per_second", "upload"), ("rackpulse_throughput_bytes_per_second", "download"),
            ("rackpulse_throughput_retransmits", None), ("rackpulse_throughput_baseline_ratio", None)} <= got


@pytest.mark.peers
def test_a_server_that_is_not_there_is_iperf3s_message_and_the_result_stays_until_the_next_run() -> None:
    cfg = ThroughputConfig(tests=[{"name": "gone", "server": "127.0.0.1", "port": free_port(), "duration": 1}])
    clock = [1000.0]
    coll = ThroughputCollector(cfg, clock=lambda: clock[0])
    first = coll.collect().state.tests[0]
    assert not first.ok and "Connection refused" in first.error and first.error.startswith("iperf3: ")
    assert [f.text for f in findings(ThroughputState(tests=[first]), Judging())] == [
        f"throughput test gone (127.0.0.1:{cfg.tests[0].port}) failed: {first.error}"]
    clock[0] += 60
    again = coll.collect().state.tests[0]
    assert again.ran_at == 1000.0 and again.next_at == 1000.0 + 6 * 3600  # not due: not run again


def fake_iperf3(lock: threading.Lock, active: list[int], most: list[int]) -> Callable[[list[str], float], CommandResult]:
    """A stand-in for iperf3 that takes a moment and counts how many run at once."""
    report = (FIX / "iperf3-python__results.json").read_bytes()

    def runner(argv: list[str], timeout: float) -> CommandResult:
        with lock:
            active[0] += 1
            most[0] = max(most[0], active[0])
        time.sleep(0.05)
        with lock:
            active[0] -= 1
        return CommandResult(tuple(argv), 0, report, b"")

    return runner


def test_tests_never_overlap_on_one_host_even_from_two_collectors() -> None:
    lock, active, most = threading.Lock(), [0], [0]
    runner = fake_iperf3(lock, active, most)
    cfg = ThroughputConfig(tests=[{"name": f"t{i}", "server": "10.0.0.1"} for i in range(3)])
    a, b = ThroughputCollector(cfg, runner), ThroughputCollector(cfg, runner)
    threads = [threading.Thread(target=c.collect) for c in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1 and len(a.collect().state.tests) == 3


def test_a_restart_keeps_each_tests_schedule_and_no_tests_is_no_data() -> None:
    lock, active, most = threading.Lock(), [0], [0]
    calls: list[int] = []
    inner = fake_iperf3(lock, active, most)

    def runner(argv: list[str], timeout: float) -> CommandResult:
        calls.append(1)
        return inner(argv, timeout)

    cfg = ThroughputConfig(tests=[{"name": "wan", "server": "10.0.0.1", "interval": 3600}])
    state = ThroughputCollector(cfg, runner, clock=lambda: 5000.0).collect().state
    restarted = ThroughputCollector(cfg, runner, clock=lambda: 5000.0 + 1800)
    restarted.restore(state)
    assert restarted.collect().state.tests[0].ran_at == 5000.0 and len(calls) == 1
    later = ThroughputCollector(cfg, runner, clock=lambda: 5000.0 + 3600)
    later.restore(state)
    assert later.collect().state.tests[0].ran_at == 8600.0 and len(calls) == 2
    with pytest.raises(NoData):
        ThroughputCollector(ThroughputConfig()).collect()
