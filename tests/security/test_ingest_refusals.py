"""Every batch an attacker or a broken agent can send is refused with 400 (or a 4xx that says
why), never a 500 or a "retry" 503, and stores nothing; what was stored before is untouched.
On SQLite and on the real PostgreSQL."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.config import load_config
from app.ingest import agents
from app.ingest.conditions import agent_conditions
from app.scheduler import Snapshot
from app.storage.db import make_engine, upgrade
from app.storage.models import collector_run, entity, rollup_5m, sample, series
from app.web.app import create_app
from tests.test_agents import batch, body, post, run_record

NOW = time.time()


def serving(db_url: str, **limits: Any):  # type: ignore[no-untyped-def]
    """A server with these [agents] limits and one agent, ceph1, that has sent one good batch."""
    upgrade(db_url)
    cfg = load_config(None, {"host": "server", "storage": {"url": db_url}, "agents": limits})
    engine = make_engine(db_url)
    token = agents.issue(engine, "ceph1")
    app = create_app(cfg, collect=False, snapshot=Snapshot(host="server"), migrate=False)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        # What was there before the attack, and must still be there after it.
        assert post(client, token, body(batch([run_record(1, NOW - 60)]))).status_code == 200
        yield client, engine, token, app, cfg
    engine.dispose()


@pytest.fixture
def server(db_url: str):  # type: ignore[no-untyped-def]
    yield from serving(db_url, max_batch_bytes=2_000_000, max_series_per_host=50)


def stored(engine) -> tuple[int, ...]:  # type: ignore[no-untyped-def]
    with engine.connect() as c:
        return tuple(c.execute(select(func.count()).select_from(t)).scalar() for t in
                     (sample, collector_run, entity, series, rollup_5m))


def good() -> dict[str, Any]:
    return batch([run_record(2, NOW - 30)])


def sample0(b: dict[str, Any]) -> list[Any]:
    return b["records"][0]["samples"][0]


def rollup(*points: list[Any]) -> dict[str, Any]:
    return batch([{"seq": 2, "kind": "rollup", "res": 300, "series": [["rackpulse_x", {}, list(points)]]}])


B = int(NOW - 86400) // 300
HOSTILE: dict[str, Callable[[], Any]] = {
    "metric name with a dash": lambda: (b := good(), sample0(b).__setitem__(0, "rackpulse-x"), b)[-1],
    "metric name with a colon (recording rules only)": lambda: (b := good(), sample0(b).__setitem__(0, "a:b"), b)[-1],
    "metric name starting with a digit": lambda: (b := good(), sample0(b).__setitem__(0, "1abc"), b)[-1],
    "metric name with a newline": lambda: (b := good(), sample0(b).__setitem__(0, "a\n# TYPE x counter"), b)[-1],
    "label name with a quote": lambda: (b := good(), sample0(b).__setitem__(1, {'a"b': "x"}), b)[-1],
    "label name host (the server's)": lambda: (b := good(), sample0(b).__setitem__(1, {"host": "other"}), b)[-1],
    "label name __name__": lambda: (b := good(), sample0(b).__setitem__(1, {"__name__": "x"}), b)[-1],
    "a huge value": lambda: (b := good(), sample0(b).__setitem__(2, 1e308), b)[-1],
    "a huge negative value": lambda: (b := good(), sample0(b).__setitem__(2, -1e300), b)[-1],
    "started far in the future": lambda: (b := good(), b["records"][0].__setitem__("started", 1e308), b)[-1],
    "started at minus infinity (as a huge number)": lambda: (b := good(), b["records"][0].__setitem__("started", -1e308),
                                                             b)[-1],
    "sent_at absurd": lambda: (b := good(), b.__setitem__("sent_at", 1e300), b)[-1],
    "seq beyond 64 bits": lambda: (b := good(), b["records"][0].__setitem__("seq", 2**70), b)[-1],
    "duration huge": lambda: (b := good(), b["records"][0].__setitem__("duration", 1e300), b)[-1],
    "interval huge": lambda: (b := good(), b["records"][0].__setitem__("interval", 1e300), b)[-1],
    "NUL in the agent version": lambda: (b := good(), b.__setitem__("agent_version", "1\x00"), b)[-1],
    "NUL in an entity key": lambda: (b := good(), b["records"][0].__setitem__("entities", [["disk", "a\x00", {}]]),
                                     b)[-1],
    "NUL in an error": lambda: (b := good(), b["records"][0].__setitem__("error", "x\x00"), b)[-1],
    "rollup n of zero": lambda: rollup([B, 1, 2, 3, 0]),
    "rollup n beyond any column": lambda: rollup([B, 1, 2, 3, 2**40]),
    "rollup with a bad bucket between good ones": lambda: rollup([B, 1, 2, 3, 1], [10**12, 1, 2, 3, 1],
                                                                 [B + 1, 1, 2, 3, 1]),
    "rollup with a huge max": lambda: rollup([B, 1, 2, 1e308, 1]),
    "rollup whose average is above its max": lambda: rollup([B, 1, 9, 3, 2]),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_batch_is_refused_with_400_and_stores_nothing(server, case: str) -> None:
    client, engine, token, _, _ = server
    before = stored(engine)
    r = post(client, token, body(HOSTILE[case]()))
    assert r.status_code == 400, r.text
    assert "malformed batch" in r.json()["error"]
    assert stored(engine) == before
    # The agent's next good batch is taken as if nothing happened.
    assert post(client, token, body(good())).json()["records"] == 1


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_in_any_field_are_refused(server, literal: str) -> None:
    client, engine, token, _, _ = server
    before = stored(engine)
    text = json.dumps(good())
    for field in ('"started": ', '"sent_at": ', '"duration": '):
        start = text.index(field) + len(field)
        end = min(i for i in (text.find(",", start), text.find("}", start)) if i > 0)
        r = post(client, token, body_text(text[:start] + literal + text[end:]))
        assert r.status_code == 400, (field, r.text)
    value = text.index("36.0")
    assert post(client, token, body_text(text[:value] + literal + text[value + 4:])).status_code == 400
    assert stored(engine) == before


def body_text(text: str) -> bytes:
    import gzip

    return gzip.compress(text.encode())


def test_a_batch_replayed_under_another_instance_id_is_not_counted_twice(server) -> None:
    client, engine, token, _, _ = server
    runs = batch([run_record(2, NOW - 30), run_record(3, NOW - 15)])
    ups = {"seq": 4, "kind": "rollup", "res": 300, "series": [["rackpulse_y", {}, [[B, 1, 2, 3, 4]]]]}
    runs["records"].append(ups)
    assert post(client, token, body(runs)).json()["records"] == 3
    before = stored(engine)
    replay = copy.deepcopy(runs)
    replay["instance"] = "attacker-9999"
    got = post(client, token, body(replay)).json()
    assert (got["records"], got["duplicates"]) == (0, 3)
    assert stored(engine) == before
    with engine.connect() as c:
        assert c.execute(select(rollup_5m.c.n).where(rollup_5m.c.bucket == B)).scalar() == 4  # not 8
    # A real new outbox (new runs under a new instance) is still taken.
    fresh = batch([run_record(1, NOW - 5)], instance="reinstalled-2222")
    assert post(client, token, body(fresh)).json()["records"] == 1


def test_a_host_over_its_series_limit_is_refused_and_agent_cardinality_fires(server) -> None:
    client, engine, token, app, cfg = server
    before = stored(engine)
    many = good()
    many["records"][0]["samples"] = [["rackpulse_x", {"id": str(i)}, 1.0] for i in range(60)]
    r = post(client, token, body(many))
    assert r.status_code == 422
    assert "beyond its limit of 50" in r.json()["error"] and "max_series_per_host" in r.json()["error"]
    assert stored(engine) == before
    conds = agent_conditions(app.state.agents, cfg, time.time())
    assert [(c.rule, c.subject) for c in conds] == [("agent_cardinality", "ceph1")]
    a = app.state.get_alerting()
    a.tick(Snapshot(host="server"), extra=conds, deliver=False)
    assert a.states[("agent_cardinality", "ceph1")].state == "firing"
    # Series it already has are still taken, and that clears the condition.
    assert post(client, token, body(good())).status_code == 200
    assert agent_conditions(app.state.agents, cfg, time.time()) == []
    # Within the limit, new series are fine.
    some = batch([run_record(3, NOW - 10)])
    some["records"][0]["samples"] = [["rackpulse_x", {"id": str(i)}, 1.0] for i in range(40)]
    assert post(client, token, body(some)).status_code == 200


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999", "1" + "0" * 40])
@pytest.mark.parametrize("where", ["state", "entity"])
def test_a_number_that_is_not_finite_deep_in_a_state_or_an_entity_is_refused_before_anything_is_stored(
        server, literal: str, where: str) -> None:
    """`battery.runtime: inf` from an agent's UPS: refused with 400, never stored to break / later."""
    client, engine, token, app, _ = server
    before = stored(engine)
    b = good()
    rec = b["records"][0]
    rec["collector"] = "nut"
    if where == "state":
        rec["state"] = {"ups": [{"name": "u", "up": True, "low_battery": True, "on_battery": True,
                                 "charge": 4.0, "runtime": "@@"}]}
    else:
        rec["entities"] = [["ups", "u", {"nested": [{"runtime": "@@"}]}]]
    r = post(client, token, body_text(json.dumps(b).replace('"@@"', literal)))
    assert r.status_code == 400, r.text
    assert "not finite" in r.json()["error"]
    assert stored(engine) == before
    for page in ("/", "/hosts", "/h/ceph1/", "/h/ceph1/power", "/collectors"):
        assert client.get(page).status_code == 200, page
    app.state.site.alert_tick()


def test_a_state_with_infinity_stored_by_an_older_version_is_read_as_unknown_after_a_restart(db_url: str) -> None:
    """Before this check existed, an agent's Infinity was committed and every later start read it
    back: / and /hosts answered 500 for everyone, after a restart and after `agents revoke`."""
    from sqlalchemy import update

    from app.storage.models import collector_state

    upgrade(db_url)
    cfg = load_config(None, {"host": "server", "storage": {"url": db_url}})
    engine = make_engine(db_url)
    token = agents.issue(engine, "ceph1")
    app = create_app(cfg, collect=False, snapshot=Snapshot(host="server"), migrate=False)
    state = {"ups": [{"name": "u", "up": True, "low_battery": True, "on_battery": True, "charge": 4.0,
                      "runtime": 60.0}]}
    with TestClient(app, base_url="http://127.0.0.1") as client:
        assert post(client, token, body(batch([run_record(1, NOW - 30, collector="nut", state=state)]))).status_code == 200
    with engine.begin() as c:  # what an older version let in
        c.execute(update(collector_state).where(collector_state.c.host == "ceph1")
                  .values(state=json.dumps(state).replace("60.0", "Infinity")))
    agents.revoke(engine, "ceph1")
    restarted = create_app(cfg, collect=False, snapshot=Snapshot(host="server"), migrate=False)
    with TestClient(restarted, base_url="http://127.0.0.1") as client:
        assert restarted.state.agents.snapshots["ceph1"].states["nut"].ups[0].runtime is None
        for page in ("/", "/hosts", "/h/ceph1/", "/h/ceph1/power", "/h/ceph1/collectors"):
            assert client.get(page).status_code == 200, page
        restarted.state.site.alert_tick()
        fired = restarted.state.site.alerting_for("ceph1").states[("ups_low_battery", "u")]
        assert fired.state == "firing" and "runtime unknown" in fired.summary
    engine.dispose()


@pytest.fixture
def tight(db_url: str):  # type: ignore[no-untyped-def]
    """A server whose per-host limits are small enough to reach in a test."""
    yield from serving(db_url, max_batch_items=500, max_collectors_per_host=3, max_entities_per_host=20,
                       max_state_bytes=4096)


def test_a_batch_with_more_items_than_the_limit_is_refused_before_parsing(tight) -> None:
    client, engine, token, _, _ = tight
    before = stored(engine)
    b = good()
    b["records"][0]["samples"] = [["rackpulse_x", {"id": str(i)}, 1.0] for i in range(600)]
    r = post(client, token, body(b))
    assert r.status_code == 413 and "agents.max_batch_items" in r.json()["error"]
    assert stored(engine) == before


def test_more_collector_names_than_the_limit_are_refused_and_agent_cardinality_fires(tight) -> None:
    client, engine, token, app, cfg = tight
    before = stored(engine)
    names = ["alpha", "beta", "gamma"]  # smart is the host's first: four in all
    r = post(client, token, body(batch([run_record(i + 2, NOW - 30 + i, collector=n) for i, n in enumerate(names)])))
    assert r.status_code == 422 and "4 collectors" in r.json()["error"] and "max_collectors_per_host" in r.text
    assert stored(engine) == before
    assert [c.rule for c in agent_conditions(app.state.agents, cfg, time.time())] == ["agent_cardinality"]
    assert post(client, token, body(batch([run_record(2, NOW - 20, collector="alpha")]))).status_code == 200


def test_more_entities_than_the_limit_are_refused(tight) -> None:
    client, engine, token, _, _ = tight
    before = stored(engine)
    b = good()
    b["records"][0]["entities"] = [["disk", f"SER{i}", {"bay": str(i)}] for i in range(25)]
    r = post(client, token, body(b))
    assert r.status_code == 422 and "max_entities_per_host" in r.json()["error"]
    assert stored(engine) == before
    b["records"][0]["entities"] = b["records"][0]["entities"][:10]
    assert post(client, token, body(b)).status_code == 200


def test_a_state_larger_than_the_limit_is_refused(tight) -> None:
    client, engine, token, _, _ = tight
    before = stored(engine)
    b = good()
    b["records"][0]["state"] = {"disks": [{"serial": "x" * 100, "n": i} for i in range(100)]}
    r = post(client, token, body(b))
    assert r.status_code == 422 and "max_state_bytes" in r.json()["error"]
    assert stored(engine) == before


def test_batches_beyond_the_concurrent_limit_wait_their_turn_then_are_told_to_retry(db_url: str) -> None:
    """One slot, held: the next batch waits ingest_wait and gets 503 (the agent retries), and once
    the slot is free it is taken."""
    import asyncio

    import httpx

    upgrade(db_url)
    cfg = load_config(None, {"host": "server", "storage": {"url": db_url},
                             "agents": {"max_concurrent_ingests": 1, "ingest_wait": 0.5}})
    engine = make_engine(db_url)
    token = agents.issue(engine, "ceph1")
    app = create_app(cfg, collect=False, snapshot=Snapshot(host="server"), migrate=False)

    async def scenario() -> tuple[int, int]:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
                headers = {"Authorization": f"Bearer {token}", "Content-Encoding": "gzip"}
                slots = app.state.site.ingest_slots()
                await slots.acquire()  # a batch being parsed
                busy = await c.post("/api/v1/ingest", content=body(good()), headers=headers)
                slots.release()
                free = await c.post("/api/v1/ingest", content=body(good()), headers=headers)
                return busy.status_code, free.status_code

    assert asyncio.run(scenario()) == (503, 200)
    engine.dispose()


def _series(n: int, start: int = 0) -> list[list[Any]]:
    return [["rackpulse_x", {"id": str(i)}, 1.0] for i in range(start, start + n)]


def test_the_series_limit_takes_exactly_its_number_and_refuses_one_more(db_url: str) -> None:
    """max_series_per_host = 10: a host reaching 10 is taken, its 11th series refused; counted
    across batches, and series it already has cost nothing."""
    upgrade(db_url)
    cfg = load_config(None, {"host": "server", "storage": {"url": db_url}, "agents": {"max_series_per_host": 10}})
    engine = make_engine(db_url)
    token = agents.issue(engine, "ceph1")
    app = create_app(cfg, collect=False, snapshot=Snapshot(host="server"), migrate=False)

    def send(seq: int, samples: list[list[Any]]) -> int:
        b = batch([run_record(seq, NOW - 60 + seq, samples=samples)])
        return post(client, token, body(b)).status_code

    with TestClient(app, base_url="http://127.0.0.1") as client:
        assert send(1, _series(6)) == 200
        assert send(2, _series(4, start=6)) == 200  # 10 in all, over two batches
        assert send(3, _series(10)) == 200  # the same ten again: nothing new
        assert send(4, _series(1, start=10)) == 422  # the 11th
        assert send(4, _series(10)) == 200  # the agent's next batch without it is taken
    engine.dispose()


def test_a_refused_batch_of_invented_series_leaves_nothing_of_itself_in_the_servers_memory(server) -> None:
    """20,000 new series over max_series_per_host, three times: the label sets, their keys and
    the frames that built them are let go with the 422 (they stayed: 20 MB after 25,000)."""
    import gc
    import tracemalloc

    client, engine, token, app, cfg = server
    invented = good()
    invented["records"][0]["samples"] = [["rackpulse_x", {"id": f"invented-series-{i:08d}"}, 1.0] for i in range(20_000)]
    payload = body(invented)
    assert len(json.dumps(invented)) > 1 << 20  # large enough for the server to clean up after it
    assert post(client, token, payload).status_code == 422  # caches and lazy imports settle once
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for _ in range(3):
            assert post(client, token, payload).status_code == 422
        gc.collect()
        kept = sum(d.size_diff for d in tracemalloc.take_snapshot().compare_to(before, "filename"))
    finally:
        tracemalloc.stop()
    # pydantic-core's cache of parsed strings (at most 16,384 of them, about 1 MB) may keep some
    assert kept < 2_000_000, f"{kept} bytes kept"
    assert not [k for k in app.state.agents._label_sets if k and k[0][0] == "id"]


def test_a_flood_of_inventory_changes_is_refused_past_its_hourly_bound_and_stores_none_of_it(sqlite_url: str) -> None:
    """An agent rewriting the attributes of its things batch after batch grew entity_event by
    100,000 rows (~20 MB) a batch. Past agents.max_entity_changes_per_hour a batch is refused
    (422, agent_cardinality), and none of its changes is stored."""
    from app.storage.models import entity_event

    def moved(seq: int, n: int, where: str) -> dict[str, Any]:
        return batch([run_record(seq, NOW - 30 + seq, entities=[["disk", f"D{i}", {"bay": f"{where} {i}"}]
                                                                for i in range(n)])])

    for client, engine, token, app, _ in serving(sqlite_url, max_entity_changes_per_hour=1000):
        assert post(client, token, body(moved(2, 600, "shelf 1, bay"))).status_code == 200  # new things: no budget
        assert post(client, token, body(moved(3, 600, "shelf 2, bay"))).status_code == 200  # 600 changes of 1000
        with engine.connect() as c:
            before = c.execute(select(func.count()).select_from(entity_event)).scalar_one()
        r = post(client, token, body(moved(4, 600, "shelf 3, bay")))  # 600 more: past the hour's 1000
        assert r.status_code == 422 and "inventory changes" in r.text
        with engine.connect() as c:
            assert c.execute(select(func.count()).select_from(entity_event)).scalar_one() == before
        assert "ceph1" in app.state.runtime.agents.over_limit
        conds = agent_conditions(app.state.runtime.agents, app.state.runtime.cfg, NOW)
        assert [c.rule for c in conds if c.subject == "ceph1"] == ["agent_cardinality"]
