"""An MkDocs hook (mkdocs.yml `hooks:`): the repository's README.md becomes the site's home page
(its links to docs/ made relative), and each collector's README.md, which `make docs` writes from
the plug-in's code beside it, becomes the page plugins/<name>.md, with an index of them.

Why a hook and not copies under docs/: the README beside the code is the one the plug-in
contract test keeps fresh, and README.md is the one GitHub shows; a second copy of either in
docs/ would be one more file to go stale."""

from __future__ import annotations

from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent


def _readmes() -> list[tuple[str, str, Path]]:
    """(name, domain, README) of every collector package, by domain then name."""
    found = []
    for readme in sorted((ROOT / "collectors").glob("*/*/README.md")):
        title = readme.read_text().split("\n", 1)[0].removeprefix("# ").strip() or readme.parent.name
        found.append((title, readme.parent.parent.name, readme))
    return sorted(found, key=lambda f: (f[1], f[0]))


def home() -> str:
    """README.md as the site's index.md: docs/x.md is x.md there, and the collectors' pages are in
    the site too."""
    text = (ROOT / "README.md").read_text().replace("](docs/", "](")
    return text.replace("under `collectors/`, also part of the site.",
                        "under `collectors/`, also part of the site: see [Collectors](plugins/index.md).")


def on_files(files: Files, config: MkDocsConfig) -> Files:
    files.append(File.generated(config, "index.md", content=home()))
    index = ["# Collectors", "", "Each collector's page says what it reads, what it needs (its permissions "
             "and the sudoers entry `rackpulse init --sudoers` writes), its config with the defaults, its "
             "metrics, state and alert rules. Each is written by `make docs` from the plug-in's code.", ""]
    domain = None
    for name, dom, readme in _readmes():
        if dom != domain:
            index += ["", f"## {dom.capitalize()}", ""]
            domain = dom
        first = next((line for line in readme.read_text().splitlines()[1:] if line.strip()), "")
        index.append(f"- [{name}]({name}.md): {first}")
        files.append(File.generated(config, f"plugins/{name}.md", content=readme.read_text()))
    files.append(File.generated(config, "plugins/index.md", content="\n".join(index) + "\n"))
    return files
