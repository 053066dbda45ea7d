"""restic's answers as its sources write them (cmd/restic/cmd_snapshots.go's JSON of
restic.Snapshot, main.go's exit codes), beyond what Debian's restic 0.14 prints here."""

from __future__ import annotations

import datetime as dt

import pytest

from collectors.backup import covers, followed
from collectors.host.restic.parse import (
    ResticFormatError,
    check_errors,
    failure,
    locked,
    parse_snapshots,
    parse_time,
)

UTC = dt.UTC


@pytest.mark.parametrize(("text", "when"), [
    ("2026-12-04T04:11:33.50048557Z", dt.datetime(2026, 12, 4, 4, 11, 33, 500485, UTC)),
    ("2026-12-01T10:00:00Z", dt.datetime(2026, 12, 1, 10, 0, tzinfo=UTC)),
    ("2024-03-09T23:15:02.123456789+01:00", dt.datetime(2024, 3, 9, 22, 15, 2, 123456, UTC)),
])
def test_restics_times_with_nine_digits_and_an_offset_are_read(text: str, when: dt.datetime) -> None:
    assert parse_time(text) == when.timestamp()


def test_a_snapshot_list_of_restic_017_with_its_summary_is_read_and_null_is_none() -> None:
    text = ('[{"time":"2026-12-04T02:00:01.1+00:00","tree":"ab","paths":["/srv/photos","/srv/documents"],'
            '"hostname":"nas","username":"root","tags":["nightly"],"program_version":"restic 0.17.3",'
            '"summary":{"files_new":3,"data_added":1048576},"id":"0123456789abcdef","short_id":"01234567"}]')
    (s,) = parse_snapshots(text)
    assert (s.host, s.paths, s.tags, s.id) == ("nas", ("/srv/photos", "/srv/documents"), ("nightly",), "01234567")
    assert parse_snapshots("null") == [] and parse_snapshots("[]") == []


@pytest.mark.parametrize("text", ['{"time": 1}', "[{}]", '[{"time": "yesterday"}]', "[1, 2", "<html>"])
def test_what_is_not_restics_json_is_an_error_quoting_it(text: str) -> None:
    with pytest.raises(ResticFormatError):
        parse_snapshots(text)


@pytest.mark.parametrize(("snapshot", "path", "yes"), [
    (["/srv"], "/srv/photos", True), (["/srv/photos"], "/srv/photos/", True), (["/srv/photos"], "/srv", False),
    (["/srv/photo"], "/srv/photos", False), (["/"], "/etc", True),
])
def test_a_snapshot_of_a_folder_covers_what_is_inside_it_only(snapshot: list[str], path: str, yes: bool) -> None:
    assert covers(snapshot, path) is yes


def test_the_newest_of_each_host_and_paths_is_kept_and_what_no_snapshot_covers_is_missing() -> None:
    snaps = parse_snapshots(
        '[{"time":"2026-12-01T00:00:00Z","hostname":"nas","paths":["/srv"],"id":"a"},'
        '{"time":"2026-12-03T00:00:00Z","hostname":"nas","paths":["/srv"],"id":"b","tags":["nightly"]},'
        '{"time":"2026-12-02T00:00:00Z","hostname":"laptop","paths":["/home"],"id":"c"}]')
    groups, missing = followed(snaps, ["nas", "pi"], ["/srv/photos"], [])
    assert [(g.host, g.newest_id, g.count, g.tags) for g in groups] == [("nas", "b", 2, ["nightly"])]
    assert missing == ["pi:/srv/photos"]
    groups, missing = followed(snaps, [], [], ["nightly"])
    assert [(g.host, g.count) for g in groups] == [("nas", 1)] and missing == []


@pytest.mark.parametrize(("code", "stderr", "said"), [
    (1, "Fatal: wrong password or no key found\n", "wrong password or no key found"),
    (12, "", "wrong password or no key found"),
    (10, "", "no repository there"),
    (1, "Fatal: unable to open config file: stat /x/config: no such file or directory\n"
        "Is there a repository at the following location?\n/x\n", "no repository there (restic found no config file)"),
    (1, "unable to create lock in backend: repository is already locked by PID 7 on nas by root (UID 0, GID 0)\n"
        "lock was created at 2026-12-04 04:19:01 (1.9s ago)\nstorage ID 08edf389\n",
     "repository is already locked by PID 7 on nas by root (UID 0, GID 0)"),
    (1, "Fatal: unable to open repository at sftp:backup:/r: ssh: connect to host backup port 22: No route to host\n",
     "unable to open repository at sftp:backup:/r: ssh: connect to host backup port 22: No route to host"),
])
def test_a_failed_command_is_said_in_one_line(code: int, stderr: str, said: str) -> None:
    assert failure(code, stderr) == said


def test_a_checks_first_error_line_is_kept_and_a_locked_check_is_not_a_failed_one() -> None:
    err = ("pack 5188: unexpected file size: got 1000, expected 200124\n"
           "Load(<data/cb4959e1d5>, 244, 751) returned error, retrying after 552ms: EOF\n"
           "Fatal: repository contains errors\n")
    assert check_errors(1, "using temporary cache in /tmp/x\ncheck all packs\n", err) == (
        False, "pack 5188: unexpected file size: got 1000, expected 200124")
    assert check_errors(0, "no errors were found\n", "") == (True, None)
    assert check_errors(1, "create exclusive lock for repository\nerror for tree e8558df6:\n",
                        "Fatal: repository contains errors\n") == (False, "error for tree e8558df6:")
    assert locked(11, "") and locked(1, "unable to create lock in backend: repository is already locked")
    assert not locked(1, err)
