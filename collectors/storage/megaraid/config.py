"""[collectors.megaraid]: Broadcom/LSI MegaRAID and Dell PERC controllers through storcli or perccli."""

from __future__ import annotations

from collectors.config import Argv, CollectorBase, Seconds


class MegaraidConfig(CollectorBase):
    interval: Seconds = 60.0
    # storcli64, storcli, perccli64 or perccli: the same JSON. Needs root (["sudo", "-n", "storcli64"]).
    storcli: Argv = ["storcli64"]
    command_timeout: Seconds = 30.0  # storcli asks every drive: slow on a full shelf
