"""[collectors.pbs]: a Proxmox Backup Server through its HTTP API, with an API token."""

from __future__ import annotations

from collectors.config import Seconds
from collectors.proxmoxapi import ApiTokenConfig

HOUR = 3600.0


class PbsConfig(ApiTokenConfig):
    """url: https://HOST:8007; token_id: the token made with `proxmox-backup-manager user
    generate-token monitor@pbs rackpulse`; fingerprint: the one PBS shows on its Dashboard (the one
    PVE's storage config asks for)."""

    # Listing every snapshot of a datastore is the heaviest read: every 5 minutes is plenty.
    interval: Seconds = 300.0
    # A backup group whose newest snapshot is older than this: pbs_snapshot_stale.
    snapshot_max_age: Seconds = 26 * HOUR
    # Groups not to judge (a retired VM's backups kept on purpose): "vm/105", "host/*", or with
    # the datastore first, "store1/vm/1*".
    ignore: list[str] = []
