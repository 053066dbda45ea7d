"""Updates with the real apt (Debian's apt-get) against repositories made in the test's own folder:
a Packages index written by hand (apt's simulation reads the index only, so no .deb is needed),
one archive labelled as Debian's security archive, a dpkg status file of the test's own, and
lists, cache and sources of its own (`-o Dir::…`), so the machine's own apt is never touched.
Reboots from host trees; dnf from the output dnf(8) documents (no dnf here), said so."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from app.alerting.conditions import BUILTIN, Conditions
from app.alerting.engine import evaluate
from app.scheduler import Snapshot
from collectors.base import CommandResult, NoData, ParseError, run_command
from collectors.findings import Judging
from collectors.host.updates import findings
from collectors.host.updates.collector import UpdatesCollector
from collectors.host.updates.config import UpdatesConfig
from collectors.host.updates.parse import (
    parse_apt_simulation,
    parse_dnf_check_update,
    parse_dnf_security,
    version_key,
)
from collectors.host.updates.state import UpdatesState

DAY = 86400.0


def package(name: str, version: str) -> str:
    return (f"Package: {name}\nVersion: {version}\nArchitecture: all\nMaintainer: t <t@example.org>\n"
            f"Filename: ./{name}_{version}_all.deb\nSize: 1000\nSHA256: {'0' * 64}\nDescription: test\n\n")


def installed(name: str, version: str) -> str:
    return (f"Package: {name}\nStatus: install ok installed\nPriority: optional\nSection: misc\n"
            f"Maintainer: t <t@example.org>\nArchitecture: all\nVersion: {version}\nDescription: test\n\n")


@pytest.fixture
def apt(tmp_path: Path) -> list[str]:
    """apt-get pointed at the test's own status, sources, lists and cache, with its lists updated."""
    for d in ("main", "security", "lists/partial", "cache/archives/partial"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "status").write_text(installed("hello", "1.0-1") + installed("libfoo1", "2.0-1"))
    (tmp_path / "main/Packages").write_text(package("hello", "1.1-1"))
    (tmp_path / "main/Release").write_text("Origin: Debian\nLabel: Debian\nSuite: stable\nCodename: bookworm\n")
    (tmp_path / "security/Packages").write_text(package("libfoo1", "2.0-1+deb12u1"))
    (tmp_path / "security/Release").write_text("Origin: Debian\nLabel: Debian-Security\nSuite: stable-security\n"
                                               "Codename: bookworm-security\n")
    (tmp_path / "sources.list").write_text(f"deb [trusted=yes] file://{tmp_path}/main ./\n"
                                           f"deb [trusted=yes] file://{tmp_path}/security ./\n")
    argv = ["apt-get", "-o", f"Dir::State::status={tmp_path}/status", "-o", f"Dir::Etc::SourceList={tmp_path}/sources.list",
            "-o", "Dir::Etc::SourceParts=/dev/null", "-o", f"Dir::State::Lists={tmp_path}/lists",
            "-o", f"Dir::Cache={tmp_path}/cache", "-o", "Dir::Etc::Preferences=/dev/null",
            "-o", "Dir::Etc::PreferencesParts=/dev/null", "-o", "Debug::NoLocking=1"]
    subprocess.run([*argv, "-q", "update"], check=True, capture_output=True, timeout=120)
    return argv


def collector(apt: list[str], root: Path, **kw: object) -> UpdatesCollector:
    cfg = UpdatesConfig(manager="apt", apt_get=apt, lists_dir=str(root / "lists"), **kw)  # type: ignore[arg-type]
    return UpdatesCollector(cfg, lambda argv, timeout: run_command(argv, timeout), Path("/"))


def conditions(state: UpdatesState, now: float, previous: dict | None = None) -> list:  # type: ignore[type-arg]
    snap = Snapshot(host="nas")
    snap.states["updates"] = state
    return Conditions().build(snap, previous=previous or {}, now=now)


def test_real_apt_shows_the_pending_and_security_updates_by_name_and_the_grace_counts_from_first_seen(
        apt: list[str], tmp_path: Path) -> None:
    clock = [time.time()]
    c = collector(apt, tmp_path)
    c.clock = lambda: clock[0]
    state = c.collect().state
    assert isinstance(state, UpdatesState)
    assert [(p.name, p.current, p.new, p.origin, p.security) for p in state.pending] == [
        ("hello", "1.0-1", "1.1-1", "Debian:stable", False),
        ("libfoo1", "2.0-1", "2.0-1+deb12u1", "Debian-Security:stable-security", True)]
    assert state.lists_age is not None and state.lists_age < 600  # the lists `apt-get update` just wrote
    assert conditions(state, clock[0]) == []  # within its three days' grace
    assert findings.all_clear(state, Judging(now=clock[0])) == "2 updates pending, 1 for security"

    clock[0] += 3 * DAY + 60
    later = c.collect().state
    assert isinstance(later, UpdatesState)
    conds = conditions(later, clock[0])
    assert [(x.rule, x.subject, x.summary) for x in conds] == [
        ("updates_security_pending", "security", "1 security update pending for 3 days: libfoo1")]
    # a restart keeps when it was first seen
    again = collector(apt, tmp_path)
    again.restore(later)
    again.clock = lambda: clock[0]
    assert [p.since for p in again.collect().state.pending] == [p.since for p in later.pending]  # type: ignore[union-attr]


def test_a_reboot_owed_is_one_alert_per_transition_naming_its_packages(apt: list[str], tmp_path: Path) -> None:
    root = tmp_path / "host"
    (root / "proc/sys/kernel").mkdir(parents=True)
    (root / "proc/sys/kernel/osrelease").write_text("6.1.0-26-amd64\n")
    (root / "lib/modules/6.1.0-26-amd64").mkdir(parents=True)
    c = UpdatesCollector(UpdatesConfig(manager="apt", apt_get=apt), lambda argv, timeout: run_command(argv, timeout),
                         root)
    now = time.time()
    state = c.collect().state
    assert isinstance(state, UpdatesState) and not state.reboot_required and state.running_kernel == "6.1.0-26-amd64"
    (root / "run").mkdir()
    (root / "run/reboot-required").write_text("*** System restart required ***\n")
    (root / "run/reboot-required.pkgs").write_text("libc6\nlinux-image-6.1.0-28-amd64\nlibc6\n")
    (root / "lib/modules/6.1.0-28-amd64").mkdir()
    owed = c.collect().state
    assert isinstance(owed, UpdatesState)
    conds = [x for x in conditions(owed, now) if x.rule == "reboot_required"]
    assert [x.summary for x in conds] == [
        "a reboot is owed (for libc6, linux-image-6.1.0-28-amd64): /run/reboot-required is there; kernel "
        "6.1.0-28-amd64 is installed, 6.1.0-26-amd64 is running"]
    states, events = evaluate(conds, BUILTIN, {}, now)
    assert [e.kind for e in events] == ["firing"]
    _, events = evaluate(conditions(c.collect().state, now + 60), BUILTIN, states, now + 60)  # type: ignore[arg-type]
    assert [e.kind for e in events if e.alert.rule == "reboot_required"] == []  # once per transition
    (root / "run/reboot-required").unlink()  # rebooted into the new kernel
    (root / "proc/sys/kernel/osrelease").write_text("6.1.0-28-amd64\n")
    _, events = evaluate(conditions(c.collect().state, now + 120), BUILTIN, states, now + 120)  # type: ignore[arg-type]
    assert [(e.kind, e.alert.rule) for e in events] == [("resolved", "reboot_required")]


def test_a_newer_kernel_alone_owes_a_reboot_where_no_flag_file_is_written(tmp_path: Path) -> None:
    (tmp_path / "proc/sys/kernel").mkdir(parents=True)
    (tmp_path / "proc/sys/kernel/osrelease").write_text("6.8.0-9-generic\n")
    (tmp_path / "boot").mkdir()
    for k in ("6.8.0-9-generic", "6.8.0-10-generic"):
        (tmp_path / "boot" / f"vmlinuz-{k}").write_text("")
    answer = CommandResult(("apt-get",), 0, b"0 upgraded, 0 newly installed, 0 to remove and 0 not upgraded.\n", b"")
    state = UpdatesCollector(UpdatesConfig(manager="apt"), lambda argv, timeout: answer, tmp_path).collect().state
    assert isinstance(state, UpdatesState)
    assert state.reboot_why == ["kernel 6.8.0-10-generic is installed, 6.8.0-9-generic is running"]
    assert version_key("6.1.0-28-amd64") > version_key("6.1.0-9-amd64")


def test_stale_lists_and_a_host_without_a_package_manager(apt: list[str], tmp_path: Path) -> None:
    import os

    old = time.time() - 9 * DAY
    for f in (tmp_path / "lists").iterdir():
        os.utime(f, (old, old))
    state = collector(apt, tmp_path).collect().state
    assert isinstance(state, UpdatesState)
    found = [f.text for f in findings.findings(state, Judging(now=time.time())) if f.rule == "package_lists_stale"]
    assert found == ["the package lists are 9 days old (older than 7 days): the nightly `apt update` has stopped"]
    with pytest.raises(NoData, match="neither apt-get nor dnf"):
        UpdatesCollector(UpdatesConfig(apt_get=["/nonexistent/apt-get"], dnf=["/nonexistent/dnf"])).collect()


def test_dnf_from_its_documented_output() -> None:
    # dnf(8): check-update exits 100 and prints "name.arch version repo"; updateinfo list --security
    # prints "advisory severity/Sec. nvra" (written here from the man page: no dnf on this machine)
    check = ("Last metadata expiration check: 0:12:01 ago on Fri 04 Dec 2026 09:00:00.\n\n"
             "openssl.x86_64          1:3.1.4-4.fc39          updates\n"
             "kernel.x86_64           6.11.5-200.fc40         updates\n"
             "Obsoleting Packages\ngrub2-tools.x86_64   1:2.06-121.fc39   updates\n")
    pending = parse_dnf_check_update(check)
    assert [(p.name, p.new, p.origin) for p in pending] == [("openssl", "1:3.1.4-4.fc39", "updates"),
                                                            ("kernel", "6.11.5-200.fc40", "updates")]
    assert parse_dnf_security("FEDORA-2026-1a2b3c4d5e Important/Sec. openssl-3.1.4-4.fc39.x86_64\n") == {"openssl"}
    results = {"check-update": CommandResult(("dnf",), 100, check.encode(), b""),
               "updateinfo": CommandResult(("dnf",), 0, b"FEDORA-2026-1a2b3c4d5e Important/Sec. openssl-3.1.4-4.fc39.x86_64\n", b"")}
    state = UpdatesCollector(UpdatesConfig(manager="dnf"), lambda argv, timeout: results[argv[1]]).collect().state
    assert isinstance(state, UpdatesState)
    assert [(p.name, p.security) for p in state.pending] == [("openssl", True), ("kernel", False)]


def test_an_inst_line_apt_never_prints_is_an_error_quoting_it() -> None:
    with pytest.raises(ParseError, match="an Inst line not understood: 'Inst hello 1.1'"):
        parse_apt_simulation("Inst hello 1.1\n")
    pending, kept = parse_apt_simulation("The following packages have been kept back:\n  linux-image-amd64 zfs-dkms\n"
                                         "Inst new-dep (1.0 Debian:12/stable [amd64])\n")
    assert kept == ["linux-image-amd64", "zfs-dkms"] and pending[0].current is None
