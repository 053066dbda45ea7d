"""How a page is drawn: the Jinja environment over templates/ and each plug-in's own section
templates, and the filters every template uses (times, durations, bytes, a tool's words). A value
that is unknown, infinite or not a number prints "–" here rather than raising in a template.

May import: app.views, app.words and the plug-ins (what the pages show), never a route."""

from __future__ import annotations

import hashlib
import logging
import math
import re
import time
from typing import Any
from urllib.parse import quote

from jinja2 import ChoiceLoader, Environment, FileSystemLoader, PrefixLoader, pass_context, select_autoescape
from jinja2.runtime import Context, Undefined
from markupsafe import Markup

from app import views, words
from app.alerting.conditions import rule_title
from app.people import audit_words
from app.shipped import shipped
from app.web.stacked import LabelledTables
from collectors import plugins
from collectors.measure import measure as measure_words

log = logging.getLogger("rackpulse.web")


def templates() -> Environment:
    # A page's own template from templates/, a collector's section from its folder ("frr/section.html").
    sections = PrefixLoader({name: FileSystemLoader(p.pages.section.folder) for name, p in plugins().items() if p.pages.section})
    # auto_reload off: the templates are part of the installed package, and checking each one's
    # mtime on every render was a stat() per template and section per request.
    env = Environment(loader=ChoiceLoader([FileSystemLoader(shipped("templates")), sections]),
                      autoescape=select_autoescape(["html"]), extensions=[LabelledTables], auto_reload=False)
    env.globals["section"] = render_section
    env.globals["ICON"] = views.ICON
    env.globals["PAGES"] = views.pages()
    env.globals["chart_unit"] = views.chart_unit
    env.globals["smoke_urls"] = views.smoke_urls
    env.filters["ago"] = lambda ts: whole_values(ago(ts))
    env.filters["duration"] = lambda s: whole_values(human_duration(s))
    env.filters["when"] = lambda ts: _strftime("%Y-%m-%d %H:%M", ts) or "–"
    env.filters["iso"] = lambda ts: _strftime("%Y-%m-%dT%H:%M:%S%z", ts)
    env.filters["bytes"] = lambda n: whole_values(human_bytes(n))
    env.filters["whole"] = whole_values
    env.filters["audit_action"] = audit_words.action_words
    env.filters["audit_answer"] = audit_words.answer_words
    # A number that is unknown (None) or not finite prints "–" rather than raising in a template.
    env.filters["int"] = safe_int
    env.filters["format"] = lambda fmt, *a, **k: whole_values(safe_format(fmt, *a, **k))
    # One path segment of a link: a serial or a peer name with '/', '?', '#' or '%' stays inside it.
    env.filters["urlpart"] = lambda v: quote(str(v), safe="")
    # A stable element id for any text (an alert's rule and subject): what a live update keeps in
    # place (hx-preserve) and a <details> keeps its open state by.
    env.filters["domid"] = lambda v: "x" + hashlib.sha1(str(v).encode(), usedforsecurity=False).hexdigest()[:12]
    env.filters["said"] = said
    env.filters["rule_title"] = rule_title
    env.filters["kwh"] = words.kwh
    env.filters["measure"] = measure
    return env


def measure(value: object, unit: str) -> str:
    """words.measure in a template: a value the page does not have (a register the ISG does not
    serve) reads "–", bound to its unit like every other number."""
    return whole_values(measure_words(None if isinstance(value, Undefined) else value, unit))


def said(value: Any, plugin: str, field: str) -> Markup:
    """A tool's raw state in the plug-in's words, the raw value small beside them for experts:
    "on battery, low battery <small>OB LB</small>" (app/words.py)."""
    words_, raw = words.value_words(field, words.text(value), plugins().get(plugin))
    if raw is None:
        return Markup("{}").format(words_)
    return Markup('{} <small class="raw">{}</small>').format(words_, raw)


@pass_context
def render_section(ctx: Context, sec: views.SectionView, template: str | None = None) -> Markup:
    """One plug-in's section of a page (or, with `template`, its summary on the overview). A state
    it cannot draw (a value of another type, a bug) costs that section, shown as not understood,
    never the page."""
    error = sec.v.get("error")
    if error is None:
        try:
            tmpl = ctx.environment.get_template(template or sec.template)
            html = tmpl.render({**ctx.get_all(), "v": sec.v, "status": sec.status})
            # Its level and subjects, for a machine to read (the story walk holds them to the alerts').
            return Markup('<div class="judged" data-plugin="{}" data-level="{}" data-subjects="{}">').format(
                sec.name, sec.level, " ".join(sec.subjects)) + Markup(whole_values_in_html(html)) + Markup("</div>")  # noqa: S704
        except Exception as exc:  # noqa: BLE001
            error = f"{sec.name}: state not understood ({type(exc).__name__}: {exc})"[:300]
            log.warning("section %s could not be drawn: %s", sec.name, error)
    return Markup('<section class="unreadable"><h2>{}</h2><p class="level-warning">{}</p></section>').format(
        sec.name, error)


def _number(x: Any) -> float | None:
    """A number a filter can format: None for None, text, inf and nan (shown as unknown)."""
    try:
        x = float(x)
    except (TypeError, ValueError, OverflowError):
        return None
    return x if math.isfinite(x) else None


def human_duration(s: float | None) -> str:
    s = _number(s)
    if s is None:
        return "–"
    return words.duration(s)


# The units a number is bound to ("RSCP -106 dBm", "slower than 300 ms"), in both patterns below.
_UNITS = r"(?:[kMGTP]?B|[kMG]?bit/s|%|°C|h|min|d|V|A|W|kWh|RPM|ms|s|dBm|dB)"
# A number and the unit after it, in a finding's words.
_VALUE = re.compile(r"(?<![\w.,])(-?\d[\d.,]*) (?=" + _UNITS + r"(?![\w/]))")
# The same in drawn HTML. It starts at a digit (the lookbehind of _VALUE at every character cost
# 8 ms on 100 KB; this 1.7 ms) and leaves what is inside a tag: a unit followed by "=" or ">" is an
# attribute (`width=2 d="…"`), not text.
_VALUE_IN_HTML = re.compile(r"\d[\d.,]* (?=" + _UNITS + r"(?![\w/=>]))")


def whole_values(text: object) -> str:
    """A text with each number bound to its unit by a no-break space: a tile's narrow line breaks
    between words, never between "106" and "dBm"."""
    return _VALUE.sub("\\1\u00a0", str(text)) if text is not None else ""


def whole_values_in_html(html: str) -> str:
    """whole_values over a plug-in's drawn section. Its values come from many templates and from
    the plug-in's own words ("turning: 2400 RPM", "Saw: 6.2 MB dropped"): one pass here holds for
    every one of them and for the next template too (0.1-0.5 ms a page, measured on the demo)."""
    def bind(m: re.Match[str]) -> str:
        before = html[m.start() - 1] if m.start() else " "
        return m[0] if before.isalnum() or before in "_.," else m[0][:-1] + "\u00a0"
    return _VALUE_IN_HTML.sub(bind, html)


def human_bytes(n: float | None) -> str:
    n = _number(n)
    if not n:
        return "–"
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if n < 1000:
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1000
    return f"{n:.1f} EB"


def safe_int(x: Any, default: int = 0) -> int | str:
    """Jinja's int filter, but "–" for infinity and NaN (Jinja's raises OverflowError on inf)."""
    if isinstance(x, float) and not math.isfinite(x):
        return "–"
    try:
        return int(float(x)) if isinstance(x, str) else int(x)
    except (TypeError, ValueError, OverflowError):
        return default


def safe_format(fmt: str, *args: Any, **kwargs: Any) -> str:
    """Jinja's format filter; "–" where a value to format is unknown or not finite."""
    if any(v is None or (isinstance(v, float) and not math.isfinite(v)) for v in (*args, *kwargs.values())):
        return "–"
    try:
        return fmt % (kwargs or args)
    except (TypeError, ValueError, OverflowError):
        return "–"


def ago(ts: Any, now: float | None = None) -> str:
    """How long ago, as a person says it: "just now", "42 s ago", "16 min ago", "3 h 5 min ago",
    "2 days ago"; "never" for no time."""
    t = _number(ts)
    if not t:
        return "never"
    s = int((time.time() if now is None else now) - t)
    if s < 5:
        return "just now"
    if s < 60:
        return f"{s} s ago"
    if s < 3600:
        return f"{s // 60} min ago"
    if s < 6 * 3600:
        return f"{s // 3600} h {s % 3600 // 60} min ago" if s % 3600 >= 60 else f"{s // 3600} h ago"
    if s < 86400:
        return f"{s // 3600} h ago"
    days = s // 86400
    return "1 day ago" if days == 1 else f"{days} days ago"


def _strftime(fmt: str, ts: Any) -> str:
    """A local time, or "" for no time, inf, nan or a year no calendar has."""
    t = _number(ts)
    if not t:
        return ""
    try:
        return time.strftime(fmt, time.localtime(t))
    except (OverflowError, OSError, ValueError):
        return ""
