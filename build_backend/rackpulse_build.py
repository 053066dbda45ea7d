"""setuptools' build backend, with the front-end assets built first (from the npm lockfile)
when static/vendor/ is not there yet: `pip install .` from a clone and `python -m build` both
get them; building a wheel from the sdist finds them already in it and needs no npm.

`BuildPy` (pyproject's [tool.setuptools.cmdclass]) puts templates/, static/ and migrations/,
and the manual built from docs/ (app/help, served at /help), inside the wheel's `app` package: the repository keeps them at its top, but at the top of
site-packages those generic names would clash with any other package (app/shipped.py finds
them in either place)."""

from __future__ import annotations

import runpy
import shutil
from pathlib import Path
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import (  # noqa: F401 - the rest of the PEP 517/660 interface, unchanged
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)
from setuptools.command.build_py import build_py as _build_py

# the folders shipped inside app/, and which of their files travel (as MANIFEST.in names them)
SHIPPED = {"templates": ("*.html",), "static": ("*.css", "*.js", "*.svg"),
           "migrations": ("*.py", "*.mako")}


class BuildPy(_build_py):
    """The packages as setuptools builds them, then templates/, static/ and migrations/ copied
    into the built `app` package."""

    def run(self) -> None:
        super().run()
        for folder, patterns in SHIPPED.items():
            for pattern in patterns:
                for src in sorted(Path(folder).rglob(pattern)):
                    if "__pycache__" in src.parts:
                        continue
                    dest = Path(self.build_lib) / "app" / src
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(src, dest)
        if not self.editable_mode:  # an editable install serves a checkout's site/ (make docs-site)
            _manual(Path(self.build_lib) / "app" / "help")


def _manual(site_dir: Path) -> None:
    """The manual built from docs/ (mkdocs.yml) into the wheel, for `serve` to show at /help
    offline; --strict, so a broken link fails the build as it fails CI."""
    import os

    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    build(load_config("mkdocs.yml", site_dir=str(site_dir.resolve()), strict=True))


def _assets() -> None:
    if (Path.cwd() / "static" / "vendor" / "htmx.min.js").is_file():
        return
    runpy.run_path(str(Path.cwd() / "scripts" / "vendor_assets.py"), run_name="build")["build"]()


def build_wheel(wheel_directory: str, config_settings: Any = None, metadata_directory: Any = None) -> str:
    _assets()
    return str(_setuptools.build_wheel(wheel_directory, config_settings, metadata_directory))


def build_sdist(sdist_directory: str, config_settings: Any = None) -> str:
    _assets()
    return str(_setuptools.build_sdist(sdist_directory, config_settings))


def build_editable(wheel_directory: str, config_settings: Any = None, metadata_directory: Any = None) -> str:
    _assets()
    return str(_setuptools.build_editable(wheel_directory, config_settings, metadata_directory))
