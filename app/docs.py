"""docs/metrics.md, written from the installed plug-ins (`make docs`): each one's config keys,
metrics and alert rules, so the reference never drifts from the code. A test fails when the
committed file is stale."""

from __future__ import annotations

from typing import Any

from collectors import plugins
from collectors.config import CollectorBase
from collectors.plugin import DOMAINS


def _default(field: Any) -> str:
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, list | dict) and not value:
        return "`[]`" if isinstance(value, list) else "`{}`"
    return f"`{value!r}`".replace("'", '"')


def metrics_md() -> str:
    out = ["# rackpulse metrics, config keys and alert rules",
           "",
           "Written by `make docs` from the installed plug-ins (app/docs.py); do not edit by hand.",
           "Every series also carries `host`. Every `[collectors.<name>]` section has the common keys "
           + ", ".join(f"`{k}` ({_default(f)})" for k, f in CollectorBase.model_fields.items()) + ".",
           ""]
    for domain in (*DOMAINS, None):
        group = [p for p in plugins().values() if (p.domain if p.domain in DOMAINS else None) == domain]
        if not group:
            continue
        out += [f"## {domain or 'other'}", ""]
        for p in group:
            out += [f"### {p.name}", ""]
            own = {k: f for k, f in p.config.model_fields.items() if k not in CollectorBase.model_fields}
            if own:
                out += [f"Config `[collectors.{p.name}]`: " + ", ".join(f"`{k}` ({_default(f)})"
                                                                       for k, f in own.items()) + ".", ""]
            out += ["| metric | type | help |", "|---|---|---|"]
            out += [f"| `{m}` | {s.kind} | {s.help.replace('|', '/')} |" for m, s in p.collector.metrics.items()]
            out.append("")
            if p.rules:
                out += ["Alert rules: " + ", ".join(
                    f"`{r.name}` ({r.severity}" + (f", for {r.for_seconds:g} s" if r.for_seconds else "")
                    + (f", reminder every {r.reminder_hours:g} h" if r.reminder_hours else "") + ")"
                    for r in p.rules) + ".", ""]
    return "\n".join(out)


if __name__ == "__main__":
    import sys

    sys.stdout.write(metrics_md())
