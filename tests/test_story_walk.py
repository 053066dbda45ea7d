"""One level per subject, through a whole loop of the demo's story: every page that names a firing
alert's subject (the overview's tile, its plug-in's section, the host's card, the alert's row, the
thing's own page) says it at least as badly as the alert does, never milder. Before, through one
loop, bgp_peer_down was critical in /alerts while the BGP tile and /network said warning, and
/entity/pve_vm/107 opened with a green "✔ stopped" while pve_guest_down fired for it.

The levels and subjects are read from the pages' data-level / data-subject(s) attributes: what a
person sees as colour and icon, made readable for a test and for scripts."""

from __future__ import annotations

import asyncio
import html
import re
import time
from collections import defaultdict
from pathlib import Path

from app.alerting.conditions import RULE_SOURCES
from app.config import load_config
from app.demo import story as demo
from app.demo.heatpump import start_isg
from app.demo.power import start_upsd
from app.judge import thresholds
from app.scheduler import Scheduler, Snapshot
from app.storage.db import upgrade
from app.web.app import create_app
from collectors import build_collectors, plugins
from collectors.host.containers.demo import start_engine
from tests.peers import DEMO_PEERS
from tests.test_web import fetch, replay_in_process

STEP = 15.0  # story seconds between polls, as the story test polls
RANK = {"ok": 0, "info": 0, "unknown": 0, "warning": 1, "failing": 2}
LEVEL = {"critical": "failing", "warning": "warning"}
TAG = re.compile(r"<(?:a|div|p|tr)\b[^>]*\bdata-level=\"(\w+)\"[^>]*>")


def marked(page: str, attr: str) -> list[tuple[str, dict[str, str]]]:
    """(level, attributes) of each element of the page that carries data-level."""
    out = []
    for m in TAG.finditer(page):
        attrs = {k: html.unescape(v) for k, v in re.findall(r'data-([\w-]+)="([^"]*)"', m.group(0))}
        if attr in attrs or attr == "*":
            out.append((m.group(1), attrs))
    return out


def test_no_page_says_a_firing_alerts_subject_milder_than_the_alert_through_a_whole_loop(tmp_path: Path) -> None:
    clock = [0.0]
    upsd, isg = start_upsd(lambda: clock[0]), start_isg(lambda: clock[0])
    DEMO_PEERS.extend((upsd, isg, start_engine(tmp_path)))
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    cfg = load_config(None, demo.demo_config(tmp_path, url, 1, 1, upsd.port, isg.port))
    upgrade(url)
    snap = Snapshot(host=cfg.host)
    app = create_app(cfg, collect=False, snapshot=snap, migrate=False)
    colls = build_collectors(cfg, replay_in_process)
    demo.attach_simulations(colls, tmp_path)
    sched = Scheduler(colls, {n: (3600, 60) for n in colls}, snap)
    sched.store = app.state.store
    alerting = app.state.runtime.get_alerting()
    t0 = time.time()
    snap.judge.clock = colls["throughput"].clock = colls["ipmi"].clock = lambda: t0 + clock[0]
    snap.judge.configure(thresholds(cfg))
    disagreements: list[str] = []
    checked: dict[str, int] = defaultdict(int)
    t = 0.0
    while t < demo.CYCLE:
        clock[0] = t
        demo.write_tree(tmp_path, demo.story_state(t))
        asyncio.run(sched.run_all_once())
        alerting.tick(snap, t0 + t, deliver=False)
        firing = [st for st in alerting.states.values() if st.state == "firing" and st.severity in LEVEL]
        if firing:
            disagreements += walk(app, snap, firing, t, checked)
        t += STEP
    assert disagreements == []
    # The walk looked at each kind of page (and so at something that can disagree).
    assert {"alerts", "tile", "section", "host card"} <= set(checked), dict(checked)


def walk(app: object, snap: Snapshot, firing: list, t: float, checked: dict[str, int]) -> list[str]:  # type: ignore[type-arg]
    out: list[str] = []
    worst_of: dict[str, str] = {}
    for st in firing:
        key = f"{RULE_SOURCES.get(st.rule, '')}:{st.subject}"
        level = LEVEL[st.severity]
        if RANK[level] > RANK.get(worst_of.get(key, "ok"), 0):
            worst_of[key] = level

    def held(where: str, level: str, subjects: list[str]) -> None:
        for s in subjects:
            want = worst_of.get(s)
            if want is not None:
                checked[where] += 1
                if RANK.get(level, 0) < RANK[want]:
                    out.append(f"t={t:.0f} {where}: {s} is {level}, its alert {want}")

    alerts = fetch(app, "/alerts").text
    rows = {(a["rule"], a["subject"]): lv for lv, a in marked(alerts, "rule")}
    for st in firing:
        checked["alerts"] += 1
        if rows.get((st.rule, st.subject)) != LEVEL[st.severity]:
            out.append(f"t={t:.0f} /alerts: {st.rule} {st.subject} shown {rows.get((st.rule, st.subject))}")
    for level, attrs in marked(fetch(app, "/").text, "subjects"):
        held("tile", level, attrs["subjects"].split())
    pages = {plugins()[k.split(":")[0]].pages.section.page for k in worst_of  # type: ignore[union-attr]
             if k.split(":")[0] in plugins() and plugins()[k.split(":")[0]].pages.section}
    for page in sorted(pages):
        text = fetch(app, f"/{page}").text
        for level, attrs in marked(text, "plugin"):
            held("section", level, [s for s in attrs.get("subjects", "").split()])
        for level, attrs in marked(text, "subject"):  # a row of a section that marks its own
            held("row", level, [attrs["subject"]])
    worst = max((RANK[v] for v in worst_of.values()), default=0)
    for level, attrs in marked(fetch(app, "/hosts").text, "host"):
        if attrs["host"] == snap.host:
            checked["host card"] += 1
            if RANK.get(level, 0) < worst:
                out.append(f"t={t:.0f} /hosts: {snap.host} is {level}, its worst alert {worst}")
    return out
