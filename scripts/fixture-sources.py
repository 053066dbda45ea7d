"""Regenerate tests/fixtures/SOURCES.md from ../shared/fixtures/upstream/SOURCES.md.

Fixtures copied from the shared upstream folder are named `<upstream folder>__<file>`;
this looks each one up and writes its repository, commit, original path and license.
usage: python scripts/fixture-sources.py [UPSTREAM_SOURCES_MD]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "fixtures"
SUBDIRS = ("mdstat", "mdadm", "smartctl", "bonding", "frr", "openvpn", "host", "fping", "iperf3", "zpool", "btrfs",
           "storcli", "ceph")


def main() -> None:
    src_path = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared/fixtures/upstream/SOURCES.md"
    src = src_path.read_text()
    found = re.findall(r"\| `([\w.-]+)/` \| (https://\S+) \| ([^|]+)\|", src)
    repos = {a: b for a, b, _ in found}
    lic = {a: c.strip() for a, _, c in found}
    commits: dict[str, str] = {}
    rows: dict[tuple[str, str], str] = {}
    for sec in re.split(r"\n## `", src)[1:]:
        folder = sec.split("/`", 1)[0]
        m = re.search(r"Commit: `([0-9a-f]+)`", sec)
        commits[folder] = m.group(1) if m else "?"
        for name, path in re.findall(r"^\| `([^`]+)` \| `([^`]+)`", sec, re.M):
            rows[(folder, name)] = path
    rows[("procfs", "mdstat")] = "testdata/fixtures.ttar :: fixtures/proc/mdstat"
    out = ["# Test fixtures: origin of every file", "",
           "Real outputs copied byte for byte from `../shared/fixtures/upstream/` (see its SOURCES.md), which took",
           "them from the public repositories below. Files are renamed `<upstream folder>__<upstream file name>`.",
           "Regenerate this table with `python scripts/fixture-sources.py`.", "",
           "| file | repository | commit | path in that repository | license |", "|---|---|---|---|---|"]
    for sub in SUBDIRS:
        d = FIX / sub
        if not d.is_dir():
            continue
        for f in sorted(p.name for p in d.iterdir() if "__" in p.name):
            folder, name = f.split("__", 1)
            name = name.replace("__", "/") if folder == "procfs" else name  # a path inside the ttar
            out.append(f"| `{sub}/{f}` | {repos.get(folder, '?')} | `{commits.get(folder, '?')[:12]}` | "
                       f"`{rows.get((folder, name), '?')}` | {lic.get(folder, '?')} |")
    out.append(f"| `sysfs/sys/block/md*/md/*` | {repos['procfs']} | `{commits['procfs'][:12]}` | "
               "`testdata/fixtures.ttar :: fixtures/sys/block/...` | Apache-2.0 |")
    out += ["", "Files without `__` in their name were captured here from real peers; each folder's README says how."]
    (FIX / "SOURCES.md").write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
