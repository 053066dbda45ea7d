"""[data]: the data sets the /data page judges, one [[data.sets]] each. None named: each mount
point of an md array, a ZFS pool or a btrfs filesystem is a set of its own."""

from __future__ import annotations

from pydantic import field_validator

from collectors.config import Seconds, Strict, unique_names

HOUR = 3600.0


class Replica(Strict):
    """A ZFS replica of the set's dataset (syncoid, zfs send): its newest snapshot is a copy."""

    dataset: str  # "backup/nas/photos"
    host: str = ""  # the agent host that holds it (its zfs collector reads the snapshots); "": this one
    offsite: bool = False


class DataSet(Strict):
    name: str  # "photos": the page, the alert and the metric's set label
    path: str  # "/srv/photos": the copies are those whose paths include it
    # No copy newer than this: data_unprotected (and, with no redundancy left, data_at_risk).
    max_age: Seconds = 26 * HOUR
    offsite_required: bool = False  # no copy off site: data_unprotected
    guests: list[str] = []  # VMIDs whose Proxmox or PBS backups are copies of it ("101")
    heartbeats: list[str] = []  # [[collectors.heartbeats.jobs]] names whose success is a copy (an rsync)
    replicas: list[Replica] = []  # ZFS replicas on this host or an agent host

    @field_validator("path")
    @classmethod
    def _absolute(cls, v: str) -> str:
        if not v.startswith("/"):
            raise ValueError(f"data set path {v!r}: an absolute path (\"/srv/photos\")")
        return v.rstrip("/") or "/"


class DataConfig(Strict):
    sets: list[DataSet] = []

    @field_validator("sets")
    @classmethod
    def _unique(cls, v: list[DataSet]) -> list[DataSet]:
        return unique_names(v, "data set")
