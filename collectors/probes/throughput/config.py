"""[collectors.throughput]: scheduled iperf3 tests against servers you run (`iperf3 -s`).

Written either as a list of tests, `[[collectors.throughput]]`, or as a section with its own
settings and `[[collectors.throughput.tests]]`."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, field_validator, model_validator

from collectors.config import Argv, CollectorBase, Seconds, Strict, unique_names


class ThroughputTest(Strict):
    name: Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[^\x00-\x1f]+$")]
    server: Annotated[str, Field(min_length=1, max_length=255, pattern=r"^[A-Za-z0-9.:_%][A-Za-z0-9.:_%-]*$")]
    port: Annotated[int, Field(ge=1, le=65535)] = 5201
    duration: Annotated[int, Field(ge=1, le=120)] = 10  # seconds of traffic (iperf3 -t)
    reverse: bool = False  # the server sends (iperf3 -R): the download direction
    interval: Annotated[float, Field(ge=60)] = 6 * 3600.0  # between two runs of this test
    baseline_mbps: Annotated[float | None, Field(gt=0)] = None  # what the link does on a good day
    low_ratio: Annotated[float, Field(gt=0, le=1)] = 0.5  # throughput_low below this share of the baseline


class ThroughputConfig(CollectorBase):
    # How often the collector looks for a test that is due; each test has its own interval.
    interval: Seconds = 60.0
    timeout: Seconds = 600.0
    iperf3: Argv = ["iperf3"]
    tests: list[ThroughputTest] = []

    @model_validator(mode="before")
    @classmethod
    def _a_list_is_the_tests(cls, data: Any) -> Any:
        return {"tests": data} if isinstance(data, list) else data

    @field_validator("tests")
    @classmethod
    def _unique(cls, tests: list[ThroughputTest]) -> list[ThroughputTest]:
        return unique_names(tests, "test")
