"""What the throughput collector measured in each iperf3 test's last run: its state, typed."""

from __future__ import annotations

from collectors.state import Record, State


class IperfRun(Record):
    name: str
    server: str = ""  # host:port
    direction: str = "upload"  # upload | download
    baseline_mbps: float | None = None  # what the link should do, from the config
    low_ratio: float | None = None  # below this share of the baseline is a finding
    ran_at: float | None = None
    next_at: float | None = None
    ok: bool = False
    error: str | None = None
    mbps: float | None = None  # as received
    retransmits: int | None = None
    ratio: float | None = None  # mbps / baseline


class ThroughputState(State):
    tests: list[IperfRun] = []
