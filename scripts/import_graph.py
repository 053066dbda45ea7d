"""The import graph of a checkout, as the house rules read it (every import, lazy and type-only
ones too): the arrows between the rooms of app/, the arrows in collectors/ that leave a plug-in
or run from the shared core into a domain, and every circle of modules. tests/test_house_rules.py
reads the imports with these same functions. Standard library only, so it can be run on an older
checkout to compare:

    .venv/bin/python scripts/import_graph.py [CHECKOUT]
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path

FOLDERS = ("app", "collectors")


def module_of(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path) -> frozenset[str]:
    return frozenset(module_of(root, p) for f in FOLDERS for p in (root / f).rglob("*.py"))


def _dynamic(node: ast.Call) -> str | None:
    """The module an `importlib.import_module(...)` or `__import__(...)` names: a constant string,
    or the constant start of an f-string up to its last dot ("collectors." of f"collectors.{x}")."""
    fn = node.func
    name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
    if name not in ("import_module", "__import__") or not node.args:
        return None
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        return str(arg.values[0].value).rsplit(".", 1)[0] or None
    return None


def imports(root: Path, path: Path, known: frozenset[str], source: str | None = None) -> set[str]:
    """Every module `path` imports, absolute (lazy, type-only and importlib imports too): `from
    pkg import name` is pkg.name when that is one of the `known` modules, else pkg."""
    mod = module_of(root, path)
    pkg = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text() if source is None else source)):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            out |= {f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names}
        elif isinstance(node, ast.Call) and (target := _dynamic(node)):
            out.add(target)
    return out


def graph(root: Path) -> dict[str, set[str]]:
    """Each module of app/ (its demo too) and collectors/ and the modules of those it imports."""
    known = modules(root)
    return {module_of(root, p): {t for t in imports(root, p, known) if t in known and t != module_of(root, p)}
            for f in FOLDERS for p in (root / f).rglob("*.py")}


def circles(g: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one module (Tarjan's algorithm): each a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while (w := stack.pop()) != v:
                on.discard(w)
                part.append(w)
            on.discard(v)
            if part:
                out.append(sorted([v, *part]))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(g)))
    try:
        for v in sorted(g):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return out


def plugin_of(root: Path, mod: str) -> str | None:
    parts = mod.split(".")
    return parts[2] if len(parts) >= 3 and (root.joinpath(*parts[:3]) / "__init__.py").exists() else None


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent).resolve()
    g = graph(root)
    rooms: dict[str, set[str]] = defaultdict(set)
    for mod, targets in g.items():
        if mod.startswith("app."):
            here = ".".join(mod.split(".")[:2])
            rooms[here] |= {r for t in targets if t.startswith("app.") and (r := ".".join(t.split(".")[:2])) != here}
    print(f"app/: {len(rooms)} rooms, {sum(len(v) for v in rooms.values())} arrows between them")
    for r in sorted(rooms):
        print(f"  {r.removeprefix('app.'):14} -> {', '.join(sorted(t.removeprefix('app.') for t in rooms[r])) or '-'}")
    print("collectors/: arrows up (the core into a domain or a plug-in, a domain's shared module into a plug-in)")
    up, across = [], []
    for mod, targets in sorted(g.items()):
        if mod != "collectors" and not mod.startswith("collectors."):
            continue
        mine = plugin_of(root, mod)
        core = mod == "collectors" or (mod.count(".") == 1 and not (root / "collectors" / mod.split(".")[1]).is_dir())
        for t in sorted(x for x in targets if x.startswith("collectors.")):
            theirs = plugin_of(root, t)
            t_core = t.count(".") == 1 and not (root / "collectors" / t.split(".")[1]).is_dir()
            if (core and not t_core) or (mine is None and not core and theirs is not None):
                up.append(f"  {mod} -> {t}")
            elif mine is not None and theirs not in (None, mine):
                across.append(f"  {mod} -> {t}")
    print("\n".join(up) + f"\n  ({len(up)})" if up else "  (0)")
    print("collectors/: a plug-in importing another (each must be in its CollectorPlugin.needs.uses)")
    print("\n".join(across) + f"\n  ({len(across)})" if across else "  (0)")
    found = circles(g)
    print(f"circles of modules: {len(found)}" + "".join(f"\n  {' <-> '.join(c)}" for c in found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
