"""What `make docs` writes from the installed plug-ins, so the reference never drifts from the
code (a test fails when a committed file is stale): docs/metrics.md (every plug-in's config keys,
metrics and alert rules), rackpulse.example.toml (docs/config/head.toml, each plug-in's own
example.toml fragment, docs/config/tail.toml) and a README.md beside each plug-in."""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel

from app.energy.config import EnergyConfig
from collectors import plugins
from collectors.base import MetricSpec
from collectors.config import CollectorBase
from collectors.plugin import DOMAINS, CollectorPlugin
from collectors.state import Record


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
    from app.data.config import DataSet
    from app.data.watch import SPECS as DATA_SPECS  # they import the alert engine: not at start-up
    from app.energy.watch import SPECS as ENERGY_SPECS

    out += _server_section("the lab's energy (the server, from every source's rackpulse_energy_joules_total)",
                           "[energy]", EnergyConfig, ENERGY_SPECS,
                           "`power_above_baseline` (warning, for 1800 s, reminder every 24 h), "
                           "`energy_budget` (warning, reminder every 24 h)")
    out += _server_section("data sets (the server, from the storage and backup plug-ins' states: /data)",
                           "[[data.sets]]", DataSet, DATA_SPECS,
                           "`data_unprotected` (warning, reminder every 24 h), `data_at_risk` (critical, "
                           "reminder every 12 h)")
    return "\n".join(out)


def _server_section(title: str, key: str, model: type[BaseModel], specs: Mapping[str, MetricSpec],
                    rules: str) -> list[str]:
    """A part of metrics.md the server itself writes (not a plug-in): its config, metrics and rules."""
    out = [f"## {title}", "", f"Config `{key}`: " + ", ".join(f"`{k}` ({_default(f)})"
                                                           for k, f in model.model_fields.items()) + ".",
           "", "| metric | type | help |", "|---|---|---|"]
    out += [f"| `{m}` | {s.kind} | {s.help.replace('|', '/')} |" for m, s in specs.items()]
    return [*out, "", f"Alert rules: {rules}.", ""]


ROOT = Path(__file__).resolve().parents[1]


def package_of(plugin: CollectorPlugin) -> Path:
    """The folder of a plug-in's package (its collector's module sits in it)."""
    return Path(inspect.getfile(importlib.import_module(plugin.collector.__module__))).parent


def example_toml() -> str:
    """rackpulse.example.toml: the app's keys, every plug-in's fragment in domain order, the rest."""
    parts = [(ROOT / "docs/config/head.toml").read_text()]
    for p in plugins().values():
        fragment = package_of(p) / "example.toml"
        if fragment.is_file():
            parts.append(fragment.read_text())
    parts.append((ROOT / "docs/config/tail.toml").read_text())
    return "\n".join(parts)


def _type_words(annotation: Any) -> str:
    """A field's type as a reader writes it: `list[Slave]`, `float | None`."""
    text = getattr(annotation, "__name__", None) if isinstance(annotation, type) else None
    return text or re.sub(r"\b(?:[a-z_][a-z0-9_]*\.)+([A-Za-z_]\w*)", r"\1", str(annotation).replace("typing.", ""))


def _records(model: type[Record]) -> list[type[Record]]:
    """The model and every Record type inside it, each once, in the order met."""
    seen: list[type[Record]] = []
    todo: list[Any] = [model]
    while todo:
        t = todo.pop(0)
        if isinstance(t, type) and issubclass(t, Record):
            if t not in seen:
                seen.append(t)
                todo += [f.annotation for f in t.model_fields.values()]
        else:
            todo += list(get_args(t))
    return seen


def state_md(p: CollectorPlugin) -> list[str]:
    """A plug-in's state as /api/state carries it, type by type."""
    out = ["## State", "",
           f"What its findings, tile and page read; in `/api/state` under `states.{p.name}` (its JSON schema is "
           f"in /api/docs). Version {p.state.version}: stored states and agents' batches of another version are "
           "dropped, not misread.", ""]
    for t in _records(p.state):
        fields = ", ".join(f"`{f.alias or k}` {_type_words(f.annotation)}" for k, f in t.model_fields.items())
        out.append(f"- **{t.__name__}**: {fields or 'nothing'}")
    return [*out, ""]


def privileges_md(p: CollectorPlugin) -> list[str]:
    """What `rackpulse init --sudoers` allows it (or the group it joins), entry by entry."""
    out = ["Its commands that need more than an ordinary user, as `rackpulse init --sudoers` grants them "
           "(the service's user `rackpulse`, the command where `which` finds it):", ""]
    for v in p.needs.privileges:
        out += [f"- `{v.option}`: {v.why}.", "", "  ```", f"  {v.grant('rackpulse', '/usr/sbin/' + v.option)}", "  ```"]
    return [*out, ""]


def readme(p: CollectorPlugin) -> str:
    """A plug-in's README.md: what it reads, what it needs, its config, metrics, state and rules."""
    pkg = importlib.import_module(p.collector.__module__.rsplit(".", 1)[0])
    about = inspect.getdoc(pkg) or p.name
    out = [f"# {p.name}", "", about, "", "Written by `make docs` from the plug-in's code and example.toml.", ""]
    if getattr(pkg, "PERMISSIONS", ""):
        out += ["## Permissions", "", pkg.PERMISSIONS, ""]
    if p.needs.privileges:
        out += privileges_md(p)
    fragment = package_of(p) / "example.toml"
    if fragment.is_file():
        out += ["## Config", "", "```toml", fragment.read_text().rstrip("\n"), "```", ""]
    out += ["## Metrics", "", "| metric | type | help |", "|---|---|---|"]
    out += [f"| `{m}` | {s.kind} | {s.help.replace('|', '/')} |" for m, s in p.collector.metrics.items()]
    out.append("")
    out += state_md(p)
    if p.rules:
        out += ["## Alert rules", ""]
        out += [f"- `{r.name}`" + (f" ({r.title})" if r.title else "") + f": {r.severity}"
                + (f", after {r.for_seconds:g} s" if r.for_seconds else "")
                + (f", reminded every {r.reminder_hours:g} h" if r.reminder_hours else "") for r in p.rules]
        out.append("")
    return "\n".join(out)


def routes_app() -> Any:
    """The web app as every server has it, for its table of routes (nothing is started or stored)."""
    from app.config import load_config
    from app.snapshot import Snapshot
    from app.web.app import create_app

    cfg = load_config(None, {"host": "docs", "storage": {"url": "sqlite://"}})
    return create_app(cfg, collect=False, snapshot=Snapshot(host="docs"), migrate=False)


def permissions_md() -> str:
    from app.web.permissions import permissions_md as of

    return of(routes_app())


def write_all() -> list[Path]:
    written = [ROOT / "docs/metrics.md", ROOT / "rackpulse.example.toml", ROOT / "docs/permissions.md"]
    written[0].write_text(metrics_md())
    written[1].write_text(example_toml())
    written[2].write_text(permissions_md())
    from app.rooms import with_room_table

    architecture = ROOT / "ARCHITECTURE.md"
    architecture.write_text(with_room_table(architecture.read_text()))
    written.append(architecture)
    for p in plugins().values():
        path = package_of(p) / "README.md"
        path.write_text(readme(p))
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write_all():
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
