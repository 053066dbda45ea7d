"""Stored whole results: what a collector returned (samples, inventory, page state, warnings),
compared to the JSON kept in tests/golden/collected/. Any change to what a collector reports
shows up as a diff to review; after an intended one, rerun the test with UPDATE_GOLDEN=1."""

from __future__ import annotations

import json
import os
from typing import Any

from collectors.base import CollectResult
from collectors.state import dump
from tests.paths import GOLDEN

COLLECTED = GOLDEN / "collected"


def as_json(result: CollectResult) -> dict[str, Any]:
    return json.loads(json.dumps({
        "samples": [[s.metric, dict(s.labels), s.value] for s in result.samples],
        "entities": [[e.kind, e.key, e.attrs] for e in result.entities],
        "state": dump(result.state) if result.state is not None else None,
        "warnings": result.warnings,
    }))


def matches_golden(name: str, got: Any) -> bool:
    path = COLLECTED / f"{name}.json"
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(got, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    return bool(got == json.loads(path.read_text()))
