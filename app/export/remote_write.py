"""Prometheus remote write 1.0: every stored sample, from the database, to Mimir,
VictoriaMetrics, Thanos or a Prometheus with --web.enable-remote-write-receiver.

The request is a WriteRequest protobuf (prompb: TimeSeries of Labels and Samples), snappy block
compressed, POSTed with the 1.0 headers. The protobuf is written by hand here (four messages,
six fields): no generated code and no protobuf runtime to install.

Samples are read from the database in time windows after a watermark kept in its `meta` table,
so a receiver that is down for hours is caught up from where it stopped when it is back (no
loss as long as the samples are still within storage.raw_days) and memory stays one window of
samples. A window is sent once a few seconds have passed its end, so that samples still being
written land in it; agent data that arrives later than that is not sent."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.client
import json
import logging
import socket
import struct
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import cramjam
from sqlalchemy import Engine, select, update

from app.logsafe import redact
from app.storage import blocks
from app.storage.models import meta, sample, series

log = logging.getLogger("rackpulse.export.remote_write")
Labels = Sequence[tuple[str, str]]
SETTLE_SECONDS = 10  # a window is sent once this long past its end: writes in flight land first
WINDOW_SECONDS = 300  # at most this much time per request
IDS_PER_QUERY = 500


# -- protobuf, by hand: varint-length-delimited fields of prompb.WriteRequest ---------------------

def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _label(name: str, value: str) -> bytes:
    return _field(1, name.encode()) + _field(2, value.encode())


def _sample(ts_ms: int, value: float) -> bytes:
    # Sample: double value = 1 (fixed64), int64 timestamp = 2 (varint, two's complement)
    return b"\x09" + struct.pack("<d", value) + b"\x10" + _varint(ts_ms & 0xFFFFFFFFFFFFFFFF)


def encode_write_request(timeseries: Iterable[tuple[Labels, Sequence[tuple[int, float]]]]) -> bytes:
    """WriteRequest{timeseries: [TimeSeries{labels: [...], samples: [...]}]}. Labels are sorted by
    name, as receivers require."""
    out = bytearray()
    for labels, samples in timeseries:
        body = b"".join(_field(1, _label(k, v)) for k, v in sorted(labels))
        body += b"".join(_field(2, _sample(ts, v)) for ts, v in samples)
        out += _field(1, body)
    return bytes(out)


def compress(body: bytes) -> bytes:
    return bytes(cramjam.snappy.compress_raw(body))


# -- the sender -----------------------------------------------------------------------------

@dataclass
class Stats:
    samples_sent: int = 0
    requests: int = 0
    failures: int = 0
    last_error: str | None = None
    watermark: int = 0
    dropped: int = 0  # samples a receiver refused for good (400: out of order, too old)
    backoff_until: float = 0.0


class RemoteWrite:
    def __init__(self, cfg: Any, engine: Engine, user_agent: str = "rackpulse") -> None:
        self.cfg = cfg
        self.engine = engine
        self.user_agent = user_agent
        self.key = "remote_write:" + hashlib.sha256(cfg.url.encode()).hexdigest()[:16]
        self.stats = Stats()
        self._failures_in_row = 0

    # watermark: the end of the last window the receiver accepted, in seconds
    def load_watermark(self, now: float) -> int:
        with self.engine.connect() as c:
            value = c.execute(select(meta.c.value).where(meta.c.key == self.key)).scalar()
        floor = int(now - self.cfg.max_backlog_hours * 3600)
        wm = max(int(value), floor) if value is not None else floor
        self.stats.watermark = wm
        return wm

    def save_watermark(self, wm: int) -> None:
        with self.engine.begin() as c:
            if c.execute(update(meta).where(meta.c.key == self.key).values(value=str(wm))).rowcount == 0:
                c.execute(meta.insert().values(key=self.key, value=str(wm)))
        self.stats.watermark = wm

    def _series(self) -> dict[int, list[tuple[str, str]]]:
        with self.engine.connect() as c:
            rows = c.execute(select(series.c.id, series.c.host, series.c.metric, series.c.labels)).all()
        return {int(sid): [("__name__", metric), ("host", host), *((k, v) for k, v in json.loads(labels) if k != "host")]
                for sid, host, metric, labels in rows}

    def read_window(self, ids: list[int], start: int, end: int) -> dict[int, list[tuple[int, float]]]:
        """Samples with start < ts <= end, per series, in time order; the primary key (series, ts)
        answers each series' range without a scan."""
        out: dict[int, list[tuple[int, float]]] = {}
        with self.engine.connect() as c:
            for i in range(0, len(ids), IDS_PER_QUERY):
                part = ids[i:i + IDS_PER_QUERY]
                q = (select(sample.c.series_id, sample.c.ts, sample.c.value)
                     .where(sample.c.series_id.in_(part), sample.c.ts > start, sample.c.ts <= end)
                     .order_by(sample.c.series_id, sample.c.ts))
                rows: dict[int, list[tuple[int, float]]] = {}
                for sid, ts, value in c.execute(q):
                    rows.setdefault(int(sid), []).append((int(ts), float(value)))
                # a backlog can reach below the blocks' mark (app/storage/blocks.py)
                packed = blocks.read(c, part, start + 1, end + 1)
                for sid in sorted(set(rows) | set(packed)):
                    points = blocks.merged(packed.get(sid, {}), rows.get(sid, []))
                    out[sid] = [(ts * 1000, v) for ts, v in points]
        return out

    def post(self, body: bytes) -> tuple[int, str]:
        req = urllib.request.Request(self.cfg.url, data=compress(body), method="POST", headers={
            "Content-Encoding": "snappy", "Content-Type": "application/x-protobuf",
            "X-Prometheus-Remote-Write-Version": "0.1.0", "User-Agent": self.user_agent,
            **{k: v.get_secret_value() for k, v in self.cfg.headers.items()}})
        try:
            auth = self.cfg.auth()
        except OSError as exc:  # basic_auth.password_file: tried again after the backoff
            return 0, f"basic_auth password_file: {exc}"
        if auth is not None:
            req.add_header("Authorization", "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode())
        return _send(req, self.cfg.timeout)

    def tick(self, now: float | None = None, budget_seconds: float = 20.0) -> int:
        """Send the windows that are due, oldest first, until caught up or out of budget. A
        receiver that fails keeps the watermark where it is: the same window is tried again
        after a backoff (1 s doubling to 5 min). Returns the samples sent."""
        now = time.time() if now is None else now
        if now < self.stats.backoff_until:
            return 0
        started = time.monotonic()
        wm = self.load_watermark(now)
        upto = int(now - SETTLE_SECONDS)
        labels = self._series()
        ids = sorted(labels)
        sent = 0
        while wm < upto and time.monotonic() - started < budget_seconds:
            end = min(wm + WINDOW_SECONDS, upto)
            window = self.read_window(ids, wm, end)
            batches = _batches(window, self.cfg.batch_samples)
            for batch in batches:
                status, said = self.post(encode_write_request((labels[sid], pts) for sid, pts in batch))
                self.stats.requests += 1
                if status // 100 == 2:
                    sent += sum(len(p) for _, p in batch)
                    continue
                if 400 <= status < 500 and status != 429:
                    # The receiver will never take these (out of order, too old, bad labels): skip them.
                    self.stats.dropped += sum(len(p) for _, p in batch)
                    self.stats.last_error = f"HTTP {status}: {said[:200]}"
                    log.warning("remote write %s refused a batch for good: %s", redact(self.cfg.url), self.stats.last_error)
                    continue
                self._failed(now, f"HTTP {status}: {said[:200]}" if status else said)
                self.stats.samples_sent += sent
                return sent
            wm = end
            self.save_watermark(wm)
        self._failures_in_row = 0
        self.stats.samples_sent += sent
        return sent

    def _failed(self, now: float, why: str) -> None:
        self._failures_in_row += 1
        self.stats.failures += 1
        self.stats.last_error = redact(why)
        delay = min(2 ** (self._failures_in_row - 1), 300)
        self.stats.backoff_until = now + delay
        log.warning("remote write to %s failed (%s); retrying in %ss from the same point", redact(self.cfg.url),
                    redact(why), delay)


def _send(req: urllib.request.Request, timeout: float) -> tuple[int, str]:
    """POST with one deadline for the whole exchange. A receiver that trickles its answer a byte
    at a time never trips a per-read timeout: at the deadline its socket is shut down from a
    timer, so the export fails, logs and backs off instead of stalling without a word."""
    url = urllib.parse.urlsplit(req.full_url)
    cls = http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
    conn = cls(url.hostname or "", url.port, timeout=timeout)
    expired = threading.Event()

    def cut() -> None:
        expired.set()
        sock = conn.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    timer = threading.Timer(timeout, cut)
    timer.daemon = True
    timer.start()
    try:
        path = url.path or "/"
        conn.request("POST", path + (f"?{url.query}" if url.query else ""), body=req.data,
                     headers=dict(req.header_items()))
        r = conn.getresponse()
        text = r.read(300).decode("utf-8", "replace").strip() if r.status >= 300 else ""
        return int(r.status), text
    except (OSError, http.client.HTTPException) as exc:
        if expired.is_set():
            return 0, f"no complete answer within {timeout:g}s (the receiver is too slow or trickling)"
        return 0, str(exc) or type(exc).__name__
    finally:
        timer.cancel()
        conn.close()


def _batches(window: dict[int, list[tuple[int, float]]], limit: int) -> list[list[tuple[int, list[tuple[int, float]]]]]:
    """Whole series per request, up to `limit` samples (a series longer than that goes alone)."""
    out: list[list[tuple[int, list[tuple[int, float]]]]] = []
    current: list[tuple[int, list[tuple[int, float]]]] = []
    n = 0
    for sid, pts in window.items():
        if current and n + len(pts) > limit:
            out.append(current)
            current, n = [], 0
        current.append((sid, pts))
        n += len(pts)
    if current:
        out.append(current)
    return out
