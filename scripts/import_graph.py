"""The import graph of a checkout, as the house rules read it (every import, lazy and type-only
ones too): the arrows between the rooms of app/, the arrows in collectors/ that leave a plug-in
or run from the shared core into a domain, and every circle of modules. Self-contained, so it can
be run on an older checkout to compare:

    .venv/bin/python scripts/import_graph.py [CHECKOUT]
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path


def module_of(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def graph(root: Path) -> dict[str, set[str]]:
    files = {module_of(root, p): p for f in ("app", "collectors", "demo") for p in (root / f).rglob("*.py")}
    out: dict[str, set[str]] = {}
    for mod, path in files.items():
        pkg = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(pkg.split(".")[: len(pkg.split(".")) - node.level + 1] + ([base] if base else []))
                found |= {f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names}
        out[mod] = {t for t in found if t in files and t != mod}
    return out


def circles(g: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = [stack.pop()]
            while part[-1] != v:
                part.append(stack.pop())
            on.difference_update(part)
            if len(part) > 1:
                out.append(sorted(part))

    sys.setrecursionlimit(10_000)
    for v in sorted(g):
        if v not in index:
            visit(v)
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
