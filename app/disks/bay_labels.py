"""Bay labels saved from a disk's page: a small JSON file beside the database (never the user's
TOML, which stays theirs). Each entry is a bay rule like [[disks.bays]]: by controller port
when the disk has one (so a replacement disk keeps the label), else enclosure slot, else serial."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from app.files import atomic_write, locked
from app.storage.opening import url_of
from collectors import location
from collectors.context import BayRules

log = logging.getLogger("rackpulse.web")
LABEL = re.compile(r"^[^\x00-\x1f]{1,100}$")
MATCHERS = ("path", "enclosure_slot", "serial", "wwn")


def labels_file(cfg: Any) -> Path:
    """bay-labels.json beside a SQLite file; beside the config file (or in the working folder)
    for PostgreSQL."""
    u = make_url(url_of(cfg))
    if u.get_backend_name() == "sqlite" and u.database and u.database != ":memory:":
        return Path(u.database).expanduser().resolve().parent / "bay-labels.json"
    return (cfg.source.parent if cfg.source else Path.cwd()) / "bay-labels.json"


def load(path: Path) -> list[dict[str, str]]:
    try:
        rows = json.loads(path.read_text())
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    return [r for r in rows if isinstance(r, dict) and isinstance(r.get("label"), str)
            and any(isinstance(r.get(k), str) for k in MATCHERS)]


def rules(rows: list[dict[str, str]]) -> list[location.BayRule]:
    return [location.BayRule(**{k: r[k] for k in ("label", *MATCHERS) if r.get(k)}) for r in rows]


def host_bays(cfg: Any) -> BayRules:
    """The bay rules every collector of this host holds, with the labels saved from disk pages
    read from their file (a damaged file costs those labels, said once, not the start)."""
    bays = BayRules()
    try:
        apply(load(labels_file(cfg)), bays)
    except ValueError as exc:
        log.warning("saved bay labels not read: %s", exc)
    return bays


def apply(rows: list[dict[str, str]], bays: BayRules | None) -> None:
    """The saved labels into the host's bay rules, which every collector holds (no restart)."""
    if bays is not None:
        bays.replace_saved(rules(rows))


def rule_for(disk: object) -> dict[str, str] | None:
    """The matcher a saved label uses for this disk: its port, else its slot, else its serial."""
    for key, attr in (("path", "by_path"), ("enclosure_slot", "enclosure_slot"), ("serial", "serial"),
                      ("wwn", "wwn")):
        value = getattr(disk, attr, None)
        if value:
            return {key: str(value)}
    return None


def save(path: Path, disk: object, label: str, bays: BayRules | None = None) -> dict[str, str]:
    """Add or replace the label of the disk's bay; written whole, then renamed over, under a lock."""
    label = label.strip()
    if not LABEL.fullmatch(label):  # match() and "$" would let a trailing newline in
        raise ValueError("a bay label is 1 to 100 characters, without control characters")
    matcher = rule_for(disk)
    if matcher is None:
        raise ValueError("this disk has no port, slot, serial or WWN to hang a label on")
    with locked(path):  # thirty saves at once: each reads what the one before it wrote
        rows = [r for r in load(path) if not all(r.get(k) == v for k, v in matcher.items())]
        rows.append({"label": label, **matcher})
        atomic_write(path, json.dumps(rows, indent=1) + "\n", mode=0o644)
        apply(rows, bays)
    return {"label": label, **matcher}
