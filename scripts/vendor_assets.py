"""Build static/vendor/ from the npm lockfile: htmx, uPlot and Swagger UI, byte for byte what
package-lock.json pins. Used by `make assets`, by the package build (build_backend/) and so by
`pip install .` from a clone; a wheel or sdist already carries the files and never needs npm.
Install scripts stay off: swagger-ui-dist's analytics dependency would phone home.
usage: python scripts/vendor_assets.py [--force]
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "static" / "vendor"
FILES = {
    "htmx.min.js": "htmx.org/dist/htmx.min.js",
    "uPlot.iife.min.js": "uplot/dist/uPlot.iife.min.js",
    "uPlot.min.css": "uplot/dist/uPlot.min.css",
    "swagger-ui-bundle.js": "swagger-ui-dist/swagger-ui-bundle.js",
    "swagger-ui.css": "swagger-ui-dist/swagger-ui.css",
}


def built() -> bool:
    return all((VENDOR / name).is_file() for name in FILES)


def build(force: bool = False) -> None:
    if built() and not force:
        return
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("rackpulse: building the front-end assets (static/vendor/) needs npm, which is not installed.\n"
                 "Install npm (Debian: apt install npm), or install a rackpulse wheel or sdist: they carry the "
                 "assets already (`make dist` builds them).")
    subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"], cwd=ROOT,
                   check=True)
    VENDOR.mkdir(parents=True, exist_ok=True)
    for name, source in FILES.items():
        shutil.copyfile(ROOT / "node_modules" / source, VENDOR / name)
    (VENDOR / ".built").touch()


if __name__ == "__main__":
    build(force="--force" in sys.argv)
