"""The overview once things go wrong: its first line says whether anything needs a person, the
domain tiles come worst first (a calm overview keeps its usual order), and the collectors that
run fine are counted, not drawn one by one (all of them stay on /collectors)."""

from __future__ import annotations

import re
from pathlib import Path

from app import views
from app.alerting.engine import AlertState
from app.views import BAD, OK, RANK, UNKNOWN, WARN, TileView
from tests.test_web import demo_app, fetch


def tile(title: str, level: str) -> TileView:
    return TileView(title, f"/{title}", level, "")


def test_tiles_come_failing_first_then_warnings_then_unknown_then_fine_each_in_its_usual_order() -> None:
    tiles = [tile("host", OK), tile("disks", WARN), tile("arrays", BAD), tile("vpn", UNKNOWN), tile("bgp", WARN),
             tile("ups", BAD), tile("fans", OK)]
    assert [t.title for t in views.worst_first(tiles)] == ["arrays", "ups", "disks", "bgp", "vpn", "host", "fans"]
    calm = [tile(n, OK) for n in ("host", "disks", "arrays")]
    assert views.worst_first(calm) == calm


def test_the_verdict_counts_what_fails_and_warns_or_says_all_clear() -> None:
    ov = views.Overview([tile("host", OK), tile("disks", OK)], [], OK)
    assert views.verdict(ov) == "All clear: 2 areas fine, 0 collectors running."
    ov = views.Overview([tile("host", OK), tile("disks", BAD), tile("bgp", WARN), tile("vpn", WARN)], [], BAD)
    assert views.verdict(ov) == "1 failing and 2 with a warning, worst first below."
    ov = views.Overview([tile("bgp", WARN)], [], WARN)
    assert views.verdict(ov) == "1 with a warning, worst first below."


def test_at_the_storys_worst_moment_the_overview_opens_with_the_failing_tiles(tmp_path: Path) -> None:
    app = demo_app(tmp_path, 185.0, runs=2)
    html = fetch(app, "/").text
    assert re.search(r'<p class="verdict failing" role="status">\d+ failing', html)
    domains = html.split('aria-label="Health by domain">', 1)[1].split("</section>", 1)[0]
    levels = re.findall(r'<a class="tile (\w+)"', domains)
    assert levels and levels[0] == BAD
    assert [RANK[x] for x in levels] == sorted((RANK[x] for x in levels), reverse=True)
    # the collectors that run fine are a count (how many depends on the machine: a loaded one makes
    # some late), each one is on /collectors, and only the others are drawn
    every = views.overview(app.state.snapshot).collectors
    fine = sum(1 for c in every if c.level == OK)
    said = f"{fine} of {len(every)} running fine" if fine else "Not one running fine yet"
    assert f"{said}: every one on" in html
    collectors = html.split('aria-label="Collectors">', 1)[1].split("</section>", 1)[0] if (
        'aria-label="Collectors">' in html) else ""
    assert len(re.findall(r'<a class="tile ', collectors)) == len(every) - fine
    assert not re.search(r'<a class="tile ok"', collectors)


def firing(rule: str, severity: str, fired_at: float, **labels: str) -> tuple[AlertState, None]:
    return AlertState(rule, next(iter(labels.values()), ""), "firing", severity, f"{rule} summary", labels,
                      fired_at, fired_at), None


def test_what_hurts_soonest_comes_first_whatever_its_level_word_and_says_why() -> None:
    """Issue 64: with the UPS on battery the overview said "6 failing and 9 with a warning" and put
    `ups on battery` (a warning) under "+10 more", behind a failed photo-sync unit."""
    shown = views.callouts([
        firing("unit_failed", "critical", 500, unit="photo-sync.service"),
        firing("probe_down", "critical", 400, probe="nas-web"),
        firing("disk_failing", "critical", 100, serial="ZA1049HK"),
        firing("ups_on_battery", "warning", 50, ups="ups"),
        firing("array_degraded", "critical", 90, array="md0"),
        firing("bgp_peer_down", "warning", 600, peer="10.0.0.2"),
    ], "nas")
    assert [c.rule for c in shown] == ["UPS on battery", "RAID array degraded", "Disk failing", "Service failed",
                                       "Probe down", "BGP peer down"]
    assert shown[0].level == WARN and shown[0].why == "the lab goes dark when the battery is empty"
    assert shown[1].why.startswith("data at risk") and shown[2].why == "hardware failing now"
    assert [c.why for c in shown[3:]] == ["", "", ""]


def test_of_two_warnings_about_one_ups_the_urgent_one_is_the_headline_though_older() -> None:
    shown = views.callouts([firing("ups_load_high", "warning", 200, ups="ups"),
                            firing("ups_on_battery", "warning", 100, ups="ups")], "nas")
    assert [(c.rule, c.also, c.urgency) for c in shown] == [("UPS on battery", ["UPS load high"], 3)]


def test_every_urgency_a_rule_names_has_its_words() -> None:
    from collectors.findings import URGENCY_WORDS

    assert set(views.urgencies().values()) <= set(URGENCY_WORDS)
    assert {"ups_on_battery", "array_degraded", "disk_failing"} <= set(views.urgencies())
