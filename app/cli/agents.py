"""`rackpulse agent` (collect here, push to a server) and `rackpulse agents` (the server's
agent tokens: issue, revoke, list)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import time
from pathlib import Path

from app.cli.common import load_args as _load
from app.config import ConfigError, resolve_config_path
from app.serve_checks import missing_sqlite_file

log = logging.getLogger("rackpulse")


def cmd_agent(args: argparse.Namespace) -> int:
    from app.agent.push import run_agent
    from app.config import enabled_sections
    from collectors import load_only

    load_only(enabled_sections(resolve_config_path(args.config)))  # no other plug-in is imported
    cfg = _load(args)
    if args.token_file:
        cfg = cfg.model_copy(update={"agent": cfg.agent.model_copy(update={"token_file": Path(args.token_file)})})
    if args.outbox:
        cfg = cfg.model_copy(update={"agent": cfg.agent.model_copy(update={"outbox": Path(args.outbox)})})
    server = args.server or cfg.agent.server
    try:
        token = cfg.agent.token() if server else None
    except OSError as exc:
        raise ConfigError(f"agent.token_file: {exc}") from None
    asyncio.run(run_agent(cfg, server, token))
    return 0


def cmd_agents(args: argparse.Namespace) -> int:
    """Tokens for agents, on the server: issue (or re-issue), revoke, list."""
    from app.ingest import agents
    from app.storage.db import make_engine, upgrade
    from app.storage.opening import url_of

    cfg = _load(args)
    if args.action == "list":
        # Reading creates nothing: no database file, no schema.
        missing = missing_sqlite_file(url_of(cfg))
        if missing is not None:
            print(f"no agents: the database {missing} does not exist yet", file=sys.stderr)
            return 0
    else:
        upgrade(url_of(cfg))
    engine = make_engine(url_of(cfg))
    try:
        if args.action == "list":
            for a in agents.list_agents(engine):
                state = "revoked" if a["revoked_at"] else ("never reported" if not a["last_contact"] else
                                                           f"last contact {time.time() - a['last_contact']:.0f}s ago")
                print(f"{a['host']}\t{a['version'] or '-'}\t{state}\tskew {a['clock_skew'] or 0:+.1f}s\t"
                      f"{a['batches']} batches, {a['samples']} samples")
            return 0
        if not args.host:
            print(f"rackpulse agents {args.action}: name the host", file=sys.stderr)
            return 2
        if args.action == "issue":
            if args.host == cfg.host:
                # Its series would carry the same host label as the server's own: Prometheus
                # refuses a scrape with a series twice, so this would take /metrics down.
                print(f"rackpulse agents issue: {args.host!r} is this server's own host name (host in the "
                      "config); give the agent host its own name", file=sys.stderr)
                return 2
            try:
                token = agents.issue(engine, args.host, max_hosts=cfg.agents.max_hosts)
            except agents.TooManyHosts as exc:
                print(f"rackpulse agents issue: {exc}", file=sys.stderr)
                return 2
            print(f"token for agent {args.host} (shown once; only its hash is stored):\n{token}")
            print(f"on {args.host}: put it in /etc/rackpulse/agent.token (mode 0600) and run "
                  f"`rackpulse agent --server URL`", file=sys.stderr)
            return 0
        if not agents.revoke(engine, args.host):
            print(f"no live token for host {args.host!r}", file=sys.stderr)
            return 1
        print(f"token of {args.host} revoked: its batches are refused from now on")
        return 0
    finally:
        engine.dispose()
