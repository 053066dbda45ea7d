"""setuptools' build backend, with the front-end assets built first (from the npm lockfile)
when static/vendor/ is not there yet: `pip install .` from a clone and `python -m build` both
get them; building a wheel from the sdist finds them already in it and needs no npm."""

from __future__ import annotations

import runpy
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
