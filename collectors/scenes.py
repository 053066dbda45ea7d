"""What demo scenes share: writing the demo's host tree the way the kernel's files change,
whole, never half."""

from __future__ import annotations

import os
from pathlib import Path


def atomic_write(path: Path, text: str) -> None:
    """Write beside, then rename over: a collector reading at that moment sees old or new, never a torn file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
