"""/ping/<token>: where a job says it ran (`/ping/<token>`), failed (`/fail`, with up to 10 KB of
its log as the body) or began (`/start`), with GET or POST so that `curl -fsS URL` is enough.

No login (a cron job has none): the token is the secret, looked up by its hash, so a wrong one
costs what a right one does and is a plain 404. Each address may ping RATE times a minute; a
body past MAX_BODY is cut to its last lines (what says why a job failed is at its end)."""

from __future__ import annotations

import time

from fastapi import APIRouter, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import PlainTextResponse

from app.storage import heartbeats
from app.web.sessions import Throttle
from app.web.site import SiteDep
from collectors.context import Ping

router = APIRouter()

MAX_BODY = 10 * 1024  # bytes of log kept
READ_AT_MOST = 1024 * 1024  # a bigger body is refused (413) before it is read
RATE = 60  # pings per address per minute
THROTTLE = Throttle(limit=RATE, window=60.0)
KINDS = {"": "success", "fail": "fail", "start": "start"}


async def _body(request: Request) -> str:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > READ_AT_MOST:
        raise HTTPException(413, f"a ping's body is at most {READ_AT_MOST} bytes (its last {MAX_BODY} are kept)")
    data, read = bytearray(), 0
    async for chunk in request.stream():
        read += len(chunk)  # counted whatever the framing: a chunked body declares no length
        if read > READ_AT_MOST:
            raise HTTPException(413, f"a ping's body is at most {READ_AT_MOST} bytes")
        data += chunk
        del data[:-MAX_BODY]  # only the end is kept
    return bytes(data[-MAX_BODY:]).decode("utf-8", "replace")


async def _ping(s: SiteDep, request: Request, token: str, kind: str) -> PlainTextResponse:
    addr = request.client.host if request.client else "?"
    wait = THROTTLE.retry_after(addr)
    if wait:
        raise HTTPException(429, "too many pings from this address", headers={"Retry-After": str(wait)})
    THROTTLE.failed(addr)  # every ping counts towards the address's rate
    found = await run_in_threadpool(heartbeats.find, s.engine, token)
    if found is None:
        raise HTTPException(404, "no such heartbeat")
    host, name = found
    ping = Ping(KINDS[kind], time.time(), await _body(request) if kind == "fail" else "")
    await run_in_threadpool(heartbeats.record, s.engine, host, name, ping)
    if host != s.cfg.host:
        # another server's heartbeat (servers sharing one PostgreSQL): stored, and that server
        # reads it from the database at its collector's next run
        return PlainTextResponse("OK\n")
    s.runtime.pings.record(name, ping)
    if s.scheduler is not None and "heartbeats" in s.scheduler.collectors:
        await s.scheduler.run_once("heartbeats")  # the page and the alert know at once
    return PlainTextResponse("OK\n")


# For jobs, not a part of the API (and one operation per method would repeat in its schema).
@router.api_route("/ping/{token}", methods=["GET", "POST", "HEAD"], response_class=PlainTextResponse,
                  include_in_schema=False)
async def ping_success(s: SiteDep, request: Request, token: str) -> PlainTextResponse:
    return await _ping(s, request, token, "")


@router.api_route("/ping/{token}/{kind}", methods=["GET", "POST"], response_class=PlainTextResponse,
                  include_in_schema=False)
async def ping_other(s: SiteDep, request: Request, token: str, kind: str) -> PlainTextResponse:
    if kind not in ("fail", "start"):
        raise HTTPException(404, "no such heartbeat")
    return await _ping(s, request, token, kind)
