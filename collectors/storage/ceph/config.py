"""[collectors.ceph]: cluster health, OSDs and PGs through the ceph CLI."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from collectors.config import Argv, CollectorBase, Seconds


class CephConfig(CollectorBase):
    interval: Seconds = 60.0
    # Any node with a client keyring can ask: ["ceph", "--id", "rackpulse"] for a read-only user
    # (`ceph auth get-or-create client.rackpulse mon 'allow r' mgr 'allow r'`).
    ceph: Argv = ["ceph"]
    # Passed as --connect-timeout: an unreachable monitor must not hang the run.
    connect_timeout: Annotated[int, Field(ge=1, le=300)] = 10
    # `ceph osd metadata` for each OSD's disk serial (and so its bay).
    metadata: bool = True
