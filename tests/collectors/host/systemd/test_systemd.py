"""systemd from written systemctl answers (no systemd runs on the test machine): failed units,
watched services and timers, the nightly backup whose timer went stale."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from collectors.base import CollectorError, CommandNotFound, CommandResult, NoData
from collectors.findings import Judging
from collectors.host.systemd.collector import SystemdCollector
from collectors.host.systemd.config import SystemdConfig
from collectors.host.systemd.findings import findings
from collectors.host.systemd.systemctl import parse_show, timestamp
from tests.paths import FIXTURES

DIR = FIXTURES / "systemd"
NOW = 1795600000.0


class Systemctl:
    """Answers as systemctl would, and writes down what it was asked."""

    def __init__(self, restarts: int = 5) -> None:
        self.asked: list[list[str]] = []
        self.restarts = restarts

    def __call__(self, argv: Sequence[str], timeout: float) -> CommandResult:
        args = list(argv[1:])
        self.asked.append(args)
        if args[0] == "list-units":
            return CommandResult(tuple(argv), 0, (DIR / "list-units.json").read_bytes(), b"")
        text = (DIR / "show-watched.txt").read_text() + "\n" + (DIR / "show-backup-service.txt").read_text()
        blocks = [b for b in text.replace("NRestarts=5", f"NRestarts={self.restarts}").split("\n\n")
                  if b.split("\n", 1)[0].removeprefix("Id=") in args]  # the units asked for, as systemctl does
        return CommandResult(tuple(argv), 0, "\n\n".join(blocks).encode(), b"")


def collect(watch: list[str], runner: Systemctl | None = None, now: float = NOW):  # type: ignore[no-untyped-def]
    c = SystemdCollector(SystemdConfig(watch=watch), runner or Systemctl(), clock=lambda: now)
    return c, c.collect()


def said(state) -> list[tuple[str, str, str]]:  # type: ignore[no-untyped-def]
    return sorted((f.rule, f.subject, f.text) for f in findings(state, Judging(now=NOW)))


def test_a_failed_unit_a_stale_timer_and_a_fine_one_are_told_apart() -> None:
    _, r = collect(["nginx.service", "*.timer"])
    assert said(r.state) == [
        ("timer_stale", "backup-nightly.timer", "timer backup-nightly.timer: backup-nightly.service last succeeded "
                                                "29 h 35 min ago (stale after 26 h 0 min)"),
        ("unit_failed", "photo-sync.service", "systemd unit photo-sync.service failed (exit-code, exit status 23): "
                                              "journalctl -u photo-sync.service"),
    ]
    units = {u.unit: u for u in r.state.units}
    assert units["photo-sync.timer"].stale is False  # it ran 20 minutes ago; its service failing is its own finding
    assert units["backup-nightly.timer"].next_trigger == NOW + 4 * 3600


def test_failed_units_are_shown_even_when_not_watched_and_only_watched_ones_get_asked_about() -> None:
    runner = Systemctl()
    _, r = collect([], runner)
    assert [u.unit for u in r.state.units] == ["photo-sync.service"]
    assert runner.asked[1][-1] == "photo-sync.service" and len(runner.asked) == 2


def test_restarts_within_ten_minutes_past_the_limit_are_unit_restarting() -> None:
    runner = Systemctl(restarts=5)
    c = SystemdCollector(SystemdConfig(watch=["nginx.service"]), runner, clock=lambda: now[0])
    now = [NOW]
    c.collect()
    runner.restarts, now[0] = 9, NOW + 300
    state = c.collect().state
    assert [f.text for f in findings(state, Judging(now=now[0])) if f.rule == "unit_restarting"] == [
        "systemd unit nginx.service restarted 4 times in 10 minutes"]


def test_a_new_timer_that_never_ran_is_not_stale_until_stale_after_has_passed() -> None:
    blocks = parse_show("Id=new.timer\nActiveState=active\nSubState=waiting\nUnit=new.service\n"
                        f"ActiveEnterTimestamp=@{NOW - 3600:.0f}\nLastTriggerUSec=\n")
    assert blocks[0].last_trigger is None and blocks[0].active_since == NOW - 3600


@pytest.mark.parametrize(("raw", "value"), [("@1795600000", 1795600000.0), ("", None), ("n/a", None),
                                            ("Tue 2026-11-24 03:00:00 UTC", None), ("@0", None)])
def test_timestamps_are_read_in_the_unix_form_and_anything_else_is_unknown(raw: str, value: float | None) -> None:
    assert timestamp(raw) == value


def test_no_systemd_running_is_source_absent_and_a_bad_answer_fails_with_the_line() -> None:
    def not_booted(argv: Sequence[str], timeout: float) -> CommandResult:
        return CommandResult(tuple(argv), 1, b"", b"System has not been booted with systemd as init system (PID 1). "
                                                   b"Can't operate.\nFailed to connect to bus: Host is down\n")

    def missing(argv: Sequence[str], timeout: float) -> CommandResult:
        raise CommandNotFound("systemctl: not found")

    with pytest.raises(NoData, match="systemd is not running here"):
        SystemdCollector(SystemdConfig(), not_booted).collect()
    with pytest.raises(NoData, match="no systemd here"):
        SystemdCollector(SystemdConfig(), missing).collect()
    with pytest.raises(CollectorError, match="not Key=value: 'garbage'"):
        parse_show("Id=x.service\ngarbage\n")
