"""The shapes the JSON API answers with, declared so /openapi.json (and /api/docs) documents every
field a script reads. The pages' charts read the same Series; the alerts, silences and audit rows
are the alerting's and people's own records (app/alerting/records.py, app/people/audit.py).

Plain data a route already builds as a dict is a TypedDict (no copy on the way out); an answer
made for the API alone is a pydantic model.

May import: pydantic only."""

from __future__ import annotations

from pydantic import BaseModel, Field

# pydantic reads a TypedDict's fields from typing_extensions' before Python 3.12
from typing_extensions import TypedDict


class ErrorDetail(BaseModel):
    status: int = Field(examples=[404])
    message: str = Field(examples=["no firing alert md_degraded on 'md0'"])


class ErrorBody(BaseModel):
    """Every error of /api/v1 has this one shape: a script reads one field."""

    error: ErrorDetail


class Tile(TypedDict):
    """A tile of the overview: a domain's level and, when it is not all clear, why."""

    title: str
    href: str
    level: str  # ok, warning, failing, unknown
    reason: str


class HostOut(TypedDict):
    """A host as /api/hosts and /api/v1/hosts show it."""

    host: str
    agent: bool
    href: str
    status: str  # this server, reporting, silent, never reported, token revoked
    level: str
    version: str | None
    last_contact: float | None
    clock_skew: float | None
    batches: int | None
    samples: int | None
    remote: str | None
    wrong: list[Tile]  # what its card says is wrong


class Series(TypedDict):
    """One series over a range: timestamps and, at each, the min, average and max of its bucket
    (all three the value itself for raw samples)."""

    metric: str
    labels: dict[str, str]
    range: str
    start: int
    end: int
    step: int  # seconds between points; a chart draws a gap where they are further apart
    # (from, step) of each part read at its own resolution (hourly rollups before 5-minute ones
    # before raw samples, where the finer data begins later than the range): each part's own step
    steps: list[tuple[int, int]]
    resolution: str  # raw, 5m, 1h
    ts: list[int]
    min: list[float | None]
    avg: list[float | None]
    max: list[float | None]


class WhoAmI(BaseModel):
    name: str = Field(examples=["token:ansible"])
    role: str = Field(examples=["admin"], description="viewer | operator (a write token) | admin")
    via: str = Field(examples=["token"], description="session | token | link | proxy | open")
    may_change: bool


class UserOut(BaseModel):
    """A person who logs in; never a hash."""

    name: str
    role: str
    two_factor: bool
    created: float


class TokenOut(BaseModel):
    """An API token; never the token itself."""

    name: str
    owner: str | None = Field(description="the user who made it; null: made with the CLI")
    scope: str = Field(description="read | write | admin")
    state: str = Field(description="active | expired | revoked")
    created: float
    expires: float | None
    last_used: float | None
    last_address: str | None


class Acked(BaseModel):
    acked: bool
    rule: str
    subject: str


class SilenceMade(BaseModel):
    id: int
    until: float = Field(description="when it ends (Unix seconds)")


class Expired(BaseModel):
    expired: int = Field(description="the silence's id")


class UserMade(BaseModel):
    name: str
    role: str


class Removed(BaseModel):
    removed: str


class Revoked(BaseModel):
    revoked: str


class DiskNotes(BaseModel):
    """A disk's notes; a field left out is empty."""

    purchased: str | None = Field(None, examples=["2024-03-01"])
    warranty_end: str | None = Field(None, examples=["2029-03-01"])
    rma: str | None = Field(None, examples=["RMA-88213"])
    note: str | None = Field(None, examples=["came from the old NAS"])


class BayLabelSaved(BaseModel):
    """The label and what it hangs on: the disk's port (its /dev/disk/by-path name), else its
    enclosure slot, else its serial, else its WWN: only that one key is present."""

    label: str
    path: str | None = None
    enclosure_slot: str | None = None
    serial: str | None = None
    wwn: str | None = None


class IngestAccepted(BaseModel):
    """An agent's batch, taken: its records stored (duplicates of a re-sent batch skipped)."""

    status: str = Field(examples=["ok"])
    records: int
    duplicates: int
    samples: int
    last_seq: int = Field(description="the highest record number stored from this agent: it may forget up to here")


class IngestRefused(BaseModel):
    """A batch refused: the agent keeps it and, but for 4xx, sends it again. (The agents' protocol
    predates the API's one error shape and keeps its own: agents of every version read it.)"""

    error: str = Field(examples=["batch is larger than the server's limit of 8388608 bytes"])
