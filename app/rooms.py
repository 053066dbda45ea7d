"""The rooms of app/ and which way their imports may run, bottom first: a room may import only
rooms listed before it, and only those it names. tests/test_house_rules.py reads every import
(lazy ones in functions, those only for type checking, `importlib.import_module` with a name it
can read) and fails on an arrow not named here, on a room that has no line here, and on any two
modules that import each other; `make docs` writes ARCHITECTURE.md's room table from this list,
so the map cannot drift from the rules. Nothing imports this module at run time."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

APP = Path(__file__).resolve().parent
START, END = "<!-- rooms: written by `make docs` from app/rooms.py -->", "<!-- /rooms -->"


class Room(NamedTuple):
    name: str  # "app.storage": a package of app/, or one module of it
    may_import: frozenset[str]
    purpose: str


def _room(name: str, purpose: str, *may_import: str) -> Room:
    return Room(f"app.{name}", frozenset(f"app.{m}" for m in may_import), purpose)


ROOMS: tuple[Room, ...] = (
    # the hall: small pieces everything may use, importing nothing of app/
    _room("rooms", "this list: which room may import which"),
    _room("files", "private files and atomic rewrites"),
    _room("shipped", "where the templates, static files and migrations are: in app/ when installed"),
    _room("credentials", "passwords and API tokens"),
    _room("logsafe", "one-line log lines, credentials redacted"),
    _room("batch", "the agent-to-server batch format, every number finite"),
    _room("exposition", "Prometheus text, rendered once per collection"),
    _room("judge", "what is wrong on a host, judged once per collection"),
    _room("words", "a tool's raw states in words"),
    _room("leader", "which of several servers on one PostgreSQL leads"),
    _room("storage", "the database: tables, samples, rollups, Alembic", "credentials", "files", "shipped"),
    _room("people", "users, roles, two-factor, API tokens, the audit log", "credentials", "storage", "files", "logsafe"),
    _room("snapshot", "the latest of everything, in memory", "exposition", "judge"),
    _room("events", "inventory changes in words", "words"),
    _room("starter", "`rackpulse init`: a starter config from the host", "logsafe"),
    _room("scheduler", "each collector on its interval, in a thread", "exposition", "snapshot"),
    _room("disks", "bays, bay labels, notes, replacement steps", "files", "storage", "snapshot", "words"),
    # alerting judges snapshots and keeps its state in storage; the whole config imports its
    # section, so it never imports the config (app/alerting/setup.py reads it through a Protocol)
    _room("alerting", "rules, episodes, channels and delivery",
          "logsafe", "snapshot", "storage", "judge", "exposition", "words"),
    _room("views", "the overview's tiles and the pages made of plug-in sections", "alerting", "snapshot", "words"),
    # the power bill: priced from the store's counters; its watch raises the energy rules
    _room("energy", "the lab's power bill", "alerting", "exposition"),
    # is the data safe: the storage and backup plug-ins' states joined per data set; its watch
    # raises the data rules
    _room("data", "each data set's array, copies and verdict (/data)", "alerting", "exposition", "snapshot"),
    _room("export", "MQTT and Prometheus remote write", "disks", "logsafe", "snapshot", "storage"),
    _room("config", "the TOML file, validated; each room's section comes from that room",
          "alerting", "data", "energy", "export", "storage"),
    # an agent has no database, no server, no alerting: what it imports it carries on a Pi
    _room("agent", "collect here, push to a server, keep what was not taken",
          "batch", "config", "exposition", "files", "scheduler", "snapshot", "logsafe"),
    _room("serve_checks", "what serve refuses beyond the config's types", "config", "credentials", "storage"),
    _room("install", "the sudoers drop-in, the doctor", "config", "disks", "scheduler"),
    # the agents' side of the server: below the runtime and the web that hold it
    _room("ingest", "the server's side of agents",
          "alerting", "batch", "credentials", "exposition", "judge", "snapshot", "storage"),
    _room("runtime", "what runs besides the web, started and stopped as one",
          "alerting", "config", "data", "disks", "energy", "export", "ingest", "judge", "leader", "people",
          "scheduler", "storage"),
    _room("reload", "SIGHUP: the config read again and applied", "alerting", "config", "judge", "runtime",
          "serve_checks"),
    _room("web", "FastAPI routes, one template per page",
          "alerting", "batch", "config", "credentials", "data", "disks", "energy", "events", "exposition", "files",
          "ingest", "judge", "logsafe", "people", "reload", "runtime", "shipped", "snapshot", "storage", "views", "words"),
    _room("docs", "what `make docs` writes from the installed plug-ins", "config", "data", "energy", "rooms", "snapshot",
          "web"),
    # the command line: imported by nothing in app/ but itself
    _room("cli", "the command line, one module per command group",
          "agent", "alerting", "config", "credentials", "disks", "files", "ingest", "install", "logsafe", "people",
          "runtime", "scheduler", "serve_checks", "starter", "storage", "views", "web"),
    # `rackpulse demo`, a command of its own (entry point group rackpulse.commands) that app/cli
    # finds at run time: inside app/ so that the wheel adds no top-level `demo` to site-packages
    _room("demo", "`rackpulse demo`: a story of a lab, with stand-ins for its tools and devices",
          "cli", "config", "disks", "files", "ingest", "scheduler", "snapshot", "storage"),
)


def room_table() -> str:
    """ARCHITECTURE.md's table of rooms, top first (as the map reads)."""
    lines = ["| room | what it is | may import |", "|---|---|---|"]
    for r in reversed(ROOMS):
        allowed = ", ".join(sorted(m.removeprefix("app.") for m in r.may_import)) or "nothing of app/"
        short = r.name.removeprefix("app.")
        where = f"app/{short}/" if (APP / short).is_dir() else f"app/{short}.py"
        lines.append(f"| `{where}` | {r.purpose} | {allowed} |")
    return "\n".join(lines) + "\n"


def with_room_table(text: str) -> str:
    """The map's text with the table between its two markers written anew."""
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{room_table()}{END}{tail}"
