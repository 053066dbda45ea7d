"""What `rackpulse init` writes for IPMI: this server's own BMC when the kernel's driver has made
/dev/ipmi0, and a remote BMC's entry to fill in (its password in a file, never in this one)."""

from __future__ import annotations

from collectors.host.ipmi.collector import LOCAL_DEVICES
from collectors.starter import HostTree


def starter(tree: HostTree) -> list[str]:
    device = next((d for d in LOCAL_DEVICES if tree.exists("/" + d)), None)
    if device is None:
        return []
    return ["[collectors.ipmi]",
            f"## This server's BMC, through /{device} (FreeIPMI's ipmi-sensors, ipmi-sel and ipmi-dcmi:",
            "## Debian package freeipmi-tools). rackpulse needs root or read-write access to the device.",
            'local = "auto"',
            "## Another server's BMC over the LAN: a user with the Operator or User privilege is enough.",
            "# [[collectors.ipmi.bmcs]]",
            '# name = "r720"',
            '# host = "192.0.2.10"',
            '# user = "monitor"',
            '# password_file = "/etc/rackpulse/bmc-r720.password"   # mode 0600, rackpulse\'s',
            '# interface = "lanplus"']
