"""`rackpulse users add|passwd|role|remove|list` and `rackpulse tokens create|list|revoke|remove`:
people and scripts, on the server. A password is read from standard input (or asked for on a
terminal); a token is printed once and only its hash is stored."""

from __future__ import annotations

import argparse
import getpass
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from app.config import ConfigError, load_config, resolve_config_path

if TYPE_CHECKING:
    from sqlalchemy import Engine


def _engine(args: argparse.Namespace) -> Engine:
    from app.serve_checks import missing_sqlite_file
    from app.storage.opening import migrated_engine, url_of

    path = resolve_config_path(args.config)
    cfg = load_config(path)
    missing = missing_sqlite_file(url_of(cfg))
    if path is None and missing is not None:
        # No config found: the built-in default is a database in this folder. Making one here
        # would give a user to no server (`users add` once said "added" into a new ./rackpulse.db).
        raise ConfigError(f"no config (no --config, $RACKPULSE_CONFIG or ./rackpulse.toml) and no "
                         f"database at {missing}: give the server's config, e.g. "
                         f"`rackpulse {args.cmd} ... --config /etc/rackpulse/rackpulse.toml`")
    return migrated_engine(cfg)


def _password(prompt: str = "Password: ") -> str:
    if sys.stdin.isatty():
        first = getpass.getpass(prompt)
        if getpass.getpass("Again: ") != first:
            raise SystemExit("rackpulse: the two passwords differ")
        return first
    return sys.stdin.readline().rstrip("\n")


def _when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else "-"


def _with_database(args: argparse.Namespace, act: Callable[[Engine], int]) -> int:
    """The config's database (migrated), `act` on it; a refusal said in one line, exit 2."""
    from app.people.users import UserError

    engine = _engine(args)
    try:
        return act(engine)
    except UserError as exc:
        print(f"rackpulse: {exc}", file=sys.stderr)
        return 2
    finally:
        engine.dispose()


def cmd_users(args: argparse.Namespace) -> int:
    return _with_database(args, lambda engine: _users(args, engine))


def cmd_tokens(args: argparse.Namespace) -> int:
    return _with_database(args, lambda engine: _tokens(args, engine))


def _users(args: argparse.Namespace, engine: Engine) -> int:
    from app.people import audit
    from app.people.users import Users

    users = Users(engine)
    if args.action == "list":
        for u in users.all():
            print(f"{u.name}\t{u.role}\t{'two-factor' if u.two_factor else 'password only'}\t"
                  f"since {_when(u.created)}")
        return 0
    if not args.name:
        print(f"rackpulse users {args.action}: name the user", file=sys.stderr)
        return 2
    if args.action == "add":
        users.add(args.name, args.role or "viewer", _password())
        said = f"user {args.name} added ({args.role or 'viewer'})"
    elif args.action == "passwd":
        users.set_password(args.name, _password("New password: "))
        said = f"password of {args.name} changed; their sessions have ended"
    elif args.action == "role":
        if not args.role:
            print("rackpulse users role: give --role admin|viewer", file=sys.stderr)
            return 2
        users.set_role(args.name, args.role)
        said = f"{args.name} is now {args.role}; their sessions have ended"
    elif args.action == "no-2fa":
        users.disable_totp(args.name)
        said = f"two-factor of {args.name} turned off (a lost phone); they log in with the password alone"
    else:
        users.remove(args.name, other_login=True)  # the command line is itself a way back in
        said = f"user {args.name} removed; their sessions have ended"
    audit.record(engine, "command line", f"users {args.action}", args.name)
    print(said)
    return 0


def _tokens(args: argparse.Namespace, engine: Engine) -> int:
    from app.people import audit
    from app.people.api_tokens import Tokens, parse_duration

    tokens = Tokens(engine)
    if args.action == "list":
        for t in tokens.list():
            print(f"{t.name}\t{t.owner or '(command line)'}\t{t.scope}\t{t.state()}\tlast used {_when(t.last_used)}"
                  f"{' from ' + t.last_address if t.last_address else ''}\texpires {_when(t.expires)}")
        return 0
    if not args.name:
        print(f"rackpulse tokens {args.action}: name the token", file=sys.stderr)
        return 2
    if args.action == "create":
        expires = parse_duration(args.expires) if args.expires else None
        token = tokens.create(args.name, args.scope, expires)
        audit.record(engine, "command line", "tokens create", f"{args.name} ({args.scope})")
        print(f"token {args.name} ({args.scope}; shown once, only its hash is stored):\n{token}")
        print("use: curl -H 'Authorization: Bearer <token>' http://HOST:9842/api/v1/alerts", file=sys.stderr)
        return 0
    owners = {t.owner for t in tokens.list() if t.name == args.name}
    owner = args.owner if args.owner is not None else (next(iter(owners)) if len(owners) == 1 else None)
    if args.owner is None and len(owners) > 1:
        named = ", ".join(sorted(o or "(command line)" for o in owners))
        print(f"rackpulse: several people have a token named {args.name!r} ({named}): say whose with --owner USER "
              "(--owner '' for the command line's)", file=sys.stderr)
        return 2
    owner = owner or None  # "" is the command line's
    done = (tokens.revoke(args.name, owner=owner, owned=True) if args.action == "revoke"
            else tokens.remove(args.name, owner=owner))
    if not done:
        print(f"rackpulse: no {'live ' if args.action == 'revoke' else ''}token {args.name!r}", file=sys.stderr)
        return 1
    audit.record(engine, "command line", f"tokens {args.action}", args.name)
    print(f"token {args.name} {args.action}d: it is refused from now on")
    return 0


def add_users_arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("action", choices=("add", "passwd", "role", "remove", "list", "no-2fa"),
                    help="add a user, change a password or a role, remove, list; no-2fa turns off a "
                         "user's two-factor (a lost phone)")
    sp.add_argument("name", nargs="?", help="the user's name")
    sp.add_argument("--role", choices=("admin", "viewer"), help="add: the role (default viewer); role: the new one")


def add_tokens_arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("action", choices=("create", "list", "revoke", "remove"),
                    help="create a token (printed once), list them, revoke one, or remove a revoked one")
    sp.add_argument("name", nargs="?", help="the token's name (the script it is for: ansible, homeassistant)")
    sp.add_argument("--scope", choices=("read", "write", "admin"), default="read",
                    help="read (default): GET only; write: also acknowledge, silence, maintenance, bay labels, "
                         "disk notes; admin: also people, tokens, agents' tokens and the audit log")
    sp.add_argument("--expires", help="create: a lifetime such as 90d, 12h, 2w (default: never)")
    sp.add_argument("--owner", help="revoke, remove: whose token, when several people have one of that name "
                                    "('' for the command line's)")
