"""`rackpulse serve`, `check-config` and `collect --once`: the server, started with a watchdog
that ends a stop which hangs, and the checks and the dry run that go before it."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from app.cli.common import load_args as _load
from app.config import Config
from app.serve_checks import check_serve

log = logging.getLogger("rackpulse")


# After SIGTERM or Ctrl-C, the process ends within this many seconds whatever it is waiting for:
# stopping takes about one second; a stop that hangs (a demo once outlived SIGTERM by 20 minutes)
# runs the registered clean-ups (the demo's temporary folder) and exits.
STOP_WATCHDOG = 10.0


at_forced_exit: list[Callable[[], None]] = []
# A stop asked for (SIGINT, SIGTERM) at any time, even before the server listens.
stop_requested = threading.Event()
serving = threading.Event()  # uvicorn has started: its handlers have the signals
_claimed = threading.Event()  # this process is serve's or the demo's (as_the_process), once
_armed = threading.Lock()


def arm_watchdog() -> None:
    """From the first stop signal on, the process ends within STOP_WATCHDOG whatever happens."""
    if _armed.acquire(blocking=False):
        timer = threading.Timer(STOP_WATCHDOG, _watchdog)
        timer.daemon = True
        timer.start()


def stop_on_signals_while_starting() -> None:
    """SIGINT and SIGTERM until the server installs its own handlers: a stop, with the watchdog
    armed. Python's default (KeyboardInterrupt at the next instruction) can land in a garbage
    collector's callback, where it is printed as "Exception ignored" and lost: a demo stopped
    with Ctrl-C while it started kept running (measured under load: still serving 60 s later).
    Here the request is kept as well, so a server that starts after it stops at once."""
    import signal

    def stop(sig: int, frame: Any) -> None:
        if serving.is_set():
            # uvicorn's own handlers took over at start-up; on its way out it raises the signal it
            # caught again with this one: end as Python's defaults would (a SIGTERM ends the
            # process by that signal, which systemd counts as a clean stop)
            if sig == signal.SIGTERM:
                signal.signal(sig, signal.SIG_DFL)
                signal.raise_signal(sig)
                return
            raise KeyboardInterrupt
        stop_requested.set()
        arm_watchdog()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)


def _watchdog() -> None:
    log.error("stopping took longer than %gs; exiting now (where each thread was: below)", STOP_WATCHDOG)
    import faulthandler

    faulthandler.dump_traceback(all_threads=True)  # to stderr: what the stop waited for, for a bug report
    for hook in at_forced_exit:
        try:
            hook()
        except Exception:  # noqa: BLE001 - exiting regardless
            log.exception("clean-up before a forced exit failed")
    logging.shutdown()
    os._exit(1)


M_ARENA_MAX = -8  # glibc's malloc.h


def few_malloc_arenas(arenas: int = 2) -> bool:
    """At most ``arenas`` malloc arenas (glibc makes up to 8 a core, one per thread that meets a
    busy one). The server's threads (collectors, the thread pool of sync routes, the database's)
    each grew an arena of their own, never given back: the demo's RSS rose about 1 MB a minute
    for half an hour while Python's own heap stayed at 8.3 MB (tracemalloc, minute 10 against 30),
    and held flat within 3 MB with two arenas (bench/soak.py). MALLOC_ARENA_MAX, when set, wins.
    Returns whether the limit was set (not on a C library without mallopt, such as musl)."""
    import ctypes
    import os

    if os.environ.get("MALLOC_ARENA_MAX"):
        return False
    try:
        return bool(ctypes.CDLL(None).mallopt(M_ARENA_MAX, arenas))
    except (AttributeError, OSError):
        return False


def as_the_process(run: Callable[[], int]) -> int:
    """`run` as what this process is for (serve, the demo): a stop signal from the start on is a
    stop, and on the way out the collectors' commands are killed and no new one starts, before
    Python waits for every thread pool's threads. Not for a command run inside another program
    (the tests call `main()`): it changes the process's signal handlers and its commands."""
    from collectors.base import refuse_commands_from_now

    if not _claimed.is_set():  # once: the demo's serve runs inside the demo (whose own handlers stay)
        _claimed.set()
        few_malloc_arenas()
        stop_on_signals_while_starting()
    try:
        return run()
    finally:
        refuse_commands_from_now()


def serve_config(cfg: Config, extra_setup=None) -> int:
    import uvicorn

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            stop_requested.set()
            arm_watchdog()
            super().handle_exit(sig, frame)

        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            serving.set()
            if stop_requested.is_set():  # asked to stop while starting (the KeyboardInterrupt was lost)
                self.should_exit = True

    check_serve(cfg)
    return as_the_process(lambda: _serve(cfg, extra_setup, Server))


def _serve(cfg: Config, extra_setup: Any, server: Any) -> int:
    import uvicorn

    from app.runtime import Runtime
    from app.web.app import create_app

    app = create_app(cfg, runtime=Runtime(cfg))  # the Runtime: what runs; the app: what answers
    if extra_setup:
        extra_setup(app)
    log.info("rackpulse for host %s on http%s://%s:%d/", cfg.host, "s" if cfg.web.tls_cert_file else "",
             cfg.web.listen, cfg.web.port)
    tls = bool(cfg.web.tls_cert_file)
    # Agents keep one connection each: keep it across their send interval (uvicorn's default is 5 s),
    # and do not let a stop wait for them.
    config = uvicorn.Config(app, host=cfg.web.listen, port=cfg.web.port, log_level="warning", access_log=False,
                            timeout_graceful_shutdown=1, timeout_keep_alive=75,
                            # rackpulse reads X-Forwarded-For itself, from web.trusted_proxies only
                            # (uvicorn's default trusts 127.0.0.1: any local process could forge it)
                            proxy_headers=False, forwarded_allow_ips=[],
                            ssl_certfile=str(cfg.web.tls_cert_file) if tls else None,
                            ssl_keyfile=str(cfg.web.tls_key_file) if tls else None)
    if stop_requested.is_set():
        return 130
    server(config).run()
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    return serve_config(_load(args))


def cmd_check_config(args: argparse.Namespace) -> int:
    cfg = _load(args)
    from collectors import build_collectors

    check_serve(cfg)  # everything `serve` refuses, check-config refuses too
    for word in cfg.deprecations():
        print(f"{cfg.source or 'config'}: warning: {word}", file=sys.stderr)
    colls = build_collectors(cfg)
    where = cfg.source or "built-in defaults"
    print(f"{where}: OK; host {cfg.host!r}, host_root {cfg.host_root}, collectors: {', '.join(colls) or 'none'}")
    return 0
