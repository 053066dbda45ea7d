"""What a reload does with a changed config, as pure functions over two configs: the sections only
a restart applies are named and kept at their running values, a change of [disks] rebuilds every
collector (each is built with the bays), a change of one collector's section rebuilds that one."""

from __future__ import annotations

from typing import Any

import pytest

from app.config import Config, load_config
from app.reload import RESTART, changed_collectors, live_part, restart_needed
from collectors import plugins


def config(**change: Any) -> Config:
    base: dict[str, Any] = {"host": "nas", "storage": {"url": "sqlite:///a.db"},
                            "collectors": {n: {"enabled": False} for n in plugins()}}
    for key, value in change.items():
        where = base
        *path, last = key.split(".")
        for part in path:
            where = where.setdefault(part, {})
        where[last] = value
    return load_config(None, base)


@pytest.mark.parametrize(("key", "value"), [
    ("storage.url", "sqlite:///b.db"),
    ("host", "nas2"),
    ("web.port", 9999),
    ("alerts.enabled", False),
])
def test_a_section_only_a_restart_applies_is_named_and_kept_running(key: str, value: Any) -> None:
    old, new = config(), config(**{key: value})
    named = restart_needed(old, new)
    assert named == [key.split(".")[0] if key != "alerts.enabled" else "alerts.enabled"]
    live = live_part(old, new)
    section, _, field = key.partition(".")
    kept = getattr(live, section) if not field else getattr(getattr(live, section), field)
    was = getattr(old, section) if not field else getattr(getattr(old, section), field)
    assert kept == was


def test_the_restart_list_holds_the_database_and_the_listener() -> None:
    assert {"storage", "web", "host", "host_root"} <= set(RESTART)


def test_a_change_of_the_bays_rebuilds_every_collector() -> None:
    old = config()
    new = config(**{"disks.bays": [{"label": "shelf 1, bay 7", "serial": "ZA1049HK"}]})
    assert changed_collectors(old, new) == set(type(new.collectors).model_fields)


def test_a_change_of_one_collectors_section_rebuilds_that_one_only() -> None:
    old = config()
    new = config(**{"collectors.mdraid": {"enabled": True}})
    assert changed_collectors(old, new) == {"mdraid"}
    assert restart_needed(old, new) == []


def test_an_unchanged_config_rebuilds_nothing_and_needs_no_restart() -> None:
    assert changed_collectors(config(), config()) == set()
    assert restart_needed(config(), config()) == []


def test_the_live_part_takes_the_new_alerts_but_keeps_whether_they_are_on() -> None:
    old = config()
    new = config(**{"alerts.enabled": False, "alerts.interval": 7.0, "collectors.mdraid": {"enabled": True}})
    live = live_part(old, new)
    assert (live.alerts.enabled, live.alerts.interval) == (True, 7.0)
    assert live.collectors.mdraid.enabled is True  # what applies live is the new config's
    assert live.storage == old.storage and live.web == old.web
    assert restart_needed(old, new) == ["alerts.enabled"]


def test_several_sections_needing_a_restart_are_named_in_the_configs_order() -> None:
    new = config(**{"web.port": 9999, "storage.url": "sqlite:///b.db", "host": "other"})
    assert restart_needed(config(), new) == ["host", "storage", "web"]


def test_the_hot_disk_threshold_rebuilds_every_collector_too() -> None:
    new = config(**{"alerts.disk_hot_celsius": 61.0})
    assert changed_collectors(config(), new) == set(type(new.collectors).model_fields)


def test_an_error_is_said_on_one_line() -> None:
    from app.reload import one_line

    assert one_line(ValueError("a\n  b\tc  ")) == "a b c"
