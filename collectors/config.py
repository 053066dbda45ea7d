"""What every collector's config section has, so a collector's own section model (built-in or
from a plug-in package) can extend it without importing the app."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr


class ConfigError(Exception):
    """A config file that cannot be used: the message says where and why."""


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


Argv = Annotated[list[str], Field(min_length=1)]
Seconds = Annotated[float, Field(gt=0)]


class CollectorBase(Strict):
    enabled: bool = True
    interval: Seconds = 30.0
    # The whole run's budget; the scheduler marks the collector down past it.
    timeout: Seconds = 20.0
    # Each external command's own limit (one hung disk must not eat the whole budget).
    command_timeout: Seconds = 10.0
    # Each external command's output is capped: past this the command is killed and the run fails
    # with "output exceeded ...", so a command that never stops printing cannot fill memory.
    command_max_bytes: Annotated[int, Field(ge=1024)] = 16 * 1024 * 1024


def unique_names(entries: list[Any], what: str) -> list[Any]:
    """A section's list of named entries (probes, tests), refused when two share a name: the
    name keys their metrics, alerts and history."""
    names = [e.name for e in entries]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"{what} names must be unique: {', '.join(dup)}")
    return entries


def secret_value(inline: SecretStr | None, file: Path | None) -> str | None:
    """A password given inline or (better) in a file readable only by rackpulse: the inline one
    first; a file's content without its surrounding whitespace; None for neither, or an empty file."""
    if inline:
        return str(inline.get_secret_value())
    if file:
        return file.read_text().strip() or None
    return None
