"""POST /api/v1/ingest: batches from `rackpulse agent` (format in app/batch.py), authenticated
by the agent's token; the work happens in app/ingest/agents.py."""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
import time
import traceback
from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from sqlalchemy.exc import SQLAlchemyError
from starlette.requests import ClientDisconnect

from app.batch import BatchError, check_items, decode_body, parse_batch
from app.ingest.agents import authenticate, bearer_hash
from app.web.api_models import IngestAccepted, IngestRefused
from app.web.site import Site, SiteDep

log = logging.getLogger("rackpulse.web")
router = APIRouter()
SLOW_INGEST = 0.5  # seconds: a batch slower than this is logged with where the time went
TRIM_AFTER = 1 << 20  # bytes of JSON: after a refused batch this large, free memory goes back to the system


def release_free_memory() -> None:
    """Hand the C heap's free pages back to the system (glibc's malloc_trim). A parsed batch is
    many small objects; freed, they leave holes the heap keeps: five refused batches of 25,000
    new series left the server 47 MB larger. Elsewhere than glibc: nothing to do."""
    global _trim
    if _trim is None:
        try:
            _trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _trim = False
    if _trim:
        _trim(0)


_trim: Any = None


async def _take(request: Request, s: Site, who: Any, limit: int, marks: list[float]) -> dict[str, int]:
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BatchError(413, f"batch is larger than the server's limit of {limit} bytes")
    remote = request.client.host if request.client else ""
    marks.append(time.perf_counter())

    def parse_and_store(raw: bytes) -> dict[str, int]:
        check_items(raw, s.cfg.agents.max_batch_items)
        batch = parse_batch(raw)
        del raw
        marks.append(time.perf_counter())
        return s.agents.accept(who, batch, remote).as_dict()

    def work() -> dict[str, int]:
        marks.append(time.perf_counter())
        raw = decode_body(bytes(body), request.headers.get("content-encoding"), limit)
        body.clear()  # the compressed copy is not needed past here
        big = len(raw) >= TRIM_AFTER
        try:
            return parse_and_store(raw)
        except Exception as exc:
            if big:
                # A refused batch: the frames it passed through hold it until the error is
                # handled. Only then: trimming after every large accepted batch cost an agent's
                # backlog seconds a batch (malloc_trim walks the whole heap), and those are
                # memory the next batch reuses anyway.
                # Every exception of the chain: the one behind it (SeriesLimit behind the 422)
                # holds the frames that built the new series, and the last request's future
                # keeps the exception alive until the next one (20 MB after 25,000 series).
                seen: Exception | BaseException | None = exc
                while seen is not None:
                    traceback.clear_frames(seen.__traceback__)
                    seen = seen.__cause__ or seen.__context__
                del raw
                release_free_memory()
            raise

    result = await run_in_threadpool(work)
    marks.append(time.perf_counter())
    return result


REFUSALS: dict[int | str, dict[str, object]] = {
    code: {"model": IngestRefused, "description": why} for code, why in (
        (400, "the batch is not understood, or the agent hung up"),
        (401, "no token, an unknown one or a revoked one"), (403, "the token is another host's"),
        (413, "larger than agents.max_batch_bytes"), (415, "a Content-Encoding other than gzip"),
        (422, "over the host's limits of series or collectors"), (503, "busy, or storage down: retry"))}


@router.post("/api/v1/ingest", response_model=IngestAccepted, responses=REFUSALS)
async def ingest(s: SiteDep, request: Request) -> JSONResponse:
    limit = s.cfg.agents.max_batch_bytes
    agents = s.agents
    marks = [time.perf_counter()]
    try:
        hashed = bearer_hash(request.headers.get("authorization"))
        who = agents.caller(hashed)  # known callers skip the database trip; accept checks again
        if who is None:
            who = await run_in_threadpool(authenticate, s.engine, hashed)
            agents.remember(who)
        host = who.host
        marks.append(time.perf_counter())
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > limit:
            raise BatchError(413, f"batch of {declared} bytes is larger than the server's limit of {limit}")
        # A turn before the body is read: the batches waiting hold a connection, not their bytes.
        slots = s.ingest_slots()
        try:
            await asyncio.wait_for(slots.acquire(), s.cfg.agents.ingest_wait)
        except TimeoutError:
            raise BatchError(503, f"server busy: more than {s.cfg.agents.max_concurrent_ingests} batches at once "
                                  f"for {s.cfg.agents.ingest_wait:g}s; retry") from None
        try:
            result = await _take(request, s, who, limit, marks)
        finally:
            slots.release()
        if marks[-1] - marks[0] > SLOW_INGEST:
            steps = ("auth", "body", "queue", "parse", "store")
            log.info("slow ingest from %s: %.0f ms (%s)", host, (marks[-1] - marks[0]) * 1000,
                     ", ".join(f"{n} {(b - a) * 1000:.0f}" for n, a, b in zip(steps, marks, marks[1:], strict=False)))
    except BatchError as exc:
        if exc.status >= 500 or exc.status in (401, 403):
            log.warning("ingest from %s refused: %s", request.client.host if request.client else "?", exc)
        return JSONResponse({"error": str(exc)}, status_code=exc.status)
    except SQLAlchemyError as exc:
        log.error("ingest: storage failed: %s", exc.__class__.__name__)
        return JSONResponse({"error": "storage unavailable; keep the batch and retry"}, status_code=503)
    except ClientDisconnect:
        # The agent gave up before its body arrived (its timeout, on a loaded server): it keeps the
        # batch and sends it again. Nothing was stored; this was a traceback in the log each time.
        log.info("ingest from %s: the agent hung up before its batch arrived; it will send it again",
                 request.client.host if request.client else "?")
        return JSONResponse({"error": "client disconnected"}, status_code=400)
    return JSONResponse({"status": "ok", **result})
