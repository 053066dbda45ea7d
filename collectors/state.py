"""A plug-in's state, typed: what its collector returns and its findings, tile, section and bays
read. Each plug-in declares one `State` subclass made of `Record`s (pydantic models), so a state
from anywhere (this host's collector, an agent's batch, the database after a restart) is
checked against the same declaration before anything reads it.

JSON only at the edges: `dump()` turns a state into the JSON the database, the agent's outbox
and its batches carry, with the version of its shape; `load()` turns such JSON back into the
plug-in's type, or raises StateError saying why it cannot (another version's shape, a value of
another type), and the caller keeps the last state it understood.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

# Where a dumped state says the version of its shape. States stored before versions existed
# carry none: they are version 1, the shape every plug-in had then.
VERSION_KEY = "state_version"


class Record(BaseModel):
    """A part of a state (an array, a member disk, a BGP peer) or a state itself.

    Frozen: a state is judged once and read by many (tiles, pages, alerts); nothing may change it
    on the way. Unknown keys are ignored, so an agent one version ahead that added a field is
    still understood. Fields whose names Python reserves ("in", "return") carry an alias."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True, serialize_by_alias=True)


class State(Record):
    """A plug-in's whole state. Every field has a default: `State()` is the state of a plug-in
    that has collected nothing yet, and its findings, tile, section and bays must read it.

    Bump `version` when a field changes its meaning or type: a state of another version (stored
    before an upgrade, or sent by an agent of another release) is then dropped with one log line
    instead of being misread."""

    version: ClassVar[int] = 1
    # A plug-in that reads several sources (BMCs, UPSes, endpoints, plugs) names the finding label
    # that says which source a finding is about ("bmc"), and says which sources it could not read
    # this run (unreadable_sources): the alert engine holds their firing alerts, as it holds a
    # whole collector's that cannot read its source (a BMC that went away read as "fixed").
    source_label: ClassVar[str] = ""

    def unreadable_sources(self) -> dict[str, float | None]:
        """Source -> when it was last read (None: never), for those this run could not read."""
        return {}

    def sources(self) -> set[str]:
        """Every source this state knows, read or not: one a reload removed from the config is gone
        from the next state, and its firing alerts end "no longer watched", not resolved."""
        return set(self.unreadable_sources())


S = TypeVar("S", bound=State)


class StateError(ValueError):
    """A state that cannot be read as the plug-in's type; the message says why, in a line."""


# Any: a state as JSON, as it is stored and sent by agents
def dump(state: State) -> dict[str, Any]:
    """The state as JSON-able data, with the version of its shape."""
    return {**state.model_dump(mode="json"), VERSION_KEY: type(state).version}


def load(kind: type[S], data: Mapping[str, object]) -> S:
    """`data` (what `dump` made, or an older version's) as the plug-in's state type."""
    if not isinstance(data, Mapping):
        raise StateError(f"a state is a JSON object, not {type(data).__name__}")
    version = data.get(VERSION_KEY, 1)
    if version != kind.version:
        raise StateError(f"state of version {version!r}; this rackpulse reads version {kind.version}")
    try:
        return kind.model_validate(data)
    except ValidationError as exc:
        raise StateError(describe(exc)) from None


def describe(exc: ValidationError) -> str:
    """A validation error in one line: where the first problems are and what they are."""
    parts = [f"{'.'.join(str(p) for p in e['loc']) or 'state'}: {e['msg']}" for e in exc.errors()[:3]]
    more = f" (and {exc.error_count() - 3} more)" if exc.error_count() > 3 else ""
    return "; ".join(parts) + more
