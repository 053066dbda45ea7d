"""What the alerting hands out: the alerts in force, silences, history, the outbox and each
channel's health, as typed records. The alerts page, /api/alerts, /api/v1 and the CLI read
these same models, so /openapi.json documents every field a script sees.

May import: pydantic only (the web and the CLI import these; these import nothing of theirs)."""

from __future__ import annotations

from pydantic import BaseModel, Field

# pydantic reads a TypedDict's fields from typing_extensions' before Python 3.12
from typing_extensions import TypedDict


class ActiveAlert(BaseModel):
    """An alert pending or firing, with its mute, what it fired with, what suppresses it and its
    acknowledgement's note."""

    rule: str = Field(examples=["md_degraded"])
    subject: str = Field(examples=["md0"])
    state: str = Field(description="pending | firing", examples=["firing"])
    severity: str = Field(examples=["critical"])
    summary: str = Field(examples=["md0 (raid6) is degraded: 7 of 8 members, sdh failed in bay 7"])
    labels: dict[str, str] = {}
    since: float = Field(description="when its condition began (Unix seconds)")
    fired_at: float | None = None
    resolved_at: float | None = None
    last_notified: float | None = None
    acked_at: float | None = None
    muted: bool = Field(False, description="a silence or a maintenance window holds it back")
    fired_with: str | None = Field(None, description="its summary when it began to fire, if that differs")
    suppressed_by: str | None = Field(None, description="the parent alert that explains it (dependencies)")
    ack_note: str | None = None


class Silence(BaseModel):
    """A silence in force (a maintenance window is one of every alert of the host)."""

    id: int
    host: str
    rule: str | None = Field(description="rule name or pattern; null: any rule")
    subject: str | None = Field(description="subject or pattern; null: any subject")
    until: float
    reason: str | None = None
    created: float


class HistoryEntry(BaseModel):
    """One event of an alert's life: firing, resolved, reminder, escalated, ack, silence."""

    id: int
    host: str
    rule: str
    subject: str
    ts: float
    kind: str
    severity: str
    summary: str
    labels: str = Field(description="its labels, as JSON")
    duration: float | None = None
    note: str | None = None


class OutboxEntry(BaseModel):
    """A notification on its way to a channel, sent, skipped or given up."""

    id: int
    event_id: int
    channel: str
    created: float
    attempts: int
    next_attempt: float
    delivered_at: float | None = None
    gave_up_at: float | None = None
    last_error: str | None = None
    skipped: str | None = None
    rule: str
    subject: str
    kind: str


class ChannelHealth(TypedDict):
    """How a channel is doing, as the alerts page and /api/alerts show it (never its URL)."""

    name: str
    kind: str  # its format, or an Apprise URL's scheme
    last_success: float | None
    last_error: str | None
    waiting: int
    gave_up: int
    trial: tuple[float, bool, str] | None  # its last test: when, delivered, what the service said


class AlertsView(BaseModel):
    """What the alerts page shows."""

    evaluations: int = 0
    active: list[ActiveAlert] = []
    history: list[HistoryEntry] = []
    outbox: list[OutboxEntry] = []
    silences: list[Silence] = []
    rules: list[str] = []
    channels: list[ChannelHealth] = []


class Recorded(TypedDict):
    """An event one evaluation stored (and queued for delivery)."""

    id: int
    kind: str
    rule: str
    subject: str
    summary: str
