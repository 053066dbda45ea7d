"""[collectors.borg]: BorgBackup repositories, one [[collectors.borg.repos]] each."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import field_validator, model_validator

from collectors.config import Argv, CollectorBase, Seconds, Strict, unique_names

HOUR = 3600.0
_PASSWORD_IN_URL = re.compile(r"://[^/@:]+:[^/@]+@")


class BorgRepo(Strict):
    name: str
    repository: str  # /path, ssh://user@host:22/./repo or user@host:repo (borg's REPOSITORY)
    # Read by borg itself through BORG_PASSCOMMAND ("cat FILE"): the passphrase never in argv or
    # a log. None: a repository without a passphrase (unencrypted, or a keyfile without one).
    passphrase_file: Path | None = None
    max_age: Seconds = 26 * HOUR
    hosts: list[str] = []  # only archives made on these hosts (each without one: backup_stale)
    paths: list[str] = []  # only archives of these paths (from each archive's command line)
    glob_archives: str = ""  # only archives whose name matches ("nas-*": borg's --glob-archives)
    offsite: bool = False
    # `borg check` this often (it takes the repository's lock: off unless set).
    check_every: Seconds | None = None
    check_timeout: Seconds = 6 * HOUR

    @model_validator(mode="after")
    def _no_password(self) -> BorgRepo:
        if _PASSWORD_IN_URL.search(self.repository):
            raise ValueError(f"borg repo {self.name!r}: its repository holds a password; use an ssh key instead")
        return self


class BorgConfig(CollectorBase):
    interval: Seconds = 900.0
    timeout: Seconds = 120.0
    command_timeout: Seconds = 60.0
    borg: Argv = ["borg"]
    repos: list[BorgRepo] = []

    @field_validator("repos")
    @classmethod
    def _unique(cls, v: list[BorgRepo]) -> list[BorgRepo]:
        return unique_names(v, "borg repo")
