"""`rackpulse notify-test CHANNEL` and `rackpulse heartbeats url NAME`: trying where
notifications go, and giving a cron job its URL."""

from __future__ import annotations

import argparse
import sys

from app.config import Config, load_config, resolve_config_path


def _load(args: argparse.Namespace) -> Config:
    return load_config(resolve_config_path(args.config))


def cmd_notify_test(args: argparse.Namespace) -> int:
    """Send a test notification on one channel and say what the service answered."""
    from app.alerting.delivery import try_channel
    from app.alerting.setup import channels_of

    cfg = _load(args)
    channels = {c.name: c for c in channels_of(cfg)}
    if args.channel not in channels:
        print(f"rackpulse: no channel {args.channel!r} in [[alerts.channels]] "
              f"(there: {', '.join(channels) or 'none'})", file=sys.stderr)
        return 2
    ch = channels[args.channel]
    ok, said = try_channel(ch, cfg.alerts.base_url, cfg.host)
    print(f"channel {ch.name} ({ch.format}): {'delivered' if ok else 'failed'}: {said}")
    return 0 if ok else 1


def cmd_heartbeats(args: argparse.Namespace) -> int:
    """`heartbeats url NAME`: a new secret URL for a job to call (the old one stops working)."""
    from app.storage.heartbeats import issue
    from app.storage.monitors import list_monitors
    from app.storage.opening import migrated_engine

    cfg = _load(args)
    engine = migrated_engine(cfg)
    section = getattr(cfg.collectors, "heartbeats", None)
    names = {h.name for h in getattr(section, "checks", [])}
    names |= {m.name for m in list_monitors(engine, cfg.host, "heartbeats")}
    if args.name not in names:
        print(f"rackpulse: no heartbeat {args.name!r} ([[collectors.heartbeats]] or /monitors; "
              f"there: {', '.join(sorted(names)) or 'none'})", file=sys.stderr)
        return 2
    base = (args.base_url or cfg.alerts.base_url or f"http://{cfg.web.listen}:{cfg.web.port}").rstrip("/")
    token = issue(engine, cfg.host, args.name)
    print(f"{base}/ping/{token}")
    print(f"# the job calls it when it ran: curl -fsS -m 10 --retry 5 {base}/ping/{token}\n"
          f"# when it failed, with its log:  ... | curl -fsS -m 10 --data-binary @- {base}/ping/{token}/fail\n"
          "# a new `heartbeats url` makes a new URL; this one then stops working", file=sys.stderr)
    return 0
