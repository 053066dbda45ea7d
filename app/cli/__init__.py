"""rackpulse command line: serve, agent, agents, collect --once, check-config, db upgrade|copy, demo, hash-password."""

from __future__ import annotations

import argparse
import getpass
import logging
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from app import version as app_version
from app.cli.agents import cmd_agent, cmd_agents
from app.cli.collect import cmd_collect
from app.cli.db import cmd_backup, cmd_db, cmd_restore
from app.cli.serve import at_forced_exit, cmd_check_config, cmd_serve, serve_config
from app.config import ConfigError
from app.files import atomic_write

log = logging.getLogger("rackpulse")
__all__ = ["Command", "at_forced_exit", "build_parser", "main", "serve_config"]


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
        from app.cli.install import cmd_init_sudoers

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
    p.add_argument("--log-level", type=str.upper, choices=LOG_LEVELS, metavar="LEVEL",
                   help="how much to log: DEBUG, INFO (default; WARNING for the demo), WARNING, ERROR or CRITICAL")
    sub = p.add_subparsers(dest="cmd", required=True)

    def add(name: str, fn: Any, help_: str) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help_)
        sp.add_argument("--config", help="config file (default $RACKPULSE_CONFIG, then ./rackpulse.toml)")
        sp.set_defaults(fn=fn)
        return sp

    for group in (_running, _alerting, _data, _agents):
        group(add)
    _install(sub, add)
    _people(add)
    for ep in entry_points(group=COMMANDS):  # `rackpulse demo` comes this way, from app/demo/cli.py
        command = ep.load()
        command.add_arguments(add(command.name, command.run, command.help))
    return p


# Each adds its group of commands; `add` gives a command its --config and its function.
Add = Callable[[str, Any, str], argparse.ArgumentParser]


def _running(add: Add) -> None:
    add("serve", cmd_serve, "collect, serve the web UI and /metrics")
    c = add("collect", cmd_collect, "run every collector once and print what it saw")
    c.add_argument("--once", action="store_true", required=True, help="one round, then exit (required)")
    c.add_argument("--format", choices=("summary", "json", "prometheus"), default="summary",
                   help="summary (a line a collector: what it saw, why it has nothing or failed), json (every "
                        "collector's whole state and errors) or prometheus (/metrics text)")
    c.add_argument("--json", action="store_true", help="the same as --format json")
    add("check-config", cmd_check_config, "validate the config file")


def _alerting(add: Add) -> None:
    from app.cli.alerts import cmd_heartbeats, cmd_notify_test

    nt = add("notify-test", cmd_notify_test, "send a test notification on a channel and say what it answered")
    nt.add_argument("channel", help="the channel's name in [[alerts.channels]]")
    hb = add("heartbeats", cmd_heartbeats, "heartbeats: `url NAME` prints a new secret URL for a job to call")
    hb.add_argument("action", choices=("url",), help="url: a new URL for the heartbeat (the old one stops working)")
    hb.add_argument("name", help="the heartbeat's name")
    hb.add_argument("--base-url", help="how jobs reach this server (default alerts.base_url, else web.listen:port)")
    from app.cli.disks import add_arguments as smart_test_arguments
    from app.cli.disks import cmd_smart_test

    smart_test_arguments(add("smart-test", cmd_smart_test, "start a disk's SMART self-test now (or say why not)"))


def _data(add: Add) -> None:
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


def _agents(add: Add) -> None:
    ag = add("agent", cmd_agent, "run the collectors and push to a server (and/or serve this host's /metrics)")
    ag.add_argument("--server", help="server URL, e.g. https://rackpulse.lan:9842 (default: agent.server)")
    ag.add_argument("--token-file", help="file holding this agent's token (default: agent.token_file)")
    ag.add_argument("--outbox", help="outbox file (default: agent.outbox)")
    ags = add("agents", cmd_agents, "on the server: issue, revoke or list agent tokens")
    ags.add_argument("action", choices=("issue", "revoke", "list"),
                     help="issue (or re-issue) a host's token, revoke it, or list the agents")
    ags.add_argument("host", nargs="?", help="the agent's host name (issue, revoke)")


def _install(sub: Any, add: Add) -> None:
    ini = sub.add_parser("init", help="write a starter config from what this host has (disks, bays, arrays, "
                                      "bonds, tunnels, sensors, UPS)")
    ini.add_argument("--output", help="file to write, - for standard output (default ./rackpulse.toml; "
                                      "with --sudoers /etc/sudoers.d/rackpulse)")
    ini.add_argument("--force", action="store_true", help="replace the file if it exists")
    ini.add_argument("--host-root", default="/", help="read /proc, /sys, /dev and /etc under this folder "
                                                      "(a fixture tree, a mounted host)")
    from app.cli.install import add_doctor_arguments, add_sudoers_arguments, cmd_doctor

    add_sudoers_arguments(ini)
    ini.set_defaults(fn=cmd_init)
    add_doctor_arguments(add("doctor", cmd_doctor, "as the service's user: what each collector can read, and the "
                                                   "line that grants what it cannot"))


def _people(add: Add) -> None:
    from app.cli.users import add_tokens_arguments, add_users_arguments, cmd_tokens, cmd_users

    add_users_arguments(add("users", cmd_users, "people who log in: add, passwd, role, remove, list"))
    add_tokens_arguments(add("tokens", cmd_tokens, "API tokens for scripts: create (shown once), list, revoke"))
    add("hash-password", cmd_hash_password, "print a password hash for web.password_hash (reads stdin)")
    add("make-token", cmd_make_token, "print a new read-only API token and its hash for web.api_token_hash")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from app import logsafe

    # A command may log less by default: the demo's terminal is for its own lines (its story and
    # URL), not every alert and slow ingest of a story made to have them.
    logsafe.setup(args.log_level or getattr(args, "quiet_log_level", "INFO"))
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
