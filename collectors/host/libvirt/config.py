"""[collectors.libvirt]: the KVM guests of a plain libvirt host, through virsh."""

from __future__ import annotations

from collectors.config import Argv, CollectorBase, Seconds


class LibvirtConfig(CollectorBase):
    interval: Seconds = 30.0
    # The hypervisor virsh connects to: the system's QEMU/KVM guests. rackpulse's user needs to be
    # in the libvirt group (Debian) to reach qemu:///system; "test:///default" is libvirt's mock.
    uri: str = "qemu:///system"
    virsh: Argv = ["virsh"]
    # Guests that must be running besides those set to autostart (libvirt_domain_down names them).
    expect_running: list[str] = []
    # Guests not to show at all (scratch VMs): names, * matching anything.
    ignore: list[str] = []
