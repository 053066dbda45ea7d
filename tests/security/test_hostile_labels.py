"""Names and labels from outside (an agent's states, its inventory) that Python will not read as
numbers: a bay label of 5,000 digits made /disks/all, its CSV and the agent's API state answer
500 for everyone (int() refuses past 4,300 digits). Every page and API an agent's states reach
answers without a 500."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from collectors.findings import natural
from tests.security.test_ingest_refusals import NOW, serving
from tests.test_agents import batch, body, post

HEALTHY = Path(__file__).resolve().parent.parent / "fixtures" / "demo" / "healthy-states.json"
HUGE = "9" * 5000


def test_numbers_in_names_sort_as_numbers_whatever_their_length() -> None:
    names = [f"bay {HUGE}", "bay 10", "bay 9", "bay 0010", f"bay {HUGE[:-1]}", None, "bay ²", "bay ٣"]
    got = sorted(names, key=natural)
    assert got[:3] == ["bay 9", "bay 10", "bay 0010"] and got[3:5] == [f"bay {HUGE[:-1]}", f"bay {HUGE}"]
    assert got[-1] is None and set(got[5:7]) == {"bay ²", "bay ٣"}


def hostile_smart() -> dict[str, Any]:
    smart = copy.deepcopy(json.loads(HEALTHY.read_text())["smart"])
    for i, d in enumerate(smart["disks"]):
        d["bay"] = f"shelf {HUGE}, bay {HUGE}{i}"
        d["device"] = f"sd{HUGE}{i}"
    return smart


@pytest.fixture
def attacked(sqlite_url: str):  # type: ignore[no-untyped-def]
    for client, _, token, _, _ in serving(sqlite_url, max_state_bytes=5_000_000):
        record = {"seq": 2, "kind": "run", "collector": "smart", "started": NOW - 20, "duration": 0.2, "ok": True,
                  "interval": 15.0, "samples": [], "state": hostile_smart(),
                  "entities": [["disk", f"Z{i}", {"bay": f"bay {HUGE}{i}"}] for i in range(3)]}
        r = post(client, token, body(batch([record])))
        assert r.status_code == 200, r.text
        moved = {**record, "seq": 3, "started": NOW - 10,  # every disk changes bay: a burst of events to group
                 "entities": [["disk", f"Z{i}", {"bay": f"bay {HUGE}{i + 5}"}] for i in range(3)]}
        r = post(client, token, body(batch([moved])))
        assert r.status_code == 200, r.text
        assert "bay" in client.get("/h/ceph1/api/v1/events").text
        yield client


@pytest.mark.parametrize("path", ["/disks/all", "/disks/all.csv", "/h/ceph1/api/v1/state", "/h/ceph1/",
                                  "/h/ceph1/disks", "/events", "/h/ceph1/events", "/", "/api/v1/hosts",
                                  "/h/ceph1/api/v1/findings", "/metrics"])
def test_no_page_an_agents_digit_labels_reach_answers_500(attacked, path: str) -> None:  # type: ignore[no-untyped-def]
    r = attacked.get(path)
    assert r.status_code < 500, f"{path}: {r.status_code}"
