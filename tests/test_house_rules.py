"""The rooms of app/ and which way their imports may run, read from the code's own imports (every
`import`, lazy ones inside functions too): the next feature cannot quietly add an arrow the wrong
way. ARCHITECTURE.md draws the same rooms."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# What a room may import of app/ (beyond itself). A room not named here may import any room but
# the two at the top: the command line and the web.
MAY_IMPORT = {
    "app.storage": {"app.credentials", "app.files"},
    "app.people": {"app.credentials", "app.storage", "app.files", "app.logsafe"},
    "app.disks": {"app.files", "app.storage", "app.config", "app.words", "app.snapshot"},
    # an agent has no database, no server, no alerting: what it imports it carries on a Pi
    "app.agent": {"app.batch", "app.config", "app.exposition", "app.files", "app.scheduler", "app.snapshot",
                  "app.logsafe"},
    "app.snapshot": {"app.exposition", "app.judge"},
    # alerting judges snapshots and keeps its state in storage; the whole config imports its section,
    # so it never imports the config (app/alerting/setup.py reads it through a Protocol)
    "app.alerting": {"app.logsafe", "app.snapshot", "app.storage", "app.judge", "app.exposition", "app.words"},
    # the agents' side of the server: below the runtime and the web that hold it
    "app.ingest": {"app.alerting", "app.batch", "app.credentials", "app.exposition", "app.judge", "app.snapshot",
                   "app.storage"},
    "app.config": {"app.alerting", "app.energy", "app.export", "app.storage"},  # each room's section comes from that room
    # the power bill: priced from the store's counters, shown by the web; its watch (watch.py) says
    # the bill on /metrics and raises the energy rules as the alert engine's conditions
    "app.energy": {"app.alerting", "app.exposition"},
    "app.scheduler": {"app.exposition", "app.snapshot"},
    "app.exposition": set(),
    "app.judge": set(),
    "app.words": set(),
    "app.files": set(),
    "app.credentials": set(),
    "app.logsafe": set(),
    "app.batch": set(),
}
# Who may import the top: the command line is imported by nothing in app/ but itself; the web by
# the command line (serve), its own routes and `make docs`.
TOP = {"app.cli": {"app.cli"}, "app.web": {"app.web", "app.cli", "app.docs"}}


def module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every module `path` imports, absolute, with each name taken from a package as well."""
    mod = module_of(path)
    pkg = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            out.add(base)
            out |= {f"{base}.{a.name}" for a in node.names}
    return out


def room(module: str) -> str:
    """app/<room>/... or app/<module>.py: the room is app.<first part>."""
    return ".".join(module.split(".")[:2])


def arrows(folder: str) -> set[tuple[str, str, str]]:
    """(file, its room, the room it imports) for every import between two rooms of app/."""
    out = set()
    for path in (ROOT / folder).rglob("*.py"):
        here = room(module_of(path))
        for target in imports(path):
            if target.startswith("app.") and (there := room(target)) != here and there in known_rooms():
                out.add((str(path.relative_to(ROOT)), here, there))
    return out


def known_rooms() -> set[str]:
    return {room(module_of(p)) for p in (ROOT / "app").rglob("*.py") if module_of(p) != "app"}


def wrong_way(found: set[tuple[str, str, str]]) -> list[str]:
    bad = []
    for file, here, there in sorted(found):
        if here in MAY_IMPORT and there not in MAY_IMPORT[here]:
            bad.append(f"{file}: {here} may not import {there} (it may import: {sorted(MAY_IMPORT[here]) or 'nothing'})")
        if there in TOP and here not in TOP[there]:
            bad.append(f"{file}: {here} imports {there}, which only {sorted(TOP[there])} may")
    return bad


def test_every_arrow_between_the_rooms_of_app_runs_the_way_the_rules_allow() -> None:
    assert wrong_way(arrows("app")) == []


def test_the_plug_ins_never_import_the_app() -> None:
    found = [f"{p.relative_to(ROOT)}: {t}" for p in (ROOT / "collectors").rglob("*.py")
             for t in imports(p) if t == "app" or t.startswith("app.")]
    assert found == []


def test_every_room_says_what_it_is_for_in_its_first_line() -> None:
    rooms = [p for p in (ROOT / "app").iterdir() if p.is_dir() and (p / "__init__.py").exists()]
    silent = [str(p.relative_to(ROOT)) for p in rooms if not ast.get_docstring(ast.parse((p / "__init__.py").read_text()))]
    assert silent == []


@pytest.mark.parametrize(("file", "here", "there"), [
    ("app/people/users.py", "app.people", "app.web"),  # people reaching up into a page
    ("app/storage/db.py", "app.storage", "app.runtime"),  # storage reaching up into what runs
    ("app/agent/push.py", "app.agent", "app.storage"),  # an agent with a database
    ("app/runtime.py", "app.runtime", "app.cli"),  # the core reaching into the command line
    ("app/alerting/setup.py", "app.alerting", "app.config"),  # the arrow that ran back up until 2026-11
    ("app/ingest/agents.py", "app.ingest", "app.runtime"),
])
def test_an_arrow_the_wrong_way_is_named(file: str, here: str, there: str) -> None:
    assert wrong_way({(file, here, there)}) != []


# `dict[str, Any]` in app/ and collectors/: only where JSON or TOML comes in before it is
# validated (a tool's output, an agent's batch, the config file being merged), each with a comment
# saying so within the three lines above it. The count may only go down: lower it when you can.
ANY_DICTS = 35


def any_dicts() -> list[tuple[str, int, bool]]:
    """(file, line, explained) of every `dict[str, Any]` in app/ and collectors/."""
    out = []
    for path in sorted([*(ROOT / "app").rglob("*.py"), *(ROOT / "collectors").rglob("*.py")]):
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            for _ in range(line.count("dict[str, Any]")):
                out.append((str(path.relative_to(ROOT)), i + 1, any("#" in s for s in lines[max(0, i - 3): i + 1])))
    return out


def test_dict_of_anything_stays_at_the_json_boundaries_and_never_grows() -> None:
    found = any_dicts()
    assert len(found) <= ANY_DICTS, f"{len(found)} > {ANY_DICTS}: type the new ones (a TypedDict, a model)"
    assert [f"{f}:{n}" for f, n, explained in found if not explained] == []


def sources() -> list[Path]:
    return sorted(p for folder in ("app", "collectors", "demo") for p in (ROOT / folder).rglob("*.py"))


def test_no_module_is_over_400_lines() -> None:
    long = [f"{p.relative_to(ROOT)}: {n}" for p in sources() if (n := len(p.read_text().splitlines())) > 400]
    assert long == []


def test_no_function_is_over_60_lines() -> None:
    long = []
    for p in sources():
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
                if (n := node.end_lineno - node.lineno + 1) > 60:
                    long.append(f"{p.relative_to(ROOT)}:{node.lineno} {node.name}: {n} lines")
    assert long == []
