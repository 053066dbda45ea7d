"""Agent ingest on the server: tokens, validation before storage, idempotency, late samples,
rollups from a compacted outbox; on SQLite and on the real PostgreSQL."""

from __future__ import annotations

import gzip
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.alerting.conditions import BUILTIN
from app.batch import FORMAT, BatchError, decode_body, parse_batch
from app.config import load_config
from app.ingest import agents
from app.ingest.conditions import agent_conditions
from app.scheduler import Snapshot
from app.storage.chunks import readable
from app.storage.db import make_engine, upgrade
from app.storage.models import agent, collector_run, entity, meta, rollup_1h, rollup_5m, sample, series
from app.storage.store import Store
from app.web.app import create_app
from tests.states import one

NOW = time.time()


def run_record(seq: int, started: float, value: float = 36.0, collector: str = "smart", **extra: Any) -> dict[str, Any]:
    return {"seq": seq, "kind": "run", "collector": collector, "started": started, "duration": 0.2, "ok": True,
            "interval": 15.0, "samples": [["rackpulse_disk_temperature_celsius", {"serial": "ZA1049HK"}, value],
                                          ["rackpulse_disk_health", {"serial": "ZA1049HK"}, 0]],
            "state": {"disks": []}, "entities": [["disk", "ZA1049HK", {"bay": "shelf 1, bay 7"}]], **extra}


def batch(records: list[dict[str, Any]], host: str = "ceph1", instance: str = "outbox-aaaa1111") -> dict[str, Any]:
    return {"format": FORMAT, "host": host, "agent_version": "0.1.0", "instance": instance, "sent_at": time.time(),
            "records": records}


def body(b: dict[str, Any]) -> bytes:
    return gzip.compress(json.dumps(b).encode())


@pytest.fixture
def server(db_url: str):  # type: ignore[no-untyped-def]
    upgrade(db_url)
    cfg = load_config(None, {"host": "server", "storage": {"url": db_url}, "agents": {"max_batch_bytes": 200_000}})
    engine = make_engine(db_url)
    token = agents.issue(engine, "ceph1")
    other = agents.issue(engine, "ceph2")
    app = create_app(cfg, collect=False, snapshot=Snapshot(host="server"), migrate=False)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        yield client, engine, token, other
    engine.dispose()


def post(client: TestClient, token: str, payload: bytes, **headers: str):  # type: ignore[no-untyped-def]
    return client.post("/api/v1/ingest", content=payload, headers={"Authorization": f"Bearer {token}",
                                                                    "Content-Encoding": "gzip", **headers})


def counts(engine) -> tuple[int, int, int]:  # type: ignore[no-untyped-def]
    with engine.connect() as c:
        return (c.execute(select(func.count()).select_from(sample)).scalar(),
                c.execute(select(func.count()).select_from(collector_run)).scalar(),
                c.execute(select(func.count()).select_from(entity)).scalar())


def test_a_batch_is_stored_with_its_host_and_the_agent_row_says_when_and_which_version(server) -> None:
    client, engine, token, _ = server
    r = post(client, token, body(batch([run_record(1, NOW - 30), run_record(2, NOW - 15, 37.0)])))
    assert r.status_code == 200, r.text
    assert r.json() == {"status": "ok", "records": 2, "duplicates": 0, "samples": 4, "last_seq": 2}
    assert counts(engine) == (4, 2, 1)
    with engine.connect() as c:
        assert {h for (h,) in c.execute(select(series.c.host))} == {"ceph1"}
        row = c.execute(select(agent).where(agent.c.host == "ceph1")).one()
    assert row.version == "0.1.0" and row.last_seq == 2 and row.batches == 1 and row.samples == 4
    assert abs(row.clock_skew) < 5 and row.last_contact > NOW - 5
    hosts = client.get("/api/hosts").json()
    assert [h["host"] for h in hosts] == ["server", "ceph1", "ceph2"]
    assert hosts[1]["status"] == "reporting" and hosts[2]["status"] == "never reported"


def test_a_resent_batch_is_not_stored_twice_and_an_overlapping_one_only_adds_what_is_new(server) -> None:
    client, engine, token, _ = server
    b = body(batch([run_record(1, NOW - 30), run_record(2, NOW - 15)]))
    assert post(client, token, b).json()["records"] == 2
    again = post(client, token, b).json()
    assert again["records"] == 0 and again["duplicates"] == 2
    more = post(client, token, body(batch([run_record(2, NOW - 15), run_record(3, NOW)]))).json()
    assert (more["records"], more["duplicates"]) == (1, 1)
    assert counts(engine)[:2] == (6, 3)  # three runs, two samples each; no run row twice


def test_a_new_outbox_instance_starts_its_numbers_afresh(server) -> None:
    client, engine, token, _ = server
    post(client, token, body(batch([run_record(5, NOW - 30)])))
    r = post(client, token, body(batch([run_record(1, NOW - 15)], instance="reinstalled-2222")))
    assert r.json()["records"] == 1
    assert counts(engine)[1] == 2


@pytest.mark.parametrize("auth, status, words", [
    ("Bearer rpa_not-a-token", 401, "unknown agent token"),
    ("", 401, "missing 'Authorization: Bearer"),
    ("Basic dXNlcjpwYXNz", 401, "missing 'Authorization: Bearer"),
])
def test_a_wrong_or_missing_token_is_refused_and_nothing_is_stored(server, auth: str, status: int, words: str) -> None:
    client, engine, _, _ = server
    r = client.post("/api/v1/ingest", content=body(batch([run_record(1, NOW)])),
                    headers={"Authorization": auth, "Content-Encoding": "gzip"})
    assert r.status_code == status and words in r.json()["error"]
    assert counts(engine) == (0, 0, 0)


def test_a_revoked_token_is_refused_from_the_next_batch_on(server) -> None:
    client, engine, token, _ = server
    assert post(client, token, body(batch([run_record(1, NOW - 15)]))).status_code == 200
    assert agents.revoke(engine, "ceph1")
    r = post(client, token, body(batch([run_record(2, NOW)])))
    assert r.status_code == 401 and r.json()["error"] == "the token of host 'ceph1' was revoked"
    assert counts(engine)[1] == 1
    assert next(h for h in client.get("/api/hosts").json() if h["host"] == "ceph1")["status"] == "token revoked"
    # re-issuing gives a new token; the old one stays refused
    new = agents.issue(engine, "ceph1")
    assert post(client, token, body(batch([run_record(2, NOW)]))).status_code == 401
    assert post(client, new, body(batch([run_record(2, NOW)]))).status_code == 200


def test_a_token_replaced_by_a_new_issue_is_refused_although_the_server_let_it_in_before(server) -> None:
    # The server remembers tokens it let in (no database trip per batch); the store transaction
    # checks the token again, so `agents issue` takes effect from the very next batch.
    client, engine, token, _ = server
    assert post(client, token, body(batch([run_record(1, NOW - 15)]))).status_code == 200
    new = agents.issue(engine, "ceph1")
    for _ in range(2):  # refused in the transaction, then before the body
        r = post(client, token, body(batch([run_record(2, NOW)])))
        assert r.status_code == 401 and r.json()["error"] == "unknown agent token"
    assert counts(engine)[1] == 1
    assert post(client, new, body(batch([run_record(2, NOW)]))).status_code == 200


def test_a_token_cannot_write_another_hosts_data(server) -> None:
    client, engine, _, ceph2 = server
    r = post(client, ceph2, body(batch([run_record(1, NOW)], host="ceph1")))
    assert r.status_code == 403 and "belongs to host 'ceph2'" in r.json()["error"]
    assert counts(engine) == (0, 0, 0)


@pytest.mark.parametrize("mutate, words", [
    (lambda b: b["records"][1]["samples"].append(["bad metric name", {}, 1]), "records.1.run.samples.2.0"),
    (lambda b: b["records"][1]["samples"].append(["rackpulse_x", {}, "hot"]), "records.1.run.samples.2.2"),
    (lambda b: b["records"][1].update(seq=1), "records[1].seq 1 is not above the previous 1"),
    (lambda b: b["records"][1].update(started=0), "outside the accepted range"),
    (lambda b: b["records"][0].update(kind="shell"), "records.0"),
    (lambda b: b.update(records=[]), "records: List should have at least 1 item"),
    (lambda b: b.update(format="rackpulse-batch/9"), "unknown batch format 'rackpulse-batch/9'"),
    (lambda b: b.update(extra=1), "extra: Extra inputs are not permitted"),
])
def test_a_malformed_batch_is_refused_with_the_place_named_and_nothing_from_it_is_stored(server, mutate,
                                                                                        words: str) -> None:
    client, engine, token, _ = server
    b = batch([run_record(1, NOW - 15), run_record(2, NOW)])
    mutate(b)
    r = post(client, token, body(b))
    assert r.status_code == 400 and words in r.json()["error"], r.json()
    assert counts(engine) == (0, 0, 0)
    with engine.connect() as c:
        assert c.execute(select(agent.c.last_seq).where(agent.c.host == "ceph1")).scalar() == 0


def test_bodies_that_are_not_json_or_not_gzip_or_too_big_are_refused_before_parsing(server) -> None:
    client, engine, token, _ = server
    assert post(client, token, b"{not json").status_code == 400
    r = client.post("/api/v1/ingest", content=b"{not json", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"]
    r = post(client, token, gzip.compress(b'{"format": "rackpulse-batch/1"')[:-6])
    assert r.status_code == 400 and "gzip" in r.json()["error"]
    big = batch([run_record(1, NOW, samples=[["rackpulse_x", {"i": str(i)}, i] for i in range(20_000)])])
    raw = json.dumps(big).encode()
    r = client.post("/api/v1/ingest", content=raw, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 413 and "larger than the server's limit of 200000" in r.json()["error"]
    bomb = gzip.compress(b" " * 5_000_000)  # 5 MB of spaces in 5 KB
    r = post(client, token, bomb)
    assert r.status_code == 413 and "inflates" in r.json()["error"]
    r = post(client, token, body(batch([run_record(1, NOW)])), **{"Content-Encoding": "br"})
    assert r.status_code == 415
    assert counts(engine) == (0, 0, 0)


def test_decode_body_never_inflates_past_the_limit() -> None:
    with pytest.raises(BatchError) as e:
        decode_body(gzip.compress(b"x" * 10_000), "gzip", 9_999)
    assert e.value.status == 413
    assert decode_body(gzip.compress(b'{"a": 1}'), "gzip", 100) == b'{"a": 1}'


def test_parse_batch_refuses_timestamps_a_day_ahead_of_the_server() -> None:
    with pytest.raises(BatchError, match="outside the accepted range"):
        parse_batch(batch([run_record(1, NOW + 2 * 86400)]), now=NOW)


def test_samples_older_than_the_rollup_watermark_are_folded_into_their_buckets(server) -> None:
    client, engine, token, _ = server
    hour = int(NOW) // 3600 * 3600
    with engine.begin() as c:  # rollups are made up to this hour: everything before it is "rolled up"
        c.execute(meta.insert(), [{"key": "rollup_300", "value": str(hour)}, {"key": "rollup_3600", "value": str(hour)}])
    old = hour - 2 * 3600 + 60  # two hours ago: an agent's spooled backlog
    r = post(client, token, body(batch([run_record(1, old, 30.0), run_record(2, old + 30, 40.0)])))
    assert r.status_code == 200
    with engine.connect() as c:
        sid = c.execute(select(series.c.id).where(series.c.metric == "rackpulse_disk_temperature_celsius")).scalar()
        r5 = c.execute(select(rollup_5m).where(rollup_5m.c.series_id == sid)).all()
        r1 = c.execute(select(rollup_1h).where(rollup_1h.c.series_id == sid)).all()
    assert [(x.bucket, x.vmin, x.vavg, x.vmax, x.n) for x in r5] == [(old // 300, 30.0, 35.0, 40.0, 2)]
    assert [(x.bucket, x.vmin, x.vmax, x.n) for x in r1] == [(old // 3600, 30.0, 40.0, 2)]


def test_rollups_from_a_compacted_outbox_land_in_the_rollup_tables(server) -> None:
    client, engine, token, _ = server
    b0 = int(NOW - 3 * 86400) // 300
    rec = {"seq": 7, "kind": "rollup", "res": 300, "series": [
        ["rackpulse_disk_temperature_celsius", {"serial": "ZA1049HK"}, [[b0, 30, 31, 33, 10], [b0 + 1, 31, 32, 34, 10]]]]}
    hour = int(NOW) // 3600 * 3600
    with engine.begin() as c:  # an established server: rollups made up to this hour
        c.execute(meta.insert(), [{"key": "rollup_300", "value": str(hour)}, {"key": "rollup_3600", "value": str(hour)}])
    r = post(client, token, body(batch([rec])))
    assert r.json()["samples"] == 2
    with engine.connect() as c:
        rows = c.execute(select(rollup_5m.c.bucket, rollup_5m.c.vavg).order_by(rollup_5m.c.bucket)).all()
        hours = c.execute(select(rollup_1h.c.n)).all()
    assert [tuple(x) for x in rows] == [(b0, 31.0), (b0 + 1, 32.0)]
    assert sum(n for (n,) in hours) == 20


def test_two_parts_of_one_pushed_bucket_add_up(server) -> None:
    client, engine, token, _ = server
    b0 = int(NOW - 86400) // 300
    part = lambda seq, mn, av, mx, n: {"seq": seq, "kind": "rollup", "res": 300, "series": [  # noqa: E731
        ["rackpulse_x", {}, [[b0, mn, av, mx, n]]]]}
    assert post(client, token, body(batch([part(1, 10, 20, 30, 2)]))).status_code == 200
    assert post(client, token, body(batch([part(2, 5, 30, 35, 2)]))).status_code == 200
    with engine.connect() as c:
        row = c.execute(select(rollup_5m.c.vmin, rollup_5m.c.vavg, rollup_5m.c.vmax, rollup_5m.c.n)).one()
    assert tuple(row) == (5.0, 25.0, 35.0, 4)


def test_a_fresh_server_folds_pushed_rollups_that_predate_every_raw_sample_into_hours(db_url: str) -> None:
    upgrade(db_url)
    engine = make_engine(db_url)
    store = Store(engine, "ceph1")
    b0 = int(NOW - 3 * 86400) // 3600 * 12
    with store.lock.shared(), engine.begin() as c:
        store.write_rollup_points(c, 300, [("rackpulse_x", (), [(b0, 1, 2, 3, 10), (b0 + 1, 2, 3, 4, 10)])])
    store.write_rows([(store.find_series("rackpulse_x"), int(NOW) - 600, 5.0)])
    store.make_rollups(now=NOW)
    r1h = readable(store.dialect, rollup_1h)  # on PostgreSQL that hour is in a chunk by now
    with engine.connect() as c:
        hours = c.execute(select(r1h.c.bucket, r1h.c.n).order_by(r1h.c.bucket)).all()
    assert tuple(hours[0]) == (b0 // 12, 20)
    engine.dispose()


def test_agent_hosts_get_their_own_pages_alerts_and_metrics(server) -> None:
    client, engine, token, _ = server
    state = {"arrays": [], "disks": [{"device": "sdh", "key": "ZA1049HK", "serial": "ZA1049HK", "bay": "shelf 1, bay 7",
                                      "health": 2, "health_name": "failing", "reasons": ["SMART failed"],
                                      "model": "WDC", "temperature": 40}]}
    rec = run_record(1, NOW, state=state)
    assert post(client, token, body(batch([rec]))).status_code == 200
    page = client.get("/h/ceph1/disks")
    assert page.status_code == 200 and 'href="/h/ceph1/disks/ZA1049HK"' in page.text and "shelf 1" in page.text
    assert 'hx-get="/h/ceph1/disks"' in page.text
    assert client.get("/h/nosuch/").status_code == 404
    metrics = client.get("/metrics").text
    assert 'rackpulse_disk_temperature_celsius{host="ceph1",serial="ZA1049HK"} 36' in metrics
    assert 'rackpulse_agent_batches_total{host="server",agent="ceph1"} 1' in metrics
    assert 'rackpulse_agent_info{host="server",agent="ceph1",version="0.1.0"} 1' in metrics
    assert 'rackpulse_agent_token_revoked{host="server",agent="ceph2"} 0' in metrics
    overview = client.get("/h/ceph1/").text
    assert "ceph1" in overview and "failing" in overview
    hosts = client.get("/hosts").text
    assert 'href="/h/ceph1/"' in hosts and "reporting" in hosts


def test_a_batch_renders_again_only_the_metrics_of_the_collectors_it_carries(server) -> None:
    client, _, token, _ = server
    fans = run_record(2, NOW, collector="hwmon", state={},
                      samples=[["rackpulse_hwmon_fan_rpm", {"chip": "nct6798", "sensor": "fan1"}, 1200]])
    assert post(client, token, body(batch([run_record(1, NOW), fans]))).status_code == 200
    assert 'rackpulse_hwmon_fan_rpm{host="ceph1",chip="nct6798",sensor="fan1"} 1200' in client.get("/metrics").text
    blocks = client.app.state.runtime.agents._blocks
    fan_block = blocks[("ceph1", "hwmon")]
    assert post(client, token, body(batch([run_record(3, NOW + 15, value=37.0)]))).status_code == 200
    metrics = client.get("/metrics").text
    assert 'rackpulse_disk_temperature_celsius{host="ceph1",serial="ZA1049HK"} 37' in metrics
    assert 'rackpulse_hwmon_fan_rpm{host="ceph1",chip="nct6798",sensor="fan1"} 1200' in metrics
    assert blocks[("ceph1", "hwmon")] is fan_block  # the fans' text was not made again


def test_the_overview_reads_the_agents_table_outside_the_event_loop_and_from_memory_after(server) -> None:
    """The overview is served in the event loop: a slow database must hold only its own request."""
    import asyncio

    client, _, token, _ = server
    agents_ = client.app.state.runtime.agents
    reads: list[bool] = []
    real = agents_.rows

    def rows(*args: Any) -> Any:
        try:
            asyncio.get_running_loop()
            reads.append(True)  # in the event loop
        except RuntimeError:
            reads.append(False)
        return real(*args)

    agents_.rows = rows
    assert post(client, token, body(batch([run_record(1, NOW)]))).status_code == 200  # the table changed
    page = client.get("/")
    assert page.status_code == 200 and 'href="/h/ceph1/"' in page.text
    assert reads == [False]  # read once, in a thread
    assert 'href="/h/ceph1/"' in client.get("/").text and reads == [False]  # then from memory


# ceph1's SMART state with the disk in shelf 1, bay 7 failing.
FAILING_DISK = {"arrays": [], "disks": [{"device": "sdh", "key": "ZA1049HK", "serial": "ZA1049HK",
                                         "bay": "shelf 1, bay 7", "health": 2, "health_name": "failing",
                                         "reasons": ["SMART overall-health failed"], "model": "WDC", "temperature": 40}]}


def test_a_failing_disk_on_an_agent_host_is_an_alert_with_that_host(server) -> None:
    client, engine, token, _ = server
    state = FAILING_DISK
    # now, not NOW: a run older than three intervals would also (rightly) be "collector_down"
    assert post(client, token, body(batch([run_record(1, time.time(), state=state)]))).status_code == 200
    client.app.state.alert_tick()
    alerts = client.get("/h/ceph1/api/alerts").json()["active"]
    assert [(a["rule"], a["subject"], a["state"], a["labels"]["host"]) for a in alerts] == [
        ("disk_failing", "ZA1049HK", "firing", "ceph1")]
    assert "shelf 1, bay 7" in alerts[0]["summary"]
    # the server's own overview shows it too, with the host, linking to that host's alerts
    overview = client.get("/").text
    assert '<strong>ceph1: Disk failing</strong>' in overview and 'href="/h/ceph1/alerts"' in overview
    assert 'aria-label="Agent hosts"' in overview and 'href="/h/ceph1/"' in overview
    # its host tile says what its ✖ means: failing, not the "reporting" it also is
    tile = re.search(r'<a class="tile failing" href="/h/ceph1/"[^>]*>.*?</a>', overview, re.S)
    assert tile is not None and '<span class="level">failing</span>' in tile[0], overview[overview.find("Agent hosts"):][:800]
    assert client.get("/api/alerts").json()["active"] == []  # the server's own: ceph2 is not silent long enough yet


def test_an_agent_hosts_heat_pump_page_shows_that_hosts_heat_pump(server) -> None:
    client, engine, token, _ = server
    hp = json.loads((Path(__file__).parent / "fixtures/demo/healthy-states.json").read_text())["heatpump"]
    hp = {**hp, "controller": "LWZ 404", "temperatures": {**hp["temperatures"], "outside": -7.5}}
    rec = run_record(1, NOW, collector="heatpump", state=hp)
    assert post(client, token, body(batch([rec]))).status_code == 200
    page = client.get("/h/ceph1/heatpump").text.replace("&nbsp;", " ")  # "-7.5&nbsp;°C" read as a space
    assert "LWZ 404" in page and "-7.5\u00a0°C" in page
    assert "LWZ 404" not in client.get("/heatpump").text  # the server's own page is not the agent's


def test_a_state_this_server_cannot_read_keeps_the_last_good_one_and_says_so(server) -> None:
    client, engine, token, _ = server
    good = {"rails": [], "fans": [], "sensors": []}
    assert post(client, token, body(batch([run_record(1, NOW - 15, collector="hwmon", state=good)]))).status_code == 200
    odd = {"rails": [{"name": "12V", "volts": "twelve"}]}  # another agent version's shape
    assert post(client, token, body(batch([run_record(2, NOW, collector="hwmon", state=odd)]))).status_code == 200
    assert client.get("/h/ceph1/power").status_code == 200
    assert client.app.state.agents.snapshots["ceph1"].states["hwmon"] == one("hwmon", good)
    page = client.get("/h/ceph1/collectors").text
    assert "state from agent not understood by this server" in page
    client.app.state.alert_tick()  # and alerting goes on


def test_a_silent_agent_and_a_skewed_clock_are_conditions_for_alerts(db_url: str) -> None:
    upgrade(db_url)
    engine = make_engine(db_url)
    cfg = load_config(None, {"host": "server", "agents": {"silent_after": 60, "clock_skew_warning": 30}})
    agents.issue(engine, "quiet", now=NOW - 600)
    agents.issue(engine, "skewed")
    agents.issue(engine, "gone")
    agents.revoke(engine, "gone")
    from sqlalchemy import update

    with engine.begin() as c:
        c.execute(update(agent).where(agent.c.host == "skewed").values(last_contact=NOW - 5, clock_skew=-95.0))
    reg = agents.Agents(engine, "server")
    got = {(c.rule, c.subject): c.summary for c in agent_conditions(reg, cfg, NOW)}
    assert set(got) == {("agent_silent", "quiet"), ("agent_clock_skew", "skewed")}
    assert "has never reported since its token was issued for 10m 0s" in got[("agent_silent", "quiet")]
    assert got[("agent_clock_skew", "skewed")].startswith("clock of skewed is 95s ahead of the server's")
    assert BUILTIN["agent_silent"].severity == "critical"
    engine.dispose()


def test_tokens_are_stored_only_as_hashes(db_url: str) -> None:
    upgrade(db_url)
    engine = make_engine(db_url)
    token = agents.issue(engine, "ceph1")
    with engine.connect() as c:
        stored = c.execute(select(agent.c.token_hash)).scalar()
    assert token.startswith("rpa_") and token not in stored and stored.startswith("sha256$")
    assert "token_hash" not in agents.list_agents(engine)[0]
    engine.dispose()


def test_behind_a_login_an_agent_host_page_comes_back_after_login_and_ingest_needs_only_the_token(
        sqlite_url: str) -> None:
    from app.credentials import hash_password

    upgrade(sqlite_url)
    engine = make_engine(sqlite_url)
    token = agents.issue(engine, "ceph1")
    cfg = load_config(None, {"host": "server", "storage": {"url": sqlite_url},
                             "web": {"password_hash": hash_password("correct horse", n=2**12)}})
    app = create_app(cfg, collect=False, snapshot=Snapshot(host="server"), migrate=False)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        assert post(client, token, body(batch([run_record(1, time.time())]))).status_code == 200
        r = client.get("/h/ceph1/disks", follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == "/login?next=/h/ceph1/disks"
        assert client.get("/api/hosts").status_code == 401
    engine.dispose()


def test_a_silent_agent_explains_its_hosts_alerts_which_read_suppressed_by_it(server) -> None:
    from sqlalchemy import update

    from app.storage.models import agent as agent_token

    client, engine, token, _ = server
    state = FAILING_DISK
    assert post(client, token, body(batch([run_record(1, time.time(), state=state)]))).status_code == 200
    client.app.state.alert_tick()
    (alert,) = client.get("/h/ceph1/api/alerts").json()["active"]
    assert alert["rule"] == "disk_failing" and alert["suppressed_by"] is None
    with engine.begin() as c:  # ceph1 then said nothing for an hour
        c.execute(update(agent_token).where(agent_token.c.host == "ceph1").values(last_contact=time.time() - 3600))
    client.app.state.alert_tick()
    # agent_silent is kept with the agent's own alerts (keyed by the agent, whichever server leads)
    theirs = {a["rule"]: a for a in client.get("/h/ceph1/api/alerts").json()["active"]}
    assert theirs["agent_silent"]["subject"] == "ceph1" and theirs["agent_silent"]["state"] == "firing"
    assert theirs["agent_silent"]["suppressed_by"] is None  # the parent is not explained by itself
    alert = theirs["disk_failing"]
    assert alert["suppressed_by"] == "agent_silent ceph1"
    assert "ceph1" not in {a["subject"] for a in client.get("/api/alerts").json()["active"]}
    assert "suppressed by agent silent ceph1" in client.get("/h/ceph1/alerts").text
