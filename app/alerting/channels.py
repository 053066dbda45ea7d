"""Webhook payloads (rackpulse JSON, Alertmanager v4, ntfy, Gotify, Discord, Slack, or a
Jinja2 template) and their delivery over HTTP; one event or a group of one host's events that
happened within `alerts.group_wait` ("3 problems on nas1: ...")."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any, TypedDict

from jinja2 import Environment, StrictUndefined

from app.alerting.policy import QuietHours

FORMATS = ("rackpulse", "alertmanager", "ntfy", "gotify", "discord", "slack", "template")


@dataclass(frozen=True)
class Channel:
    name: str
    url: str
    format: str = "rackpulse"
    severities: tuple[str, ...] = ()  # empty: all
    rules: tuple[str, ...] = ()  # empty: all
    timeout: float = 10.0
    headers: dict[str, str] = field(default_factory=dict)
    template: str | None = None  # Jinja2 body for format "template"
    max_age_hours: float = 72.0  # keep retrying this long, then give up (shown on the alerts page)
    group: bool = True  # one host's events within alerts.group_wait go as one notification
    escalate_after_minutes: float = 0.0  # > 0: only what still fires unacknowledged this long after
    quiet: QuietHours | None = None  # warnings wait until these hours end; critical passes

    def wants(self, rule: str, severity: str) -> bool:
        return (not self.severities or severity in self.severities) and (not self.rules or rule in self.rules)

    def __repr__(self) -> str:  # URLs may carry tokens: never print them
        return f"Channel({self.name!r}, format={self.format!r})"


class Notice(TypedDict):
    """One event as a channel renders it (an outbox row with its alert event)."""

    id: int
    kind: str  # firing | resolved | reminder
    rule: str
    subject: str
    severity: str
    summary: str
    labels: dict[str, str]
    ts: float
    duration: float | None
    since: float | None  # the episode's start, when known


ENDED = ("resolved", "unwatched")  # the kinds that end an alert on the receiver's side


def _iso(ts: float | None) -> str:
    return dt.datetime.fromtimestamp(ts or 0, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z"


def human(ev: Notice) -> str:
    """One line a person reads on a phone."""
    if ev["kind"] == "resolved":
        mins = int((ev.get("duration") or 0) // 60)
        return f"RESOLVED after {mins // 60}h {mins % 60}m: {ev['summary']}"
    if ev["kind"] == "unwatched":  # its collector was removed: ended, not fixed
        return f"NO LONGER WATCHED: {ev['summary']}"
    prefix = {"reminder": "STILL FIRING", "firing": ev["severity"].upper(),
              "escalated": f"NOW {ev['severity'].upper()}"}.get(ev["kind"], ev["kind"].upper())
    return f"{prefix}: {ev['summary']}"


def render(channel: Channel, ev: Notice, base_url: str = "") -> tuple[bytes, dict[str, str]]:
    """(body, headers) for one event on one channel."""
    labels = dict(ev["labels"])
    # A receiver must close what was opened: Alertmanager's and ntfy's "resolved" for an alert
    # no longer watched too, its words saying it is not fixed.
    status = "resolved" if ev["kind"] in ENDED else "firing"
    text = human(ev)
    if channel.format == "rackpulse":
        doc: Any = {"version": "rackpulse/1", "event_id": ev["id"], "kind": ev["kind"], "state": status,
                    "rule": ev["rule"], "severity": ev["severity"], "subject": ev["subject"],
                    "host": labels.get("host"), "labels": labels, "summary": ev["summary"], "text": text,
                    "at": _iso(ev["ts"]), "duration_seconds": ev.get("duration")}
    elif channel.format == "alertmanager":
        am_labels = {"alertname": ev["rule"], "severity": ev["severity"], "subject": ev["subject"], **labels}
        fp = hashlib.sha256(json.dumps(sorted(am_labels.items())).encode()).hexdigest()[:16]
        alert = {"status": status, "labels": am_labels, "annotations": {"summary": ev["summary"]},
                 "startsAt": _iso(ev.get("since") or ev["ts"]),
                 "endsAt": _iso(ev["ts"]) if status == "resolved" else "0001-01-01T00:00:00Z",
                 "generatorURL": f"{base_url}/alerts", "fingerprint": fp}
        doc = {"version": "4", "groupKey": f"{{}}:{{alertname=\"{ev['rule']}\"}}", "truncatedAlerts": 0,
               "status": status, "receiver": channel.name, "groupLabels": {"alertname": ev["rule"]},
               "commonLabels": am_labels, "commonAnnotations": {"summary": ev["summary"]},
               "externalURL": base_url, "alerts": [alert]}
    elif channel.format == "ntfy":
        prio = {"critical": "urgent", "warning": "high"}.get(ev["severity"], "default")
        if status == "resolved":
            prio = "default"
        return text.encode(), {"Title": f"rackpulse {labels.get('host', '')}: {ev['rule']}", "Priority": prio,
                               "Tags": "white_check_mark" if status == "resolved" else "rotating_light",
                               **channel.headers}
    elif channel.format == "gotify":
        doc = {"title": f"rackpulse: {ev['rule']}", "message": text,
               "priority": 8 if ev["severity"] == "critical" and status == "firing" else 4}
    elif channel.format == "discord":
        # A summary holds what devices and agents named things: no markdown, and no pings
        # (a peer described as "@everyone" must not page a whole server).
        doc = {"content": discord_escape(text)[:2000], "allowed_mentions": {"parse": []}}
    elif channel.format == "slack":
        doc = {"text": slack_escape(text)}
    elif channel.format == "template":
        env = Environment(undefined=StrictUndefined, autoescape=False)  # noqa: S701 - not HTML
        body = env.from_string(channel.template or "{{ text }}").render(event=ev, text=text, labels=labels,
                                                                        status=status)
        return body.encode(), {"Content-Type": "text/plain; charset=utf-8", **channel.headers}
    else:
        raise ValueError(f"unknown webhook format {channel.format!r}")
    return json.dumps(doc).encode(), {"Content-Type": "application/json", **channel.headers}


def group_headline(evs: list[Notice]) -> str:
    """"3 problems on nas1" or "2 resolved on nas1"."""
    host = evs[0]["labels"].get("host", "")
    what = {"resolved": "resolved", "unwatched": "no longer watched", "reminder": "problems still firing",
            "escalated": "problems now worse"}.get(evs[0]["kind"], "problems")
    return f"{len(evs)} {what}" + (f" on {host}" if host else "")


def group_text(evs: list[Notice]) -> str:
    """The headline, then one line per event in the words of the single notification."""
    return group_headline(evs) + ":\n" + "\n".join(f"- {human(ev)}" for ev in evs)


def render_group(channel: Channel, evs: list[Notice], base_url: str = "") -> tuple[bytes, dict[str, str]]:
    """(body, headers) for several events of one host and kind on one channel."""
    if len(evs) == 1:
        return render(channel, evs[0], base_url)
    first, text = evs[0], group_text(evs)
    host = first["labels"].get("host")
    status = "resolved" if first["kind"] in ENDED else "firing"
    worst = "critical" if any(e["severity"] == "critical" for e in evs) else evs[0]["severity"]
    if channel.format == "rackpulse":
        # Each event as its single notification would have it, under one headline.
        doc: Any = {"version": "rackpulse/1", "kind": "group", "state": status, "host": host,
                    "severity": worst, "summary": group_headline(evs), "text": text, "at": _iso(first["ts"]),
                    "events": [json.loads(render(channel, ev, base_url)[0]) for ev in evs]}
    elif channel.format == "alertmanager":
        docs = [json.loads(render(channel, ev, base_url)[0]) for ev in evs]
        common = dict(set.intersection(*(set(d["commonLabels"].items()) for d in docs)))
        doc = {**docs[0], "groupKey": f"{{}}:{{host=\"{host}\"}}", "groupLabels": {"host": host},
               "commonLabels": common, "commonAnnotations": {}, "alerts": [d["alerts"][0] for d in docs]}
    elif channel.format == "template":
        env = Environment(undefined=StrictUndefined, autoescape=False)  # noqa: S701 - not HTML
        body = env.from_string(channel.template or "{{ text }}").render(
            event=first, events=evs, text=text, labels=first["labels"], status=status)
        return body.encode(), {"Content-Type": "text/plain; charset=utf-8", **channel.headers}
    elif channel.format == "ntfy":
        prio = "default" if status == "resolved" else {"critical": "urgent", "warning": "high"}.get(worst, "default")
        return text.encode(), {"Title": f"rackpulse: {group_headline(evs)}", "Priority": prio,
                               "Tags": "white_check_mark" if status == "resolved" else "rotating_light",
                               **channel.headers}
    elif channel.format == "gotify":
        doc = {"title": f"rackpulse: {group_headline(evs)}", "message": text,
               "priority": 8 if worst == "critical" and status == "firing" else 4}
    elif channel.format == "discord":
        doc = {"content": discord_escape(text)[:2000], "allowed_mentions": {"parse": []}}
    elif channel.format == "slack":
        doc = {"text": slack_escape(text)}
    else:
        raise ValueError(f"unknown webhook format {channel.format!r}")
    return json.dumps(doc).encode(), {"Content-Type": "application/json", **channel.headers}


def slack_escape(text: str) -> str:
    """Slack's three control characters (its docs: "Escaping text"): no <!channel>, no forged links."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_DISCORD_MARKDOWN = re.compile(r"([\\*_~`|>#\[\]()-])")


def discord_escape(text: str) -> str:
    """Markdown characters backslash-escaped, and mentions broken with a zero-width space."""
    text = _DISCORD_MARKDOWN.sub(r"\\\1", text)
    return text.replace("@", "@\u200b")


class DeliveryError(Exception):
    pass


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A webhook is POSTed where the config says and nowhere else: urllib's default handler followed
    a redirect to 127.0.0.1's admin API or to ftp:// and /channels showed what came back. A 3xx is
    a delivery error naming where it pointed (fix the URL in the config)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        raise DeliveryError(f"HTTP {code}: redirected to {newurl[:200]!r}, not followed (put that URL in the channel)")


_OPENER = urllib.request.build_opener(_NoRedirects)


def send(channel: Channel, body: bytes, headers: dict[str, str]) -> int:
    """POST; the HTTP status when 2xx, else DeliveryError (with the status or the network error)."""
    req = urllib.request.Request(channel.url, data=body, method="POST",  # noqa: S310 - http(s) URL from config
                                 headers={"User-Agent": "rackpulse", **headers})
    try:
        with _OPENER.open(req, timeout=channel.timeout) as resp:
            if not 200 <= resp.status < 300:
                raise DeliveryError(f"HTTP {resp.status}")
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        raise DeliveryError(f"HTTP {exc.code}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DeliveryError(f"{type(reason).__name__}: {reason}") from None
