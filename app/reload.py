"""SIGHUP (`systemctl reload rackpulse`): the config file read again and applied while serving.

What a reload changes: collectors (enabled, their sections, intervals, timeouts), alert rules,
windows, dependencies and channels, thresholds. What it keeps: history (the database is not
touched), the live states the tiles read, the findings' memory (each Judge), every alert's
episode (firing since, acknowledged, notified), and every collector whose section did not
change, as the same object. What needs a restart (the web listener, the database, the host's
name ...) keeps its running value and is named in the log. A file that does not load or
validate changes nothing: one line names the error, with secrets blanked as `check-config`
blanks them."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.config import Config, ConfigError, load_config
from app.judge import thresholds
from app.serve_checks import check_serve

if TYPE_CHECKING:
    from app.alerting.service import Settings
    from app.runtime import Runtime

log = logging.getLogger("rackpulse.reload")

# Sections only a restart applies: the listener and its login, the database, the host's identity,
# agents' limits, exports (their connections are made at start).
RESTART = ("host", "host_root", "storage", "web", "agents", "agent", "export")


def restart_needed(old: Config, new: Config) -> list[str]:
    out = [k for k in RESTART if getattr(old, k) != getattr(new, k)]
    if old.alerts.enabled != new.alerts.enabled:
        out.append("alerts.enabled")
    return out


def live_part(old: Config, new: Config) -> Config:
    """`new`, but with the running values of what only a restart applies."""
    kept: dict[str, object] = {k: getattr(old, k) for k in RESTART}
    kept["alerts"] = new.alerts.model_copy(update={"enabled": old.alerts.enabled})
    return new.model_copy(update=kept)


def changed_collectors(old: Config, new: Config) -> set[str]:
    """Collectors whose build differs: their own section, or what every one is built with (the
    bays and accepted values of [disks], the hot-disk threshold)."""
    names = set(type(new.collectors).model_fields)
    if old.disks != new.disks or old.disk_hot_celsius() != new.disk_hot_celsius():
        return names
    return {n for n in names if getattr(old.collectors, n, None) != getattr(new.collectors, n, None)}


def one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


# An editor that writes in place, or a SIGHUP sent as the file is saved: a half-written file was
# taken (a false RESOLVED while a fan still read 0 RPM). The file is read until two reads a moment
# apart agree and it has not changed for a second; after SETTLE_TRIES the last read is taken.
SETTLE_SECONDS, SETTLE_PAUSE, SETTLE_TRIES = 1.0, 0.2, 50


def settled_text(path: Path) -> str:
    """The file's text once it has stopped changing (two equal reads, unchanged for SETTLE_SECONDS)."""
    previous: bytes | None = None
    for _ in range(SETTLE_TRIES):
        st = os.stat(path)
        data = path.read_bytes()
        if data == previous and time.time() - st.st_mtime >= SETTLE_SECONDS and os.stat(path).st_mtime == st.st_mtime:
            break
        previous = data
        time.sleep(SETTLE_PAUSE)
    return data.decode("utf-8", "replace")


def read(path: Any) -> Config | None:
    """The file, validated as `serve` validates it; None (and one line said) when it cannot be."""
    try:
        text = settled_text(Path(path))
    except OSError as exc:
        log.error("reload refused, the running config stays: %s: %s", path, exc.strerror)
        return None
    try:
        cfg = load_config(path, text=text)
        check_serve(cfg)
    except ConfigError as exc:
        log.error("reload refused, the running config stays: %s", one_line(exc))
        return None
    return cfg


def apply(rt: Runtime, new: Config) -> list[str]:
    """Give the running Runtime `new`; returns what needs a restart to take effect."""
    from collectors import build_collectors, host_context

    old = rt.cfg
    restart = restart_needed(old, new)
    cfg = live_part(old, new)
    settings: Settings | None = None
    if rt.built_alerting() is not None or rt.host_alerting:
        from app.alerting.setup import settings_of

        try:
            settings = settings_of(cfg)  # an unknown rule name is refused before anything changes
        except ConfigError as exc:
            log.error("reload refused, the running config stays: %s", one_line(exc))
            return []
    rt.cfg = cfg
    rt.snap.judge.configure(thresholds(cfg))
    rt.agents.thresholds = thresholds(cfg)
    for hsnap in rt.agents.snapshots.values():
        hsnap.judge.configure(rt.agents.thresholds)
    changed = changed_collectors(old, cfg)
    if rt.scheduler is not None:
        sched = rt.scheduler
        keep = {n: c for n, c in sched.collectors.items() if n not in changed}
        host = host_context(cfg, rt.saved_bays, rt.saved_entries, rt.pings, rt.snap.states)
        built = build_collectors(cfg, rt.runner, host, keep=keep)
        sched.reconfigure(built, cfg.schedules(built), changed)
        rebuilt = sorted(changed & set(built))
        log.info("reload: collectors %s; started or rebuilt from their new sections: %s", ", ".join(built) or "none",
                 ", ".join(rebuilt) or "none")
    if settings is not None:
        for a in [rt.built_alerting(), *rt.host_alerting.values()]:
            if a is not None:
                a.reconfigure(settings)
    rt.load_channels()  # the config's channels and the browser's, into every host's alerting
    return restart


async def reload(rt: Runtime, on_applied: Any = None) -> bool:
    """Read `rt.cfg.source` again (in a thread) and apply it (on the event loop: a new
    collector's task is made there); False when it was refused."""
    import asyncio

    path = rt.cfg.source
    if path is None:
        log.warning("reload: rackpulse runs on built-in defaults (no --config): nothing to read")
        return False
    new = await asyncio.to_thread(read, path)
    if new is None:
        return False
    restart = apply(rt, new)
    if on_applied is not None:
        on_applied(rt.cfg)
    log.info("config reloaded from %s%s", path,
             f"; needs a restart to change: {', '.join(restart)} (kept as running)" if restart else "")
    return True
