"""An md array's page in words: md's array_state says whether writes are pending, not whether the
array is whole, so it is the "write state", and "clean" beside "degraded: yes" no longer reads as
a contradiction."""

from __future__ import annotations

import pytest

from app.words import FAILING, OK, facts, headline
from collectors import plugins


def test_a_degraded_array_that_is_clean_says_degraded_first_and_clean_as_its_write_state() -> None:
    md = plugins()["mdraid"]
    attrs = {"level": "raid6", "degraded": True, "sync_action": "idle", "array_state": "clean"}
    said = {f.name: (f.words, f.raw, f.level) for f in facts("md_array", attrs, md)}
    assert said["write state"] == ("clean (no writes pending)", "clean", OK)
    assert "array state" not in said
    assert headline("md_array", attrs, True, md).words == "degraded"


@pytest.mark.parametrize("state, words, level", [
    ("active", "active (writing)", OK), ("read-auto", "read-only until the first write", None),
    ("broken", "broken (a member it needs is gone)", FAILING), ("write-pending", "writes pending", None),
])
def test_each_write_state_md_reports_is_said_in_words(state: str, words: str, level: str | None) -> None:
    fact = next(f for f in facts("md_array", {"array_state": state}, plugins()["mdraid"]))
    assert (fact.words, fact.raw) == (words, state)
    if level is not None:
        assert fact.level == level
