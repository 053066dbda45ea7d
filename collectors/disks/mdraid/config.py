"""[collectors.mdraid]: /proc/mdstat always, `mdadm --detail` per array when allowed."""

from __future__ import annotations

from collectors.config import Argv, CollectorBase


class MdraidConfig(CollectorBase):
    mdadm: Argv = ["mdadm"]
    # Run `mdadm --detail` for each array (UUID, events, per-slot states). Needs root.
    detail: bool = True
