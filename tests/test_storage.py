"""Storage on SQLite and on the real PostgreSQL server: samples, rollups, retention, inventory."""

from __future__ import annotations

import pytest
from sqlalchemy import func, inspect, select, text

from app.storage.chunks import readable
from app.storage.db import make_engine, upgrade
from app.storage.models import collector_run, rollup_1h, rollup_5m, sample
from app.storage.store import DAY, RES_1H, RES_5M, Store
from collectors.base import CollectResult, Entity, Sample
from collectors.state import dump
from tests.states import one

T0 = 1_790_000_000 // 3600 * 3600  # an hour boundary


@pytest.fixture
def store(db_url: str):  # type: ignore[no-untyped-def]
    upgrade(db_url)
    engine = make_engine(db_url)
    yield Store(engine, "nas")
    engine.dispose()


def result(value: float, **labels: str) -> CollectResult:
    return CollectResult(samples=[Sample.of("rackpulse_disk_temperature_celsius", value, **labels)])


def last_runs(store: Store, collector: str) -> list[dict[str, object]]:
    q = (select(collector_run).where(collector_run.c.host == store.host, collector_run.c.collector == collector)
         .order_by(collector_run.c.started.desc()))
    with store.engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(q)]


def test_a_run_stores_its_samples_its_state_and_a_run_row(store: Store) -> None:
    res = result(33, serial="Z1")
    res.state = one("smart", {"disks": [{"key": "Z1", "device": "sda"}]})
    store.write_run("smart", T0, 0.2, True, None, res)
    sid = store.find_series("rackpulse_disk_temperature_celsius", serial="Z1")
    assert sid is not None
    assert [(p.ts, p.vavg) for p in store.history(sid, T0 - 10, T0 + 10)] == [(T0, 33)]
    assert store.load_states() == {"smart": dump(res.state)}
    assert last_runs(store, "smart")[0]["ok"] is True


def test_a_failed_run_is_recorded_and_loses_no_stored_data(store: Store) -> None:
    res = result(33, serial="Z1")
    res.state = one("smart", {"disks": [{"key": "Z1", "device": "sda"}]})
    store.write_run("smart", T0, 0.1, True, None, res)
    store.write_run("smart", T0 + 30, 5.0, False, "timed out after 5s", None)
    runs = last_runs(store, "smart")
    assert runs[0]["error"] == "timed out after 5s" and runs[0]["ok"] is False
    assert store.load_states() == {"smart": dump(res.state)}  # the last good state stays for the pages
    sid = store.find_series("rackpulse_disk_temperature_celsius", serial="Z1")
    assert sid is not None and len(store.history(sid, T0 - 1, T0 + 100)) == 1


def test_unstored_series_and_non_finite_values_are_not_stored(store: Store) -> None:
    res = CollectResult(samples=[Sample.of("rackpulse_disk_info", 1, serial="Z1"),
                                 Sample.of("rackpulse_disk_temperature_celsius", float("nan"), serial="Z1")])
    store.write_run("smart", T0, 0.1, True, None, res, skip=frozenset({"rackpulse_disk_info"}))
    with store.engine.connect() as c:
        assert c.execute(select(func.count()).select_from(sample)).scalar() == 0


def test_rollups_keep_min_avg_max_and_hourly_rollups_weight_by_count(store: Store) -> None:
    with store.engine.begin() as conn:
        sid = store.series_ids(conn, [("rackpulse_x", "[]")])[0]
    rows = [(sid, T0 + i * 30, float(i)) for i in range(240)]  # two hours at 30 s
    store.write_rows(rows)
    store.make_rollups(now=T0 + 2 * 3600 + 1)
    with store.engine.connect() as c:
        five = c.execute(select(rollup_5m.c.bucket * RES_5M, rollup_5m.c.vmin, rollup_5m.c.vavg, rollup_5m.c.vmax,
                                rollup_5m.c.n).order_by(rollup_5m.c.bucket)).all()
        hours = c.execute(select(rollup_1h.c.bucket * RES_1H, rollup_1h.c.vmin, rollup_1h.c.vavg, rollup_1h.c.vmax,
                                 rollup_1h.c.n).order_by(rollup_1h.c.bucket)).all()
    assert len(five) == 24 and tuple(five[0]) == (T0, 0, 4.5, 9, 10)
    assert [tuple(h) for h in hours] == [(T0, 0, 59.5, 119, 120), (T0 + 3600, 120, 179.5, 239, 120)]
    # Folding again changes nothing (idempotent watermark).
    assert store.make_rollups(now=T0 + 2 * 3600 + 1) == 0


def test_a_long_chart_reads_rollups_and_the_newest_part_from_raw(store: Store) -> None:
    with store.engine.begin() as conn:
        sid = store.series_ids(conn, [("rackpulse_x", "[]")])[0]
    store.write_rows([(sid, T0 + i * 30, 10.0) for i in range(120)])
    store.make_rollups(now=T0 + 3600)
    store.write_rows([(sid, T0 + 3600 + i * 30, 20.0) for i in range(20)])  # after the watermark
    pts = store.history(sid, T0 - 7 * DAY, T0 + 2 * 3600)  # a week: 5-minute rollups
    assert [p.vavg for p in pts[:12]] == [10.0] * 12
    assert [p.vavg for p in pts[12:]] == [20.0, 20.0]


def raw_times(store: Store, sid: int) -> list[int]:
    """Every raw sample's time of a series, rows and blocks alike."""
    from app.storage import blocks

    with store.engine.connect() as c:
        rows = [int(t) for (t,) in c.execute(select(sample.c.ts).where(sample.c.series_id == sid))]
        packed = blocks.read(c, [sid], 0, 2**62).get(sid, {})
    return sorted(set(rows) | set(packed))


def test_retention_prunes_raw_after_rollup_and_keeps_hourly_forever(store: Store) -> None:
    with store.engine.begin() as conn:
        sid = store.series_ids(conn, [("rackpulse_x", "[]")])[0]
    store.write_rows([(sid, T0 + i * 300, 1.0) for i in range(12 * 24 * 10)])  # ten days
    now = T0 + 10 * DAY
    store.prune(raw_days=7, rollup_5m_days=365, rollup_1h_days=0, now=now)
    with store.engine.connect() as c:  # nothing rolled up yet: raw must stay
        assert c.execute(select(func.count()).select_from(sample)).scalar() == 12 * 24 * 10
    store.make_rollups(now=now)
    store.prune(raw_days=7, rollup_5m_days=365, rollup_1h_days=0, now=now)
    # the older raw samples are in blocks by now, which go whole (2 hours of raw at most kept beyond);
    # on PostgreSQL the older rollups are in chunks
    r5, r1h = (readable(store.dialect, t) for t in (rollup_5m, rollup_1h))
    assert now - 7 * DAY - 7200 < min(raw_times(store, sid)) <= now - 7 * DAY
    with store.engine.connect() as c:
        assert c.execute(select(func.count()).select_from(r1h)).scalar() == 240
    store.prune(raw_days=7, rollup_5m_days=1, rollup_1h_days=0, now=now + 400 * DAY)
    with store.engine.connect() as c:
        assert c.execute(select(func.count()).select_from(r5)).scalar() == 0
        assert c.execute(select(func.count()).select_from(r1h)).scalar() == 240
        assert c.execute(select(func.count()).select_from(collector_run)).scalar() == 0


def test_ninety_days_of_raw_samples_keep_collector_runs_for_a_week_only(store: Store) -> None:
    """raw_days defaults to 90 now that old samples are blocks; a run's row is not a sample and
    would be millions of rows in 90 days, so runs go after RUNS_DAYS whatever raw_days says."""
    from app.config import StorageConfig
    from app.storage.rollups import RUNS_DAYS

    assert StorageConfig().raw_days == 90.0
    with store.engine.begin() as conn:
        sid = store.series_ids(conn, [("rackpulse_x", "[]")])[0]
    now = T0 + 20 * DAY
    for day in (19, 10, 5):  # runs 1, 10 and 15 days old
        store.write_run("host", T0 + day * DAY, 0.1, True, None, None)
    store.write_rows([(sid, T0 + 10 * DAY, 1.0), (sid, T0 + 19 * DAY, 2.0)])
    store.make_rollups(now=now)
    store.prune(raw_days=90, rollup_5m_days=35, rollup_1h_days=0, now=now)
    with store.engine.connect() as c:
        started = sorted(s for (s,) in c.execute(select(collector_run.c.started)))
    assert started == [T0 + 19 * DAY] and RUNS_DAYS == 7.0
    assert raw_times(store, sid) == [T0 + 10 * DAY, T0 + 19 * DAY]  # the samples stay for 90 days
    store.prune(raw_days=3, rollup_5m_days=35, rollup_1h_days=0, now=now + 3 * DAY)
    with store.engine.connect() as c:  # a raw_days shorter than a week takes the runs with it
        assert c.execute(select(func.count()).select_from(collector_run)).scalar() == 0


def test_inventory_changes_become_history_per_serial_and_per_bay(store: Store) -> None:
    def run(t: float, *ents: Entity) -> None:
        store.write_run("smart", t, 0.1, True, None, CollectResult(entities=list(ents)))

    run(T0, Entity("disk", "Z1", {"device": "sdh", "bay": "bay 7"}), Entity("bay", "bay 7", {"serial": "Z1"}))
    run(T0 + 30, Entity("disk", "Z1", {"device": "sdh", "bay": "bay 7"}), Entity("bay", "bay 7", {"serial": "Z1"}))
    # Z1 pulled, Z9 inserted into bay 7 and named sdm by the kernel
    run(T0 + 60, Entity("disk", "Z9", {"device": "sdm", "bay": "bay 7"}), Entity("bay", "bay 7", {"serial": "Z9"}))
    bay = [(e["field"], e["old"], e["new"]) for e in store.events("bay", "bay 7")]
    assert bay == [("serial", "Z1", "Z9"), ("present", None, "appeared")]
    z1 = [(e["field"], e["old"], e["new"]) for e in store.events("disk", "Z1")]
    assert z1 == [("present", "present", "gone"), ("present", None, "appeared")]
    assert {e["key"]: e["present"] for e in store.entities("disk")} == {"Z1": False, "Z9": True}


def test_the_inventory_diff_survives_a_restart(store: Store) -> None:
    store.write_run("mdraid", T0, 0.1, True, None, CollectResult(entities=[Entity("md_array", "md0", {"degraded": False})]))
    fresh = Store(store.engine, "nas")  # a new process: nothing cached
    fresh.write_run("mdraid", T0 + 30, 0.1, True, None,
                    CollectResult(entities=[Entity("md_array", "md0", {"degraded": True})]))
    assert [(e["field"], e["old"], e["new"]) for e in fresh.events("md_array", "md0")][0] == \
        ("degraded", "false", "true")


def test_a_thing_another_writer_stored_since_the_cache_was_read_does_not_lose_the_run(store: Store) -> None:
    # The demo seeding its past while serving, a second server of the same host: each Store
    # read the inventory once; an insert of what the other had stored since failed every run.
    modem = Entity("modem", "356938035643801", {"name": "3G link 1"})
    store.write_run("modems", T0, 0.1, True, None, CollectResult())  # its cache read: no modem yet
    other = Store(store.engine, "nas")
    other.write_run("modems", T0 + 1, 0.1, True, None, CollectResult(entities=[modem]))
    for ts in (T0 + 30, T0 + 60):
        store.write_run("modems", ts, 0.1, True, None, CollectResult(entities=[modem], samples=[
            Sample.of("rackpulse_modem_signal_quality_ratio", 0.5, imei="356938035643801")]))
    assert [e["key"] for e in store.entities("modem")] == ["356938035643801"]
    with store.engine.connect() as c:
        assert c.execute(select(func.count()).select_from(sample)).scalar() == 2


def test_values_are_stored_exactly_and_integers_and_booleans_as_numbers(store: Store) -> None:
    # PostgreSQL gets the values as an array literal the Store writes itself: every float must
    # come back bit for bit, and a collector's int or bool must not reach it as "True".
    values = [0.1, 1 / 3, 1e-300, -2.5e17, 123456789.123456789, 5e-324]
    res = CollectResult(samples=[Sample("rackpulse_x", v, (("i", str(i)),)) for i, v in enumerate(values)]
                        + [Sample("rackpulse_x", True, (("i", "bool"),)), Sample("rackpulse_x", 7, (("i", "int"),))])
    store.write_run("c", T0, 0.1, True, None, res)
    got = {}
    for label in [str(i) for i in range(len(values))] + ["bool", "int"]:
        sid = store.find_series("rackpulse_x", i=label)
        assert sid is not None
        got[label] = store.history(sid, T0 - 1, T0 + 1)[0].vavg
    assert [got[str(i)] for i in range(len(values))] == values
    assert (got["bool"], got["int"]) == (1.0, 7.0)


def test_a_rolled_back_run_does_not_leave_stale_series_ids_behind(store: Store) -> None:
    # The id caches are filled inside the transaction that creates the series; after a rollback
    # they would name rows that do not exist, and the next run would fail on the foreign key.
    with pytest.raises(RuntimeError), store.engine.begin() as conn:
        store.write_run_in(conn, "smart", T0, 0.1, True, None, result(33, serial="Z1"))
        raise RuntimeError("the batch failed after the samples were written")
    store.forget()
    store.write_run("smart", T0 + 30, 0.1, True, None, result(34, serial="Z1"))
    sid = store.find_series("rackpulse_disk_temperature_celsius", serial="Z1")
    assert sid is not None and [p.vavg for p in store.history(sid, T0 - 1, T0 + 60)] == [34]


def test_writing_the_same_second_twice_is_not_an_error(store: Store) -> None:
    store.write_run("smart", T0, 0.1, True, None, result(33, serial="Z1"))
    store.write_run("smart", T0 + 0.5, 0.1, True, None, result(34, serial="Z1"))
    sid = store.find_series("rackpulse_disk_temperature_celsius", serial="Z1")
    assert sid is not None and len(store.history(sid, T0 - 1, T0 + 2)) == 1


def test_migrations_upgrade_an_empty_database_and_match_the_models(db_url: str) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from app.storage.chunks import PG_ONLY
    from app.storage.models import metadata

    upgrade(db_url)
    engine = make_engine(db_url)
    with engine.connect() as conn:
        def outside_the_models(name: str | None, type_: str, parents: object) -> bool:
            return not (type_ == "table" and name in PG_ONLY)

        context = MigrationContext.configure(conn, opts={"include_name": outside_the_models})
        diff = compare_metadata(context, metadata)
        assert diff == []
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == "0013"
        tables = set(inspect(conn).get_table_names())
        assert ({"rollup_5m_chunk", "rollup_1h_chunk"} <= tables) == (engine.dialect.name == "postgresql")
        assert "sample_block" in tables and "sample_chunk" not in tables  # raw samples' blocks, on both
    engine.dispose()


def test_migrations_upgrade_from_the_previous_revision_keeping_data(db_url: str) -> None:
    upgrade(db_url, "0001")
    engine = make_engine(db_url)
    with engine.begin() as conn:
        assert "entity" not in inspect(conn).get_table_names()
        conn.execute(text("INSERT INTO series (host, metric, labels) VALUES ('nas', 'm', '[]')"))
        conn.execute(text("INSERT INTO sample (series_id, ts, value) VALUES (1, 10, 2.5)"))
    upgrade(db_url)
    with engine.connect() as conn:
        assert "entity" in inspect(conn).get_table_names()
        assert conn.execute(text("SELECT value FROM sample")).scalar() == 2.5
    engine.dispose()


def test_sqlite_runs_in_wal_mode(sqlite_url: str) -> None:
    engine = make_engine(sqlite_url)
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    engine.dispose()


def test_state_is_json_with_its_version_and_round_trips(store: Store) -> None:
    state = one("mdraid", {"arrays": [{"name": "md0", "members": [{"serial": "Z1", "slot": 7, "state": "active"}]}]})
    store.write_run("mdraid", T0, 0.1, True, None, CollectResult(state=state))
    stored = store.load_states()["mdraid"]
    assert stored["state_version"] == 1 and one("mdraid", stored) == state


def test_a_source_that_went_away_leaves_no_stored_state_to_show_after_a_restart(store: Store) -> None:
    state = one("mdraid", {"arrays": [{"name": "md0"}]})
    store.write_run("mdraid", T0, 0.1, True, None, CollectResult(state=state))
    store.write_run("mdraid", T0 + 30, 0.1, True, None, CollectResult())  # no data: /proc/mdstat is gone
    assert "mdraid" not in store.load_states()


def test_samples_written_while_rollups_are_made_all_end_up_in_the_rollups(db_url: str) -> None:
    """Writers (late ones too, like an agent's backlog) race make_rollups; afterwards every
    5-minute and hourly rollup counts exactly the raw samples of its bucket."""
    import threading

    from sqlalchemy import text as sql

    upgrade(db_url)
    engine = make_engine(db_url)
    stores = [Store(engine, f"h{i}") for i in range(3)]
    t0 = 1_795_000_000 // 3600 * 3600
    clock = {"t": t0}
    stop = threading.Event()

    def writer(store: Store, late: bool) -> None:
        k = 0
        while not stop.is_set():
            ts = clock["t"] - (900 if late else 0) + k % 7
            store.write_run("x", ts, 0.0, True, None, CollectResult(
                samples=[Sample.of("rackpulse_x", k % 5, i=str(i)) for i in range(20)]))
            k += 1

    threads = [threading.Thread(target=writer, args=(s, i == 2)) for i, s in enumerate(stores)]
    for t in threads:
        t.start()
    for _ in range(60):  # two simulated hours in 2-minute steps, folding all the while
        clock["t"] += 120
        stores[0].make_rollups(now=clock["t"])
    stop.set()
    for t in threads:
        t.join()
    stores[0].make_rollups(now=clock["t"] + 7200)
    # The older raw samples are in blocks meanwhile (and on PostgreSQL the older rollups in
    # chunks): read rows and blocks (chunks) alike
    from app.storage import blocks

    sfx = "_all" if engine.dialect.name == "postgresql" else ""
    with engine.connect() as c:
        raw5: dict[tuple[int, int], int] = {}
        ids = [int(i) for (i,) in c.execute(sql("SELECT id FROM series"))]
        rows = {}
        for sid, ts, v in c.execute(sql("SELECT series_id, ts, value FROM sample")):
            rows.setdefault(int(sid), []).append((int(ts), float(v)))
        packed = blocks.read(c, ids, 0, 2**62)
        for sid in ids:
            for ts, _ in blocks.merged(packed.get(sid, {}), rows.get(sid, [])):
                raw5[sid, ts // 300] = raw5.get((sid, ts // 300), 0) + 1
        assert c.execute(sql("SELECT count(*) FROM sample_block")).scalar()  # the race reached the blocks
        got5 = dict(((sid, b), n) for sid, b, n in c.execute(sql(f"SELECT series_id, bucket, n FROM rollup_5m{sfx}")))
        got1h = dict(((sid, b), n) for sid, b, n in c.execute(sql(f"SELECT series_id, bucket, n FROM rollup_1h{sfx}")))
    engine.dispose()
    assert raw5 and got5 == raw5
    raw1h: dict[tuple[int, int], int] = {}
    for (sid, b), n in raw5.items():
        raw1h[(sid, b // 12)] = raw1h.get((sid, b // 12), 0) + n
    assert got1h == raw1h


def test_a_chart_shows_the_finest_data_there_is_for_each_part_of_its_range(store: Store) -> None:
    """A week's chart reads 5-minute rollups; where they begin later than the week (a database
    that has only older, coarser data: the demo's seeded past, a copy, a pruned one) the part
    before comes from the hourly ones; and a short chart's raw samples are preceded likewise."""
    store.write_run("x", T0, 0.1, True, None, result(1.0, serial="Z1"))  # the series
    sid = store.find_series("rackpulse_disk_temperature_celsius", serial="Z1")
    assert sid is not None
    now = T0 + 7 * DAY
    hourly = [{"series_id": sid, "bucket": b // RES_1H, "vmin": 10.0, "vavg": 10.0, "vmax": 10.0, "n": 120}
              for b in range(now - 7 * DAY, now - DAY, RES_1H)]
    five = [{"series_id": sid, "bucket": b // RES_5M, "vmin": 20.0, "vavg": 20.0, "vmax": 20.0, "n": 10}
            for b in range(now - DAY, now, RES_5M)]
    store.import_rollups({RES_1H: hourly, RES_5M: five}, {RES_1H: now, RES_5M: now})
    week = store.history(sid, now - 7 * DAY, now)
    assert week[0].ts == now - 7 * DAY and week[0].vavg == 10.0  # from the hourly rollups
    assert week[-1].vavg == 20.0 and len(week) == 6 * 24 + 288  # then every 5-minute one
    assert [p.ts for p in week] == sorted(p.ts for p in week)
    store.write_run("x", now - 600, 0.1, True, None, result(30.0, serial="Z1"))
    hour = store.history(sid, now - 3600, now)  # raw samples only for its last ten minutes
    assert [p.vavg for p in hour] == [20.0] * 10 + [30.0]
    # in parts, each at its own resolution: a chart's gaps are judged by each part's own step
    parts = store.history_parts(sid, now - 3600, now)
    assert [(res, len(pts)) for res, pts in parts] == [(RES_5M, 10), (0, 1)]


def test_a_bulk_of_samples_sent_twice_is_stored_once_and_the_new_ones_with_it(store: Store) -> None:
    """On PostgreSQL a bulk goes in by COPY; one already stored row makes COPY fail, and the
    ON CONFLICT insert then keeps the others (an agent's batch replayed after a lost answer)."""
    with store.engine.begin() as conn:
        sids = store.series_ids(conn, [(f"m{i}", "[]") for i in range(100)])
    first = [(sid, T0, float(i)) for i, sid in enumerate(sids)]
    store.write_rows(first)
    again = first[50:] + [(sid, T0 + 30, 1.5) for sid in sids]  # half replayed, plus a new timestamp
    store.write_rows(again)
    with store.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(sample)).scalar_one() == 200
        assert conn.execute(select(sample.c.value).where(sample.c.series_id == sids[7],
                                                         sample.c.ts == T0)).scalar_one() == 7.0
    res = CollectResult(samples=[Sample.of("rackpulse_disk_temperature_celsius", 30 + i % 7, serial=f"Z{i}")
                                 for i in range(80)])
    store.write_run("smart", T0, 0.1, True, None, res)
    store.write_run("smart", T0, 0.1, True, None, res)  # the same run twice: no error, no double
    sid = store.find_series("rackpulse_disk_temperature_celsius", serial="Z12")
    assert sid is not None and [(p.ts, p.vavg) for p in store.history(sid, T0 - 1, T0 + 1)] == [(T0, 35.0)]


def test_the_highest_value_of_a_span_is_the_same_as_the_highest_point_its_chart_shows(store: Store) -> None:
    """Hourly maxima up to the hourly fold, 5-minute ones after, raw samples after the 5-minute
    fold: one query that gives what reading the whole chart and taking its top gave."""
    with store.engine.begin() as conn:
        sid = store.series_ids(conn, [("rackpulse_disk_temperature_celsius", '[["serial","Z1"]]')])[0]
    store.write_rows([(sid, T0 + i * 60, 30.0 + (i % 97) / 10) for i in range(60 * 24 * 3)])  # three days
    store.make_rollups(now=T0 + 2 * DAY + 1800)
    store.write_rows([(sid, T0 + 3 * DAY + 60, 55.5)])  # after every fold: only raw
    assert store.highest(sid, T0, T0 + 3 * DAY) == max(p.vmax for p in store.history(sid, T0, T0 + 3 * DAY)) == 39.6
    assert store.highest(sid, T0, T0 + 4 * DAY) == 55.5
    assert store.highest(sid, T0 + 3 * DAY, T0 + 3 * DAY + 30) is None  # nothing there
    for lo, hi in ((36 * 3600 + 300, 36 * 3600 + 900), (35 * 3600 + 1500, 37 * 3600 + 600)):  # parts of hours
        assert store.highest(sid, T0 + lo, T0 + hi) == max(p.vmax for p in store.history(sid, T0 + lo, T0 + hi))


@pytest.mark.peers  # the real PostgreSQL server
def test_two_servers_migrating_a_new_postgresql_database_at_once_both_succeed(pg_url: str) -> None:
    """Two servers started together on a new database: the second waits for the first's migration
    (an advisory lock) instead of failing on "alembic_version already exists". Without the lock
    the migrations block each other's DDL and never end: the wait is bounded by a few times what
    one migration takes alone on this machine, and the stuck ones are cut off, so a lost lock
    fails in seconds (it took six minutes of joins before)."""
    import threading
    import time

    from sqlalchemy import text

    from app.storage.db import make_engine, upgrade
    from tests.conftest import pg_database

    with pg_database() as alone:
        t0 = time.monotonic()
        upgrade(alone)
        one = time.monotonic() - t0
    errors: list[BaseException] = []

    def migrate() -> None:
        try:
            upgrade(pg_url)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=migrate, daemon=True) for _ in range(3)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + max(10.0, 5 * one)  # three in a row, and room for a loaded machine
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    stuck = sum(t.is_alive() for t in threads)
    engine = make_engine(pg_url)
    if stuck:
        with engine.connect() as c:  # cut the stuck migrations off, so nothing hangs past the test
            c.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                           "WHERE datname = current_database() AND pid <> pg_backend_pid()"))
        for t in threads:
            t.join(10)
    assert stuck == 0, f"{stuck} of 3 migrations still running after {max(10.0, 5 * one):.0f} s (one alone: {one:.1f} s)"
    assert errors == []
    with engine.connect() as c:
        assert c.execute(text("SELECT count(*) FROM alembic_version")).scalar_one() == 1
    engine.dispose()


def test_a_year_of_hourly_rollups_is_grouped_by_the_database_with_each_groups_extremes(store: Store) -> None:
    with store.engine.begin() as conn:
        sid = store.series_ids(conn, [("rackpulse_x", "[]")])[0]
    end = T0 // RES_1H
    rows = [{"series_id": sid, "bucket": b, "vmin": 10.0, "vavg": 11.0, "vmax": 12.0, "n": 120}
            for b in range(end - 365 * 24, end)]
    rows[5000] = {**rows[5000], "vmin": -3.0, "vavg": 30.0, "vmax": 99.0}
    store.import_rollups({RES_1H: rows}, {RES_5M: T0, RES_1H: T0})
    pts = store.history(sid, T0 - 365 * DAY, T0)
    assert len(pts) == 1460  # six hours a point, grouped from the first of each six
    assert {b.ts - a.ts for a, b in zip(pts, pts[1:], strict=False)} == {6 * RES_1H}
    spike = next(p for p in pts if p.vmax == 99.0)
    assert spike.vmin == -3.0 and spike.vavg == pytest.approx((11.0 * 5 + 30.0) / 6)


def test_imported_rollups_keep_a_bucket_that_is_there_already_and_add_the_rest(store: Store) -> None:
    # The demo writes its disks' year first and every series' two days after: where both have a
    # bucket, the first stays (ON CONFLICT DO NOTHING, through the driver's own executemany).
    with store.engine.begin() as conn:
        sid = store.series_ids(conn, [("rackpulse_x", "[]")])[0]
    end = T0 // RES_1H

    def rows(first: int, count: int, value: float) -> list[dict[str, object]]:
        return [{"series_id": sid, "bucket": b, "vmin": value, "vavg": value, "vmax": value, "n": 120}
                for b in range(first, first + count)]

    store.import_rollups({RES_1H: rows(end - 10, 6, 1.0)}, {RES_1H: T0})
    store.import_rollups({RES_1H: rows(end - 8, 8, 2.0), RES_5M: []}, {RES_1H: T0})
    with store.engine.connect() as conn:
        q = select(rollup_1h.c.bucket, rollup_1h.c.vavg).where(rollup_1h.c.series_id == sid)
        got = {int(bucket): float(vavg) for bucket, vavg in conn.execute(q)}
    assert got == {**{b: 1.0 for b in range(end - 10, end - 4)}, **{b: 2.0 for b in range(end - 4, end)}}
