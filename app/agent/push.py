"""`rackpulse agent`: run this host's collectors and push every run to a rackpulse server.

Each run goes to the outbox (SQLite) first; a sender thread drains it in order, in
batches, and deletes records only once the server answered 2xx. A server that is down,
slow or restarting costs nothing but delay. Optionally the agent also serves this host's
own /metrics, for a Prometheus that scrapes every host.
"""

from __future__ import annotations

import asyncio
import gzip
import http.client
import json
import logging
import random
import ssl
import threading
import time
from importlib import metadata
from typing import Any
from urllib.parse import urlsplit

from app.agent.outbox import Outbox, Pending
from app.batch import CONTENT_TYPE, FORMAT
from app.config import Config, ConfigError
from collectors.base import CollectResult, MetricSpec, Sample
from collectors.state import dump

log = logging.getLogger("rackpulse.agent")
# A server that is down is asked again after 1, 2, 4 ... seconds, at most a minute apart, each
# wait spread by 20 % so that a hundred agents do not come back in step.
MAX_BACKOFF = 60.0
JITTER = 0.2


AGENT_METRICS = {
    "rackpulse_agent_outbox_records": MetricSpec("Collector runs waiting in the outbox for the server."),
    "rackpulse_agent_outbox_bytes": MetricSpec("Compressed bytes waiting in the outbox."),
    "rackpulse_agent_outbox_dropped_points_total": MetricSpec(
        "Rolled-up points dropped because the outbox was full even with hourly rollups.", "counter"),
    "rackpulse_agent_delivering": MetricSpec("1 while the server takes batches, 0 while it cannot be reached.",
                                             states=("cannot reach", "delivering")),
}


def agent_version() -> str:
    try:
        return metadata.version("rackpulse")
    except metadata.PackageNotFoundError:
        return "unknown"


class OutboxWriter:
    """Stands where the Scheduler's Store would: each finished run becomes an outbox record."""

    def __init__(self, outbox: Outbox, intervals: dict[str, float], snap: Any) -> None:
        self.outbox, self.intervals, self.snap = outbox, intervals, snap

    def write_run(self, collector: str, started: float, duration: float, ok: bool, error: str | None,
                  result: CollectResult | None, skip: frozenset[str] = frozenset()) -> None:
        result = result or CollectResult()
        samples = [[s.metric, dict(s.labels), s.value] for s in result.samples if s.value == s.value
                   and abs(s.value) != float("inf")]
        self.outbox.put({
            "kind": "run", "collector": collector, "started": started, "duration": duration, "ok": ok,
            "error": error, "no_data": bool(getattr(self.snap.statuses.get(collector), "no_data", False)),
            "interval": self.intervals.get(collector, 30.0), "warnings": list(result.warnings),
            "samples": samples, "state": dump(result.state) if result.state is not None else {},
            "entities": [[e.kind, e.key, json.loads(json.dumps(dict(e.attrs), default=str))]
                         for e in result.entities],
        })

    def load_states(self) -> dict[str, dict[str, object]]:
        return self.outbox.states()


STALE_CONNECTION = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError)


class SendError(Exception):
    def __init__(self, status: int | None, message: str, slow: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.slow = slow  # sent, and no answer within the timeout: the server is there but busy


class Sender:
    """Drains the outbox to the server: oldest first, a batch at a time, ack after 2xx."""

    def __init__(self, outbox: Outbox, server: str, token: str, host: str, batch_max_bytes: int,
                 timeout: float, ca_file: str | None = None, send_interval: float = 5.0) -> None:
        # Several servers (one PostgreSQL behind them), comma-separated: sent to the first that
        # answers, staying with it until it does not.
        self.targets = []
        for url in [x.strip() for x in server.split(",") if x.strip()]:
            u = urlsplit(url.rstrip("/"))
            if u.scheme not in ("http", "https") or not u.hostname:
                raise ConfigError(f"agent.server {url!r}: use http://host:port or https://host:port")
            self.targets.append((u.scheme, u.netloc, (u.path or "") + "/api/v1/ingest"))
        if not self.targets:
            raise ConfigError("agent.server: no URL given")
        self.current = 0
        self.scheme, self.netloc, self.path = self.targets[0]
        self.outbox, self.token, self.host = outbox, token, host
        self.batch_max_bytes, self.timeout, self.send_interval = batch_max_bytes, timeout, send_interval
        self.ssl = ssl.create_default_context(cafile=ca_file) if any(t[0] == "https" for t in self.targets) else None
        self.version = agent_version()
        self._conn: http.client.HTTPConnection | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self.failing_since: float | None = None
        self.last_error: str | None = None
        self.sent_batches = 0
        self.max_records = 10_000

    # -- one batch ------------------------------------------------------------------------

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            if self.scheme == "https":
                self._conn = http.client.HTTPSConnection(self.netloc, timeout=self.timeout, context=self.ssl)
            else:
                self._conn = http.client.HTTPConnection(self.netloc, timeout=self.timeout)
        return self._conn

    # Any: the server's JSON answer, read for the keys this agent knows
    def post(self, records: list[Pending]) -> dict[str, Any]:
        """Send to the current server; one that cannot be reached (or says 503) hands over to
        the next, each tried once before the batch waits for the backoff."""
        for _ in range(len(self.targets)):
            try:
                return self._post(records)
            except SendError as exc:
                if len(self.targets) == 1 or exc.status not in (None, 502, 503, 504):
                    raise
                failed = self.netloc
                self.close()
                self.current = (self.current + 1) % len(self.targets)
                self.scheme, self.netloc, self.path = self.targets[self.current]
                log.warning("server %s: %s; trying %s", failed, exc, self.netloc)
        raise SendError(None, f"no server answered ({', '.join(t[1] for t in self.targets)})")

    def _early_answer(self, exc: BaseException, sent: bool) -> tuple[http.client.HTTPResponse, bytes] | None:
        """The answer a server gave before it read the whole batch, if it gave one.

        A server refuses a batch over its limit on Content-Length alone (413) and closes: the
        agent, still writing, gets a broken pipe or a reset, though the answer is already in its
        socket. Read as "unreachable", the same batch would be sent again forever; read as the
        413 it is, the batch is halved."""
        if sent or not isinstance(exc, BrokenPipeError | ConnectionResetError) or self._conn is None:
            return None
        try:
            resp = self._conn.getresponse()
            return resp, resp.read()
        except (OSError, http.client.HTTPException):
            return None
        finally:
            self.close()

    # Any: the server's JSON answer, read for the keys this agent knows
    def _post(self, records: list[Pending]) -> dict[str, Any]:
        head = json.dumps({"format": FORMAT, "host": self.host, "agent_version": self.version,
                           "instance": self.outbox.instance, "sent_at": time.time()}, separators=(",", ":"))
        raw = head[:-1].encode() + b',"records":[' + b",".join(r.with_seq() for r in records) + b"]}"
        body = gzip.compress(raw, compresslevel=5)
        headers = {"Content-Type": CONTENT_TYPE, "Content-Encoding": "gzip", "Authorization": f"Bearer {self.token}",
                   "User-Agent": f"rackpulse-agent/{self.version}"}
        for attempt in (1, 2):
            reused = self._conn is not None
            sent = False
            try:
                conn = self._connection()
                if conn.sock is None:
                    conn.connect()  # a timeout here is a server out of reach; after the request, a slow one
                conn.request("POST", self.path, body=body, headers=headers)
                sent = True
                resp = conn.getresponse()
                data = resp.read()
                break
            except (OSError, http.client.HTTPException) as exc:
                early = self._early_answer(exc, sent)
                if early is not None:
                    resp, data = early
                    break
                self.close()
                if attempt == 1 and reused and isinstance(exc, STALE_CONNECTION):
                    continue  # the server closed an idle keep-alive connection; re-sending is safe (seq)
                if sent and isinstance(exc, TimeoutError):
                    raise SendError(None, f"server too slow: no answer within {self.timeout:g}s", slow=True) from None
                raise SendError(None, f"server unreachable: {exc.__class__.__name__}: {exc}") from None
        try:
            answer = json.loads(data or b"{}")
        except json.JSONDecodeError:
            answer = {"error": data[:200].decode(errors="replace")}
        if resp.status // 100 != 2:
            raise SendError(resp.status, f"HTTP {resp.status}: {answer.get('error') or answer}")
        return dict(answer)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def send_once(self) -> int:
        """Send one batch; returns the records the server took (0: nothing pending). Raises SendError."""
        records = self.outbox.take(self.batch_max_bytes, self.max_records)
        if not records:
            return 0
        try:
            self.post(records)
        except SendError as exc:
            if (exc.status == 413 or exc.slow) and len(records) > 1:
                # the server's limit is lower than ours, or it took longer than our timeout over
                # this many (a backlog after an outage, on a busy server): smaller batches
                self.max_records = max(1, len(records) // 2)
                raise
            if exc.status in (400, 413, 415, 422):
                if len(records) > 1:
                    self.max_records = 1  # find the one record it refuses
                    raise
                log.error("server refused outbox record %d for good (%s); set aside in the outbox's "
                          "'rejected' table", records[0].seq, exc)
                self.outbox.reject(records[0], str(exc))
                self.max_records = 10_000
                return 1
            raise
        self.outbox.ack(records[-1].seq)
        self.sent_batches += 1
        if self.max_records < 10_000:
            self.max_records = min(10_000, self.max_records * 2)
        return len(records)

    # -- the loop -------------------------------------------------------------------------

    def wake(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def _delivered(self) -> None:
        if self.failing_since is not None:
            log.info("delivering again after %.0fs; outbox %s", time.time() - self.failing_since,
                     self.outbox.stats())
            self.failing_since, self.last_error = None, None

    def run(self) -> None:
        backoff = 1.0
        while not self._stop.is_set():
            try:
                # drain: the next batch right away. Each batch the server takes says "delivering":
                # on a busy host new runs land while a batch is in flight, and an outbox that is
                # never empty at the moment of asking is still being delivered.
                while not self._stop.is_set() and self.send_once():
                    self._delivered()
                    backoff = 1.0
            except SendError as exc:
                if self.failing_since is None:
                    self.failing_since = time.time()
                    log.error("cannot deliver to %s://%s: %s; runs wait in the outbox", self.scheme, self.netloc, exc)
                elif str(exc) != self.last_error:
                    log.warning("still cannot deliver: %s", exc)
                self.last_error = str(exc)
                if exc.status == 413 or (exc.status in (400, 415, 422) and self.max_records == 1):
                    continue  # retry at once with a smaller batch
                if exc.slow:
                    # Reachable but busy: a smaller batch soon, not a backoff that grows to minutes
                    # while the outbox grows (each retry would again be too big to answer in time).
                    self._stop.wait(random.uniform(1 - JITTER, 1 + JITTER))  # noqa: S311
                    continue
                self._stop.wait(backoff * random.uniform(1 - JITTER, 1 + JITTER))  # noqa: S311
                backoff = min(backoff * 2, MAX_BACKOFF)
                continue
            except Exception:  # noqa: BLE001 - the sender must outlive a bug
                log.exception("sender failed; retrying")
                self._stop.wait(backoff)
                continue
            backoff = 1.0
            self._wake.wait(self.send_interval)
            self._wake.clear()
        self.close()


async def run_agent(cfg: Config, server: str | None, token: str | None) -> None:
    """Collect on schedule into the outbox; send from a thread; serve /metrics when asked to."""
    from app.scheduler import Scheduler, Snapshot
    from collectors import build_collectors, host_context

    snap = Snapshot(host=cfg.host)
    # The collectors see each other's latest state (a self-test waits for a ZFS scrub to end).
    colls = build_collectors(cfg, host=host_context(cfg, states=snap.states))
    jobs = getattr(getattr(colls.get("heartbeats"), "cfg", None), "checks", None)
    if jobs:
        # A job pings the server's web (/ping/<token>), never an agent: judged here, every job
        # would be "never pinged" a minute after the agent starts. Left to the server's config.
        log.warning("heartbeats: %d job(s) in an agent's config are judged by the server, which their pings "
                    "reach; configure them there (left out here: %s)", len(jobs), ", ".join(j.name for j in jobs))
        jobs.clear()
    settings = cfg.schedules(colls)
    unstored = {n: frozenset(m for m, s in c.metrics.items() if not s.store) for n, c in colls.items()}
    outbox = Outbox(cfg.agent.outbox, int(cfg.agent.outbox_max_mb * 1024 * 1024), unstored)
    sender = None
    if not server and not cfg.agent.listen:
        raise ConfigError("agent: nothing to do: give --server URL (push) or agent.listen (serve /metrics), or both")
    if server:
        if not token:
            raise ConfigError("agent: no token: set agent.token_file or $RACKPULSE_AGENT_TOKEN "
                              "(`rackpulse agents issue HOST` on the server prints one)")
        sender = Sender(outbox, server, token, cfg.host, cfg.agent.batch_max_bytes, cfg.agent.timeout,
                        str(cfg.agent.ca_file) if cfg.agent.ca_file else None, cfg.agent.send_interval)
    writer = OutboxWriter(outbox, {n: s[0] for n, s in settings.items()}, snap) if sender else None
    sched = Scheduler(colls, settings, snap, writer, on_update=sender.wake if sender else None, judging=False)
    sched.restore() if writer else None
    thread = threading.Thread(target=sender.run, name="sender", daemon=True) if sender else None
    if thread:
        thread.start()
    sched.start()
    log.info("agent for host %s: %d collectors%s%s", cfg.host, len(colls),
             f", pushing to {server}" if server else "",
             f", /metrics on http://{cfg.agent.listen}:{cfg.agent.port}/metrics" if cfg.agent.listen else "")
    try:
        if cfg.agent.listen:
            await _serve_metrics(cfg, snap, outbox, sender)
        else:
            await asyncio.Event().wait()
    finally:
        await sched.stop()
        if sender and thread:
            sender.stop()
            thread.join(1.0)  # a send in flight may wait for its timeout: the thread is a daemon
        if thread is None or not thread.is_alive():
            outbox.close()  # else the process exits with the outbox as its last commit left it


async def _serve_metrics(cfg: Config, snap: Any, outbox: Outbox, sender: Sender | None) -> None:
    """/metrics and /healthz from the standard library's HTTP server in a thread: no web
    framework in an agent's process (on a Raspberry Pi every megabyte counts)."""
    import http.server
    import json

    from app.exposition import CONTENT_TYPE as PROM
    from app.exposition import merge, render_families

    def metrics() -> bytes:
        if sender is None:
            return bytes(snap.metrics)
        st = outbox.stats()
        own = [Sample.of("rackpulse_agent_outbox_records", st["records"]),
               Sample.of("rackpulse_agent_outbox_bytes", st["bytes"]),
               Sample.of("rackpulse_agent_outbox_dropped_points_total", st["dropped_points"]),
               Sample.of("rackpulse_agent_delivering", 1 if sender.failing_since is None else 0)]
        return merge([*snap.parts, render_families(own, AGENT_METRICS, cfg.host)])

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 - the standard library's name
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                body, kind, status = metrics(), PROM, 200
            elif path == "/healthz":
                health = {"status": "ok", "outbox": outbox.stats(),
                          "delivering": sender is None or sender.failing_since is None}
                body, kind, status = json.dumps(health).encode(), "application/json", 200
            else:
                body, kind, status = b"not found: /metrics and /healthz only\n", "text/plain", 404
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - a scrape is not news
            pass

    server = http.server.ThreadingHTTPServer((cfg.agent.listen or "127.0.0.1", cfg.agent.port), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="metrics", daemon=True)
    thread.start()
    try:
        await asyncio.Event().wait()
    finally:
        server.shutdown()
        server.server_close()
