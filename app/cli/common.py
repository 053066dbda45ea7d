"""What every command shares: its --config read as `serve` reads it."""

from __future__ import annotations

import argparse

from app.config import Config, load_config, resolve_config_path


def load_args(args: argparse.Namespace) -> Config:
    return load_config(resolve_config_path(args.config))
