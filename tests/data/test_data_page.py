"""/data on the demo: at the story's failing moment (bay 7 failed, md0 down to one parity disk, the
off-site borg job two nights behind) photos, which must have an off-site copy, is not protected;
documents, which need not, is. The overview's Data tile and the alert say the same."""

from __future__ import annotations

import re
from pathlib import Path

from tests.test_web import demo_app, fetch


def words(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def test_at_the_failing_moment_data_says_photos_is_not_protected_and_why(tmp_path: Path) -> None:
    app = demo_app(tmp_path, 80, runs=2)
    page = fetch(app, "/data").text
    assert '<a href="/data" aria-current="page">Data</a>' in page
    text = words(page[page.index("<h1>Data</h1>"):])
    assert ("If an array died tonight, what would be lost? photos is not protected ; documents has a fresh copy "
            "off its array.") in text
    photos = words(page[page.index('id="set-photos"'):page.index('id="set-documents"')])
    assert "not protected · photos /srv/photos" in photos
    assert "photos: 2 copies, 1 off site; the off-site copy (borg offsite) is 2 days old, older than 26 h" in photos
    assert "Lives on RAID6 on md0, 1 of 2 parity disks left" in photos
    assert re.search(r"restic usb-disk 20 kept \d+ min ago on site", photos)
    assert "borg offsite 21 kept 2 days ago off site" in photos
    assert re.search(r"if md0 died now: what changed in the last \d+ min \(since restic usb-disk\); if the building "
                     r"burned: what changed in the last 2 days \(since borg offsite\)", photos)
    documents = words(page[page.index('id="set-documents"'):])
    assert "protected · documents /srv/documents" in documents and "not protected" not in documents
    assert re.search(r"documents: 2 copies, 1 off site; the newest is \d+ min old, the off-site one 2 days old", documents)


def test_the_overview_tile_the_alert_and_metrics_say_what_the_page_says(tmp_path: Path) -> None:
    app = demo_app(tmp_path, 80, runs=2, shared=False)
    fetch(app, "/data")
    overview = fetch(app, "/").text
    tile = re.search(r'<a class="tile (\w+)" href="/data"[^>]*data-subjects="([^"]*)">(.*?)</a>', overview, re.S)
    assert tile is not None
    assert tile.group(1) == "warning" and tile.group(2) == "data:photos"
    assert words(tile.group(3)).endswith(
        "photos is not protected: the off-site copy (borg offsite) is 2 days old, older than 26 h")
    app.state.alert_tick()
    alerts = app.state.get_alerting().states
    assert alerts[("data_unprotected", "photos")].state == "firing"
    assert ("data_unprotected", "documents") not in alerts
    metrics = fetch(app, "/metrics").text
    assert 'rackpulse_data_protected{host="demo-nas",set="photos"} 0' in metrics
    assert 'rackpulse_data_copies{host="demo-nas",offsite="true",set="photos"} 1' in metrics
    assert 'rackpulse_data_redundancy_left{host="demo-nas",set="photos"} 1' in metrics


def test_before_the_disk_fails_every_set_is_protected(tmp_path: Path) -> None:
    text = words(fetch(demo_app(tmp_path, 20, runs=2), "/data").text)
    assert "Nothing, as far as rackpulse can see: each of the 2 data sets has a fresh copy off its array." in text
    assert "Lives on RAID6 on md0, 2 of 2 parity disks left" in text
