"""[collectors.haproxy]: HAProxy instances, one [[collectors.haproxy.instances]] each, read through
the stats socket (`show stat`, `show info`) or the stats page's CSV (`;csv`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field, field_validator, model_validator

from collectors.config import CollectorBase, Seconds, Strict, unique_names


class HaproxyInstance(Strict):
    name: str
    # The stats socket: `stats socket /run/haproxy/admin.sock mode 660 level user` in haproxy.cfg
    # ("level user" is enough: only `show stat` and `show info` are sent, never a command that
    # changes anything). Or url: the stats page's CSV, "http://127.0.0.1:8404/stats;csv".
    socket: Path | None = None
    url: str = ""
    timeout: Seconds = 5.0

    @model_validator(mode="after")
    def _one_way(self) -> HaproxyInstance:
        if bool(self.socket) == bool(self.url):
            raise ValueError(f"haproxy instance {self.name!r}: set socket or url, one of them")
        if self.url and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"haproxy instance {self.name!r}: url {self.url!r} is not http(s)://…;csv")
        return self


class HaproxyConfig(CollectorBase):
    interval: Seconds = 30.0
    instances: list[HaproxyInstance] = []
    # haproxy_sessions_near_limit: a frontend's or backend's current sessions at this share of its limit
    sessions_near: Annotated[float, Field(gt=0, le=1)] = 0.9
    # An answer larger than this is cut off and said so (a `show stat` of a few thousand servers is 2 MB).
    max_bytes: Annotated[int, Field(ge=4096)] = 8 * 1024 * 1024

    @field_validator("instances")
    @classmethod
    def _unique(cls, v: list[HaproxyInstance]) -> list[HaproxyInstance]:
        return unique_names(v, "haproxy instance")
