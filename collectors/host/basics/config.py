"""[collectors.host]: on by default; reads /proc and /sys under host_root."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from collectors.config import CollectorBase, Seconds

# node_exporter's defaults: kernel and container bookkeeping, not storage a person fills.
PSEUDO_FSTYPES = ["autofs", "binfmt_misc", "bpf", "cgroup", "cgroup2", "configfs", "debugfs", "devpts", "devtmpfs",
                  "efivarfs", "fusectl", "hugetlbfs", "iso9660", "mqueue", "nsfs", "overlay", "proc", "procfs",
                  "pstore", "rpc_pipefs", "securityfs", "selinuxfs", "squashfs", "erofs", "sysfs", "tracefs",
                  "ramfs", "fuse.lxcfs", "fuse.gvfsd-fuse", "fuse.portal", "nfsd", "tmpfs"]
PSEUDO_MOUNTS = r"^/(dev|proc|run/credentials/.+|sys|var/lib/docker/.+|var/lib/containers/storage/.+|snap/.+)($|/)"


class HostConfig(CollectorBase):
    interval: Seconds = 15.0
    # Each filesystem's statvfs must answer within this (a dead NFS server must not stall the rest).
    command_timeout: Seconds = 2.0
    exclude_fstypes: list[str] = PSEUDO_FSTYPES
    exclude_mountpoints: str = PSEUDO_MOUNTS  # a regular expression
    # Mounted read-only on purpose: not an alert.
    expect_readonly: list[str] = []
    # Partitions, loop and ram devices are left out of block devices (node_exporter's default).
    exclude_blockdevs: str = r"^(z?ram|loop|fd|(h|s|v|xv)d[a-z]+|nvme\d+n\d+p|mmcblk\d+p)\d+$"
    exclude_interfaces: str = r"^(lo|veth.*|docker\d*|br-[0-9a-f]{12}|virbr\d+-nic)$"
    # Findings: filesystem full at this share used; memory low under this share available.
    filesystem_full_ratio: Annotated[float, Field(gt=0, le=1)] = 0.90
    memory_low_ratio: Annotated[float, Field(gt=0, lt=1)] = 0.10
