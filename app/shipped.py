"""Where the files rackpulse ships beside its code are: the page templates, the static files (CSS,
scripts, the npm-built vendor assets), the Alembic migrations and the manual's built site.

Why two places: the repository keeps them at its top (templates/, static/, migrations/), but an
installed wheel carries them inside the `app` package (build_backend/rackpulse_build.py copies
them there), so that nothing named `templates`, `static` or `migrations` lands at the top of
site-packages, where any other package of that name would break rackpulse or be broken by it."""

from __future__ import annotations

from pathlib import Path

APP = Path(__file__).resolve().parent
NAMES = ("templates", "static", "migrations", "help")
# the manual's built site: app/help in a wheel, site/ after `make docs-site` in a checkout
OUTSIDE = {"help": "site"}


def shipped(name: str) -> Path:
    """The folder `name` (one of NAMES): app/<name> in an installed wheel, <checkout>/<name> in a
    clone or an editable install (the manual: <checkout>/site). It may not exist: the manual is
    not built in a fresh clone."""
    if name not in NAMES:
        raise ValueError(f"rackpulse ships no folder {name!r} (only {', '.join(NAMES)})")
    inside = APP / name
    return inside if inside.is_dir() else APP.parent / OUTSIDE.get(name, name)
