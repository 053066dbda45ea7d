"""[collectors.openvpn]: one table per OpenVPN instance (a status file or a management socket)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from collectors.config import CollectorBase, Seconds, Strict


class Instance(Strict):
    name: str
    status_file: str | None = None
    # "127.0.0.1:7505" or a unix socket path; preferred over status_file when both are set.
    management: str | None = None
    management_password_file: str | None = None
    interface: str | None = None  # "tun0"
    config_file: str | None = None
    # The sysfs that shows the tun (for OpenVPN in another network namespace, a sysfs mounted from inside it).
    sys_root: str | None = None
    # The smallest MTU on the path, if known (e.g. 1420 over 3G); the uplink speed, for buffer advice.
    path_mtu: Annotated[int, Field(ge=576, le=9000)] | None = None
    link_mbps: Annotated[float, Field(gt=0)] | None = None


class OpenvpnConfig(CollectorBase):
    interval: Seconds = 15.0
    command_timeout: Seconds = 5.0
    # A status file older than this means the instance stopped updating it.
    max_status_age: Seconds = 120.0
    instances: list[Instance] = []
