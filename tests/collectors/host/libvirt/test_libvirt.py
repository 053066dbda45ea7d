"""libvirt through virsh: libvirt's own mock hypervisor (the test driver, `test:///<node file>`,
one file per scenario: each virsh call reads it afresh) for guests' states and which should run;
the statistics the mock does not keep (CPU, balloon, block, net) from a domstats written from
virsh(1)'s list of keys (tests/fixtures/libvirt/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.base import CollectorError, NoData
from collectors.findings import Judging
from collectors.host.libvirt.collector import LibvirtCollector, view
from collectors.host.libvirt.config import LibvirtConfig
from collectors.host.libvirt.findings import findings
from collectors.host.libvirt.state import LibvirtState
from collectors.host.libvirt.virsh import VirshFormatError, parse_domstats
from tests.paths import FIXTURES

DOMAIN = ('<domain type="test"><name>{name}</name><memory>1048576</memory><vcpu>2</vcpu><os><type>hvm</type></os>'
          '{runstate}</domain>')


def node(path: Path, **states: int) -> str:
    """A node file for the test driver with these guests in these states (1 running, 3 paused,
    5 shut off, 6 crashed)."""
    doms = "".join(DOMAIN.format(name=n, runstate=f"<test:runstate>{s}</test:runstate>") for n, s in states.items())
    path.write_text(f'<node xmlns:test="http://libvirt.org/schemas/domain/test/1.0">{doms}</node>\n')
    return f"test://{path}"


def said(state: LibvirtState) -> list[tuple[str | None, str]]:
    return [(f.rule, f.text) for f in findings(state, Judging(host="h"))]


def test_the_mock_hypervisors_own_guest_is_read_running() -> None:
    r = LibvirtCollector(LibvirtConfig(uri="test:///default")).collect()
    assert isinstance(r.state, LibvirtState)
    assert [(d.name, d.state, d.expected) for d in r.state.domains] == [("test", "running", False)]
    assert {(s.metric, s.value) for s in r.samples} >= {("rackpulse_libvirt_domain_state", 1),
                                                        ("rackpulse_libvirt_domain_expected", 0)}
    assert said(r.state) == []


def test_a_guest_expected_to_run_that_is_shut_off_is_down_until_it_runs_again(tmp_path: Path) -> None:
    f = tmp_path / "node.xml"
    cfg = LibvirtConfig(uri=node(f, web=1, db=5, build=3, scratch=5), expect_running=["db", "web", "gone"],
                        ignore=["scratch*"])
    c = LibvirtCollector(cfg)
    state = c.collect().state
    assert isinstance(state, LibvirtState)
    # the ones not running first; a guest expected and not even defined is as down as can be
    assert [(d.name, d.state) for d in state.domains] == [("build", "paused"), ("db", "shut off"),
                                                          ("gone", "no state"), ("web", "running")]
    assert said(state) == [("libvirt_domain_down", "VM db (expected to run) is shut off"),
                           ("libvirt_domain_down", "VM gone (expected to run) is no state: not defined")]
    node(f, web=1, db=1, build=3)
    cfg2 = LibvirtConfig(uri=cfg.uri, expect_running=["db", "web"])
    state = LibvirtCollector(cfg2).collect().state
    assert isinstance(state, LibvirtState) and said(state) == []  # the paused build VM is nobody's alarm


def test_every_counter_of_a_running_kvm_guest_in_base_units() -> None:
    (nextcloud, win11) = parse_domstats((FIXTURES / "libvirt/written__domstats-raw.txt").read_text())
    v = view(nextcloud, autostart=True, expected=True)
    assert (v.state, v.reason, v.vcpus, v.cpu_seconds) == ("running", "booted", 2, 3418.572000123)
    assert (v.memory_bytes, v.rss_bytes) == (4194304 * 1024, 4302848 * 1024)
    assert (v.block_read_bytes, v.block_write_bytes) == (53345678901, 33234567890)  # both disks
    assert (v.net_rx_bytes, v.net_tx_bytes) == (9876543210, 1234567890)
    w = view(win11, autostart=True, expected=True)
    assert (w.state, w.reason, w.cpu_seconds, w.memory_bytes) == ("shut off", "destroyed", None, None)
    assert said(LibvirtState(domains=[w])) == [("libvirt_domain_down", "VM win11 (set to autostart) is shut off: "
                                                                        "destroyed")]


def test_a_truncated_answer_is_an_error_quoting_its_line() -> None:
    text = (FIXTURES / "libvirt/written__domstats-raw.txt").read_text()[:40]
    with pytest.raises(VirshFormatError, match=r"line 3: key=value under a Domain line expected: '  st'"):
        parse_domstats(text)


def test_no_libvirt_daemon_or_no_virsh_is_no_data(tmp_path: Path) -> None:
    with pytest.raises(NoData, match="no libvirt to connect to at qemu\\+unix"):
        LibvirtCollector(LibvirtConfig(uri=f"qemu+unix:///system?socket={tmp_path}/none.sock")).collect()
    with pytest.raises(NoData, match="command not found"):
        LibvirtCollector(LibvirtConfig(virsh=[str(tmp_path / "virsh")])).collect()


def test_a_node_file_that_cannot_be_read_is_an_error_naming_virshs_words(tmp_path: Path) -> None:
    (tmp_path / "node.xml").write_text("<node><domain")
    with pytest.raises(CollectorError, match="virsh domstats .*: error: failed to connect to the hypervisor"):
        LibvirtCollector(LibvirtConfig(uri=f"test://{tmp_path}/node.xml")).collect()


def test_a_hung_virsh_is_killed_at_the_command_timeout() -> None:
    cfg = LibvirtConfig(virsh=["sh", "-c", "sleep 30", "virsh"], command_timeout=1)
    with pytest.raises(CollectorError, match="timed out after 1s"):
        LibvirtCollector(cfg).collect()


def test_a_guests_page_charts_its_state_memory_and_its_cpu_disk_and_network_as_rates() -> None:
    from app.views import entity_charts

    charts = {c.title: c for c in entity_charts("vm", "backup-vm")}
    assert list(charts) == ["State", "CPU", "Memory", "Memory in use (RSS)", "Network received", "Network sent",
                            "Disk read", "Disk written"]
    assert all(c.labels == {"domain": "backup-vm"} for c in charts.values())
    assert [t for t, c in charts.items() if c.rate] == ["CPU", "Network received", "Network sent", "Disk read",
                                                         "Disk written"]


HOSTILE = """Domain: 'web'
  state.state=1
  state.reason=1
  cpu.time=-5
  balloon.current=nan
  vcpu.current=inf
  net.count=inf
  net.0.rx.bytes=100
  block.count=1000000000000
  block.0.rd.bytes=7
  block.0.wr.bytes=-1
Domain: 'db'
  state.state=1
  net.count=nan
  net.0.rx.bytes=5
"""


def test_numbers_that_are_not_finite_or_below_zero_are_bad_reads_said_once_and_the_rest_is_kept() -> None:
    from collectors.base import CommandResult

    def runner(argv: list[str], timeout: float) -> CommandResult:
        out = HOSTILE if "domstats" in argv else "web\n"
        return CommandResult(tuple(argv), 0, out.encode(), b"")

    r = LibvirtCollector(LibvirtConfig(uri="test:///default"), runner=runner).collect()
    assert isinstance(r.state, LibvirtState)
    web, db = (next(d for d in r.state.domains if d.name == n) for n in ("web", "db"))
    assert (web.cpu_seconds, web.memory_bytes, web.vcpus, web.net_rx_bytes) == (None, None, None, None)
    # a count of 10**12 sums the devices the answer holds (one), at once, not a trillion indices
    assert (web.block_read_bytes, web.block_write_bytes) == (7, None)
    assert db.net_rx_bytes is None and db.state == "running"
    assert len(r.warnings) == 2  # once per guest, every refused key in the one line
    assert r.warnings[0].startswith("guest web: bad reads skipped") and "cpu.time=-5" in r.warnings[0]
    assert "net.count=inf" in r.warnings[0] and "block.0.wr.bytes=-1" in r.warnings[0]
    assert "net.count=nan" in r.warnings[1]
    assert all(s.value >= 0 for s in r.samples)
