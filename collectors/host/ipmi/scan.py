"""One BMC's FreeIPMI calls: the same connection options and SDR cache for each, errors in one
line, and the password (which only the config file carries) out of every message."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from collectors.base import CollectorError, CommandNotFound, Runner


@dataclass
class Scan:
    runner: Runner
    timeout: float
    common: list[str]  # --hostname, --config-file, --driver-type ... for a remote BMC; none for the local one
    cache: Path
    secret: str  # scrubbed from every error message

    def run(self, argv: Sequence[str], *args: str, cache: bool = True) -> str:
        """The command's standard output; CollectorError with its first line of complaint."""
        caching = ["--quiet-cache", f"--sdr-cache-directory={self.cache}"] if cache else []
        full = [*argv, *self.common, *caching, *args]
        try:
            res = self.runner(full, self.timeout)
            err = res.stderr.decode("utf-8", "replace")
            if res.returncode != 0 and "sdr cache" in err.lower() and cache:
                # The BMC's sensor records changed (a firmware update, a new PSU): read them anew.
                res = self.runner([*full, "--sdr-cache-recreate"], self.timeout)
                err = res.stderr.decode("utf-8", "replace")
        except CommandNotFound:
            raise CollectorError(f"{argv[0]} is not installed (FreeIPMI: Debian's freeipmi-tools)") from None
        except CollectorError as exc:
            raise CollectorError(self.scrub(str(exc))) from None
        if res.returncode != 0:
            first = next((ln.strip() for ln in err.splitlines() if ln.strip()), f"exit status {res.returncode}")
            tool = Path(argv[0]).name
            first = first.removeprefix(f"{tool}: ")  # FreeIPMI names itself already
            raise CollectorError(self.scrub(f"{tool}: {first[:300]}"))
        return res.stdout.decode("utf-8", "replace")

    def scrub(self, text: str) -> str:
        return text.replace(self.secret, "***") if self.secret else text
