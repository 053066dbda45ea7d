"""rackpulse command line: serve, agent, agents, collect --once, check-config, db upgrade|copy, demo, hash-password."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from app import version as app_version
from app.config import Config, ConfigError, load_config, resolve_config_path
from app.files import atomic_write

log = logging.getLogger("rackpulse")


def _load(args: argparse.Namespace) -> Config:
    return load_config(resolve_config_path(args.config))


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


def cmd_db_upgrade(args: argparse.Namespace) -> int:
    from app.storage.db import upgrade

    cfg = _load(args)
    upgrade(cfg.storage.url)
    print(f"database at {_safe_url(cfg.storage.url)} is at the latest revision")
    return 0


def _safe_url(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def cmd_collect(args: argparse.Namespace) -> int:
    """Like `telegraf --test`: run every collector once, print what it saw, store nothing."""
    from app.scheduler import Scheduler, Snapshot
    from collectors import build_collectors
    from collectors.state import dump

    cfg = _load(args)
    from app.bay_labels import host_bays
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


def _users_exist(url: str) -> bool:
    """Whether the database (if it exists yet) holds a user who can log in."""
    from sqlalchemy import inspect, select

    from app.storage.db import make_engine
    from app.storage.models import web_user

    if _missing_sqlite_file(url) is not None:
        return False
    engine = make_engine(url)
    try:
        if not inspect(engine).has_table("web_user"):
            return False
        with engine.connect() as c:
            return c.execute(select(web_user.c.id).limit(1)).first() is not None
    finally:
        engine.dispose()


def check_serve(cfg: Config) -> None:
    """The rules `serve` applies beyond the config's types; ConfigError listing every one broken."""
    from app.credentials import is_loopback

    name = cfg.source or "config"
    problems = []
    try:
        password = cfg.password_hash()
    except OSError as exc:
        password = None
        problems.append(f"{name}: web.password_hash_file: cannot read it ({exc.strerror})")
    if not is_loopback(cfg.web.listen) and not password and not problems and not cfg.web.proxy_user_header \
            and not _users_exist(cfg.storage.url):
        problems.append(f"{name}: web.listen = {cfg.web.listen!r} is not loopback, so a login is required: "
                        "set web.password_hash (make one with `rackpulse hash-password`), web.password_hash_file, "
                        "or $RACKPULSE_PASSWORD_HASH; or add a user (`rackpulse users add NAME --role admin`); "
                        "or log in through a proxy (web.proxy_user_header)")
    if password and not password.startswith("scrypt$"):
        problems.append(f"{name}: web.password_hash is not a hash made by `rackpulse hash-password` "
                        "(value not shown: it is a secret)")
    token = cfg.web.api_token_hash.get_secret_value() if cfg.web.api_token_hash else None
    if token and not token.startswith("sha256$"):
        problems.append(f"{name}: web.api_token_hash is not a hash made by `rackpulse make-token` "
                        "(value not shown: it is a secret)")
    if bool(cfg.web.tls_cert_file) != bool(cfg.web.tls_key_file):
        problems.append(f"{name}: set both web.tls_cert_file and web.tls_key_file, or neither")
    for f in (cfg.web.tls_cert_file, cfg.web.tls_key_file):
        if f and not Path(f).is_file():
            problems.append(f"{name}: {f}: no such file")
    try:
        from app.storage.db import newer_schema

        newer = newer_schema(cfg.storage.url)
    except Exception:  # noqa: BLE001 - a database not reachable now is the server's to retry, not a config error
        newer = None
    if newer:
        problems.append(f"{name}: storage.url: {newer}")
    if problems:
        raise ConfigError("\n".join(problems))


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


def _missing_sqlite_file(url: str) -> Path | None:
    """The file of a SQLite URL that does not exist (None for one that does, or another database)."""
    from sqlalchemy.engine import make_url

    u = make_url(url)
    if u.get_backend_name() != "sqlite" or not u.database or u.database == ":memory:":
        return None
    path = Path(u.database).expanduser()
    return None if path.exists() else path


def cmd_agents(args: argparse.Namespace) -> int:
    """Tokens for agents, on the server: issue (or re-issue), revoke, list."""
    from app.ingest import agents
    from app.storage.db import make_engine, upgrade

    cfg = _load(args)
    if args.action == "list":
        # Reading creates nothing: no database file, no schema.
        missing = _missing_sqlite_file(cfg.storage.url)
        if missing is not None:
            print(f"no agents: the database {missing} does not exist yet", file=sys.stderr)
            return 0
    else:
        upgrade(cfg.storage.url)
    engine = make_engine(cfg.storage.url)
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


def cmd_backup(args: argparse.Namespace) -> int:
    from app.storage.backup import cmd_backup as run

    return run(args, _load(args).storage.url)


def cmd_restore(args: argparse.Namespace) -> int:
    from app.storage.backup import cmd_restore as run

    return run(args, _load(args).storage.url)


def cmd_db(args: argparse.Namespace) -> int:
    if args.action == "upgrade":
        return cmd_db_upgrade(args)
    from app.storage.dbcopy import copy_database

    if not args.to:
        print("rackpulse db copy: give --to URL (and --from URL, default: storage.url)", file=sys.stderr)
        return 2
    src = args.source or _load(args).storage.url
    from app.storage.dbcopy import CopyError

    try:
        counts = copy_database(src, args.to, progress=lambda t, n: print(f"  {t}: {n} rows", flush=True))
    except CopyError as exc:
        print(f"rackpulse db copy: {exc}", file=sys.stderr)
        return 2
    print(f"copied {sum(counts.values())} rows from {_safe_url(src)} to {_safe_url(args.to)}")
    return 0


def cmd_hash_password(args: argparse.Namespace) -> int:
    from app.credentials import hash_password

    pw = sys.stdin.readline().rstrip("\n") if not sys.stdin.isatty() else getpass.getpass("Password: ")
    if len(pw) < 8:
        print("use at least 8 characters", file=sys.stderr)
        return 2
    print(hash_password(pw))
    return 0


def cmd_make_token(args: argparse.Namespace) -> int:
    from app.credentials import make_token

    token, hashed = make_token()
    print(f"token (give it to your script): {token}")
    print(f'config (web.api_token_hash):     "{hashed}"')
    return 0


COMMANDS = "rackpulse.commands"


@dataclass(frozen=True)
class Command:
    """A subcommand from outside app/ (entry point group rackpulse.commands): the demo is one."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


INIT_SECONDS = 60.0


def cmd_init(args: argparse.Namespace) -> int:
    """A starter config from what this host has; never over an existing file without --force."""
    if args.sudoers:
        from app.install.commands import cmd_init_sudoers

        return cmd_init_sudoers(args)
    from app.starter.discover import Found, discover
    from app.starter.toml import render

    root = Path(args.host_root)
    if not root.is_dir():
        print(f"rackpulse init: --host-root {root} is not a folder", file=sys.stderr)
        return 2
    args.output = args.output or "rackpulse.toml"
    out = Path(args.output)
    if args.output != "-" and out.exists() and not args.force:
        print(f"rackpulse init: {out} exists; --force replaces it (or --output another file)", file=sys.stderr)
        return 2
    # One deadline for reading the whole host tree: a file on a hung mount (NFS, FUSE) blocks a
    # read forever, and init is run by hand, so it must end and say why.
    done: list[Found] = []
    reader = threading.Thread(target=lambda: done.append(discover(root)), daemon=True, name="init-discover")
    reader.start()
    reader.join(INIT_SECONDS)
    if not done:
        print(f"rackpulse init: reading {root} took longer than {INIT_SECONDS:g}s (a hung mount under it?); "
              "nothing written", file=sys.stderr)
        return 1
    text = render(done[0], root)
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    atomic_write(out, text, mode=0o644)
    found = text.count("[[disks.bays]]")
    print(f"wrote {out}: {found} bays to label; `rackpulse check-config --config {out}` checks it", file=sys.stderr)
    return 0


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="rackpulse", description=__doc__)
    p.add_argument("--version", action="version", version=f"rackpulse {app_version()}",
                   help="print rackpulse's version and exit")
    p.add_argument("--log-level", default="INFO", type=str.upper, choices=LOG_LEVELS, metavar="LEVEL",
                   help="how much to log: DEBUG, INFO (default), WARNING, ERROR or CRITICAL")
    sub = p.add_subparsers(dest="cmd", required=True)

    def add(name: str, fn, help_: str) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help_)
        sp.add_argument("--config", help="config file (default $RACKPULSE_CONFIG, then ./rackpulse.toml)")
        sp.set_defaults(fn=fn)
        return sp

    add("serve", cmd_serve, "collect, serve the web UI and /metrics")
    c = add("collect", cmd_collect, "run every collector once and print what it saw")
    c.add_argument("--once", action="store_true", required=True, help="one round, then exit (required)")
    c.add_argument("--format", choices=("json", "prometheus"), default="json",
                   help="json (every collector's state, samples and errors) or prometheus (/metrics text)")
    add("check-config", cmd_check_config, "validate the config file")
    from app.cli_alerts import cmd_heartbeats, cmd_notify_test

    nt = add("notify-test", cmd_notify_test, "send a test notification on a channel and say what it answered")
    nt.add_argument("channel", help="the channel's name in [[alerts.channels]]")
    hb = add("heartbeats", cmd_heartbeats, "heartbeats: `url NAME` prints a new secret URL for a job to call")
    hb.add_argument("action", choices=("url",), help="url: a new URL for the heartbeat (the old one stops working)")
    hb.add_argument("name", help="the heartbeat's name")
    hb.add_argument("--base-url", help="how jobs reach this server (default alerts.base_url, else web.listen:port)")
    from app.cli_disks import add_arguments as smart_test_arguments
    from app.cli_disks import cmd_smart_test

    smart_test_arguments(add("smart-test", cmd_smart_test, "start a disk's SMART self-test now (or say why not)"))
    db = add("db", None, "database commands")
    db.add_argument("action", choices=("upgrade", "copy"),
                    help="upgrade: apply the schema migrations; copy: copy everything to another database")
    db.add_argument("--from", dest="source", help="copy: source URL (default: storage.url of the config)")
    db.add_argument("--to", help="copy: destination URL, e.g. postgresql://rackpulse@localhost/rackpulse")
    db.set_defaults(fn=cmd_db)
    bk = add("backup", cmd_backup, "the whole database into one file (SQLite's online backup; PostgreSQL: pg_dump)")
    bk.add_argument("file", help="a new file to write")
    rs = add("restore", cmd_restore, "a backup into the configured database, which must be empty; then migrate it")
    rs.add_argument("file", help="a file written by `rackpulse backup`")
    ag = add("agent", cmd_agent, "run the collectors and push to a server (and/or serve this host's /metrics)")
    ag.add_argument("--server", help="server URL, e.g. https://rackpulse.lan:9842 (default: agent.server)")
    ag.add_argument("--token-file", help="file holding this agent's token (default: agent.token_file)")
    ag.add_argument("--outbox", help="outbox file (default: agent.outbox)")
    ags = add("agents", cmd_agents, "on the server: issue, revoke or list agent tokens")
    ags.add_argument("action", choices=("issue", "revoke", "list"),
                     help="issue (or re-issue) a host's token, revoke it, or list the agents")
    ags.add_argument("host", nargs="?", help="the agent's host name (issue, revoke)")
    ini = sub.add_parser("init", help="write a starter config from what this host has (disks, bays, arrays, "
                                      "bonds, tunnels, sensors, UPS)")
    ini.add_argument("--output", help="file to write, - for standard output (default ./rackpulse.toml; "
                                      "with --sudoers /etc/sudoers.d/rackpulse)")
    ini.add_argument("--force", action="store_true", help="replace the file if it exists")
    ini.add_argument("--host-root", default="/", help="read /proc, /sys, /dev and /etc under this folder "
                                                      "(a fixture tree, a mounted host)")
    from app.install.commands import add_doctor_arguments, add_sudoers_arguments, cmd_doctor

    add_sudoers_arguments(ini)
    ini.set_defaults(fn=cmd_init)
    add_doctor_arguments(add("doctor", cmd_doctor, "as the service's user: what each collector can read, and the "
                                                   "line that grants what it cannot"))
    from app.cli_users import add_tokens_arguments, add_users_arguments, cmd_tokens, cmd_users

    add_users_arguments(add("users", cmd_users, "people who log in: add, passwd, role, remove, list"))
    add_tokens_arguments(add("tokens", cmd_tokens, "API tokens for scripts: create (shown once), list, revoke"))
    add("hash-password", cmd_hash_password, "print a password hash for web.password_hash (reads stdin)")
    add("make-token", cmd_make_token, "print a new read-only API token and its hash for web.api_token_hash")
    for ep in entry_points(group=COMMANDS):  # `rackpulse demo` comes this way, from demo/cli.py
        command = ep.load()
        command.add_arguments(add(command.name, command.run, command.help))
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from app import logsafe

    logsafe.setup(args.log_level.upper())
    logging.getLogger("alembic").setLevel(logging.WARNING)
    # httpx logs every request at INFO: the containers collector's GETs would fill the log.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    try:
        return int(args.fn(args))
    except ConfigError as exc:
        print(f"rackpulse: {exc}", file=sys.stderr)
        return 2
    except RuntimeError as exc:
        from app.storage.db import SchemaNewer  # imported only here: an agent never loads SQLAlchemy

        if not isinstance(exc, SchemaNewer):
            raise
        print(f"rackpulse: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
