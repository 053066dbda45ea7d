"""[collectors.zfs]: `zpool list` and `zpool status`."""

from __future__ import annotations

from typing import Literal

from collectors.config import Argv, CollectorBase, Seconds


class ZfsConfig(CollectorBase):
    zpool: Argv = ["zpool"]
    # "auto": `zpool status -j` where zpool has it (OpenZFS 2.3 and later), else the text;
    # "text": always the text.
    format: Literal["auto", "text"] = "auto"
    zfs: Argv = ["zfs"]
    # The newest snapshot of each dataset a pattern matches may be this old, in seconds; past it
    # zfs_snapshot_stale (a sanoid or syncoid job stopped). A dataset named outright with no
    # snapshot at all is stale too. Empty: snapshots are not read.
    snapshot_max_age: dict[str, Seconds] = {}
