"""rackpulse installs the way Python software does: `python -m build` makes an sdist and a
wheel that carry the built front-end assets; the wheel installed into a fresh venv, on a PATH
without npm, runs `rackpulse demo` serving pages, htmx and uPlot; a wheel builds from the sdist
without npm too. (Starts processes and installs packages: marked `peers`.)"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.peers import free_port

ROOT = Path(__file__).resolve().parent.parent


def run(*argv: str | Path, env: dict[str, str] | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    r = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=600, env=env, cwd=cwd)
    assert r.returncode == 0, f"{argv}: {r.stdout[-2000:]}{r.stderr[-2000:]}"
    return r


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    # --no-isolation: this venv's setuptools, no download; the build backend and its asset step
    # are the ones a user's `python -m build` runs.
    run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out, ROOT)
    return out


def no_npm_env(venv: Path) -> dict[str, str]:
    """The venv's bin only on PATH: no npm, no node."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = str(venv / "bin")
    return env


@pytest.fixture(scope="module")
def installed(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    venv = tmp_path_factory.mktemp("venv")
    run(sys.executable, "-m", "venv", venv)
    (wheel,) = dist.glob("rackpulse-*.whl")
    run(venv / "bin" / "python", "-m", "pip", "install", "--quiet", wheel, env=no_npm_env(venv))
    return venv


def test_the_sdist_and_the_wheel_carry_the_built_assets(dist: Path) -> None:
    import tarfile
    import zipfile

    (wheel,) = dist.glob("rackpulse-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for f in ("app/static/vendor/htmx.min.js", "app/static/vendor/uPlot.iife.min.js", "app/templates/layout.html",
              "collectors/storage/zfs/section.html", "app/migrations/script.py.mako", "app/demo/tools.py"):
        assert f in names
    shipped = {str(f.relative_to(ROOT)) for folder in ("templates", "static", "migrations")
               for f in (ROOT / folder).rglob("*")
               if f.is_file() and "__pycache__" not in f.parts and not f.name.startswith(".")}  # .built: a stamp
    assert {f"app/{f}" for f in shipped} <= names, "every file of templates/, static/, migrations/ inside app/"
    # the manual's site, built from docs/ with every collector's page (served at /help)
    assert {"app/help/index.html", "app/help/install.html", "app/help/plugins/smart.html",
            "app/help/plugins/index.html"} <= names
    # Every plug-in template (sections, the overview's summaries, a disk's page) ships with its package.
    templates = {str(f.relative_to(ROOT)) for f in (ROOT / "collectors").rglob("*.html")}
    assert {"collectors/disks/smart/disk.html", "collectors/disks/mdraid/summary.html"} <= templates <= names
    entry_points = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "rackpulse = app.cli:main" in entry_points and "zfs = collectors.storage.zfs:PLUGIN" in entry_points
    (sdist,) = dist.glob("rackpulse-*.tar.gz")
    members = {m.split("/", 1)[1] for m in tarfile.open(sdist).getnames() if "/" in m}
    assert {"static/vendor/htmx.min.js", "package-lock.json", "scripts/vendor_assets.py"} <= members
    assert not any(m.startswith("node_modules") for m in members)


def test_the_wheel_adds_only_app_and_collectors_to_the_top_of_site_packages(installed: Path) -> None:
    """Generic names at the top of site-packages (demo, static, templates, migrations) break
    rackpulse, or another package, whichever is installed second."""
    (site,) = installed.glob("lib/python*/site-packages")
    (record,) = site.glob("rackpulse-*.dist-info/RECORD")
    tops = {line.split(",")[0].split("/")[0] for line in record.read_text().splitlines()}
    assert {t for t in tops if not t.endswith(".dist-info") and t != ".."} == {"app", "collectors"}
    assert not [n for n in ("demo", "static", "templates", "migrations") if (site / n).exists()]
    assert (site / "app" / "templates" / "layout.html").is_file() and (site / "app" / "migrations" / "env.py").is_file()


def test_the_installed_serve_finds_its_templates_static_files_and_migrations_inside_app(installed: Path) -> None:
    code = ("from app.shipped import shipped; import app; from pathlib import Path; "
            "print(all(shipped(n).is_relative_to(Path(app.__file__).parent) for n in ('templates', 'static', 'migrations')))")
    assert run(installed / "bin" / "python", "-c", code, env=no_npm_env(installed), cwd=installed).stdout.strip() == "True"


def test_a_wheel_builds_from_the_sdist_without_npm(dist: Path, installed: Path, tmp_path: Path) -> None:
    (sdist,) = dist.glob("rackpulse-*.tar.gz")
    import tomllib

    # what pyproject's [build-system] requires (setuptools, and MkDocs for the manual), as a build
    # with isolation would install it; npm is still not on the PATH
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    run(installed / "bin" / "python", "-m", "pip", "install", "--quiet", *requires, env=no_npm_env(installed))
    run(installed / "bin" / "python", "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
        "--wheel-dir", tmp_path, sdist, env=no_npm_env(installed))
    assert list(tmp_path.glob("rackpulse-*.whl"))



@pytest.fixture
def demo(installed: Path, tmp_path: Path) -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen([installed / "bin" / "rackpulse", "demo", "--port", str(port), "--interval", "2"],
                            env=no_npm_env(installed), cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(base + "/healthz", timeout=1)
                break
            except OSError:
                if proc.poll() is not None:
                    raise AssertionError(proc.stdout.read() if proc.stdout else "demo exited") from None
                time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:  # outlived SIGTERM: never left behind
            proc.kill()
            proc.wait(30)


def test_the_installed_wheel_runs_the_demo_with_htmx_and_uplot_served(demo: str, installed: Path) -> None:
    page = urllib.request.urlopen(demo + "/disks", timeout=30).read().decode()
    assert "Disks and arrays" in page and "/static/vendor/htmx.min.js" in page
    for asset in ("htmx.min.js", "uPlot.iife.min.js"):
        r = urllib.request.urlopen(f"{demo}/static/vendor/{asset}", timeout=30)
        assert r.status == 200 and len(r.read()) > 10_000
    manual = urllib.request.urlopen(demo + "/help/", timeout=30).read().decode()
    assert "which bay to" in manual and 'href="install.html"' in manual
    smart = urllib.request.urlopen(demo + "/help/plugins/smart.html", timeout=30).read().decode()
    assert "smartctl" in smart
    version = run(installed / "bin" / "rackpulse", "--version", env=no_npm_env(installed)).stdout
    assert version.strip() == "rackpulse 0.1.0"
