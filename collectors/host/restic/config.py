"""[collectors.restic]: restic repositories, one [[collectors.restic.repos]] each."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import field_validator, model_validator

from collectors.config import Argv, CollectorBase, Seconds, Strict, unique_names

HOUR = 3600.0
# A repository address carrying a password ("rest:https://user:secret@host/"): it would be in
# restic's argv, where `ps` shows it to every user, and in a timeout's error message.
_PASSWORD_IN_URL = re.compile(r"://[^/@:]+:[^/@]+@")


class ResticRepo(Strict):
    name: str
    # Where it is: a path, sftp:host:/path, rest:https://host/, s3:..., b2:... (restic's -r);
    # or repository_file, a file holding it (an address with a password belongs there).
    repository: str = ""
    repository_file: Path | None = None
    password_file: Path  # restic's --password-file: the secret never in argv, never logged
    # The newest snapshot of each host and path older than this: backup_stale.
    max_age: Seconds = 26 * HOUR
    # Only these hosts, paths (a snapshot of /srv covers /srv/photos) and tags; each host and
    # path named here without any snapshot is backup_stale too. Empty: every snapshot.
    hosts: list[str] = []
    paths: list[str] = []
    tags: list[str] = []
    offsite: bool = False  # the copy is in another building (the data page counts it so)
    stats: bool = False  # its size from `restic stats --mode raw-data` (reads the index: slow on a remote)
    # `restic check` this often (it takes the repository's exclusive lock, so it is off unless
    # set); check_read_data = "5%" reads that share of the packs too (--read-data-subset).
    check_every: Seconds | None = None
    check_read_data: str = ""
    check_timeout: Seconds = 6 * HOUR

    @model_validator(mode="after")
    def _where(self) -> ResticRepo:
        if bool(self.repository) == bool(self.repository_file):
            raise ValueError(f"restic repo {self.name!r}: set repository or repository_file, one of them")
        if _PASSWORD_IN_URL.search(self.repository):
            raise ValueError(f"restic repo {self.name!r}: its repository holds a password; put the address in "
                             "repository_file (a file readable only by rackpulse) so it is never in argv")
        return self

    @field_validator("check_read_data")
    @classmethod
    def _subset(cls, v: str) -> str:
        if v and not re.fullmatch(r"\d+(\.\d+)?%|\d+/\d+|\d+[KMGT]", v):
            raise ValueError(f"check_read_data {v!r}: a share (5%), a part (1/7) or a size (500M)")
        return v


class ResticConfig(CollectorBase):
    # Listing snapshots is cheap (--no-lock, the index only); a remote repository is a round trip.
    interval: Seconds = 900.0
    timeout: Seconds = 120.0
    command_timeout: Seconds = 60.0
    restic: Argv = ["restic"]
    repos: list[ResticRepo] = []

    @field_validator("repos")
    @classmethod
    def _unique(cls, v: list[ResticRepo]) -> list[ResticRepo]:
        return unique_names(v, "restic repo")
