"""`rackpulse db upgrade|copy`, `backup` and `restore`: the database's own commands."""

from __future__ import annotations

import argparse
import logging
import sys

from app.cli.common import load_args as _load
from app.storage.opening import url_of

log = logging.getLogger("rackpulse")


def cmd_db_upgrade(args: argparse.Namespace) -> int:
    from app.storage.db import upgrade

    cfg = _load(args)
    upgrade(url_of(cfg))
    print(f"database at {_safe_url(url_of(cfg))} is at the latest revision")
    return 0


def _safe_url(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def cmd_backup(args: argparse.Namespace) -> int:
    from app.storage.backup import cmd_backup as run

    return run(args, url_of(_load(args)))


def cmd_restore(args: argparse.Namespace) -> int:
    from app.storage.backup import cmd_restore as run

    return run(args, url_of(_load(args)))


def cmd_db(args: argparse.Namespace) -> int:
    if args.action == "upgrade":
        return cmd_db_upgrade(args)
    from app.storage.dbcopy import copy_database

    if not args.to:
        print("rackpulse db copy: give --to URL (and --from URL, default: storage.url)", file=sys.stderr)
        return 2
    src = args.source or url_of(_load(args))
    from app.storage.dbcopy import CopyError

    try:
        counts = copy_database(src, args.to, progress=lambda t, n: print(f"  {t}: {n} rows", flush=True))
    except CopyError as exc:
        print(f"rackpulse db copy: {exc}", file=sys.stderr)
        return 2
    print(f"copied {sum(counts.values())} rows from {_safe_url(src)} to {_safe_url(args.to)}")
    return 0
