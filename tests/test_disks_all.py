"""/disks/all: every disk of every host in one table, sorted, filtered and as CSV; and a disk's
self-test started from its page."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from app.disks.disks_table import DiskRow, as_csv, table
from tests.test_web import demo_app, fetch


def row(host: str, bay: str | None, health: str = "ok", temp: float | None = 30.0, model: str = "ST8000VN004",
        serial: str = "S") -> DiskRow:
    return DiskRow(host, serial, bay, model, serial, "sda", None, 1000, temp, health, "–", None, None, "/disks/S")


ROWS = [row("nas", "bay 10", serial="A"), row("nas", "bay 2", "failing", serial="B"), row("pi", "bay 1", serial="C"),
        row("nas", "bay 1", "warning", 55.0, serial="D"), row("pi", None, temp=None, serial="E")]


def test_the_worst_disks_come_first_then_by_host_and_bay_as_on_the_bay_map() -> None:
    assert [r.serial for r in table(ROWS)] == ["B", "D", "A", "C", "E"]


def test_a_column_sorts_both_ways_and_unknown_values_go_to_one_end() -> None:
    assert [r.serial for r in table(ROWS, "temperature", True)][0] == "D"
    assert [r.serial for r in table(ROWS, "temperature", False)][0] == "E"  # no temperature: lowest
    assert [r.serial for r in table(ROWS, "bay", False)] == ["D", "C", "B", "A", "E"]  # bay 1 of nas, then of pi


def test_needs_attention_and_a_search_word_filter_the_rows() -> None:
    assert {r.serial for r in table(ROWS, attention=True)} == {"B", "D"}
    assert {r.serial for r in table(ROWS, query="PI")} == {"C", "E"}


def test_the_csv_has_a_header_and_never_starts_a_cell_with_a_formula() -> None:
    text = as_csv([row("nas", "=HYPERLINK(\"x\")", model="@SUM(A1)")])
    lines = list(csv.reader(io.StringIO(text)))
    assert lines[0][:3] == ["host", "bay", "device"]
    assert lines[1][1] == "'=HYPERLINK(\"x\")" and lines[1][3] == "'@SUM(A1)"


def test_the_page_lists_every_disk_of_the_demo_host_with_links_to_their_pages(tmp_path: Path) -> None:
    app = demo_app(tmp_path, 0)
    page = fetch(app, "/disks/all").text
    got = fetch(app, "/disks/all.csv?sort=bay&order=asc")
    assert "14 disks on 1 host" in page
    assert 'href="/disks/ZA1021DK"' in page and 'data-label="Worst attribute"' in page
    assert got.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(got.text)))
    assert len(rows) == 14 and rows[0]["bay"] == "NVMe slot M2_1"


def test_the_failing_disk_leads_the_table_and_is_the_one_needing_attention(tmp_path: Path) -> None:
    # story time 80: bay 7's disk (sdh, ZA1049HK) fails SMART while md0 marks it faulty
    app = demo_app(tmp_path, 80, runs=2)
    first = re.findall(r'<a href="/disks/([^"]+)">', fetch(app, "/disks/all").text)[0]
    needing = re.findall(r'<a href="/disks/([^"]+)">', fetch(app, "/disks/all?attention=1").text)
    assert first == "ZA1049HK" and needing == ["ZA1049HK"]


def test_the_replacement_page_says_what_to_order_which_bay_and_the_mdadm_commands(tmp_path: Path) -> None:
    app = demo_app(tmp_path, 80, runs=2)
    disk = fetch(app, "/disks/ZA1049HK").text
    page = fetch(app, "/disks/ZA1049HK/replace").text
    missing = fetch(app, "/disks/NOSUCH/replace")
    assert 'href="/disks/ZA1049HK/replace"' in disk  # the failing disk's page links to it
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert "shelf 1, bay 7" in text and "WDC WD80EFZZ-68BTXN0" in text
    assert "Interface SATA" in text and "3.5 inches, 7200 rpm" in text
    assert "the array accepts no less than 8.0 TB per member" in text  # raid6 of 12: size / 10
    assert "State clean, degraded (11/12 in sync)" in text and "Rebuild about 14 h 48 min" in text
    lines = re.search(r'<pre class="commands"><code>(.*?)</code>', page, re.S)[1].splitlines()  # type: ignore[index]
    assert lines[0] == "mdadm --manage /dev/md0 --remove /dev/sdh1"  # md marked it failed already
    assert "mdadm --manage /dev/md0 --add /dev/NEW1" in lines
    assert missing.status_code == 404


def test_a_pulled_disk_still_has_its_replacement_page_from_what_md_remembers(tmp_path: Path) -> None:
    page = fetch(demo_app(tmp_path, 105, runs=2), "/disks/ZA1049HK/replace").text
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert "shelf 1, bay 7" in text and "no longer seen" in text and "--remove" not in text


def test_a_disks_notes_are_saved_by_serial_checked_and_shown_with_its_warranty(tmp_path: Path) -> None:
    app = demo_app(tmp_path, 0, shared=False)
    first = fetch(app, "/disks/ZA1000AK")
    csrf = re.search(r'name="csrf" value="([^"]+)"', first.text)[1]  # type: ignore[index]
    cookies = dict(first.cookies.items())  # without a password the token is bound to this cookie

    async def post(data: dict[str, str]):  # type: ignore[no-untyped-def]
        import httpx
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1",
                                     cookies=cookies) as c:
            return await c.post("/disks/ZA1000AK/notes", data={"csrf": csrf, **data})

    import asyncio
    bad = asyncio.run(post({"purchased": "last year", "rma": "RMA-76"}))
    ok = asyncio.run(post({"purchased": "2024-03-01", "warranty_end": "2099-03-01", "rma": "RMA-77"}))
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", fetch(app, "/disks/ZA1000AK").text))
    assert bad.status_code == 400 and "purchased: a date as YYYY-MM-DD" in bad.text
    # the disk's page again, the refusal above the form and what was typed in it
    assert 'id="notes-refused">Notes not saved: purchased: a date' in bad.text and 'value="RMA-76"' in bad.text
    assert ok.status_code == 303
    assert "Under warranty until 2099-03-01" in text and 'value="RMA-77"' in fetch(app, "/disks/ZA1000AK").text
    saved = (tmp_path / "disk-notes.json").read_text()
    assert '"ZA1000AK"' in saved and "last year" not in saved


def test_the_heat_view_colours_each_bay_by_its_disks_temperature(tmp_path: Path) -> None:
    page = fetch(demo_app(tmp_path, 0), "/disks?view=heat").text
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)).replace("&nbsp;", " ")  # a value bound to its unit
    assert "warm from 42 °C, hot from 50 °C" in text  # alerts.disk_hot_celsius and 8 below it
    assert re.search(r'<li class="bay warning"[^>]*><strong class="nowrap">M2_2</strong>\s*<span class="state">44\u00a0°C', page)
    assert re.search(r'<li class="bay ok"[^>]*><strong class="nowrap">bay 0</strong>\s*<span class="state">33\u00a0°C', page)


def test_an_arrays_page_lists_every_disk_its_bays_have_held(tmp_path: Path) -> None:
    # story 0, then 120: bay 7's disk was swapped for ZR9Q0NEWK (it left healthy in this short story)
    page = fetch(demo_app(tmp_path, 120, runs=3), "/entity/md_array/md0").text
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert "Its bays' disks" in text
    bay7 = text[text.index("shelf 1, bay 7 "):text.index("shelf 1, bay 8 ")]
    assert "ZR9Q0NEWK" in bay7 and "still there" in bay7
    assert "ZA1049HK" in bay7 and "replaced" in bay7
    assert bay7.index("ZR9Q0NEWK") < bay7.index("ZA1049HK")  # the newest first
