"""[collectors.btrfs]: mounted btrfs filesystems."""

from __future__ import annotations

from collectors.config import Argv, CollectorBase, Seconds


class BtrfsConfig(CollectorBase):
    interval: Seconds = 60.0
    # `btrfs filesystem show`, `device stats` (where the kernel's error_stats file is absent) and
    # `scrub status`: all need root; ["sudo", "-n", "btrfs"] otherwise.
    btrfs: Argv = ["btrfs"]
