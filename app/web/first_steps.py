"""The overview's first steps: what a new install still needs before it can help on the day a
disk fails (bay labels, somewhere for alerts to go, a probe, a login), each linking to its form
and gone once done.

Why on the overview: `init` writes a config that runs, but it cannot label bays, choose a
channel or pick the services worth probing; a newcomer who opens the overview should meet
those as a short list, not find them in the manual after the first failure went unnoticed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from app import views
from app.alerting.records import ChannelHealth
from app.config import Config
from app.snapshot import Snapshot
from collectors.findings import BayDevice


class _Alerting(Protocol):
    @property
    def channels(self) -> Mapping[str, object]: ...

    def channel_health(self) -> list[ChannelHealth]: ...


class Site(Protocol):
    """What the steps read of the web's Site (app/web/site.py imports this module)."""

    cfg: Config

    def alerting_for(self, host: str) -> _Alerting | None: ...

    def login_required(self) -> bool: ...


@dataclass(frozen=True)
class Step:
    todo: str  # what to do, the link's words
    why: str  # what it is for
    href: str  # the form, relative to the server's base


class Steps:
    """What is still to do, judged on each overview. A channel that has delivered once stays done
    (remembered here, so the outbox is not read on every refresh of a page left open)."""

    def __init__(self) -> None:
        self.channel_done = False

    def todo(self, site: Site, snap: Snapshot, unlabelled: list[BayDevice]) -> list[Step]:
        out = []
        if unlabelled:
            n = len(unlabelled)
            first = f" (starting with {unlabelled[0].device})" if n > 1 and unlabelled[0].device else ""
            out.append(Step("set a bay label", f"{n} {'disk has' if n == 1 else 'disks have'} no bay label, so a "
                            f"failure could not say which bay to pull: label {'its' if n == 1 else 'each disk'}"
                            f"{first} on its page, or run rackpulse init for a config with one per port",
                            unlabelled[0].href or "/disks"))
        if not self._channel_delivered(site):
            out.append(Step("add a channel and send a test", "so that an alert reaches someone while nobody has "
                            "this page open (email, a webhook, Telegram, ntfy …)", "/channels"))
        if not views.monitors(snap):
            out.append(Step("add a probe", "a ping, HTTP, TCP or TLS check of a service you rely on, with its "
                            "uptime on /status", "/monitors"))
        if not site.login_required():
            out.append(Step("set a login", "until one is set, anyone who reaches this page may change it "
                            "(an admin user, or web.password_hash)", "/users"))
        return out

    def _channel_delivered(self, site: Site) -> bool:
        if not self.channel_done:
            a = site.alerting_for(site.cfg.host)
            # no channel, nothing delivered: the outbox is not read (the demo's overview, each refresh)
            health = a.channel_health() if a is not None and a.channels else []
            self.channel_done = any(h["last_success"] or (h["trial"] and h["trial"][1]) for h in health)
        return self.channel_done
