"""Report, comparison and index pages in real headless Chromium: every chart renders, the console
stays clean, nothing is fetched from the network, hostile text stays text, print and phone work.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import orjson
import pytest

from rig.report import render_comparison, render_index, render_report
from tests.report.conftest import HOSTILE, screenshot_dir, write_report_run

pytestmark = pytest.mark.browser


def _check_charts(state: list[dict[str, Any]], count: int) -> None:
    assert len(state) == count, state
    for chart in state:
        assert chart["svg"] >= 1 and chart["width"] > 200 and chart["height"] > 200, chart
        assert chart["traces"] >= 1, chart
        assert chart["points"] and all(n > 0 for n in chart["points"]), chart
        assert "SIMULATED" in chart["title"], chart
        assert chart["xtitle"] and chart["ytitle"], chart  # every axis says what and in what
        assert "(" in chart["xtitle"] and "(" in chart["ytitle"], chart  # … unit
        assert chart["caption"].startswith("What this shows:"), chart


def _no_sideways_scroll(browser: Any) -> None:
    """Nothing pushes the page sideways on a phone; wide tables scroll inside their box."""
    assert browser.driver.execute_script(
        "return document.documentElement.scrollWidth - window.innerWidth"
    ) <= 1


# Each chart's drawing: its box's width and height, and its first SVG layer's.
_DRAWN = """
return Array.from(document.querySelectorAll('.plot .svg-container')).map(function (box) {
  var b = box.getBoundingClientRect();
  var s = box.querySelector('svg.main-svg').getBoundingClientRect();
  return [Math.round(b.width), Math.round(b.height), Math.round(s.width), Math.round(s.height)];
});
"""


def _clean(browser: Any) -> None:
    assert browser.console_errors() == []
    assert browser.network_requests() == []


def test_the_harness_sees_console_errors_and_network_requests(
    chromium: Any, tmp_path: Path
) -> None:
    """The two checks below can fail: a page that logs an error and fetches an image."""
    page = tmp_path / "bad.html"
    page.write_text(
        "<!DOCTYPE html><title>bad</title><img src='http://127.0.0.1:9/x.png'>"
        "<script>console.error('boom')</script>",
        encoding="utf-8",
    )
    chromium.open(page)
    assert any("boom" in e["message"] for e in chromium.console_errors())
    assert "http://127.0.0.1:9/x.png" in chromium.network_requests()


def test_report_renders_offline_with_fault_markers(
    chromium: Any, report_run_with_faults: Path, tmp_path: Path
) -> None:
    page = render_report(report_run_with_faults)
    state = chromium.open(page)
    _check_charts(state, 6)  # five fetch charts and the bandwidth ranking
    timelines = [c for c in state if c["id"] in
                 ("chart-request-rate", "chart-response-rate", "chart-cumulative")]
    assert len(timelines) == 3 and all(c["shapes"] >= 3 for c in timelines), timelines
    driver = chromium.driver
    assert driver.find_element("css selector", ".sim-tag").text == "SIMULATED"
    # The hostile description is shown as text and ran nothing.
    assert HOSTILE in driver.find_element("css selector", ".description").text
    assert driver.execute_script("return document.querySelectorAll('script').length") == 3
    assert "<i>" in driver.find_element("css selector", "#faults").text
    _clean(chromium)
    shots = screenshot_dir(tmp_path)
    assert chromium.screenshot(shots / "report-full.png").stat().st_size > 50_000


def test_report_on_a_phone_and_in_print(
    chromium: Any, report_run_with_faults: Path, tmp_path: Path
) -> None:
    page = render_report(report_run_with_faults)
    state = chromium.open(page, width=390)
    _check_charts(state, 6)
    _no_sideways_scroll(chromium)
    shots = screenshot_dir(tmp_path)
    chromium.screenshot(shots / "report-narrow.png")
    _clean(chromium)

    # Printed on paper narrower than the charts were drawn: as the page is printed
    # (beforeprint), each drawing scales to the paper's width, whole and in proportion. Print
    # layout fires no resize event; a narrower emulated screen would (and plotly would redraw
    # at it), so plotly's resize handlers come off first, as for paper.
    chromium.open(page, width=1400)
    drawn = chromium.driver.execute_script(_DRAWN)
    chromium.driver.execute_script(
        "document.querySelectorAll('.js-plotly-plot').forEach(function (gd) {"
        "  window.removeEventListener('resize', gd._responsiveChartHandler); });")
    chromium.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    chromium.width = 760
    chromium._metrics(900)
    unfitted = chromium.driver.execute_script(_DRAWN)
    assert all(svg_w == w0 > 760 for (_, _, svg_w, _), (w0, *_) in
               zip(unfitted, drawn, strict=True)), unfitted  # the drawings run off the paper
    chromium.driver.execute_script("window.dispatchEvent(new Event('beforeprint'))")
    printed = chromium.driver.execute_script(_DRAWN)
    assert len(printed) == 6, printed
    for (box_w, box_h, svg_w, svg_h), (w0, h0, *_) in zip(printed, drawn, strict=True):
        assert 700 <= box_w <= 760 and box_h > 150, printed
        assert abs(svg_w - box_w) <= 1 and abs(svg_h - box_h) <= 1, printed
        assert abs(box_h / box_w - h0 / w0) < 0.01, (printed, drawn)
    chromium.screenshot(shots / "report-print.png")
    chromium.driver.execute_script("window.dispatchEvent(new Event('afterprint'))")
    assert chromium.driver.execute_script(
        "return document.querySelectorAll('svg.main-svg[viewBox]').length") == 0
    pdf = chromium.driver.execute_cdp_cmd(
        "Page.printToPDF", {"printBackground": True, "paperWidth": 8.27, "paperHeight": 11.69}
    )
    assert len(pdf["data"]) > 10_000


def test_comparison_renders_offline(
    chromium: Any, report_run_with_faults: Path, tmp_path: Path
) -> None:
    other = write_report_run(tmp_path / "seed-8", consumers=True)
    scenario = other / "scenario.yaml"
    scenario.write_text(scenario.read_text() + "seed: 8  # <script>alert(9)</script>\n")
    out = render_comparison([report_run_with_faults, other], tmp_path / "cmp" / "c.html")
    state = chromium.open(out)
    _check_charts(state, 4)
    driver = chromium.driver
    assert HOSTILE in driver.find_element("css selector", ".description").text
    diff = driver.find_element("css selector", "pre.diff").text
    assert "+seed: 8  # <script>alert(9)</script>" in diff  # shown as text, never run
    assert driver.execute_script("return document.querySelectorAll('script').length") == 3
    assert driver.find_elements("css selector", "td.changed")
    _clean(chromium)
    shots = screenshot_dir(tmp_path)
    chromium.screenshot(shots / "compare-full.png")
    _check_charts(chromium.open(out, width=390), 4)
    _no_sideways_scroll(chromium)
    chromium.screenshot(shots / "compare-narrow.png")
    _clean(chromium)


def test_index_renders_offline_and_links_work(
    chromium: Any, report_run_with_faults: Path, tmp_path: Path
) -> None:
    runs = tmp_path / "matrix"
    first = write_report_run(runs / "idle-fetch")
    second = write_report_run(runs / "idle-fetch-consumers", consumers=True)
    for run in (first, second):
        render_report(run)
    out = render_index([first, second], runs / "index.html")
    state = chromium.open(out)
    assert state == []  # no charts on the index: it opens at once
    driver = chromium.driver
    text = driver.find_element("tag name", "body").text
    assert HOSTILE in text
    assert driver.execute_script("return document.querySelectorAll('script').length") == 0
    links = driver.execute_script(
        "return Array.from(document.querySelectorAll('a[href$=\"report.html\"]'))"
        ".map(function (a) { return a.href; })"
    )
    assert links and all(link.startswith("file://") for link in links)
    _clean(chromium)
    shots = screenshot_dir(tmp_path)
    chromium.screenshot(shots / "index-full.png")
    chromium.open(out, width=390)
    _no_sideways_scroll(chromium)
    chromium.screenshot(shots / "index-narrow.png")
    driver.get(links[0])  # a link from the index opens that run's report
    assert chromium.wait_for_charts()
    assert "idle-fetch" in driver.title


# Each fault-list event name broken anywhere but just after a dot, marked where it breaks
# ("fault.inj|ect"): a line starts at a character whose box sits lower than the one before it.
_BROKEN_EVENTS = """
var cells = document.querySelectorAll('#faults tbody td:nth-child(3) code');
return Array.from(cells).map(function (el) {
  var walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT), node, text = '', tops = [];
  var range = document.createRange();
  while ((node = walk.nextNode())) {
    for (var i = 0; i < node.length; i++) {
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      text += node.data[i];
      tops.push(range.getBoundingClientRect().top);
    }
  }
  var marked = text[0] || '', bad = false;
  for (var j = 1; j < text.length; j++) {
    if (tops[j] > tops[j - 1] + 1) {
      marked += '|';
      bad = bad || text[j - 1] !== '.';
    }
    marked += text[j];
  }
  return {text: marked, bad: bad};
});
"""


def test_the_fault_list_never_breaks_an_event_name_inside_a_word(
    chromium: Any, tmp_path: Path
) -> None:
    """An event name, `fault.inject`, is never drawn as "fault.inj" over "ect" (as at 1400 px
    beside zombie-leader's long descriptions): on a screen it stays whole, on a phone it may
    break after its dot."""
    run = write_report_run(tmp_path / "run", faults=True)
    faults = orjson.loads((run / "metrics" / "faults.json").read_bytes())
    long = "broker 2 loses ZooKeeper and the other brokers; clients still reach it"
    faults += [{"variant": variant, "fault": 0, "t_ms": 10_000.0, "seq": 9034,
                "event": "fault.inject", "broker": None, "short": "network-partition",
                "label": f"network-partition injected (nodes 2, zk, 0, 1): {long}"}
               for variant in ("v6", "v7")]
    (run / "metrics" / "faults.json").write_bytes(orjson.dumps(faults))
    page = render_report(run)
    for width in (1400, 390):
        chromium.open(page, width=width)
        events = chromium.driver.execute_script(_BROKEN_EVENTS)
        assert sorted(e["text"].replace("|", "") for e in events) == sorted(
            f["event"] for f in faults), width
        assert [e["text"] for e in events if e["bad"]] == [], width
        if width == 1400:
            assert [e["text"] for e in events if "|" in e["text"]] == []
        _no_sideways_scroll(chromium)


# Each table that scrolls sideways, text and badges hidden so only backgrounds are left: where its
# header row's and each shown body row's middles lie, on the right edge of the scroll area (in its
# 12 px shadow) and 40 px in from it (outside); the page scrolled to show it.
_SHADOW_POINTS = """
if (!document.getElementById('backgrounds-only')) {
  var style = document.createElement('style');
  style.id = 'backgrounds-only';
  style.textContent = '.table-wrap th, .table-wrap td { color: transparent !important; }' +
                      '.table-wrap th *, .table-wrap td * { visibility: hidden; }';
  document.head.appendChild(style);
}
// (A table less than the 40 px white cover wider than its box shows a fainter shadow: by design.)
var wraps = Array.from(document.querySelectorAll('.table-wrap')).filter(function (el) {
  return el.scrollWidth > el.clientWidth + 40 && el.querySelector('thead');
});
if (!wraps.length) { return [0, []]; }
var wrap = wraps[arguments[0]];
// Centred, or from its top when taller than the window: its header must be in the screenshot.
wrap.scrollIntoView({block: wrap.offsetHeight > window.innerHeight ? 'start' : 'center'});
var box = wrap.getBoundingClientRect();
var rows = [wrap.querySelector('thead tr')].concat(Array.from(wrap.querySelectorAll('tbody tr'))
  .filter(function (row) {  // those in the screenshot
    var r = row.getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight; }));
return [wraps.length].concat(rows.map(function (row) {
  var r = row.getBoundingClientRect(), y = Math.round((r.top + r.bottom) / 2);
  return [[Math.round(box.right) - 3, y], [Math.round(box.right) - 40, y]];
}));
"""

# The same table (`arguments[0]`) scrolled `arguments[1]` px, after two frames (a scroll-driven
# animation follows the scroll on the next one): the opacity of its held first cell's shadow
# (::after), and where each shown row's middle lies just right of the held column (in its 12 px
# shadow) and 40 px right of it (outside). A table without a held column: null.
_HELD_POINTS = """
var done = arguments[arguments.length - 1], px = arguments[1];
var wraps = Array.from(document.querySelectorAll('.table-wrap')).filter(function (el) {
  return el.scrollWidth > el.clientWidth + 40 && el.querySelector('thead');
});
var wrap = wraps[arguments[0]], head = wrap.querySelector('thead tr');
if (wrap.querySelector('table').classList.contains('matrix')
    || getComputedStyle(head.firstElementChild).position !== 'sticky') {
  done(null); return;
}
wrap.scrollLeft = px;
requestAnimationFrame(function () { requestAnimationFrame(function () {
  var held = head.firstElementChild.getBoundingClientRect();
  var rows = [head].concat(Array.from(wrap.querySelectorAll('tbody tr')).filter(function (row) {
    var r = row.getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight; }));
  done([Number(getComputedStyle(head.firstElementChild, '::after').opacity)].concat(
    rows.map(function (row) {
      var r = row.getBoundingClientRect(), y = Math.round((r.top + r.bottom) / 2);
      return [[Math.round(held.right) + 3, y], [Math.round(held.right) + 40, y]];
    })));
}); });
"""

# The colour of each point [x, y] of a PNG screenshot (base64), read through a canvas.
_PIXELS = """
var done = arguments[arguments.length - 1], points = arguments[1], img = new Image();
img.onload = function () {
  var canvas = document.createElement('canvas');
  canvas.width = img.width;
  canvas.height = img.height;
  var g = canvas.getContext('2d');
  g.drawImage(img, 0, 0);
  done(points.map(function (p) {
    return Array.from(g.getImageData(p[0], p[1], 1, 1).data.slice(0, 3));
  }));
};
img.src = 'data:image/png;base64,' + arguments[0];
"""


def assert_edge_shadows(chromium: Any, page: Path) -> int:
    """Open `page` at 390 px: every table that scrolls sideways shows its right edge's shadow
    over its header and over every body row on the screen (on the edge darker than 40 px in),
    and away from the edge its header keeps var(--panel), #f9fafb. Scrolled 60 px, a table with
    a held first column shows a shadow right of it down the same rows (the scroll area's own
    left shadow lies beneath the held column); not scrolled, none. Returns how many tables
    scroll."""
    chromium.open(page, width=390)
    driver = chromium.driver
    driver.set_script_timeout(10)
    index, count = 0, 1  # the first call counts the tables that scroll
    while index < count:
        count, *rows = driver.execute_script(_SHADOW_POINTS, index)
        assert count >= 1
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})["data"]
        pixels = driver.execute_async_script(_PIXELS, shot, [p for row in rows for p in row])
        (h_edge, h_in), *body = zip(pixels[::2], pixels[1::2], strict=True)
        for row, (b_edge, b_in) in enumerate(body):  # the shadow is there, on every row
            assert sum(b_in) - sum(b_edge) >= 15, (index, row, b_edge, b_in)
        assert sum(h_in) - sum(h_edge) >= 15, (index, h_edge, h_in)  # … over the header too
        assert h_in == [0xF9, 0xFA, 0xFB], (index, h_in)
        if driver.execute_async_script(_HELD_POINTS, index, 0) is not None:
            _assert_held_shadow(driver, index)
        index += 1
    return count


def _assert_held_shadow(driver: Any, index: int) -> None:
    """Table `index` (of _SHADOW_POINTS') scrolled 60 px shows the shadow right of its held
    column down every shown row; scrolled back, none (its opacity 0). On a busy machine a
    capture can miss it: fetch-versions-bandwidth's recovery headline, its top two rows
    unshadowed with the animation's opacity already 1, in the suite's clean-clone run and once
    in ten runs beside two busy loops (not in 15 quiet ones; the cause is not pinned down), and
    a second capture showed it. So a miss is measured again, up to three times; CSS without
    the shadow fails every time."""
    for _ in range(3):
        opacity, *rows = driver.execute_async_script(_HELD_POINTS, index, 60)
        assert opacity == 1, (index, opacity)
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})["data"]
        pixels = driver.execute_async_script(_PIXELS, shot, [p for row in rows for p in row])
        pairs = list(zip(pixels[::2], pixels[1::2], strict=True))
        unshadowed = [(row, edge, away) for row, (edge, away) in enumerate(pairs)
                      if sum(away) - sum(edge) < 15]
        if not unshadowed:
            break
        driver.execute_async_script(_HELD_POINTS, index, 0)
    assert not unshadowed, ("held", index, unshadowed)
    assert driver.execute_async_script(_HELD_POINTS, index, 0)[0] == 0, index


def test_a_table_that_scrolls_shows_its_edge_shadow_over_its_header_too(
    chromium: Any, report_run: Path
) -> None:
    """The shadow on the right edge of a .table-wrap says more columns lie beyond; the header
    row's cells must not paint it over (they did: an opaque var(--panel)). Here one table
    scrolls, bandwidth-ranking; test_report_browser_scenarios.py checks the highlighted rows of
    a headline table with six variants."""
    assert assert_edge_shadows(chromium, render_report(report_run)) == 1


def test_the_safety_checks_are_a_card_per_variant_on_a_phone(
    chromium: Any, report_run: Path
) -> None:
    """At 390 px each variant's checks read top to bottom (its name, then each cell under the
    one before, named by its column), in the screen's width; at 1400 px they are a table row."""
    page = render_report(report_run)
    cells = """
    var table = document.getElementById('checks'), wrap = table.parentElement;
    return {table: table.getBoundingClientRect().width, wrap: wrap.clientWidth,
            rows: Array.from(table.querySelectorAll('tbody tr')).map(function (tr) {
              return Array.from(tr.children).map(function (td) {
                var r = td.getBoundingClientRect();
                return {top: r.top, bottom: r.bottom, left: r.left,
                        label: getComputedStyle(td, '::before').content};
              });
            })};
    """
    chromium.open(page, width=390)
    narrow = chromium.driver.execute_script(cells)
    assert narrow["table"] <= narrow["wrap"] + 1, narrow
    assert len(narrow["rows"]) == 2
    for row in narrow["rows"]:
        assert all(b["top"] >= a["bottom"] - 1 for a, b in pairwise(row)), row
        assert [c["label"] for c in row[1:]] == ['"Result"', '"Checkers"', '"Violations"']
    chromium.open(page, width=1400)
    wide = chromium.driver.execute_script(cells)
    for row in wide["rows"]:
        assert len({round(c["top"]) for c in row}) == 1, row  # one row, side by side
        assert all(b["left"] > a["left"] for a, b in pairwise(row)), row
