"""[collectors.proxmox]: a Proxmox VE node or cluster through its HTTP API, with an API token."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from collectors.config import Seconds
from collectors.proxmoxapi import ApiTokenConfig

HOUR = 3600.0


class ProxmoxConfig(ApiTokenConfig):
    """url: any node of the cluster (https://HOST:8006), each answers for all of them; token_id:
    the token made with `pveum user token add monitor@pve rackpulse`; ca_file: the cluster's own
    CA (/etc/pve/pve-root-ca.pem), or the node's fingerprint (its Certificates page)."""

    interval: Seconds = 60.0
    # A guest covered by a backup job (or backed up before) with no backup this recent: pve_backup_stale.
    backup_max_age: Seconds = 26 * HOUR
    # Guests that must be running besides those set to start at boot: names or VMIDs.
    watch: list[str] = []
    # Guests not to show at all (scratch VMs; templates are never shown): names or VMIDs, * matching anything.
    ignore: list[str] = []
    # Failed tasks (any kind) within this window are listed on the page.
    failed_tasks_window: Annotated[float, Field(gt=0)] = 24 * HOUR
