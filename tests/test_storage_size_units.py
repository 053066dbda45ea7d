"""storage.max_size piece by piece, on a few rows written by hand: what each tier counts as its
oldest point, what a step deletes, which rows of a log may never go, and the note a trim leaves.
tests/test_storage_size.py fills a database and trims it whole; these pin each rule on its own."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, Table, func, insert, select, text

from app.storage import size
from app.storage.base import DAY, RES_1H, RES_5M
from app.storage.db import make_engine, upgrade
from app.storage.grouped_cache import grouped_cache
from app.storage.meta import get_meta
from app.storage.models import (
    alert_event,
    audit,
    collector_run,
    entity_event,
    outbox,
    rollup_1h,
    rollup_5m,
    sample,
)
from app.storage.size import LOGS, TIERS, drop_before, last_trim, oldest_of, parse_size, trim, used_bytes

NOW = 1_800_000_000
BY_NAME = {t.name: t for t in (*TIERS, *LOGS)}


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    upgrade(db_url)
    eng = make_engine(db_url)
    yield eng
    eng.dispose()


def rows(engine: Engine, table: Table) -> int:
    with engine.connect() as c:
        return int(c.execute(select(func.count()).select_from(table)).scalar_one())


def put(engine: Engine, table: Table, values: list[dict[str, object]]) -> None:
    with engine.begin() as c:
        c.execute(insert(table), values)


def samples(engine: Engine, *times: int) -> None:
    put(engine, sample, [{"series_id": 1, "ts": t, "value": 1.0} for t in times])


def rollups(engine: Engine, table: Table, *buckets: int) -> None:
    put(engine, table, [{"series_id": 1, "bucket": b, "vmin": 1.0, "vavg": 1.0, "vmax": 1.0, "n": 1} for b in buckets])


def runs(engine: Engine, *times: float) -> None:
    put(engine, collector_run, [{"host": "nas", "collector": "mdraid", "started": t, "duration": 0.1, "ok": True}
                                for t in times])


def event(engine: Engine, ts: float) -> int:
    with engine.begin() as c:
        return int(c.execute(insert(alert_event).values(
            host="nas", rule="disk_failed", subject="sda", ts=ts, kind="firing", severity="critical",
            summary="s", labels="{}").returning(alert_event.c.id)).scalar_one())


def delivery(engine: Engine, event_id: int, created: float, done: str | None) -> None:
    """A notification of an event: delivered, given up, or still waiting (``done`` None)."""
    put(engine, outbox, [{"event_id": event_id, "channel": "hook", "created": created, "attempts": 1,
                          "next_attempt": created, "delivered_at": created + 1 if done == "delivered" else None,
                          "gave_up_at": created + 1 if done == "gave up" else None}])


@pytest.mark.parametrize("value, expected", [
    ("1.5GB", 1_500_000_000), ("5gb", 5 * 10**9), (" 5 GB ", 5 * 10**9), ("5 KiB", 5 * 2**10), ("3MiB", 3 * 2**20),
    ("2 TiB", 2 * 2**40), ("5TB", 5 * 10**12), ("7 KB", 7000), ("5", 5), ("12 B", 12), (4096, 4096),
    (None, None), ("", None), (0, None), ("0", None), ("0 GB", None),
])
def test_a_size_is_read_in_decimal_or_binary_units_and_zero_means_no_bound(value: str | int | None,
                                                                        expected: int | None) -> None:
    assert parse_size(value) == expected


@pytest.mark.parametrize("value", ["5T", "5 XB", "GB", "-5GB", "5 GB 3", "five GB", "1e9"])
def test_a_size_without_a_number_and_a_unit_is_refused_quoting_it(value: str) -> None:
    with pytest.raises(ValueError, match=f"storage.max_size '{value}': a number and B, KB"):
        parse_size(value)


def test_the_tiers_go_raw_first_a_day_at_a_time_and_hourly_rollups_a_week_at_a_time() -> None:
    assert [(t.name, t.table.name, t.step, t.unit) for t in TIERS] == [
        ("raw samples", "sample", DAY, 1), ("5-minute rollups", "rollup_5m", DAY, RES_5M),
        ("hourly rollups", "rollup_1h", 7 * DAY, RES_1H)]
    assert [(t.name, t.table.name, t.key, t.step) for t in LOGS] == [
        ("inventory changes", "entity_event", "ts", DAY), ("collector runs", "collector_run", "started", DAY),
        ("alert events", "alert_event", "ts", DAY), ("audit entries", "audit", "ts", DAY),
        ("finished notifications", "outbox", "created", DAY)]
    assert all(t.log for t in LOGS) and not any(t.log for t in TIERS)


def test_an_empty_tier_has_no_oldest_point_and_a_step_deletes_nothing(engine: Engine) -> None:
    for tier in (*TIERS, *LOGS):
        assert oldest_of(engine, tier) is None, tier.name
        assert drop_before(engine, tier, NOW) == 0, tier.name


def test_a_rollups_oldest_point_is_its_first_bucket_in_seconds(engine: Engine) -> None:
    samples(engine, NOW - 500, NOW - 100)
    rollups(engine, rollup_5m, NOW // RES_5M - 10, NOW // RES_5M - 3)
    rollups(engine, rollup_1h, NOW // RES_1H - 30, NOW // RES_1H - 2)
    assert oldest_of(engine, BY_NAME["raw samples"]) == NOW - 500
    assert oldest_of(engine, BY_NAME["5-minute rollups"]) == (NOW // RES_5M - 10) * RES_5M
    assert oldest_of(engine, BY_NAME["hourly rollups"]) == (NOW // RES_1H - 30) * RES_1H


def test_a_step_deletes_what_lies_before_the_cut_and_keeps_the_cut_itself(engine: Engine) -> None:
    samples(engine, NOW - 300, NOW - 200, NOW - 100)
    assert drop_before(engine, BY_NAME["raw samples"], NOW - 200) == 1
    assert oldest_of(engine, BY_NAME["raw samples"]) == NOW - 200
    first = NOW // RES_5M - 10
    rollups(engine, rollup_5m, first, first + 1, first + 2)
    # a cut inside a bucket keeps that bucket: the time is counted in whole buckets
    assert drop_before(engine, BY_NAME["5-minute rollups"], (first + 2) * RES_5M - 1) == 1
    assert oldest_of(engine, BY_NAME["5-minute rollups"]) == (first + 1) * RES_5M
    hour = NOW // RES_1H - 5
    rollups(engine, rollup_1h, hour, hour + 1)
    assert drop_before(engine, BY_NAME["hourly rollups"], (hour + 1) * RES_1H) == 1
    assert rows(engine, rollup_1h) == 1


def test_dropping_rollups_forgets_the_charts_kept_from_them_and_dropping_raw_samples_does_not(engine: Engine) -> None:
    cache = grouped_cache(engine)
    samples(engine, NOW - 300)
    before = cache.generation
    drop_before(engine, BY_NAME["raw samples"], NOW)
    assert cache.generation == before
    drop_before(engine, BY_NAME["5-minute rollups"], NOW)  # nothing there: nothing to forget
    assert cache.generation == before
    rollups(engine, rollup_5m, NOW // RES_5M - 10)
    drop_before(engine, BY_NAME["5-minute rollups"], NOW)
    assert cache.generation == before + 1
    rollups(engine, rollup_1h, NOW // RES_1H - 10)
    drop_before(engine, BY_NAME["hourly rollups"], NOW)
    assert cache.generation == before + 2


def test_a_notification_still_waiting_and_the_event_it_carries_are_never_given_up(engine: Engine) -> None:
    old = NOW - 10 * DAY
    waiting, delivered, gave_up = event(engine, old), event(engine, old + 1), event(engine, old + 2)
    delivery(engine, waiting, old + 5, None)
    delivery(engine, delivered, old + 6, "delivered")
    delivery(engine, gave_up, old + 7, "gave up")
    notes, events = BY_NAME["finished notifications"], BY_NAME["alert events"]
    assert oldest_of(engine, notes) == old + 6  # the waiting one is not counted
    assert oldest_of(engine, events) == old + 1
    # the events first: judged while every notification is still there
    assert drop_before(engine, events, NOW) == 2 and drop_before(engine, notes, NOW) == 2
    with engine.connect() as c:
        assert c.execute(select(outbox.c.event_id, outbox.c.delivered_at)).all() == [(waiting, None)]
        assert c.execute(select(alert_event.c.id)).scalars().all() == [waiting]


def test_a_logs_step_deletes_its_rows_before_the_cut(engine: Engine) -> None:
    runs(engine, NOW - 3 * DAY, NOW - 2 * DAY, NOW - 10)
    put(engine, audit, [{"ts": NOW - 5 * DAY, "actor": "alice", "action": "login"}])
    put(engine, entity_event, [{"host": "nas", "kind": "disk", "key": "sda", "ts": NOW - 4 * DAY, "field": "state"}])
    assert oldest_of(engine, BY_NAME["collector runs"]) == NOW - 3 * DAY
    assert drop_before(engine, BY_NAME["collector runs"], NOW - 2 * DAY) == 1
    assert rows(engine, collector_run) == 2
    assert drop_before(engine, BY_NAME["audit entries"], NOW - 5 * DAY) == 0  # the cut itself stays
    assert drop_before(engine, BY_NAME["audit entries"], NOW - 5 * DAY + 1) == 1
    assert oldest_of(engine, BY_NAME["inventory changes"]) == NOW - 4 * DAY


def test_within_the_bound_nothing_goes_and_no_note_is_left(engine: Engine) -> None:
    runs(engine, NOW - 9 * DAY)
    samples(engine, NOW - 9 * DAY)
    assert trim(engine, used_bytes(engine) * 2, NOW, now=NOW) == []
    assert last_trim(engine) is None and get_meta(engine, "size_trimmed") is None
    assert get_meta(engine, size.PG_TRIMMED_AT) is None
    assert rows(engine, collector_run) == rows(engine, sample) == 1


def test_a_step_says_what_went_before_when_in_local_time_with_its_rows(engine: Engine) -> None:
    tier = BY_NAME["collector runs"]
    runs(engine, NOW - 9 * DAY, NOW - 9 * DAY + 60)
    said, _ = size._trim_logs(engine, 0, NOW, False, used_bytes(engine))
    cut = time.strftime("%Y-%m-%d %H:%M", time.localtime(NOW - 8 * DAY))
    assert said == [f"collector runs before {cut} (2 rows)"] and oldest_of(engine, tier) is None


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_the_logs_go_oldest_first_across_them_and_never_their_newest_day(engine: Engine) -> None:
    runs(engine, NOW - 5 * DAY, NOW - DAY + 60, NOW - 60)
    put(engine, audit, [{"ts": t, "actor": "alice", "action": "login"} for t in (NOW - 7 * DAY, NOW - 3 * DAY)])
    said, _ = size._trim_logs(engine, 0, NOW, False, used_bytes(engine))
    # a bound of nothing: every log down to its newest day, the oldest day of any log first
    assert [s.split(" before")[0] for s in said] == ["audit entries", "collector runs", "audit entries"]
    assert [s.rsplit("(", 1)[1] for s in said] == ["1 rows)", "1 rows)", "1 rows)"]
    with engine.connect() as c:
        assert c.execute(select(collector_run.c.started).order_by(collector_run.c.started)).scalars().all() == [
            NOW - DAY + 60, NOW - 60]
    assert rows(engine, audit) == 0


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_trim_leaves_a_note_of_its_last_step_and_how_many_it_took(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(size, "table_bytes", lambda e: None)  # every byte counts as history
    samples(engine, *range(NOW - 3 * DAY, NOW, 60))
    said = trim(engine, 1, NOW, now=NOW)
    assert [s.split(" before")[0] for s in said] == ["raw samples"] * 3  # two whole days, then up to the newest hour
    assert said[-1].startswith(f"raw samples before {time.strftime('%Y-%m-%d %H:%M', time.localtime(NOW - 3600))}")
    note = last_trim(engine)
    assert note == {"at": NOW, "max_bytes": 1, "dropped": said[-1], "steps": 3}
    assert json.loads(get_meta(engine, "size_trimmed") or "") == note
    with engine.connect() as c:
        assert c.execute(select(func.min(sample.c.ts))).scalar_one() == NOW - 3600


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_raw_samples_go_only_up_to_the_fold_and_then_the_rollups_go(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(size, "table_bytes", lambda e: None)  # every byte counts as history
    samples(engine, *range(NOW - 3 * DAY, NOW, 600))
    first = (NOW - 3 * DAY) // RES_5M
    rollups(engine, rollup_5m, *range(first, first + 100))
    fold = NOW - 2 * DAY - 300
    said = trim(engine, 1, fold, now=NOW)
    fold_at = time.strftime("%Y-%m-%d %H:%M", time.localtime(fold))
    assert said == [f"raw samples before {fold_at} (144 rows)",
                    f"5-minute rollups before {time.strftime('%Y-%m-%d %H:%M', time.localtime(NOW - 3 * DAY + DAY))} "
                    "(100 rows)"]
    with engine.connect() as c:
        assert c.execute(select(func.min(sample.c.ts))).scalar_one() >= fold


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_when_the_history_cannot_fit_it_is_kept_and_the_note_says_why(engine: Engine,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    samples(engine, NOW - 5 * DAY)
    monkeypatch.setattr(size, "table_bytes", lambda e: {"sample": 10, "audit": 10**9})
    said = trim(engine, 1000, NOW, now=NOW)
    assert said == [] and rows(engine, sample) == 1
    note = last_trim(engine)
    assert note is not None and note["dropped"] == "nothing" and note["steps"] == 0
    assert str(note["unmet"]).startswith("the bound cannot be met without the newest day: ")
    assert f"{(used_bytes(engine) - 10) // 10**6} MB are not history" in str(note["unmet"])
    monkeypatch.setattr(size, "_other_bytes", lambda e, used: 25_700_000)
    trim(engine, 1000, NOW, now=NOW)
    assert "newest day: 25 MB are not history" in str((last_trim(engine) or {})["unmet"])


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_without_table_sizes_the_history_is_judged_on_the_whole_size(engine: Engine,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    samples(engine, NOW - 5 * DAY)
    monkeypatch.setattr(size, "table_bytes", lambda e: None)
    assert size._other_bytes(engine, 10**9) == 0
    assert trim(engine, 1, NOW, now=NOW)[0].startswith("raw samples") and rows(engine, sample) == 0


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_what_is_not_history_is_the_size_beyond_the_history_tables(engine: Engine,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(size, "table_bytes", lambda e: {"sample": 100, "rollup_5m": 50, "rollup_1h": 25,
                                                        "sample_block": 5, "audit": 7000})
    assert size._other_bytes(engine, 1000) == 820
    assert size._other_bytes(engine, 100) == 0  # never below nothing


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_sqlite_counts_the_pages_in_use_not_the_free_ones(engine: Engine) -> None:
    with engine.connect() as c:
        pages, free, page = (int(c.execute(text(f"PRAGMA {p}")).scalar_one())
                             for p in ("page_count", "freelist_count", "page_size"))
    assert used_bytes(engine) == (pages - free) * page
    tables = size.table_bytes(engine)
    assert tables is not None and tables["sample"] > 0 and sum(tables.values()) <= pages * page


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_on_postgresql_a_tiers_oldest_point_and_its_step_count_its_chunks(engine: Engine) -> None:
    """Older points live in blocks (raw samples) and chunks (rollups), one row per series and
    span; the oldest one's start is the tier's oldest point, and a step deletes those wholly
    before its cut."""
    from app.storage import gorilla

    span = 7200  # sample_block: two hours of seconds a block
    with engine.begin() as c:
        for t in (NOW - 3 * DAY, NOW - DAY):
            c.execute(text("INSERT INTO sample_block (series_id, chunk, data) VALUES (1, :c, :d)"),
                      {"c": t // span, "d": gorilla.encode([t // span * span], [1.0])})
        c.execute(text("INSERT INTO rollup_5m_chunk (series_id, chunk, k, vmin, vavg, vmax, n) VALUES "
                       "(1, :a, '{0}', '{1}', '{1}', '{1}', '{1}')"), {"a": (NOW - 4 * DAY) // RES_5M // 288})
    samples(engine, NOW - 2 * DAY)
    raw = BY_NAME["raw samples"]
    assert oldest_of(engine, raw) == (NOW - 3 * DAY) // span * span
    # a cut inside the second chunk's two hours keeps it whole: a chunk and a row go
    assert drop_before(engine, raw, NOW - DAY + 100) == 2
    assert oldest_of(engine, raw) == (NOW - DAY) // span * span
    five = BY_NAME["5-minute rollups"]
    assert oldest_of(engine, five) == (NOW - 4 * DAY) // RES_5M // 288 * 288 * RES_5M
    assert drop_before(engine, five, NOW) == 1 and oldest_of(engine, five) is None


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_on_postgresql_one_step_goes_and_the_size_after_it_is_remembered(engine: Engine) -> None:
    samples(engine, *range(NOW - 3 * DAY, NOW, 60))
    rollups(engine, rollup_5m, *range((NOW - 3 * DAY) // RES_5M, (NOW - 2 * DAY) // RES_5M))
    used = used_bytes(engine)
    said = trim(engine, used - 1, NOW, now=NOW)
    assert len(said) == 1 and said[0].startswith("raw samples before")  # one step, no rollup with it
    assert rows(engine, rollup_5m) == 288
    # the size measured after the vacuum (writing the note itself may take a page more)
    assert 0 <= used_bytes(engine) - int(get_meta(engine, size.PG_TRIMMED_AT) or 0) <= 64 * 1024
    assert trim(engine, used - 1, NOW, now=NOW) == []  # the files have not grown since
    assert trim(engine, used_bytes(engine) + 1, NOW, now=NOW) == []  # within the bound
    # the files grow past their size after that trim: a log's oldest day goes first, and one step only
    runs(engine, *(NOW - 5 * DAY + i for i in range(10)))
    samples(engine, *range(NOW - 3 * DAY + 30, NOW, 60))
    said = trim(engine, 1, NOW, now=NOW)
    assert [s.split(" before")[0] for s in said] == ["collector runs"] and rows(engine, collector_run) == 0
    assert "unmet" not in (last_trim(engine) or {"unmet": "no note"})  # a step went: nothing to say is unmet


def test_a_database_exactly_at_its_bound_is_within_it(engine: Engine) -> None:
    runs(engine, NOW - 9 * DAY)
    samples(engine, NOW - 9 * DAY)
    assert trim(engine, used_bytes(engine), NOW, now=NOW) == [] and rows(engine, collector_run) == 1


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_log_row_exactly_a_day_old_is_part_of_the_newest_day_and_stays(engine: Engine) -> None:
    runs(engine, NOW - DAY - 1, NOW - DAY)
    said, _ = size._trim_logs(engine, 0, NOW, False, used_bytes(engine))
    assert len(said) == 1 and said[0].endswith("(1 rows)")
    with engine.connect() as c:
        assert c.execute(select(collector_run.c.started)).scalars().all() == [NOW - DAY]


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_what_went_and_what_could_not_be_met_are_logged_as_warnings(engine: Engine, monkeypatch: pytest.MonkeyPatch,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(size, "table_bytes", lambda e: None)
    samples(engine, *range(NOW - 2 * DAY, NOW, 600))
    with caplog.at_level("WARNING", logger="rackpulse.storage"):
        said = trim(engine, 1, NOW, now=NOW)
    assert [r.getMessage() for r in caplog.records] == [
        f"storage.max_size (1 bytes) reached: gave up {'; '.join(said)}"]
    caplog.clear()
    monkeypatch.setattr(size, "table_bytes", lambda e: {"audit": 10**9})
    samples(engine, NOW - 5 * DAY)
    with caplog.at_level("WARNING", logger="rackpulse.storage"):
        assert trim(engine, 1, NOW, now=NOW) == []
    message = caplog.records[0].getMessage()
    assert message.startswith("storage.max_size (1 bytes): the bound cannot be met without the newest day: ")
    assert message.endswith("the history was kept")


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_on_postgresql_each_tables_size_is_read_with_its_indexes(engine: Engine) -> None:
    samples(engine, *range(NOW - DAY, NOW, 60))
    tables = size.table_bytes(engine)
    assert tables is not None and {"sample", "audit", "collector_run", "sample_block", "rollup_5m_chunk"} <= set(tables)
    assert tables["sample"] > 8192 and all(isinstance(v, int) and v >= 0 for v in tables.values())
    assert sum(tables.values()) <= used_bytes(engine)
    assert size._other_bytes(engine, used_bytes(engine)) == used_bytes(engine) - sum(
        v for k, v in tables.items() if k in size.HISTORY)


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_on_postgresql_the_step_that_went_is_vacuumed_with_its_chunks(engine: Engine) -> None:
    def vacuumed() -> set[str]:
        with engine.connect() as c:
            return set(c.execute(text("SELECT relname FROM pg_stat_user_tables WHERE last_vacuum IS NOT NULL"))
                       .scalars())

    samples(engine, *range(NOW - 3 * DAY, NOW, 60))
    assert trim(engine, used_bytes(engine) - 1, NOW, now=NOW)[0].startswith("raw samples")
    assert {"sample", "sample_block"} <= vacuumed() and "collector_run" not in vacuumed()
    runs(engine, *(NOW - 5 * DAY + i for i in range(100)))
    samples(engine, *range(NOW - 3 * DAY + 30, NOW, 60))
    assert trim(engine, 1, NOW, now=NOW)[0].startswith("collector runs")
    assert "collector_run" in vacuumed()


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_two_logs_whose_oldest_rows_share_a_second_go_one_after_the_other(engine: Engine) -> None:
    runs(engine, NOW - 5 * DAY)
    put(engine, audit, [{"ts": NOW - 5 * DAY, "actor": "alice", "action": "login"}])
    said, _ = size._trim_logs(engine, 0, NOW, False, used_bytes(engine))
    assert [s.split(" before")[0] for s in said] == ["collector runs", "audit entries"]


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_step_that_gives_up_a_single_row_is_followed_by_the_next(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(size, "table_bytes", lambda e: None)
    samples(engine, NOW - 4 * DAY, *range(NOW - 3 * DAY + 60, NOW, 300))
    said = trim(engine, 1, NOW, now=NOW)
    assert said[0].endswith("(1 rows)") and len(said) == 4


def test_sqlite_counts_pages_of_the_size_the_database_was_made_with(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "big-pages.db"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA page_size = 8192")
        db.execute("VACUUM")
    url = f"sqlite:///{path}"
    upgrade(url)
    with sqlite3.connect(path) as db:  # no free page: every page counts
        db.execute("VACUUM")
    eng = make_engine(url)
    with eng.connect() as c:
        pages, free, page = (int(c.execute(text(f"PRAGMA {p}")).scalar_one())
                             for p in ("page_count", "freelist_count", "page_size"))
    assert page == 8192 and free == 0 and used_bytes(eng) == pages * 8192
    eng.dispose()
