"""Channels through Apprise (https://github.com/caronc/apprise): email, Telegram, Matrix,
Pushover, Signal, ntfy ... from one URL, with the same words as the tile and the webhook.

A notification is a title (an email's subject: "[rackpulse] CRITICAL RAID array degraded md0: pull
shelf 1, bay 7") and an HTML body with what happened, since when, where (bay, serial, model) and
a link back; Apprise sends email as text and HTML parts and turns the HTML into text for services
that take only text.

The URL holds a password or a token: it never reaches a log line, an error or a page. Errors say
the channel, the service's kind and Apprise's words with every part of the URL that could be
secret blanked out. Apprise runs in a thread of its own bounded by the channel's timeout, so a
service that hangs costs its own queue a retry, never the courier's thread."""

from __future__ import annotations

import html
import logging
import threading
import time
import urllib.parse

from app.alerting.channels import Channel, DeliveryError, Notice, group_headline
from app.alerting.conditions import rule_title

# Apprise logs through Python's logging, with URL parts in some lines: its records stay out of
# rackpulse's log (what failed is in the outbox row, blanked out, and on the alerts page).
logging.getLogger("apprise").propagate = False

# Rules whose bay label is where a disk must come out (the email's subject says "pull <bay>").
PULL_RULES = {"array_degraded", "array_member_failed", "disk_failing", "zfs_pool_degraded", "zfs_device_faulted",
              "megaraid_vd_degraded", "megaraid_pd_failed", "btrfs_device_missing"}
FACTS = (("host", "Host"), ("bay", "Bay"), ("serial", "Serial"), ("model", "Model"), ("device", "Device"))


def url_problem(url: str) -> str | None:
    """Why Apprise cannot use this URL, in words that never repeat it; None when it can."""
    import apprise

    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if not scheme:
        return "not an Apprise URL (it has no scheme://)"
    if apprise.Apprise.instantiate(url) is None:
        return f"Apprise cannot use this {scheme}:// URL (an unknown scheme, or a part missing or wrong)"
    return None


def secrets_of(url: str) -> list[str]:
    """Every part of the URL that may be secret (user, password, host, path and query values),
    longest first, to blank out of a message."""
    parts = urllib.parse.urlsplit(url)
    found = {url, parts.netloc, parts.username or "", parts.password or "", parts.hostname or ""}
    found |= {p for p in parts.path.split("/") if p}
    found |= {v for _, v in urllib.parse.parse_qsl(parts.query) if v}
    found |= {urllib.parse.unquote(p) for p in found}
    return sorted((p for p in found if len(p) >= 3), key=len, reverse=True)


def blank(text: str, url: str) -> str:
    for secret in secrets_of(url):
        text = text.replace(secret, "***")
    return text


def _duration(seconds: float | None) -> str:
    s = int(seconds or 0)
    if s >= 3600:
        return f"{s // 3600} h {s % 3600 // 60} min"
    return f"{s // 60} min" if s >= 60 else f"{s} s"


def title(ev: Notice) -> str:
    """The subject: its level, the rule's title, the thing and what to do (the rule's id is in
    the body and the webhook's JSON, for filters)."""
    what = f"{rule_title(ev['rule'])} {ev['subject']}"
    if ev["kind"] == "resolved":
        return f"[rackpulse] RESOLVED {what} after {_duration(ev.get('duration'))}"
    if ev["kind"] == "unwatched":
        return f"[rackpulse] NO LONGER WATCHED {what} (removed from the config)"
    level = {"reminder": "STILL FIRING", "escalated": f"NOW {ev['severity'].upper()}"}.get(ev["kind"],
                                                                                       ev["severity"].upper())
    bay = ev["labels"].get("bay")
    do = (f"pull {bay}" if ev["rule"] in PULL_RULES else f"look at {bay}") if bay else ev["summary"]
    return f"[rackpulse] {level} {what}: {do}"[:200]


def body(ev: Notice, base_url: str = "") -> str:
    """HTML: the summary (the tile's and the webhook's words), since when, the thing's facts,
    and a link to rackpulse."""
    labels = ev["labels"]
    e = html.escape
    since = ev.get("since") or ev["ts"]
    when = time.strftime("%Y-%m-%d %H:%M %Z", time.localtime(since))
    state = {"resolved": f"resolved after {_duration(ev.get('duration'))}", "reminder": "still firing",
             "unwatched": "no longer watched (removed from the config)",
             "escalated": f"escalated to {ev['severity']}"}.get(
        ev["kind"], f"{ev['severity']}, firing")
    rows = [("What", ev["summary"]), ("State", state), ("Since", when), ("Rule", f"{rule_title(ev['rule'])} ({ev['rule']})")]
    rows += [(name, str(labels[key])) for key, name in FACTS if labels.get(key)]
    rows += [(k.replace("_", " "), str(v)) for k, v in sorted(labels.items())
             if v and k not in {key for key, _ in FACTS}]
    out = [f"<p><strong>{e(ev['summary'])}</strong></p>", "<table>"]
    out += [f"<tr><th align=\"left\">{e(k)}</th><td>{e(v)}</td></tr>" for k, v in rows]
    out.append("</table>")
    if base_url:
        out.append(f'<p><a href="{e(base_url.rstrip("/"))}/alerts">Open rackpulse</a></p>')
    return "\n".join(out)


def group_title(evs: list[Notice]) -> str:
    """"[rackpulse] 3 problems on nas1: CRITICAL RAID array degraded md0: pull shelf 1, bay 7; ...":
    each event's subject words after the headline, as many as a subject holds."""
    if len(evs) == 1:
        return title(evs[0])
    return (f"[rackpulse] {group_headline(evs)}: " + "; ".join(title(ev).removeprefix("[rackpulse] ")
                                                              for ev in evs))[:200]


def group_body(evs: list[Notice], base_url: str = "") -> str:
    """Each event's part, in the order they happened, the link once at the end."""
    if len(evs) == 1:
        return body(evs[0], base_url)
    parts = [f"<p>{html.escape(group_headline(evs))}:</p>"]
    parts += [f"<h3>{html.escape(title(ev).removeprefix('[rackpulse] '))}</h3>\n{body(ev)}" for ev in evs]
    if base_url:
        parts.append(f'<p><a href="{html.escape(base_url.rstrip("/"))}/alerts">Open rackpulse</a></p>')
    return "\n".join(parts)


def notify(channel: Channel, subject: str, html_body: str) -> str:
    """Send through Apprise within the channel's timeout: what the service said ("mailto://
    accepted it"), or DeliveryError (blanked) when it did not."""
    import apprise

    outcome: dict[str, str | bool] = {}

    def run() -> None:
        try:
            a = apprise.Apprise()
            if not a.add(channel.url):
                outcome["error"] = "Apprise cannot use this URL"
                return
            result = a.notify(body=html_body, title=subject, body_format=apprise.NotifyFormat.HTML)
            outcome["ok"] = bool(result)
            outcome["said"] = "; ".join(entry.message for entry in result.logs()
                                        if entry.level in ("WARNING", "ERROR"))[-400:]
        except Exception as exc:  # noqa: BLE001 - a plug-in of Apprise's failing is a failed delivery
            outcome["error"] = f"{type(exc).__name__}: {exc}"

    worker = threading.Thread(target=run, name=f"apprise-{channel.name}", daemon=True)
    worker.start()
    worker.join(channel.timeout)
    scheme = channel.url.split("://", 1)[0]
    if worker.is_alive():
        raise DeliveryError(f"{scheme}:// did not answer within {channel.timeout:g} s")
    if outcome.get("ok"):
        return f"{scheme}:// accepted it"
    said = outcome.get("error") or outcome.get("said") or "the service refused it"
    raise DeliveryError(blank(f"{scheme}:// {said}", channel.url))
