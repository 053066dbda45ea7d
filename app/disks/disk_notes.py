"""Notes per disk from its page (purchase date, warranty end, the vendor's RMA number, free text):
a small JSON file beside the bay labels, keyed by serial, so they follow the disk to another bay
or host and survive a restart. Never the user's TOML."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path
from typing import Any

from app.disks.bay_labels import labels_file
from app.files import atomic_write, locked

FIELDS = ("purchased", "warranty_end", "rma", "note")
DATES = ("purchased", "warranty_end")
LIMITS = {"rma": 100, "note": 500}
TEXT = re.compile(r"^[^\x00-\x08\x0b-\x1f]*$")  # no control characters but newline and tab


def notes_file(cfg: Any) -> Path:
    return labels_file(cfg).with_name("disk-notes.json")


def load(path: Path) -> dict[str, dict[str, str]]:
    try:
        rows = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    if not isinstance(rows, dict):
        return {}
    return {str(k): {f: str(v[f]) for f in FIELDS if isinstance(v, dict) and isinstance(v.get(f), str)}
            for k, v in rows.items() if isinstance(v, dict)}


def checked(form: dict[str, str]) -> dict[str, str]:
    """The form's fields, each checked; ValueError naming the field that is not."""
    out = {}
    for f in FIELDS:
        value = (form.get(f) or "").strip()
        if not value:
            continue
        if f in DATES:
            try:
                value = date.fromisoformat(value).isoformat()
            except ValueError:
                raise ValueError(f"{f.replace('_', ' ')}: a date as YYYY-MM-DD, not {value[:20]!r}") from None
        elif len(value) > LIMITS[f] or not TEXT.match(value):
            raise ValueError(f"{f}: at most {LIMITS[f]} characters, without control characters")
        out[f] = value
    return out


def save(path: Path, serial: str, form: dict[str, str]) -> dict[str, str]:
    notes = checked(form)
    with locked(path):
        rows = load(path)
        if notes:
            rows[serial] = notes
        else:
            rows.pop(serial, None)
        atomic_write(path, json.dumps(rows, indent=1, sort_keys=True) + "\n", mode=0o644)
    return notes


def warranty_words(notes: dict[str, str], today: date | None = None) -> str | None:
    """ "under warranty until 2027-03-01 (97 days)" or "warranty ended 2024-01-31"."""
    end = notes.get("warranty_end")
    if not end:
        return None
    today = today or date.today()
    left = (date.fromisoformat(end) - today).days
    return f"under warranty until {end} ({left} days)" if left >= 0 else f"warranty ended {end}"
