"""ZFS snapshots: no ZFS runs here, so `zfs list -H -p -t snapshot -o name,creation` is answered
with text written from zfs-list(8) (tab-separated, creation in seconds with -p) as sanoid and
syncoid leave it; the pools' answers are the real captures the other ZFS tests use."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from collectors.base import ParseError
from collectors.findings import Judging
from collectors.storage.zfs import findings
from collectors.storage.zfs.snapshots import max_age_for, parse_snapshot_list
from collectors.storage.zfs.state import ZfsState
from tests.collectors.storage.zfs.test_zfs_collector import JSON, LIST, NO_JSON, STATUS, collector
from tests.collectors.storage_helpers import fixture

SNAPS = "list -H -p -t snapshot -o name,creation"
NOW = time.time()
DAY = 86400.0


def listing(*rows: tuple[str, float]) -> bytes:
    return "".join(f"{name}\t{int(when)}\n" for name, when in rows).encode()


def pools() -> dict:  # type: ignore[type-arg]
    return {JSON: NO_JSON, STATUS: (0, fixture("zpool", "node-exporter-textfile-collector-scripts__zpool_status_-p"), b""),
            LIST: (0, b"pool0\t53687091200000\t1647130456064\t52039960743936\t3\t3\t1.00\tONLINE\n", b"")}


def test_a_dataset_whose_sanoid_job_stopped_fires_zfs_snapshot_stale_and_a_fresh_one_does_not(tmp_path: Path) -> None:
    snaps = listing(("pool0/photos@autosnap_2026-12-01_00:00:01_daily", NOW - 3.2 * DAY),
                    ("pool0/photos@autosnap_2026-11-30_00:00:01_daily", NOW - 4.2 * DAY),
                    ("pool0/docs@autosnap_2026-12-04_00:00:02_daily", NOW - 3600),
                    ("backup/nas/photos@syncoid_nas_2026-12-04:01:00:00", NOW - 2 * 3600),
                    ("pool0/scratch@manual", NOW - 90 * DAY))
    c = collector(tmp_path, {**pools(), SNAPS: (0, snaps, b"")},
                  snapshot_max_age={"pool0/*": 26 * 3600, "backup/*": 26 * 3600, "pool0/scratch": 365 * DAY,
                                    "pool0/vms": 26 * 3600})
    res = c.collect()
    state = res.state
    assert isinstance(state, ZfsState) and state.snapshot_error is None
    by = {d.dataset: d for d in state.snapshots}
    assert by["pool0/photos"].count == 2 and by["pool0/photos"].newest_name == "autosnap_2026-12-01_00:00:01_daily"
    stale = [(f.subject, f.text) for f in findings.findings(state, Judging(now=NOW)) if f.rule == "zfs_snapshot_stale"]
    assert stale == [("pool0/photos", "ZFS dataset pool0/photos: newest snapshot autosnap_2026-12-01_00:00:01_daily "
                                      "is 3 days old, older than 26 h"),
                     ("pool0/vms", "ZFS dataset pool0/vms has no snapshot")]  # named outright, never snapshotted
    assert {dict(s.labels)["dataset"] for s in res.samples
            if s.metric == "rackpulse_zfs_snapshot_newest_timestamp_seconds"} == set(by) - {"pool0/vms"}


def test_a_failing_zfs_list_is_said_and_costs_the_pools_nothing(tmp_path: Path) -> None:
    c = collector(tmp_path, {**pools(), SNAPS: (1, b"", b"cannot open 'tank': dataset does not exist\n")},
                  snapshot_max_age={"tank/*": 3600})
    res = c.collect()
    assert isinstance(res.state, ZfsState) and res.state.pools and res.state.snapshots == []
    assert res.state.snapshot_error == "zfs list -t snapshot: cannot open 'tank': dataset does not exist"
    assert res.warnings == [res.state.snapshot_error]


def test_without_snapshot_max_age_zfs_list_is_not_run(tmp_path: Path) -> None:
    calls: list[list[str]] = []
    from collectors.storage.zfs.collector import ZfsCollector
    from tests.collectors.storage_helpers import runner

    ZfsCollector(tmp_path, runner=runner(pools(), calls)).collect()
    assert not [c for c in calls if c[0] == "zfs"]


def test_the_datasets_own_entry_wins_then_the_longest_pattern() -> None:
    patterns = {"tank/*": 1.0, "tank/photos/*": 2.0, "tank/photos": 3.0}
    assert [max_age_for(d, patterns) for d in ("tank/photos", "tank/photos/2024", "tank/vms", "other/x")] == [
        3.0, 2.0, 1.0, None]


@pytest.mark.parametrize("text", ["tank/photos\t1796000000\n", "tank/photos@daily\tyesterday\n",
                                  "tank/photos@daily 1796000000\n"])
def test_a_line_that_is_not_zfs_lists_is_an_error_quoting_it(text: str) -> None:
    with pytest.raises(ParseError, match="zfs list line 1"):
        parse_snapshot_list(text)


def test_the_disks_page_lists_each_datasets_newest_snapshot_and_marks_the_stale_one(tmp_path: Path) -> None:
    from collectors.storage.zfs.snapshots import DatasetSnapshots
    from tests.test_web import demo_app, fetch

    app = demo_app(tmp_path, 10, shared=False)
    snap = app.state.snapshot
    snap.states["zfs"] = snap.states["zfs"].model_copy(update={"snapshots": [
        DatasetSnapshots(dataset="tank/photos", newest=NOW - 3 * DAY, newest_name="autosnap_daily", count=30,
                         max_age=26 * 3600),
        DatasetSnapshots(dataset="tank/scratch", newest=NOW - 600, newest_name="manual", count=1)]})
    snap.version += 1
    page = fetch(app, "/disks").text
    assert "<h3>Snapshots</h3>" in page and "autosnap_daily" in page and "not judged" in page
    at = page.index(">tank/photos</td>")
    assert 'class="warning"' in page[page.rindex("<tr", 0, at):at]
    at = page.index(">tank/scratch</td>")
    assert 'class="warning"' not in page[page.rindex("<tr", 0, at):at]
