"""End-to-end in a real browser: Debian's Chromium driven by Playwright against a running
`rackpulse demo` (login required: a password hash comes from the environment).
Screenshots go to test-artifacts/ for a person to look at."""

from __future__ import annotations

import contextlib
import re
import time

import pytest
from playwright.sync_api import Browser, Page, expect
from playwright.sync_api import Error as PlaywrightError

from tests.e2e.conftest import ARTIFACTS, keep_screenshot


def test_login_is_required_and_a_wrong_password_is_refused(browser: Browser, server: str) -> None:
    ctx = browser.new_context(base_url=server)
    pg = ctx.new_page()
    pg.goto("/disks")
    assert "/login" in pg.url
    pg.fill("input[name=password]", "wrong")
    pg.click("button[type=submit]")
    expect(pg.locator(".callout.failing")).to_contain_text("Wrong user or password")
    ctx.close()


def test_the_overview_updates_live_to_show_the_degraded_array_and_its_bay(page: Page) -> None:
    page.evaluate("window.__noReload = 'still here'")
    # The story degrades md0 at t=70 s (about 18 s at --speed 4); htmx swaps it in without a reload.
    expect(page.locator("main")).to_contain_text("md0 degraded", timeout=60_000)
    expect(page.locator("main")).to_contain_text("shelf 1, bay 7")
    assert page.evaluate("window.__noReload") == "still here"
    keep_screenshot(page, ARTIFACTS / "overview-degraded.png")


def test_the_alert_can_be_acknowledged(page: Page) -> None:
    # One that lasts (the RAID controller's degraded VD, 135 of the story's 240 s): the first on the
    # page may be one that resolves within seconds (a job's failure), taking its button with it.
    button = page.locator("form[id^=ack-]:has(input[name=rule][value=megaraid_vd_degraded]) button")
    page.goto("/alerts")
    from app.demo.story import CYCLE
    from tests.e2e.conftest import SPEED

    deadline = time.monotonic() + 2 * CYCLE / SPEED  # it fires once a loop: two loops at the tests' speed
    while True:
        while not button.count() and time.monotonic() < deadline:
            time.sleep(1)
            page.reload()
        button.click()
        main = page.locator("main")
        expect(main).to_contain_text(re.compile("acknowledged|no such firing alert"))
        # On a loaded machine the alert could resolve between the page drawing its button and the
        # click: the server says so, and the test waits for its next firing, within the deadline.
        if "acknowledged" in main.inner_text() or time.monotonic() >= deadline:
            break
        page.goto("/alerts")
    expect(page.locator("main")).to_contain_text("acknowledged")
    keep_screenshot(page, ARTIFACTS / "alerts.png")


def swaps(page: Page, n: int) -> None:
    """Wait for the page's next n live updates (htmx swaps every web.refresh_seconds): the wait
    comes from the page's own clock, not a guess."""
    page.evaluate("window.__swaps = 0; document.addEventListener('htmx:afterSwap', () => window.__swaps++)")
    page.wait_for_function(f"window.__swaps >= {n}", timeout=60_000)


def test_what_someone_types_or_opens_survives_the_live_updates(page: Page) -> None:
    from app.demo.story import CYCLE
    from tests.e2e.conftest import SPEED

    # The RAID controller's degraded VD fires for 135 of the story's 240 s: caught as it starts,
    # it outlasts the refreshes below (an alert that resolves takes its form with it).
    ack = "form[id^=ack-]:has(input[name=rule][value=megaraid_vd_degraded])"
    page.goto("/alerts")
    was_there, deadline = True, time.monotonic() + 2 * CYCLE / SPEED
    while time.monotonic() < deadline:
        there = page.locator(ack).count() > 0
        if there and not was_there:
            break
        was_there = there
        page.wait_for_timeout(1000)
        page.reload()
    form = page.locator(ack).first.evaluate("f => f.id")  # the alert's own form
    page.fill(f"#{form} input[name=note]", "swapping the disk at lunch")
    page.locator("#new-silence summary").click()
    page.fill("#new-silence input[name=reason]", "kernel upgrade")
    page.locator("#new-silence input[name=reason]").focus()
    swaps(page, 3)
    assert page.locator(f"#{form} input[name=note]").input_value() == "swapping the disk at lunch"
    assert page.locator("#new-silence").evaluate("d => d.open") is True
    assert page.locator("#new-silence input[name=reason]").input_value() == "kernel upgrade"
    assert page.evaluate("document.activeElement && document.activeElement.name") == "reason"  # focus kept too


@pytest.mark.parametrize("range_", ["1h", "30d"])
def test_the_history_chart_renders(page: Page, range_: str) -> None:
    page.goto(f"/disks/ZA1049HK?range={range_}")
    chart = page.locator("figure.chart").first
    expect(chart.locator("canvas")).to_have_count(1, timeout=20_000)
    box = chart.bounding_box()
    assert box is not None and box["height"] > 100
    keep_screenshot(page, ARTIFACTS / f"disk-history-{range_}.png")


@pytest.mark.parametrize("path", ["/", "/host", "/disks", "/network", "/power", "/heatpump", "/alerts", "/hosts",
                                  "/h/ceph-node1/disks"])
def test_a_360px_phone_has_no_horizontal_scroll(browser: Browser, server: str, page: Page, path: str) -> None:
    page.set_viewport_size({"width": 360, "height": 740})
    page.goto(path)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 360, f"{path} is {width}px wide on a 360px phone"
    keep_screenshot(page, ARTIFACTS / f"phone{path.replace('/', '-') or '-overview'}.png")


def test_on_a_phone_the_alerts_page_is_four_screens_at_most_and_a_tap_opens_an_alerts_controls(page: Page) -> None:
    """One alert in two or three short lines, its controls and "Fired with" on a tap; the history's
    newest ten, the rest folded. Each alert a card of labelled lines and 100 events were 25,352 px."""
    from app.demo.story import CYCLE
    from tests.e2e.conftest import SPEED

    page.set_viewport_size({"width": 390, "height": 844})
    heights = []
    end = time.monotonic() + CYCLE / SPEED  # one loop of the story: its busiest moment is in it
    while time.monotonic() < end:
        page.goto("/alerts")
        heights.append((page.evaluate("document.documentElement.scrollHeight"),
                        page.locator("table.alerts tr[data-state]").count()))
        time.sleep(CYCLE / SPEED / 12)
    assert max(h for h, _ in heights) <= 4 * 844, heights
    assert max(n for _, n in heights) >= 3, heights  # the story's alerts were there
    deadline = time.monotonic() + 2 * CYCLE / SPEED
    row = page.locator("table.alerts tr:has(form[id^=ack-])").first
    while not row.count() and time.monotonic() < deadline:
        time.sleep(1)
        page.reload()
    button = row.locator("form[id^=ack-] button")
    expect(button).to_be_hidden()
    row.locator("a.act-open").click()
    expect(button).to_be_visible()
    keep_screenshot(page, ARTIFACTS / "phone-alerts-tapped.png")


def test_on_a_phone_the_host_page_folds_its_sections_to_their_headlines_and_a_tap_opens_one(page: Page) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/host")
    tall = page.evaluate("document.documentElement.scrollHeight")
    assert tall <= 4 * 844, f"/host is {tall} px on a 390x844 phone (was 19,020 with every section open)"
    folded = page.locator(".sections > div.judged.folded")
    assert folded.count() >= 5 and folded.count() == page.locator(".sections > div.judged").count()
    # a folded headline says its level: the mark is CSS content, read from the computed style
    marks = page.evaluate("""() => [...document.querySelectorAll('.sections > div.judged.folded')]
        .map(d => [d.dataset.level, getComputedStyle(d.querySelector('section > h2'), '::before').content])""")
    assert all((mark != "none") == (level in ("failing", "warning")) for level, mark in marks), marks
    first = folded.first
    name = first.get_attribute("data-plugin")
    charts = first.locator("figure.chart")
    undrawn = charts.count()
    first.locator("section > h2").first.click()
    section = page.locator(f".sections > div.judged[data-plugin={name}]")
    expect(section).not_to_have_class(re.compile(r"\bfolded\b"))
    if undrawn:  # its charts are drawn once it is open
        expect(section.locator("figure.chart canvas").first).to_be_visible()
    keep_screenshot(page, ARTIFACTS / "phone-host-opened.png")


def test_the_agent_host_is_listed_and_its_pages_stay_under_its_prefix(page: Page) -> None:
    # `rackpulse demo` runs a real agent for a second host, ceph-node1, pushing to the demo server
    page.goto("/hosts")
    row = page.locator("tr", has_text="ceph-node1")
    expect(row).to_contain_text("reporting", timeout=30_000)
    keep_screenshot(page, ARTIFACTS / "hosts.png")
    row.locator("a").first.click()
    page.wait_for_url("**/h/ceph-node1/")
    expect(page.locator("header .host")).to_have_text("ceph-node1")
    page.locator("nav a:has-text('Disks')").click()
    page.wait_for_url("**/h/ceph-node1/disks")
    # the agent's first smart run may still be on its way: the page refreshes itself until it is there
    expect(page.locator("main")).to_contain_text("shelf 1, bay 7", timeout=30_000)
    keep_screenshot(page, ARTIFACTS / "agent-host-disks.png")


def test_run_now_runs_a_collector(page: Page) -> None:
    page.goto("/collectors")
    page.locator("#mdraid button:has-text('Run now')").click()
    expect(page.locator("#mdraid")).to_contain_text("up")


def test_a_lost_connection_shows_a_banner_that_goes_away_by_itself(page: Page) -> None:
    banner = page.locator("#offline")
    expect(banner).to_be_hidden()
    page.route("**/", lambda route: route.abort())  # the server "goes away" for the live updates
    expect(banner).to_be_visible(timeout=15_000)
    page.unroute("**/")
    expect(banner).to_be_hidden(timeout=15_000)


def test_a_chart_zooms_on_a_drag_and_resets_on_a_double_click(page: Page) -> None:
    page.goto("/disks/ZA1042GK?range=24h")
    chart = page.locator("figure.chart").first
    expect(chart.locator("canvas")).to_have_count(1, timeout=20_000)
    span = "() => { const u = document.querySelector('figure.chart')._chart; return u.scales.x.max - u.scales.x.min; }"
    full = page.evaluate(span)
    over = chart.locator(".u-over")
    over.scroll_into_view_if_needed()  # below the SMART tables: the mouse can only drag what is on screen
    box = over.bounding_box()
    assert box is not None and abs(full - 86400) <= 120
    page.mouse.move(box["x"] + box["width"] * 0.3, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.6, box["y"] + box["height"] / 2, steps=5)
    page.mouse.up()
    zoomed = page.evaluate(span)
    assert zoomed < full * 0.5, (zoomed, full)
    over.dblclick()
    assert abs(page.evaluate(span) - full) <= 120


def test_the_overviews_tiles_start_above_the_fold_through_the_whole_story(browser: Browser, server: str) -> None:
    """The worst moment of the demo (a dozen alerts at once) still leaves the tiles on the first
    screen of a 1440x900 desktop: critical callouts first, three at most, the rest one line."""
    from app.demo.story import CYCLE
    from tests.e2e.conftest import PASSWORD, SPEED

    ctx = browser.new_context(base_url=server, viewport={"width": 1440, "height": 900})
    pg = ctx.new_page()
    pg.goto("/login")
    pg.fill("input[name=password]", PASSWORD)
    pg.click("button[type=submit]")
    pg.wait_for_url(server + "/")
    seen = []
    end = time.monotonic() + CYCLE / SPEED + 5  # one whole loop of the story, at the demo's speed
    while time.monotonic() < end:
        pg.goto("/")
        seen.append(pg.evaluate("""() => ({top: document.querySelector('section.tiles').getBoundingClientRect().top,
            callouts: document.querySelectorAll('a.callout[role=alert]').length,
            more: document.querySelectorAll('a.callout.more').length,
            levels: [...document.querySelectorAll('a.callout[role=alert]')].map(a => a.classList[1])})"""))
        pg.wait_for_timeout(2000)
    ctx.close()
    worst = max(seen, key=lambda s: s["top"])
    print(f"tiles top at most {worst['top']:.0f} px over {len(seen)} looks; callouts at most "
          f"{max(s['callouts'] for s in seen)} (+more: {max(s['more'] for s in seen)})")
    assert worst["top"] < 900, worst
    assert max(s["callouts"] for s in seen) == 3 and any(s["more"] for s in seen)  # the worst moment was seen
    rank = {"failing": 0, "warning": 1}
    assert all(s["levels"] == sorted(s["levels"], key=rank.get) for s in seen)  # critical first, always


def test_a_long_address_in_an_events_cell_wraps_on_a_390px_phone(page: Page) -> None:
    """An event about "BGP peer default/ipv4Unicast/fd00:…" or a ZFS device's by-id path is one word
    with no space to break at: the stacked cell must wrap it, not widen /events past the phone."""
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/events")
    long = "default/ipv4Unicast/fd00:0199:0000:0000:0000:0000:0000:0002/wwn-0x5000c500a1b2c3d4-part1"
    cells = page.evaluate("""long => {
        const row = document.querySelector('main table tbody tr');
        const copy = row.cloneNode(true);
        copy.id = 'long-row';
        copy.querySelectorAll('td').forEach(td => { td.textContent = 'BGP peer ' + long; });
        row.parentNode.appendChild(copy);
        // each cell's text must fit its box (not run out of it, clipped or not) and end inside the phone
        return [...copy.querySelectorAll('td')].map(td => [td.scrollWidth, td.clientWidth,
                                                          Math.round(td.getBoundingClientRect().right)]);
    }""", long)
    width = page.evaluate("document.documentElement.scrollWidth")
    keep_screenshot(page, ARTIFACTS / "phone-events-long-cell.png")
    assert width <= 390, f"/events is {width}px wide on a 390px phone"
    assert cells and all(scroll <= client + 1 and right <= 390 for scroll, client, right in cells), cells


def test_a_chart_that_could_not_load_says_so_and_draws_when_asked_again(page: Page) -> None:
    # the series API unreachable (a restart, a phone between networks): each chart says which it is
    page.route("**/api/series*", lambda route: route.abort())
    page.goto("/disks/ZA1042GK?range=24h")
    failed = page.locator("[data-chart] .chart-failed").first
    expect(failed).to_contain_text("could not load the chart", timeout=30_000)
    expect(failed.locator("button")).to_have_text("Try again")
    page.unroute("**/api/series*")
    at = page.evaluate("Array.from(document.querySelectorAll('[data-chart]'))"
                       ".findIndex(e => e.querySelector('.chart-failed'))")
    chart = page.locator("[data-chart]").nth(at)
    chart.locator(".chart-failed button").click()
    expect(chart.locator(".uplot")).to_be_visible(timeout=30_000)
    expect(chart.locator(".chart-failed")).to_have_count(0)


def test_two_nvme_serials_that_share_their_start_are_told_apart_on_the_bay_map(page: Page) -> None:
    """S5GXNF0R123456 and S5GXNF0R123457 in bays too narrow for them: cut at their start
    ("…GXNF0R123456"), not both at their end ("S5GXNF0R1234…")."""
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto("/disks")
    # whether they overflow here depends on the fonts; how they are cut when they do is what is checked
    cut = page.evaluate("""() => [...document.querySelectorAll('li.bay a.serial')]
        .filter(a => a.textContent.startsWith('S5GXNF0R')).map(a => [a.textContent, getComputedStyle(a).direction,
                                                                     getComputedStyle(a).textOverflow,
                                                                     getComputedStyle(a).overflowX])""")
    assert len(cut) == 2 and all(d == "rtl" and o == "ellipsis" and x == "hidden" for _, d, o, x in cut), cut


def test_on_a_phone_every_bays_serial_is_whole_and_the_disk_to_pull_is_said_in_one_piece(page: Page) -> None:
    """At 390 px the shelf's bays were cut to "ZA1049H…": not a serial anyone can match to a label."""
    from app.demo.story import CYCLE
    from tests.e2e.conftest import SPEED

    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/disks")
    pull = page.locator("main .callout", has_text="pull shelf 1, bay 7")
    deadline = time.monotonic() + 2 * CYCLE / SPEED  # bay 7 fails once a loop: two loops at the tests' speed
    while not pull.count() and time.monotonic() < deadline:
        time.sleep(1)
        page.reload()
    expect(pull).to_contain_text("ZA1049HK")
    serials = page.evaluate("""() => [...document.querySelectorAll('li.bay a.serial, li.bay small .nowrap')]
        .map(e => [e.textContent.trim(), e.scrollWidth, e.clientWidth || e.getBoundingClientRect().width,
                   e.getBoundingClientRect().right <= e.closest('li').getBoundingClientRect().right + 1])""")
    assert len(serials) >= 12 and any(t.startswith("ZA1049HK") for t, *_ in serials), serials
    assert all(scroll <= width + 1 and inside for _, scroll, width, inside in serials), serials
    cut = page.evaluate("""() => [...document.querySelectorAll('li.bay small')]
        .filter(s => s.querySelector('a.serial, .nowrap') && s.scrollWidth > s.clientWidth + 1)
        .map(s => s.textContent.trim())""")
    assert cut == [], cut  # nor its line cut after it with an ellipsis that reads as part of it
    lines = page.evaluate("""() => [...document.querySelectorAll('main .callout code')]
        .filter(c => c.textContent === 'ZA1049HK').map(c => c.getClientRects().length)""")
    assert lines == [1], lines  # on one line, not "ZA1049H" and "K"
    keep_screenshot(page, ARTIFACTS / "disks-phone.png")


@pytest.mark.parametrize("size", [(1440, 900), (1920, 1080)])
def test_the_wall_screen_fits_one_screen_with_nothing_scrolling(page: Page, size: tuple[int, int]) -> None:
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto("/?kiosk=1")
    page.wait_for_load_state("load")
    page.wait_for_timeout(300)
    tall, room, zoom = page.evaluate("[document.documentElement.scrollHeight, window.innerHeight, "
                                     "getComputedStyle(document.body).zoom]")
    assert tall <= room, f"the kiosk is {tall} px tall on a {room} px screen (zoom {zoom})"
    assert float(zoom) >= 0.5
    # every tile is on it, the fine ones as a line each
    assert page.locator("section.tiles a.tile").count() >= 20
    assert page.locator("section.tiles a.tile.ok p").first.is_hidden()


VIEWER = "viewer-walk"
# A viewer's page may hold these forms only: signing out, and their own account.
VIEWERS_FORMS = ("/logout", "/account/")
VIEWER_PAGES = ["/", "/host", "/disks", "/disks/all", "/disks/ZA1049HK", "/network", "/probes", "/status", "/power",
                "/heatpump", "/alerts", "/events", "/collectors", "/hosts", "/monitors", "/channels",
                "/entity/md_array/md0", "/h/ceph-node1/disks", "/account"]

# Every control on a page that changes something: a POST form's path, or an htmx attribute that sends.
CONTROLS = """(allowed) => [
    ...[...document.querySelectorAll('form')].filter(f => (f.method || 'get').toLowerCase() === 'post')
       .map(f => new URL(f.action, location.href).pathname)
       .filter(a => !allowed.some(p => a === p || (p.endsWith('/') && a.startsWith(p)))),
    ...[...document.querySelectorAll('[hx-post], [hx-put], [hx-delete]')].map(e => e.outerHTML.slice(0, 80))]"""


def test_an_admin_adds_a_viewer_on_the_users_page_who_then_sees_no_control_they_cannot_use(
        browser: Browser, server: str, page: Page) -> None:
    page.goto("/users")
    # a bad value first: it comes back beside its field, with the name kept
    page.fill("#add ~ form input[name=name]", VIEWER)
    page.fill("#add ~ form input[name=password]", "short-pw")
    page.fill("#add ~ form input[name=again]", "short-pw-2")
    page.click("#add ~ form button")
    expect(page.locator("#err-again")).to_have_text("the two passwords differ")
    assert page.input_value("#add ~ form input[name=name]") == VIEWER
    assert page.input_value("#add ~ form input[name=password]") == ""  # a password is never sent back
    page.fill("#add ~ form input[name=password]", "viewer-password")
    page.fill("#add ~ form input[name=again]", "viewer-password")
    page.click("#add ~ form button")
    expect(page.locator("main .callout[role=status]")).to_contain_text(f"{VIEWER} added as viewer.")
    keep_screenshot(page, ARTIFACTS / "users.png")

    ctx = browser.new_context(base_url=server, viewport={"width": 1440, "height": 900})
    viewer = ctx.new_page()
    viewer.goto("/login")
    viewer.fill("input[name=user]", VIEWER)
    viewer.fill("input[name=password]", "viewer-password")
    viewer.click("button[type=submit]", timeout=90_000)
    viewer.wait_for_url(server + "/", timeout=90_000)
    found = []
    for who, path in [(page, "/channels")] + [(viewer, p) for p in VIEWER_PAGES]:
        response = who.goto(path)
        assert response is not None and response.status == 200, path
        assert "text/html" in response.headers["content-type"], path
        controls = who.evaluate(CONTROLS, list(VIEWERS_FORMS))
        if who is page:  # the admin's page shows what the viewer's must not: the probe sees it
            assert any(c.startswith("/channels") for c in controls), controls
            continue
        found += [f"{path}: {c}" for c in controls]
        text = viewer.inner_text("main")
        assert "Traceback" not in text and not text.lstrip().startswith("{"), path
    assert found == [], "a viewer is shown controls they cannot use:\n" + "\n".join(found)
    for admin_only in ("/users", "/audit"):
        response = viewer.goto(admin_only)
        assert response is not None and response.status == 403 and "text/html" in response.headers["content-type"]
        expect(viewer.locator("main")).to_contain_text("for admins only")
    assert viewer.locator("nav#pages a[href='/users']").count() == 0
    keep_screenshot(viewer, ARTIFACTS / "viewer-alerts.png")
    ctx.close()


# Every form a person types into, each with a value the server must refuse: (page, the form, the
# values set, where the refusal shows, a value that must still be in the form afterwards). The
# browser's own checks (required, maxlength, type=number) are switched off first, as an older
# browser or a script sends it: the server's answer is what is tested.
BAD_FORMS = [
    ("/monitors?kind=tcp", "form.monitor", {"name": "nas-ssh", "host": "nas.lan", "port": "70000"},
     "#err-port", ("name", "nas-ssh")),
    ("/channels", "form.monitor", {"name": "phone", "url": "ntfy://ntfy.sh/rack", "quiet_hours": "late"},
     "#err-quiet_hours", ("name", "phone")),
    ("/alerts", "#new-silence form", {"rule": "", "subject": "", "reason": "moving house"},
     "#silence-refused", ("reason", "moving house")),
    ("/disks/ZA1000AK", "form.bay-label", {"label": "x" * 101}, "#err-label", None),
    ("/disks/ZA1000AK", "form.disk-notes", {"purchased": "", "rma": "R" * 101}, "#notes-refused", None),
    ("/users", "#add ~ form", {"name": "two words", "password": "long enough", "again": "long enough"},
     "#err-name", ("name", "two words")),
    ("/account", "form[action='/account/tokens']", {"name": "homeassistant", "expires": "soon"},
     "main .callout.failing", None),
]


@pytest.mark.parametrize("path, form, values, refusal, kept", BAD_FORMS,
                         ids=[f"{p}:{f}" for p, f, *_ in BAD_FORMS])
def test_every_form_refuses_a_bad_value_on_its_page_beside_the_field(
        page: Page, path: str, form: str, values: dict[str, str], refusal: str,
        kept: tuple[str, str] | None) -> None:
    page.goto(path)
    if form.startswith("#new-silence"):
        page.click("#new-silence summary")
    page.evaluate("""([form, values]) => {
        const f = document.querySelector(form); f.noValidate = true;
        for (const [name, value] of Object.entries(values)) {
          const el = f.elements[name]; el.removeAttribute('maxlength'); el.removeAttribute('pattern');
          if (el.type === 'number' || el.type === 'date') el.type = 'text';
          el.value = value;
        }}""", [form, values])
    with page.expect_navigation():
        page.locator(form).locator("button").last.click()
    body = page.inner_text("body")
    assert not body.lstrip().startswith("{") and "Traceback" not in body, body[:300]
    expect(page.locator(refusal)).to_be_visible()
    assert page.locator(refusal).inner_text().strip(), refusal
    if kept:
        assert page.locator(f"{form} [name={kept[0]}]").input_value() == kept[1]
    wide = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert wide[0] <= wide[1]


def test_a_charts_box_shows_its_title_while_its_data_is_on_the_way_and_its_lines_after(page: Page) -> None:
    held: list = []
    page.route("**/api/series*", lambda route: held.append(route))  # the answers wait, as on a loaded server
    page.goto("/host")
    first = page.locator("figure.chart").first
    title = first.get_attribute("data-title")
    expect(first.locator("p.chart-loading")).to_be_visible()
    expect(first.locator("p.chart-loading strong")).to_have_text(title or "")
    expect(first.locator("p.chart-loading")).to_contain_text("drawing the last")
    page.unroute("**/api/series*")  # the held answers go on (Playwright lets them through on unroute)
    for route in held:
        with contextlib.suppress(PlaywrightError):  # "already handled": let through by the unroute
            route.continue_()
    expect(first.locator("canvas").first).to_be_visible(timeout=60_000)
    assert first.locator("p.chart-loading").count() == 0
