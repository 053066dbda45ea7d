"""An Alerting built from the validated config: built-in rules with their overrides, user rules,
channels (the file's), maintenance windows and dependencies. A reload gives a running Alerting
the same settings (settings_of) and keeps every alert's state.

May import: the rest of app/alerting and collectors.config (the config's models and error)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Protocol

from sqlalchemy import Engine

from app.alerting.channels import Channel
from app.alerting.conditions import BUILTIN, Conditions, MetricRule
from app.alerting.config import AlertsConfig, dependencies_of
from app.alerting.engine import Rule, parse_window
from app.alerting.saved_channels import channel_of
from app.alerting.service import Alerting, Settings
from collectors.config import ConfigError


class Config(Protocol):
    """What these read of the whole config (app/config.py: Config, which imports this room)."""

    @property
    def host(self) -> str: ...
    @property
    def source(self) -> Path | None: ...
    @property
    def alerts(self) -> AlertsConfig: ...


def channels_of(cfg: Config) -> list[Channel]:
    """The config file's channels."""
    return [channel_of(c, cfg.alerts.timezone) for c in cfg.alerts.channels]


def from_config(cfg: Config, engine: Engine, host: str | None = None) -> Alerting:
    """Build the alerting from the validated config. Unknown rule names in overrides are config errors."""
    return Alerting(engine, host or cfg.host, channels=channels_of(cfg), conditions=Conditions(), **settings_of(cfg))


def settings_of(cfg: Config) -> Settings:
    """Rules, user rules, windows, dependencies, base URL, group wait (a reload gives these to
    the running one)."""
    a = cfg.alerts
    rules = dict(BUILTIN)
    for name, o in a.rules.items():
        if name not in rules:
            raise ConfigError(f"{cfg.source or 'config'}: alerts.rules.{name}: no such built-in rule "
                              f"(known: {', '.join(sorted(rules))})")
        base = rules[name]
        rules[name] = replace(base, enabled=o.enabled, severity=o.severity or base.severity,
                              for_seconds=base.for_seconds if o.for_seconds is None else o.for_seconds,
                              reminder_hours=base.reminder_hours if o.reminder_hours is None else o.reminder_hours)
    user = [MetricRule(Rule(u.name, u.severity, u.for_seconds, u.reminder_hours), u.metric, u.op, u.threshold,
                       u.clear_threshold, tuple(sorted(u.labels.items())), u.message) for u in a.user_rules]
    windows = [parse_window(w.days, w.start, w.hours, w.first_of_month, w.rules) for w in a.maintenance]
    return {"rules": rules, "user_rules": user, "windows": windows, "base_url": a.base_url,
            "dependencies": dependencies_of(a), "group_wait": a.group_wait}
