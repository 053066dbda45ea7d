"""The demo's KVM guests, as virsh answers them for the demo's replay stand-in: Home Assistant
and Pi-hole set to autostart and running, a Windows VM shut off by its user, a build VM paused."""

from __future__ import annotations

from pathlib import Path

from collectors.scenes import write_answer

URI = "qemu:///system"
GiB = 1024 * 1024  # KiB, as balloon.* counts


def _domain(name: str, state: int, reason: int, vcpus: int, mem_gib: float, t: float, busy: float) -> str:
    lines = [f"Domain: '{name}'", f"  state.state={state}", f"  state.reason={reason}"]
    if state in (1, 3):  # a guest that is not running has no counters to read
        lines += [f"  cpu.time={int(t * busy * 1e9) + 8_123_456_789_000}", f"  vcpu.current={vcpus}",
                  f"  vcpu.maximum={vcpus}", f"  balloon.current={int(mem_gib * GiB)}",
                  f"  balloon.maximum={int(mem_gib * GiB)}", f"  balloon.rss={int(mem_gib * 0.8 * GiB)}",
                  "  block.count=1", "  block.0.name=vda", f"  block.0.rd.bytes={int(52e9 + t * busy * 2e5)}",
                  f"  block.0.wr.bytes={int(31e9 + t * busy * 4e5)}", "  net.count=1", "  net.0.name=vnet0",
                  f"  net.0.rx.bytes={int(9e9 + t * busy * 1e5)}", f"  net.0.tx.bytes={int(4e9 + t * busy * 6e4)}"]
    return "\n".join(lines) + "\n\n"


def write_scene(root: Path, t: float) -> None:
    folder = root / "demo-tools" / "virsh"
    stats = (_domain("home-assistant", 1, 1, 2, 4, t, 0.15) + _domain("pihole", 1, 1, 1, 1, t, 0.02)
             + _domain("builder", 3, 1, 4, 8, t, 0.0) + _domain("win11", 5, 1, 4, 8, t, 0.0))
    write_answer(folder, ["-c", URI, "domstats", "--raw"], stats)
    write_answer(folder, ["-c", URI, "list", "--all", "--autostart", "--name"], "home-assistant\npihole\n\n")
