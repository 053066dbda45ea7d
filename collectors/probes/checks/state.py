"""What the probes collector found of each ping, HTTP and TCP check: its state, typed."""

from __future__ import annotations

from collectors.state import Record, State


class Rtt(Record):
    """Round-trip times of the answered pings, in milliseconds."""

    min: float | None = None
    avg: float | None = None
    max: float | None = None
    p95: float | None = None


class Probe(Record):
    kind: str  # ping, http, tcp
    name: str
    target: str = ""  # an address, a URL, host:port
    ok: bool = False
    seconds: float | None = None  # how long the run took
    error: str | None = None
    tool_error: str | None = None  # fping itself could not run (not the target's fault)
    # ping
    interface: str | None = None
    count: int | None = None
    loss_warning: float | None = None  # the probe's own thresholds, from the config
    rtt_warning_ms: float | None = None
    sent: int | None = None
    received: int | None = None
    loss: float | None = None  # 0..1
    rtt_ms: Rtt = Rtt()
    rtts_ms: list[float | None] = []
    # http, tcp
    status: int | None = None  # HTTP status
    cert_expires: float | None = None  # the TLS certificate's notAfter, Unix time
    cert_subject: str | None = None


class ProbesState(State):
    probes: list[Probe] = []
    tls_warning_days: float | None = None
    checked_at: float | None = None
