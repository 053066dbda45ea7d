"""The filesystems `rackpulse init` finds, as the starter config's [collectors.host]."""

from __future__ import annotations

from collectors.starter import HostTree, q


def starter(tree: HostTree) -> list[str]:
    mounts = []
    for line in (tree.read("/proc/mounts") or "").splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0].startswith("/dev/") and parts[2] not in ("squashfs", "iso9660"):
            mounts.append((parts[1], parts[2], "ro" in parts[3].split(",")))
    ro = [m for m, _, readonly in mounts if readonly]
    out = ["[collectors.host]", f"## Filesystems found: {', '.join(f'{m} ({t})' for m, t, _ in mounts) or 'none'}."]
    if ro:
        out += ["## Read-only now; list those that are read-only on purpose, or each one raises an alert:",
                f"# expect_readonly = [{', '.join(q(m) for m in ro)}]"]
    return out
