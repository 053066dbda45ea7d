"""Every limit of the batch format, at its edge: the value at the limit is taken, one step
past it is refused with 400 and a message that names the place and the rule."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from app.batch import (
    MAX_AGE,
    MAX_AHEAD,
    MAX_CLOCK_OFF,
    MAX_POINT_N,
    MAX_SEQ,
    MAX_VALUE,
    BatchError,
    parse_batch,
)

NOW = 1_800_000_000.0


def base() -> dict[str, Any]:
    return {"format": "rackpulse-batch/1", "host": "ceph1", "agent_version": "0.1.0", "instance": "outbox-12345678",
            "sent_at": NOW, "records": [
                {"seq": 1, "kind": "run", "collector": "smart", "started": NOW - 10, "duration": 0.5, "ok": True,
                 "samples": [["rackpulse_x", {"a": "b"}, 1.0]]},
                {"seq": 2, "kind": "rollup", "res": 300, "series": [["rackpulse_y", {}, [[int(NOW) // 300 - 10,
                                                                                         1.0, 2.0, 3.0, 4]]]]}]}


def run(b: dict[str, Any]) -> dict[str, Any]:
    return b["records"][0]


def point(b: dict[str, Any]) -> list[Any]:
    return b["records"][1]["series"][0][2][0]


def parse(b: dict[str, Any]):  # type: ignore[no-untyped-def]
    return parse_batch(json.dumps(b).encode(), now=NOW)


def edit(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    b = copy.deepcopy(base())
    change(b)
    return b


# name: (the value at the limit, one step past it, the words of the refusal)
EDGES: dict[str, tuple[Callable[[dict[str, Any]], None], Callable[[dict[str, Any]], None], str]] = {
    "started at the oldest accepted": (lambda b: run(b).update(started=NOW - MAX_AGE),
                                       lambda b: run(b).update(started=NOW - MAX_AGE - 1),
                                       "records[0].started is"),
    "started at the furthest ahead": (lambda b: run(b).update(started=NOW + MAX_AHEAD),
                                      lambda b: run(b).update(started=NOW + MAX_AHEAD + 1),
                                      "(400 days back to 1 day ahead of the server's clock)"),
    "sent_at far off": (lambda b: b.update(sent_at=NOW + MAX_CLOCK_OFF), lambda b: b.update(sent_at=NOW - MAX_CLOCK_OFF - 1),
                        "is more than ten years from the server's clock"),
    "value": (lambda b: run(b)["samples"][0].__setitem__(2, MAX_VALUE),
              lambda b: run(b)["samples"][0].__setitem__(2, MAX_VALUE * 1.0000001), "less than or equal to"),
    "negative value": (lambda b: run(b)["samples"][0].__setitem__(2, -MAX_VALUE),
                       lambda b: run(b)["samples"][0].__setitem__(2, -MAX_VALUE * 1.0000001), "greater than or equal"),
    "seq": (lambda b: (run(b).update(seq=MAX_SEQ - 1), b["records"][1].update(seq=MAX_SEQ)),
            lambda b: b["records"][1].update(seq=MAX_SEQ + 1), "records.1.rollup.seq"),
    "rollup n": (lambda b: point(b).__setitem__(4, MAX_POINT_N), lambda b: point(b).__setitem__(4, MAX_POINT_N + 1),
                 "records.1.rollup.series.0.2.0.4"),
    "duration of a week": (lambda b: run(b).update(duration=7 * 86400), lambda b: run(b).update(duration=7 * 86400 + 1),
                           "records.0.run.duration"),
    "interval of a week": (lambda b: run(b).update(interval=7 * 86400), lambda b: run(b).update(interval=7 * 86400 + 1),
                           "records.0.run.interval"),
    "metric name of 200": (lambda b: run(b)["samples"][0].__setitem__(0, "m" * 200),
                           lambda b: run(b)["samples"][0].__setitem__(0, "m" * 201), "at most 200 characters"),
    "32 labels": (lambda b: run(b)["samples"][0].__setitem__(1, {f"l{i}": "v" for i in range(32)}),
                  lambda b: run(b)["samples"][0].__setitem__(1, {f"l{i}": "v" for i in range(33)}),
                  "at most 32 items"),
    "label value of 1024": (lambda b: run(b)["samples"][0].__setitem__(1, {"a": "v" * 1024}),
                            lambda b: run(b)["samples"][0].__setitem__(1, {"a": "v" * 1025}), "at most 1024 characters"),
    "label name of 100": (lambda b: run(b)["samples"][0].__setitem__(1, {"l" * 100: "v"}),
                          lambda b: run(b)["samples"][0].__setitem__(1, {"l" * 101: "v"}), "at most 100 characters"),
    "an underscore label, but not two": (lambda b: run(b)["samples"][0].__setitem__(1, {"_a": "v"}),
                                         lambda b: run(b)["samples"][0].__setitem__(1, {"__a": "v"}),
                                         "label name '__a' is reserved (host and __* are the server's)"),
    "error of 4000": (lambda b: run(b).update(error="e" * 4000), lambda b: run(b).update(error="e" * 4001),
                      "records.0.run.error"),
    "1000 warnings": (lambda b: run(b).update(warnings=["w"] * 1000), lambda b: run(b).update(warnings=["w"] * 1001),
                      "records.0.run.warnings"),
    "a warning of 2000": (lambda b: run(b).update(warnings=["w" * 2000]), lambda b: run(b).update(warnings=["w" * 2001]),
                          "records.0.run.warnings.0"),
    "agent version of 64": (lambda b: b.update(agent_version="v" * 64), lambda b: b.update(agent_version="v" * 65),
                            "agent_version"),
    "an average equal to its max": (lambda b: point(b).__setitem__(2, 3.0), lambda b: point(b).__setitem__(2, 3.001),
                                    "min 1 <= avg 3.001 <= max 3 does not hold"),
    "an average equal to its min": (lambda b: point(b).__setitem__(2, 1.0), lambda b: point(b).__setitem__(2, 0.999),
                                    "min 1 <= avg 0.999 <= max 3 does not hold"),
    "a bucket at the furthest ahead": (lambda b: point(b).__setitem__(0, int(NOW + MAX_AHEAD) // 300),
                                       lambda b: point(b).__setitem__(0, int(NOW + MAX_AHEAD) // 300 + 1),
                                       "records[1].series[0][0] bucket is"),
}


@pytest.mark.parametrize("edge", list(EDGES))
def test_a_value_at_the_limit_is_taken_and_one_past_it_is_refused(edge: str) -> None:
    at, past, words = EDGES[edge]
    parse(edit(at))
    with pytest.raises(BatchError) as err:
        parse(edit(past))
    assert err.value.status == 400 and words in str(err.value), str(err.value)


def test_records_must_come_in_rising_sequence() -> None:
    with pytest.raises(BatchError, match=r"records\[1\].seq 1 is not above the previous 1"):
        parse(edit(lambda b: b["records"][1].update(seq=1)))


def test_an_average_of_equal_values_may_round_a_hair_above_the_max() -> None:
    parse(edit(lambda b: point(b).__setitem__(slice(1, 4), [0.1, 0.1 * (1 + 1e-12), 0.1])))


def test_an_unknown_format_says_which_one_this_server_speaks() -> None:
    with pytest.raises(BatchError, match="unknown batch format 'rackpulse-batch/9'; this server speaks rackpulse-batch/1"):
        parse(edit(lambda b: b.update(format="rackpulse-batch/9")))


def test_many_problems_are_named_five_at_a_time() -> None:
    b = edit(lambda b: run(b).update(samples=[["bad name", {}, 1.0]] * 8))
    with pytest.raises(BatchError) as err:
        parse(b)
    assert str(err.value).count("records.0.run.samples.") == 5 and "(and 3 more)" in str(err.value)


def test_a_date_that_is_no_date_is_said_to_be_none() -> None:
    with pytest.raises(BatchError, match=r"records\[0\].started is 1e\+300 \(not a date\), outside"):
        parse(edit(lambda b: run(b).update(started=1e300)))
    with pytest.raises(BatchError, match=r"records\[0\].started is 2030-01-01 00:00:00 UTC, outside"):
        parse(edit(lambda b: run(b).update(started=1893456000.0)))


def test_the_real_clock_is_used_when_none_is_given() -> None:
    now = time.time()
    b = edit(lambda b: (b.update(sent_at=now), run(b).update(started=now), point(b).__setitem__(0, int(now) // 300)))
    parse_batch(json.dumps(b).encode())


def gz(data: bytes) -> bytes:
    import gzip

    return gzip.compress(data, mtime=0)  # no clock in the header: test ids stay the same on every xdist worker


@pytest.mark.parametrize("body, encoding, status, words", [
    (b"x" * 1025, None, 413, "batch of 1025 bytes is larger than the server's limit of 1024"),
    (gz(b"x" * 1025), "gzip", 413, "batch inflates to more than the server's limit of 1024 bytes"),
    (b"not gzip at all", "gzip", 400, "body is not valid gzip: "),
    (gz(b"{}")[:-6], "gzip", 400, "body is not valid gzip: truncated"),
    (b"{}", "br", 415, "unsupported Content-Encoding 'br' (use gzip or none)"),
])
def test_a_body_is_refused_before_parsing_with_the_reason(body: bytes, encoding: str | None, status: int,
                                                          words: str) -> None:
    from app.batch import decode_body

    with pytest.raises(BatchError) as err:
        decode_body(body, encoding, 1024)
    assert err.value.status == status and words in str(err.value)


@pytest.mark.parametrize("encoding", [None, "identity", " GZIP "])
def test_a_body_within_the_limit_comes_back_whole(encoding: str | None) -> None:
    from app.batch import decode_body

    raw = b"x" * 1024
    body = gz(raw) if encoding and encoding.strip().lower() == "gzip" else raw
    assert decode_body(body, encoding, 1024) == raw


def test_json_that_is_not_json_is_said_to_be_so() -> None:
    with pytest.raises(BatchError, match="body is not valid JSON: "):
        parse_batch(b"{not json", now=NOW)


def test_a_parsed_object_is_validated_the_same_way() -> None:
    with pytest.raises(BatchError, match="malformed batch: records.0.run.samples.0.0: String should match pattern"):
        parse_batch(edit(lambda b: run(b)["samples"][0].__setitem__(0, "a-b")), now=NOW)
    assert parse_batch(base(), now=NOW).samples() == 1 + 1  # one run sample, one rollup point
