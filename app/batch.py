"""The agent-to-server batch format (rackpulse-batch/1), pure: bytes in, a validated Batch out.

One batch carries outbox records in order. A record is either one collector run (samples,
state, inventory, status) or rollups the agent made of an old backlog when its outbox ran
short of room. Every record has the outbox's sequence number: the server stores the
highest one it accepted per agent, so a re-sent batch is recognised and stored only once.

Everything is checked before anything is stored: an error names the offending place,
e.g. ``records[2].samples[17].0: String should match pattern ...``.
"""

from __future__ import annotations

import time
import zlib
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from collectors import finite

FORMAT = "rackpulse-batch/1"
CONTENT_TYPE = "application/json"
# Samples are accepted from this far back (a backlog older than a year is no longer a backlog)
# and this far ahead (a clock that is ahead is a warning; a year ahead is a broken clock).
MAX_AGE = 400 * 86400
MAX_AHEAD = 86400
# sent_at only measures the agent's clock skew (an alert): it may be far off, but not absurd.
MAX_CLOCK_OFF = 10 * 365 * 86400

# Prometheus names, without the colons that are reserved for recording rules.
NAME_PATTERN = r"^[a-zA-Z_][a-zA-Z0-9_]*$"
def _not_reserved(name: str) -> str:
    if name.startswith("__"):
        raise ValueError(f"metric name {name!r} is reserved (__* names are Prometheus' own)")
    return name


MetricName = Annotated[str, StringConstraints(pattern=NAME_PATTERN, max_length=200), AfterValidator(_not_reserved)]
Name = Annotated[str, StringConstraints(min_length=1, max_length=255), AfterValidator(lambda t: _no_nul(t))]
# Values a rollup can sum and average without overflowing: far beyond any counter a host has.
MAX_VALUE = 1e30
Value = Annotated[float, Field(ge=-MAX_VALUE, le=MAX_VALUE)]
# Database columns are 64-bit; a sequence number or count beyond these is an attack or a bug.
MAX_SEQ = 2**62
MAX_POINT_N = 10**7
# The server's own label: an agent that sent it would duplicate it on every line of /metrics.
RESERVED_LABELS = ("host",)


def _check_labels(labels: dict[str, str]) -> dict[str, str]:
    for name in labels:
        if name in RESERVED_LABELS or name.startswith("__"):
            raise ValueError(f"label name {name!r} is reserved (host and __* are the server's)")
    return labels


def _no_nul(text: str) -> str:
    # PostgreSQL text cannot hold NUL: refused here (400) rather than by the database (a retry loop).
    if "\x00" in text:
        raise ValueError("text must not contain NUL characters")
    return text


Text = Annotated[str, AfterValidator(_no_nul)]
LabelName = Annotated[str, StringConstraints(pattern=NAME_PATTERN, max_length=100)]
LabelValue = Annotated[str, StringConstraints(max_length=1024)]
Labels = Annotated[dict[LabelName, LabelValue], Field(max_length=32), AfterValidator(_check_labels)]


def _finite_json(value: Any) -> Any:
    # allow_inf_nan covers the float fields only: a state or an entity's attributes (free JSON)
    # could still carry Infinity, NaN or 1e999 to a page's int() or a rule's comparison.
    if finite.count_bad(value):
        raise ValueError("holds a number that is not finite or is beyond ±1e30 (NaN, Infinity, 1e999, 2**64)")
    return value


# Any: an agent's JSON before it is validated
FiniteJson = Annotated[dict[str, Any], AfterValidator(_finite_json)]


class BatchError(Exception):
    """A batch the server refuses; ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _Strict(BaseModel):
    # allow_inf_nan=False: NaN and infinities are refused in every float field (400, never a 500 later).
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


Seq = Annotated[int, Field(ge=1, le=MAX_SEQ)]


class RunRecord(_Strict):
    seq: Seq
    kind: Literal["run"]
    collector: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$", max_length=64)]
    started: float
    duration: Annotated[float, Field(ge=0, le=7 * 86400)]
    ok: bool
    error: Annotated[Text, StringConstraints(max_length=4000)] | None = None
    no_data: bool = False
    interval: Annotated[float, Field(gt=0, le=7 * 86400)] = 30.0
    warnings: Annotated[list[Annotated[str, StringConstraints(max_length=2000)]], Field(max_length=1000)] = []
    samples: list[tuple[MetricName, Labels, Value]] = []
    state: FiniteJson = {}
    entities: list[tuple[Annotated[Text, StringConstraints(max_length=32)], Name, FiniteJson]] = []


Point = tuple[int, Value, Value, Value, Annotated[int, Field(ge=1, le=MAX_POINT_N)]]  # bucket, min, avg, max, n


class RollupRecord(_Strict):
    seq: Seq
    kind: Literal["rollup"]
    res: Literal[300, 3600]
    series: list[tuple[MetricName, Labels, list[Point]]]


Record = Annotated[RunRecord | RollupRecord, Field(discriminator="kind")]


class Batch(_Strict):
    format: Literal["rackpulse-batch/1"]
    host: Name
    agent_version: Annotated[Text, StringConstraints(max_length=64)]
    instance: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{8,64}$")]
    sent_at: float
    records: Annotated[list[Record], Field(min_length=1)]

    def samples(self) -> int:
        return sum(len(r.samples) if isinstance(r, RunRecord) else sum(len(p) for _, _, p in r.series)
                   for r in self.records)


def decode_body(body: bytes, encoding: str | None, max_bytes: int) -> bytes:
    """The JSON text of a request body, gzip-compressed or not, never inflating beyond max_bytes."""
    if len(body) > max_bytes:
        raise BatchError(413, f"batch of {len(body)} bytes is larger than the server's limit of {max_bytes}")
    enc = (encoding or "identity").strip().lower()
    if enc == "gzip":
        d = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        try:
            raw = d.decompress(body, max_bytes + 1)
        except zlib.error as exc:
            raise BatchError(400, f"body is not valid gzip: {exc}") from None
        if len(raw) > max_bytes or d.unconsumed_tail:
            raise BatchError(413, f"batch inflates to more than the server's limit of {max_bytes} bytes")
        if not d.eof:
            raise BatchError(400, "body is not valid gzip: truncated")
    elif enc == "identity":
        raw = body
    else:
        raise BatchError(415, f"unsupported Content-Encoding {encoding!r} (use gzip or none)")
    return raw


def check_items(raw: bytes, max_items: int) -> None:
    """Refuse (413) a body holding more than max_items lists before it is parsed: every sample,
    rollup point and entity is a JSON list, so counting "[" is a cheap upper bound on them. A
    15 MB body of 700,000 series cost 876 MB to parse before the series limit could refuse it."""
    n = raw.count(b"[")
    if n > max_items:
        raise BatchError(413, f"batch holds up to {n} samples, points or entities; this server takes at most "
                              f"{max_items} in one batch (agents.max_batch_items): send smaller batches")


# Any: an agent's JSON before it is validated
def parse_batch(obj: bytes | dict[str, Any], now: float | None = None) -> Batch:
    """A validated Batch from JSON text (or its parsed form), or BatchError(400) naming the first problems.

    JSON text is validated by pydantic in one pass, without building Python objects first:
    half the parsing cost of json.loads + model_validate for a batch of samples."""
    try:
        batch = Batch.model_validate_json(obj) if isinstance(obj, bytes | bytearray) else Batch.model_validate(obj)
    except ValidationError as exc:
        errors = exc.errors()
        for e in errors:
            if e["type"] == "json_invalid":
                raise BatchError(400, f"body is not valid JSON: {e['msg']}") from None
            if e["loc"] == ("format",) and e["type"] == "literal_error":
                raise BatchError(400, f"unknown batch format {e['input']!r}; this server speaks {FORMAT}") from None
        problems = [f"{'.'.join(str(p) for p in e['loc']) or 'batch'}: {e['msg']}" for e in errors[:5]]
        more = f" (and {exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
        raise BatchError(400, "malformed batch: " + "; ".join(problems) + more) from None
    now = now if now is not None else time.time()
    last = 0
    for i, r in enumerate(batch.records):
        if r.seq <= last:
            raise BatchError(400, f"malformed batch: records[{i}].seq {r.seq} is not above the previous {last}")
        last = r.seq
        if isinstance(r, RunRecord):
            _check_time(f"records[{i}].started", r.started, now)
        else:
            for j, (_, _, pts) in enumerate(r.series):
                for k, (b, vmin, vavg, vmax, _) in enumerate(pts):  # every bucket: they need not be sorted
                    where = f"records[{i}].series[{j}][{k}]"
                    _check_time(f"{where} bucket", b * r.res, now)
                    slack = 1e-9 * max(1.0, abs(vmin), abs(vmax))  # an average of equal values may round
                    if not vmin - slack <= vavg <= vmax + slack:
                        raise BatchError(400, f"malformed batch: {where}: min {vmin:g} <= avg {vavg:g} <= max "
                                              f"{vmax:g} does not hold")
    if not now - MAX_CLOCK_OFF <= batch.sent_at <= now + MAX_CLOCK_OFF:
        raise BatchError(400, f"malformed batch: sent_at {batch.sent_at:g} is more than ten years from the "
                              "server's clock")
    return batch


def _check_time(where: str, ts: float, now: float) -> None:
    if not now - MAX_AGE <= ts <= now + MAX_AHEAD:
        try:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(max(ts, 0))) + " UTC"
        except (OverflowError, OSError, ValueError):
            when = f"{ts:g} (not a date)"
        raise BatchError(400, f"malformed batch: {where} is {when}, outside the accepted range "
                              "(400 days back to 1 day ahead of the server's clock)")
