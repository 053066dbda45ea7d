"""How Proxmox's backups are judged, as pure functions over typed records: a vzdump task that ended
"WARNINGS: n" did its job; a failed task counts only when it is newer than the guest's newest
backup (a later run that worked puts it behind); PBS's `snapshot_max_age` is the age a snapshot
may reach, not the default 26 hours."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from collectors.findings import Judging
from collectors.host.pbs.findings import DEFAULT_MAX_AGE, findings
from collectors.host.pbs.state import PbsDatastore, PbsGroup, PbsState
from collectors.host.proxmox.collector import backed_up
from collectors.host.proxmox.parse import task_failed
from collectors.host.proxmox.state import PveBackup, PveGuest, PveTask

NOW = 1_800_000_000.0
HOUR = 3600.0


@pytest.mark.parametrize(("status", "end", "failed"), [
    ("OK", NOW, False),
    ("WARNINGS: 2", NOW, False),  # done, with something said in its log
    ("WARNINGS: 1", NOW, False),
    ("job errors", NOW, True),
    ("unexpected status", NOW, True),
    ("interrupted by signal", NOW, True),
    ("job errors", None, False),  # still running: not failed yet
    ("", NOW, False),  # no status read
])
def test_a_vzdump_task_has_failed_only_when_it_ended_with_an_error(status: str, end: float | None, failed: bool) -> None:
    assert task_failed(PveTask(type="vzdump", id="101", node="pve", user="root@pam", start=NOW - 60, end=end,
                               status=status)) is failed


def guest() -> PveGuest:
    return PveGuest(vmid="101", name="nextcloud", type="qemu", node="pve", status="running")


def task(start: float, status: str) -> PveTask:
    return PveTask(type="vzdump", id="101", node="pve", user="root@pam", start=start, end=start + 300, status=status)


def test_a_failed_backup_task_newer_than_the_newest_backup_is_the_guests_failure() -> None:
    newest = PveBackup(time=NOW - 26 * HOUR, storage="local")
    g = backed_up(guest(), newest, True, [task(NOW - 2 * HOUR, "job errors")])
    assert g.backup_failed == "job errors"
    assert g.backup_failed_at == NOW - 2 * HOUR


def test_a_failed_backup_task_older_than_the_newest_backup_is_behind_it_and_not_counted() -> None:
    newest = PveBackup(time=NOW - 1 * HOUR, storage="local")
    g = backed_up(guest(), newest, True, [task(NOW - 25 * HOUR, "job errors")])
    assert g.backup_failed is None and g.backup_failed_at is None


def test_only_the_guests_newest_task_is_judged_a_warning_run_after_a_failure_clears_it() -> None:
    newest = PveBackup(time=NOW - 30 * HOUR, storage="local")
    g = backed_up(guest(), newest, True, [task(NOW - 1 * HOUR, "WARNINGS: 1"), task(NOW - 25 * HOUR, "job errors")])
    assert g.backup_failed is None


def pbs(snapshot_age: float, max_age: float | None) -> PbsState:
    return PbsState(datastores=[PbsDatastore(name="tank")], snapshot_max_age=max_age,
                    groups=[PbsGroup(store="tank", type="vm", id="101", last_backup=NOW - snapshot_age)])


def stale(state: PbsState) -> list[str]:
    return [f.text for f in findings(state, Judging(now=NOW)) if f.rule == "pbs_snapshot_stale"]


def test_a_snapshot_older_than_the_configured_max_age_is_stale_even_inside_the_default() -> None:
    assert DEFAULT_MAX_AGE > 8 * HOUR
    assert stale(pbs(8 * HOUR, 6 * HOUR)) == ["backup vm/101 on tank: its newest snapshot is 8 h old, older than 6 h"]


def test_a_snapshot_inside_a_longer_configured_max_age_is_not_stale_though_past_the_default() -> None:
    assert stale(pbs(48 * HOUR, 7 * 24 * HOUR)) == []
    assert stale(pbs(48 * HOUR, None)) != []  # the default alone would call it stale


def test_the_demos_failed_backup_task_is_listed_only_while_both_reads_around_it_see_the_old_backup(
        tmp_path: Path) -> None:
    """The collector reads the task list and the storages' contents one after the other: a scene
    written between them made the alert fire saying the last good backup was "2 h old" and
    resolve saying "31 h old". Within a few story seconds of any moment the task is listed, the
    contents say the same stretch (the scene is written about once a story second at speed 4)."""
    import json

    from collectors.host.proxmox.demo import DOWN, FAILING, TASK_MARGIN, write_scene

    def read(t: float) -> tuple[bool, float]:
        write_scene(tmp_path, t)
        pve = tmp_path / "demo-proxmox" / "pve"
        tasks = json.loads((pve / "cluster/tasks.json").read_text())
        content = json.loads((pve / "nodes/pve1/storage/pbs-store/content.json").read_text())
        newest = next(c["ctime"] for c in content if c["vmid"] == DOWN)
        return any(t_["id"] == str(DOWN) and t_["status"] != "OK" for t_ in tasks), time.time() - newest

    listed = [t for t in range(240) if read(float(t))[0]]
    assert listed and FAILING[0] < listed[0] and listed[-1] < FAILING[1]
    for t in listed:
        for near in (t - TASK_MARGIN / 2, t + TASK_MARGIN / 2):
            assert read(near)[1] > 24 * 3600, near  # the last good backup is the night before last
