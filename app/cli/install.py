"""The install's commands: `rackpulse init --sudoers` and `rackpulse doctor`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.config import resolve_config_path

SERVICE_USER = "rackpulse"  # deploy/systemd/rackpulse.service's User=


def add_sudoers_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sudoers", action="store_true",
                   help="instead of a config: write a sudoers drop-in allowing exactly the commands the "
                        "config's collectors need as root (default /etc/sudoers.d/rackpulse), checked with visudo")
    p.add_argument("--config", help="--sudoers: the config whose enabled collectors count "
                                    "(default $RACKPULSE_CONFIG, then ./rackpulse.toml)")
    p.add_argument("--user", default=SERVICE_USER, help=f"--sudoers, doctor: the service's user (default {SERVICE_USER})")


def cmd_init_sudoers(args: argparse.Namespace) -> int:
    from app.config import load_config
    from app.install.sudoers import DROP_IN, SudoersError, argv_lines, install, needed, render

    cfg = load_config(resolve_config_path(args.config))
    text = render(cfg, args.user)
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    target = Path(args.output) if args.output else DROP_IN
    try:
        install(text, target)
    except (SudoersError, OSError) as exc:
        print(f"rackpulse init --sudoers: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {target} (checked with visudo -cf)", file=sys.stderr)
    changes = argv_lines(cfg)
    if changes:
        print("now run these commands through sudo, in the config:", file=sys.stderr)
        for line in changes:
            print(f"  {line}", file=sys.stderr)
    for n in needed(cfg):
        if n.privilege.group:
            print(f"and: {n.grant(args.user)}", file=sys.stderr)
    return 0


def add_doctor_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--user", default=SERVICE_USER, help=f"the service's user, for the lines it prints (default {SERVICE_USER})")


def cmd_doctor(args: argparse.Namespace) -> int:
    from app.install.doctor import doctor_config, run

    return run(doctor_config(resolve_config_path(args.config)), args.user)
