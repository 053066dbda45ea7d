"""States as the tests write them (JSON, as an agent sends them or the database keeps them) and
as the plug-ins read them (their own types), through the same entrance the app uses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from collectors import plugins
from collectors.state import State, dump


def typed(raw: Mapping[str, Mapping[str, Any]]) -> dict[str, State]:
    """Each plug-in's JSON state read as its type (StateError if one cannot be)."""
    return {name: plugins()[name].load(data) for name, data in raw.items()}


def raw(states: Mapping[str, State]) -> dict[str, dict[str, Any]]:
    """Each typed state as JSON, to change and read again."""
    return {name: dump(state) for name, state in states.items()}


def one(name: str, data: Mapping[str, Any]) -> State:
    """One plug-in's JSON state read as its type."""
    return plugins()[name].load(data)


def all_off(**on: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Every installed plug-in's section switched off, but those given: a test that runs one
    collector names that one, not the list of all the others (a new plug-in changes no test)."""
    return {**{name: {"enabled": False} for name in plugins()}, **on}


def enabled_in(config_path: Any) -> set[str]:
    """The collectors a config file enables (what its agent or server will run)."""
    from app.config import load_config

    cfg = load_config(config_path)
    return {name for name in plugins() if getattr(cfg.collectors, name).enabled}
