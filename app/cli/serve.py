"""`rackpulse serve`, `check-config` and `collect --once`: the server, started with a watchdog
that ends a stop which hangs, and the checks and the dry run that go before it."""

from __future__ import annotations

import argparse
import asyncio
import json
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


def _watchdog() -> None:
    log.error("stopping took longer than %gs; exiting now", STOP_WATCHDOG)
    for hook in at_forced_exit:
        try:
            hook()
        except Exception:  # noqa: BLE001 - exiting regardless
            log.exception("clean-up before a forced exit failed")
    logging.shutdown()
    os._exit(1)


def serve_config(cfg: Config, extra_setup=None) -> int:
    import uvicorn

    from app.web.app import create_app

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            if not self.should_exit:
                timer = threading.Timer(STOP_WATCHDOG, _watchdog)
                timer.daemon = True
                timer.start()
            super().handle_exit(sig, frame)

    from app.runtime import Runtime

    check_serve(cfg)
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
    Server(config).run()
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


def cmd_collect(args: argparse.Namespace) -> int:
    """Like `telegraf --test`: run every collector once, print what it saw, store nothing."""
    from app.scheduler import Scheduler, Snapshot
    from collectors import build_collectors
    from collectors.state import dump

    cfg = _load(args)
    from app.disks.bay_labels import host_bays
    from collectors import host_context

    colls = build_collectors(cfg, host=host_context(cfg, host_bays(cfg)))
    snap = Snapshot(host=cfg.host)
    settings = cfg.schedules(colls)
    sched = Scheduler(colls, settings, snap)
    asyncio.run(sched.run_all_once())
    failed = [s for s in snap.statuses.values() if not s.up]
    if args.format == "prometheus":
        sys.stdout.write(snap.metrics.decode())
    else:
        out = {
            "host": cfg.host,
            "collectors": {
                s.name: {"up": s.up, "no_data": s.no_data, "duration": round(s.duration or 0, 4),
                         "error": s.last_error if not s.up else None, "warnings": s.warnings,
                         "state": dump(state) if (state := snap.states.get(s.name)) else None}
                for s in snap.statuses.values()
            },
        }
        print(json.dumps(out, indent=2, default=str))
    for s in failed:
        print(f"collector {s.name} failed: {s.last_error}", file=sys.stderr)
    return 1 if failed else 0
