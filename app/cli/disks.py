"""`rackpulse smart-test SERIAL --type short|long`: start a disk's self-test now, or say why not."""

from __future__ import annotations

import argparse
import sys

from app.config import load_config, resolve_config_path


def cmd_smart_test(args: argparse.Namespace) -> int:
    """Ask every disk once (as the collector does), then start the test on the one with this serial
    unless its array is busy, it sleeps or it is already testing. Nothing else is ever sent."""
    from app.disks.bay_labels import host_bays
    from collectors import build_collectors, host_context
    from collectors.base import CollectorError
    from collectors.disks.smart.collector import SmartCollector

    cfg = load_config(resolve_config_path(args.config))
    states: dict[str, object] = {}
    colls = build_collectors(cfg, host=host_context(cfg, host_bays(cfg), states=states))
    smart = colls.get("smart")
    if not isinstance(smart, SmartCollector):
        print("rackpulse: the smart collector is not enabled in this config", file=sys.stderr)
        return 2
    for name in ("zfs", "megaraid"):  # a scrub or a rebuild there holds a test back too
        if name in colls:
            try:
                states[name] = colls[name].collect().state
            except CollectorError as exc:
                print(f"rackpulse: {name} not read ({exc}): its pools or drive groups are not checked",
                      file=sys.stderr)
    try:
        smart.collect()
        said = smart.start_test(args.serial, args.type)
    except CollectorError as exc:
        print(f"rackpulse: {exc}", file=sys.stderr)
        return 1
    print(said)
    print("# the disk's page shows its progress; its result is read from the drive's self-test log", file=sys.stderr)
    return 0


def add_arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("serial", help="the disk's serial (as on its page, /disks/<serial>)")
    sp.add_argument("--type", choices=("short", "long"), default="short", help="short (minutes, the default) or "
                                                                               "long (hours: the whole surface)")
