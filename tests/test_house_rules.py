"""The rooms of app/ and which way their imports may run (app/rooms.py), read from the code's own
imports (every `import`, lazy ones inside functions, those only for type checking, and
`importlib.import_module` of a name it can read): the next feature cannot quietly add an arrow the
wrong way, a room without a rule, or two modules that import each other. In collectors/, the
shared core imports no domain or plug-in, and a plug-in imports another only when its
CollectorPlugin names it in `uses`. ARCHITECTURE.md's room table is written from the same rules."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path

import pytest

from app.rooms import ROOMS, room_table
from scripts import import_graph
from scripts.import_graph import circles

ROOT = Path(__file__).resolve().parent.parent
MAY_IMPORT = {r.name: set(r.may_import) for r in ROOMS}


def module_of(path: Path) -> str:
    return import_graph.module_of(ROOT, path)


@cache
def modules() -> frozenset[str]:
    return import_graph.modules(ROOT)


def imports(path: Path, source: str | None = None) -> set[str]:
    """Every module `path` imports, absolute (scripts/import_graph.py reads them)."""
    return import_graph.imports(ROOT, path, modules(), source)


def room(module: str) -> str:
    """app/<room>/... or app/<module>.py: the room is app.<first part>."""
    return ".".join(module.split(".")[:2])


def known_rooms() -> set[str]:
    return {room(m) for m in modules() if m.startswith("app.")}


def arrows(folder: str) -> set[tuple[str, str, str]]:
    """(file, its room, the room it imports) for every import between two rooms of app/."""
    out = set()
    for path in (ROOT / folder).rglob("*.py"):
        here = room(module_of(path))
        for target in imports(path):
            if target.startswith("app.") and (there := room(target)) != here and there in known_rooms():
                out.add((str(path.relative_to(ROOT)), here, there))
    return out


def wrong_way(found: Iterable[tuple[str, str, str]], rules: Mapping[str, set[str]] = MAY_IMPORT) -> list[str]:
    bad = []
    for file, here, there in sorted(found):
        if here not in rules:
            bad.append(f"{file}: {here} has no rule in app/rooms.py (say what it may import)")
        elif there not in rules[here]:
            bad.append(f"{file}: {here} may not import {there} (it may import: {sorted(rules[here]) or 'nothing'})")
    return bad


def test_every_room_of_app_has_a_rule_and_every_rule_a_room() -> None:
    assert sorted(known_rooms() - set(MAY_IMPORT)) == []
    assert sorted(set(MAY_IMPORT) - known_rooms()) == []


def test_every_rule_points_down_the_list_so_no_room_can_import_one_above_it() -> None:
    seen: set[str] = set()
    up = []
    for r in ROOMS:
        up += [f"{r.name} may import {m}, which stands above it" for m in sorted(r.may_import - seen)]
        seen.add(r.name)
    assert up == []


def test_every_arrow_between_the_rooms_of_app_runs_the_way_the_rules_allow() -> None:
    assert wrong_way(arrows("app")) == []


def test_the_command_line_and_the_web_are_imported_from_above_only() -> None:
    into_top = sorted(f"{f}: {here} imports {there}" for f, here, there in arrows("app")
                      if there in ("app.cli", "app.web") and here not in ("app.cli", "app.docs", "app.demo"))
    assert into_top == []


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
    ("app/views.py", "app.views", "app.runtime"),  # a room that had no rule until issue 63 let this pass
    ("app/newroom/x.py", "app.newroom", "app.files"),  # a room nobody gave a rule
])
def test_an_arrow_the_wrong_way_or_from_a_room_without_a_rule_is_named(file: str, here: str, there: str) -> None:
    assert wrong_way({(file, here, there)}) != []


def test_an_import_by_importlib_is_read_like_any_other() -> None:
    path = ROOT / "app" / "views.py"
    found = imports(path, 'import importlib\nimportlib.import_module("app.runtime")\n'
                          'importlib.import_module(f"app.web.{name}")\n')
    assert {"app.runtime", "app.web"} <= found
    assert wrong_way({(str(path), "app.views", room(t)) for t in found if t.startswith("app.")}) != []


# -- no two modules import each other ---------------------------------------------------------------


def graph(extra: Mapping[str, set[str]] | None = None) -> dict[str, set[str]]:
    """Each module of app/ (its demo too) and collectors/ and the modules of those it imports."""
    out = import_graph.graph(ROOT)
    for m, more in (extra or {}).items():
        out.setdefault(m, set()).update(more)
    return out


def test_no_modules_import_each_other_in_a_circle() -> None:
    assert circles(graph()) == []


def test_a_circle_is_found_however_long() -> None:
    assert circles(graph({"app.files": {"app.storage.db"}})) != []  # storage imports files
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# -- collectors/: the core, the domains' shared modules, the plug-ins ---------------------------------


def plugin_of(module: str) -> str | None:
    """collectors.<domain>.<name>[...] of a plug-in's folder: its name; None for the core
    (collectors/*.py) and a domain's shared modules (collectors/<domain>/*.py)."""
    parts = module.split(".")
    return parts[2] if len(parts) >= 3 and (ROOT.joinpath(*parts[:3]) / "__init__.py").exists() else None


def collector_arrows_wrong(uses: Mapping[str, Iterable[str]]) -> list[str]:
    bad = []
    for path in sorted((ROOT / "collectors").rglob("*.py")):
        here = module_of(path)
        mine = plugin_of(here)
        for t in sorted(imports(path)):
            if not t.startswith("collectors.") or t not in modules():
                continue
            theirs, depth = plugin_of(t), len(t.split("."))
            core = depth == 2 and not (ROOT / "collectors" / t.split(".")[1]).is_dir()
            if mine is None and here.count(".") == 1 and not core:
                bad.append(f"{path.relative_to(ROOT)}: the shared core imports {t}, a domain's or a plug-in's")
            elif mine is None and theirs is not None:
                bad.append(f"{path.relative_to(ROOT)}: a domain's shared module imports the plug-in {t}")
            elif mine is not None and theirs not in (None, mine) and theirs not in uses.get(mine, ()):
                bad.append(f"{path.relative_to(ROOT)}: {mine} imports {theirs} ({t}) without `needs=Needs(uses=({theirs!r},))`")
    return bad


def declared_uses() -> dict[str, tuple[str, ...]]:
    from collectors import plugins

    return {name: p.needs.uses for name, p in plugins().items()}


def test_the_core_of_collectors_imports_no_domain_and_a_plug_in_imports_another_only_when_it_says_so() -> None:
    assert collector_arrows_wrong(declared_uses()) == []


def test_a_plug_in_importing_another_without_saying_so_is_named() -> None:
    uses = {**declared_uses(), "proxmox": ()}
    assert any("proxmox imports pbs" in line for line in collector_arrows_wrong(uses))


def test_every_declared_use_is_a_plug_in_that_is_installed() -> None:
    installed = set(declared_uses())
    assert {u for us in declared_uses().values() for u in us} <= installed


def test_the_maps_room_table_is_the_rules() -> None:
    assert room_table() in (ROOT / "ARCHITECTURE.md").read_text(), "run `make docs`"


def counted() -> list[Path]:
    """The modules whose Any are counted: app/ and collectors/, as before the demo moved into
    app/demo/ (for the wheel's sake: no top-level `demo` in site-packages). The demo's story and
    stand-ins were never counted; moving them must not spend the counts below."""
    demo = ROOT / "app" / "demo"
    return sorted(p for p in [*(ROOT / "app").rglob("*.py"), *(ROOT / "collectors").rglob("*.py")]
                  if not p.is_relative_to(demo))


# `dict[str, Any]` in app/ and collectors/: only where JSON or TOML comes in before it is
# validated (a tool's output, an agent's batch, the config file being merged), each with a comment
# saying so within the three lines above it. The count may only go down: lower it when you can.
ANY_DICTS = 35


def any_dicts() -> list[tuple[str, int, bool]]:
    """(file, line, explained) of every `dict[str, Any]` in app/ and collectors/."""
    out = []
    for path in counted():
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            for _ in range(line.count("dict[str, Any]")):
                out.append((str(path.relative_to(ROOT)), i + 1, any("#" in s for s in lines[max(0, i - 3): i + 1])))
    return out


def test_dict_of_anything_stays_at_the_json_boundaries_and_never_grows() -> None:
    found = any_dicts()
    assert len(found) <= ANY_DICTS, f"{len(found)} > {ANY_DICTS}: type the new ones (a TypedDict, a model)"
    assert [f"{f}:{n}" for f, n, explained in found if not explained] == []


# Every `Any` in app/ and collectors/, not only `dict[str, Any]`: a store, a config or a section
# handed around as `Any` says nothing of what it needs (issue 63 counted 177 `name: Any`). Where
# one is replaced by a Protocol or the real type (app/energy/reading.py, app/install/sudoers.py),
# lower the count; it may only go down.
ANY_USES = 359


def any_uses() -> dict[str, int]:
    out = {}
    for path in counted():
        n = sum(1 for node in ast.walk(ast.parse(path.read_text()))
                if (isinstance(node, ast.Name) and node.id == "Any")
                or (isinstance(node, ast.Attribute) and node.attr == "Any"))
        if n:
            out[str(path.relative_to(ROOT))] = n
    return out


def test_every_any_is_counted_and_the_count_never_grows() -> None:
    found = sum(any_uses().values())
    assert found <= ANY_USES, f"{found} uses of Any > {ANY_USES}: type the new ones (a Protocol, the real type)"


def sources() -> list[Path]:
    return sorted(p for folder in ("app", "collectors") for p in (ROOT / folder).rglob("*.py"))


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


def test_the_databases_url_is_read_off_the_config_in_one_place() -> None:
    """`cfg.storage.url` was read in 14 places of 7 files; now only app/storage/opening.py does."""
    reads = []
    for p in sources():
        for node in ast.walk(ast.parse(p.read_text())):
            if (isinstance(node, ast.Attribute) and node.attr == "url" and isinstance(node.value, ast.Attribute)
                    and node.value.attr == "storage"):
                reads.append(f"{p.relative_to(ROOT)}:{node.lineno}")
    assert [r for r in reads if not r.startswith("app/storage/opening.py:")] == []
    assert reads  # the one place is still read this way (else this test looks at nothing)
