"""What a collector runs that an ordinary user may not: each plug-in declares it, so that
`rackpulse init --sudoers` can allow exactly those commands and nothing more, its README can
say it, and `rackpulse doctor` can name the line that grants what is missing.

rackpulse's web server never runs as root (deploy/systemd/rackpulse.service): a command that
needs root is run through `sudo -n` (its argv in the config: `["sudo", "-n", "/usr/sbin/smartctl"]`)
with a drop-in that allows only the argument lists declared here. sudo 1.9.10 and later reads an
argument list that starts with ^ and ends with $ as an extended regular expression; the patterns
below are anchored, and a device path never holds "..".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

# The block and pass-through devices a disk is read through, and nothing else under /dev: SCSI/SATA
# disks and their generic nodes, NVMe, md arrays, the udev links to them, the pass-through nodes
# of RAID controllers (megaraid's /dev/bus/N, cciss, 3ware), each name's "." only between
# characters (so no ".."). Not /dev/shm, /dev/fd/0, /dev/stdin or any other node: a link there to
# /etc/shadow was opened as root.
_NAME = r"[A-Za-z0-9_:+=-]+(\.[A-Za-z0-9_:+=-]+)*"
DEVICE = (r"/dev/(sd[a-z]{1,3}[0-9]{0,3}|sg[0-9]{1,4}|hd[a-z][0-9]{0,2}|nvme[0-9]{1,3}(n[0-9]{1,3}(p[0-9]{1,3})?)?"
          r"|md[0-9]{1,4}(p[0-9]{1,3})?|md/[A-Za-z0-9_:-]+|disk/by-(id|path|uuid|partuuid|label|partlabel|diskseq)/"
          + _NAME + r"|bus/[0-9]{1,3}|cciss/c[0-9]{1,2}d[0-9]{1,3}|tw[ael][0-9]{1,2}|megaraid_sas_ioctl_node)")
# smartctl's -d types that only read (smartctl(8), "-d TYPE"): never `jmb39x`/`jms56x` (they read
# and write a sector of the disk and may overwrite it), `intelliprop` (switches the drive an
# IntelliProp controller shows), `test`, nor anything with `force`.
SMARTCTL_TYPES = (r"(ata|scsi|nvme(,0x[0-9a-f]{1,8}|,[0-9]{1,10})?|sat(,auto)?(,(12|16))?|auto|usbcypress(,0x[0-9a-f]{1,2})?"
                  r"|usbjmicron(,p)?(,x)?(,[01])?|usbprolific|usbsunplus|sntasmedia|sntjmicron(,[0-9]{1,10})?|sntrealtek"
                  r"|megaraid,[0-9]{1,3}|cciss,[0-9]{1,3}|areca,[0-9]{1,2}(/[0-9])?|aacraid,[0-9]{1,2},[0-9]{1,2},[0-9]{1,3}"
                  r"|3ware,[0-9]{1,3}|hpt,[0-9]/[0-9]{1,2}(/[0-9])?|marvell)")
# A mount point as the btrfs collector passes it: an absolute path without white space.
MOUNT = r"/[^ ]*"


def _always(section: Any) -> bool:
    return True


@dataclass(frozen=True)
class Privilege:
    """One command of a collector that needs more than an ordinary user has.

    `option` names the section's argv option that runs it ("smartctl"). `args`: regular
    expressions, each matching whole argument lists the collector passes (without the command
    itself): the sudoers entry allows exactly these. `group`: instead of root, membership of this
    group is enough (vtysh: frrvty). `needed`: whether the section's config uses it at all
    (self-tests are off by default). `args_for`: the patterns for one config, where they hold a
    path of its own (IPMI's SDR cache, which root writes into: never a folder the caller names)."""

    option: str
    why: str
    args: tuple[str, ...] = ()
    group: str = ""
    needed: Callable[[Any], bool] = _always
    args_for: Callable[[Any], tuple[str, ...]] | None = None

    def patterns(self, section: Any = None) -> tuple[str, ...]:
        return self.args_for(section) if self.args_for is not None and section is not None else self.args

    def grant(self, user: str, executable: str, section: Any = None) -> str:
        """The one line that grants it to `user`: a sudoers entry, or the group to join."""
        if self.group:
            return f"usermod -aG {self.group} {user}   # and SupplementaryGroups={self.group} in the unit"
        allowed = ", ".join(f"{executable} {sudoers_escape(a)}" for a in self.patterns(section))
        return f"{user} ALL=(root) NOPASSWD: {allowed}"


def sudoers_escape(pattern: str) -> str:
    """A regular expression as a sudoers argument: anchored, and its one character sudoers still
    reads as its own within a regular expression, "#", escaped (sudoers(5), "Regular expressions")."""
    return "^" + pattern.replace("#", "\\#") + "$"


def without_sudo(argv: Sequence[str]) -> list[str]:
    """The command an argv runs, past a leading `sudo` and its options (`sudo -n smartctl`)."""
    rest = list(argv)
    if rest and rest[0].rsplit("/", 1)[-1] == "sudo":
        rest = rest[1:]
        while rest and rest[0].startswith("-"):
            rest = rest[1:]
    return rest


def uses_sudo(argv: Sequence[str]) -> bool:
    return bool(argv) and argv[0].rsplit("/", 1)[-1] == "sudo"


def read_only_smartctl_type(dev_type: str) -> bool:
    """Whether `smartctl -d dev_type` only reads (SMARTCTL_TYPES): the collectors pass no other."""
    import re

    return re.fullmatch(SMARTCTL_TYPES, dev_type) is not None
