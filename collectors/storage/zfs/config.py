"""[collectors.zfs]: `zpool list` and `zpool status`."""

from __future__ import annotations

from typing import Literal

from collectors.config import Argv, CollectorBase


class ZfsConfig(CollectorBase):
    zpool: Argv = ["zpool"]
    # "auto": `zpool status -j` where zpool has it (OpenZFS 2.3 and later), else the text;
    # "text": always the text.
    format: Literal["auto", "text"] = "auto"
