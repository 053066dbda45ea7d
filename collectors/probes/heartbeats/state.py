"""What the heartbeats collector knows of each job: its state, typed."""

from __future__ import annotations

from collectors.state import Record, State


class Beat(Record):
    name: str
    every: float | None = None  # seconds, from the config
    grace: float | None = None
    status: str = "new"  # new (never pinged), up, running, late, failed
    last_success: float | None = None
    last_fail: float | None = None
    last_start: float | None = None
    duration: float | None = None  # of the last run that said /start first, in seconds
    due_at: float | None = None  # when it is missed if no ping comes
    log: str = ""  # the last /fail's body (its last lines)
    since: float | None = None  # when the heartbeat was first known here (a new one is due from then)
    public: bool = False  # its name and uptime on a public /status


class HeartbeatsState(State):
    beats: list[Beat] = []
