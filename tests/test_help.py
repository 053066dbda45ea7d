"""The manual at /help: the site built from docs/ (the wheel carries it, a checkout builds it with
`make docs-site`), served offline by rackpulse itself; without it, /help says how to build it."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.web import app as web_app


def manual_app(monkeypatch: pytest.MonkeyPatch, site: Path) -> TestClient:
    real = web_app.shipped
    monkeypatch.setattr(web_app, "shipped", lambda name: site if name == "help" else real(name))
    app = FastAPI()
    web_app.mount_manual(app)
    return TestClient(app)


def test_a_built_manual_is_served_at_help_with_its_pages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "plugins").mkdir()
    (tmp_path / "index.html").write_text("<h1>rackpulse</h1>")
    (tmp_path / "plugins" / "smart.html").write_text("<h1>smart</h1>")
    client = manual_app(monkeypatch, tmp_path)
    assert client.get("/help/").text == "<h1>rackpulse</h1>"
    assert client.get("/help/plugins/smart.html").text == "<h1>smart</h1>"
    assert client.get("/help/nope.html").status_code == 404


def test_a_page_the_manual_does_not_have_is_rackpulses_own_not_found_in_its_layout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """MkDocs' 404.html, served at /help/plugins/nope/, linked its styles from the wrong folder."""
    from tests.test_web import demo_app, fetch

    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<h1>rackpulse</h1>")
    (site / "404.html").write_text('<link rel="stylesheet" href="assets/main.css"><h1>404 - Not found</h1>')
    real = web_app.shipped
    monkeypatch.setattr(web_app, "shipped", lambda name: site if name == "help" else real(name))
    app = demo_app(tmp_path, 80, shared=False)
    assert fetch(app, "/help/").text == "<h1>rackpulse</h1>"
    r = fetch(app, "/help/plugins/nope/", headers={"Accept": "text/html"})
    assert r.status_code == 404
    assert "No such page in the manual" in r.text and "<nav" in r.text  # the site's layout, its menu


def test_without_a_built_manual_a_browser_is_told_so_in_the_sites_layout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It was a bare page, black on white in dark mode, with no menu back."""
    from tests.test_web import demo_app, fetch

    real = web_app.shipped
    monkeypatch.setattr(web_app, "shipped", lambda name: tmp_path / "none" if name == "help" else real(name))
    r = fetch(demo_app(tmp_path, 80, shared=False), "/help", headers={"Accept": "text/html"})
    assert r.status_code == 404 and "make docs-site" in r.text and "<nav" in r.text


def test_without_a_built_manual_help_says_how_to_build_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    r = manual_app(monkeypatch, tmp_path / "site").get("/help")
    assert r.status_code == 404 and "make docs-site" in r.text


def test_the_checkouts_manual_builds_strictly_with_every_collectors_page(tmp_path: Path) -> None:
    """What CI's `mkdocs build --strict` and the wheel's build do: a broken link fails it."""
    import os

    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    root = Path(__file__).resolve().parent.parent
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    build(load_config(str(root / "mkdocs.yml"), site_dir=str(tmp_path), strict=True))
    plugins = {p.stem for p in (tmp_path / "plugins").glob("*.html")}
    assert {"index", "smart", "mdraid", "frr", "nut", "heatpump"} <= plugins
    assert "which bay to" in (tmp_path / "index.html").read_text()
