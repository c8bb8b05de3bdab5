"""Issue 21: every shipped scenario's report answers its own question on the first screen, at a
phone's width (390 px), a laptop's (1400 px) and a wide screen's (1920 px), in headless Chromium:

- every chart is drawn, the console is clean and the page asks the network for nothing;
- nothing is wider than the viewport unless it sits in its own scroll area;
- the top 900 px hold every variant's verdict and the figure each expectation judges;
- no chart title (nor axis title) is clipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from rig.report.pages import SHORT_NAME
from tests.conftest import ROOT
from tests.report.conftest import assert_charts_drawn, wanted_screenshots

pytestmark = [pytest.mark.browser, pytest.mark.spark]

SCENARIOS = sorted(p.stem for p in (ROOT / "scenarios").glob("*.yaml"))
WIDTHS = (390, 1400, 1920)
FIRST_SCREEN = 900  # px

# Elements cut off. Out of the viewport, unless an ancestor scrolls them (overflow-x auto or
# scroll) or a plot draws them (plotly's own layers are sized to its box, which is checked;
# plotly also keeps a hidden node at x = -10000 to measure text); out of an ancestor that clips
# (overflow hidden or clip), which the viewport check alone never sees; and out of a scroll
# area that does not show it scrolls (the edge shadows of .table-wrap): with overlay scrollbars,
# and in the screenshots, the scrollbar is hidden until one scrolls, so the last columns just
# look cut (kraft-reassign-leader's fault-by-fault table at 1400 px).
_WIDE = """
var width = window.innerWidth, out = [], cut = new Set();
function clipper(el) {
  for (var p = el.parentElement; p; p = p.parentElement) {
    if (getComputedStyle(p).overflowX !== 'visible') { return p; }
  }
  return null;
}
function shows(box) {  // a shadow at each edge, fixed while the covers scroll with the table
  var style = getComputedStyle(box), layers = style.backgroundAttachment.split(', ');
  return style.backgroundImage.split('gradient(').length === 5 &&
         layers.join() === 'local,local,scroll,scroll';
}
function name(el, r, why) {
  return el.tagName + (el.id ? '#' + el.id : '') + '.' + el.className + ' ' +
         Math.round(r.left) + '..' + Math.round(r.right) + ' ' + why;
}
document.querySelectorAll('body *').forEach(function (el) {
  if (el.closest('.plot') && !el.classList.contains('plot')) { return; }
  if (el.closest('#js-plotly-tester')) { return; }  // plotly's text-measuring node, far left
  var r = el.getBoundingClientRect();
  if (!r.width || !r.height) { return; }
  var box = clipper(el), how = box && getComputedStyle(box).overflowX;
  var scrolls = how === 'auto' || how === 'scroll';
  if ((r.right > width + 1 || r.left < -1) && !scrolls) {
    out.push(name(el, r, 'out of the viewport'));
    return;
  }
  if (!box || (scrolls && shows(box))) { return; }
  var b = box.getBoundingClientRect();
  if (r.right > b.right + 1 || r.left < b.left - 1) {
    cut.add(el);
    if (cut.has(el.parentElement)) { return; }  // its container is listed already
    out.push(name(el, r, (scrolls ? 'out of a scroll area that does not show it, ' :
                                    'cut by ') + name(box, b, '')));
  }
});
return out;
"""

# Where the first screen shows each variant's verdict and each expectation's figure.
_FIRST = """
window.scrollTo(0, 0);
function where(el) {
  if (!el || !el.getClientRects().length) { return null; }
  var r = el.getBoundingClientRect();
  return {top: r.top + window.scrollY, bottom: r.bottom + window.scrollY, text: el.textContent};
}
var verdicts = {}, figures = {};
document.querySelectorAll('#first-screen [data-verdict]').forEach(function (el) {
  verdicts[el.dataset.verdict] = where(el);
});
document.querySelectorAll('#first-screen [data-expectation]').forEach(function (el) {
  var cell = el.closest('td, li');
  figures[el.dataset.expectation] = where(cell);
});
return {verdicts: verdicts, figures: figures};
"""

# Chart titles: page text above each plot, which must wrap inside its box rather than run out
# of it; a title plotly still draws itself must fit in its SVG; axis titles inside the plot.
_TITLES = """
var out = [];
document.querySelectorAll('.chart-title').forEach(function (el) {
  var r = el.getBoundingClientRect(), box = el.parentNode.getBoundingClientRect();
  if (el.scrollWidth > el.clientWidth + 1 || r.right > box.right + 1 || !el.textContent.trim()) {
    out.push('page title: ' + el.textContent);
  }
});
document.querySelectorAll('.plot .gtitle').forEach(function (el) {
  var svg = el.closest('svg').getBoundingClientRect(), r = el.getBoundingClientRect();
  if (el.textContent && (r.right > svg.right + 1 || r.left < svg.left - 1)) {
    out.push('plotly title: ' + el.textContent);
  }
});
// Axis titles inside their plot: the box must not cut the bottoms of the x title's letters.
document.querySelectorAll('.plot').forEach(function (plot) {
  var box = plot.getBoundingClientRect();
  plot.querySelectorAll('.xtitle, .ytitle').forEach(function (el) {
    var r = el.getBoundingClientRect();
    if (r.height && (r.bottom > box.bottom + 1 || r.top < box.top - 1 || r.left < box.left - 1)) {
      out.push('axis title of ' + plot.id + ': ' + el.textContent);
    }
  });
});
return {bad: out, titles: document.querySelectorAll('.chart-title').length,
        charts: document.querySelectorAll('[data-chart]').length};
"""


# Table cells holding just one of the names given, fault kinds and reassigned partitions, drawn on
# more than one line:
# "acks-" over "all", "network-" over "partition".
_BROKEN_NAMES = """
var names = new Set(arguments[0]), range = document.createRange();
return Array.from(document.querySelectorAll('td, th.variant, .fault-kind, .partition-name')).filter(
    function (el) {
  if (!names.has(el.textContent.trim()) && !el.matches('.fault-kind, .partition-name')) {
    return false;
  }
  var tops = new Set();  // the lines its text is on (a header's colour swatch is not text)
  var walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (var node = walk.nextNode(); node; node = walk.nextNode()) {
    range.selectNodeContents(node);
    Array.from(range.getClientRects()).forEach(function (r) { tops.add(Math.round(r.top)); });
  }
  return tops.size > 1;
}).map(function (el) { return el.closest('[id]').id + ': ' + el.textContent; });
"""


# Fault labels on a chart, as drawn at this width: none over another, none past its plot's
# edges (the page places them: rig/report/templates/_plots.html.j2).
_FAULT_LABELS = """
var out = [];
document.querySelectorAll('.plot').forEach(function (plot) {
  var notes = (plot.layout && plot.layout.annotations) || [], boxes = [];
  var area = plot.querySelector('.cartesianlayer .bg') || plot.querySelector('svg');
  var edge = area.getBoundingClientRect();
  notes.forEach(function (a, i) {
    if (a.name !== 'fault-label' || a.visible === false) { return; }
    var g = plot.querySelector('.annotation[data-index="' + i + '"] .annotation-text-g');
    if (!g) { return; }
    var r = g.getBoundingClientRect();
    if (r.left < edge.left - 1 || r.right > edge.right + 1) {
      out.push(plot.id + ': "' + a.text + '" past the plot');
    }
    boxes.forEach(function (b) {
      if (r.left < b.r.right - 1 && b.r.left < r.right - 1 && r.top < b.r.bottom - 1
          && b.r.top < r.bottom - 1) {
        out.push(plot.id + ': "' + a.text + '" over "' + b.text + '"');
      }
    });
    boxes.push({r: r, text: a.text});
  });
});
return out;
"""


@pytest.mark.parametrize("stem", SCENARIOS)
def test_the_first_screen_answers_the_scenario(
    chromium: Any, shipped: dict[str, Path], stem: str
) -> None:
    """Loaded at 390 px and at 1400 px; the 1400 px page then widened to 1920 px (both wide
    widths get the same page, only plotly re-fits the charts: a load each would cost a
    second report load per scenario for nothing the widening does not show)."""
    run_dir = shipped[stem]
    run = orjson.loads((run_dir / "run.json").read_bytes())
    summary = orjson.loads((run_dir / "summary.json").read_bytes())
    for width in WIDTHS:
        if width == 1920:
            charts = chromium.resize(width)
        else:
            charts = chromium.open(run_dir / "report.html", width=width)
        try:
            _answers(chromium, charts, run, summary)
            # A phone may break a long variant name at its hyphen, a screen none; a short name
            # (SHORT_NAME) and a fault's kind are whole at every width.
            names = [v for v in run["variants"] if width > 640 or len(v) <= SHORT_NAME]
            assert chromium.driver.execute_script(_BROKEN_NAMES, names) == []
            assert chromium.driver.execute_script(_FAULT_LABELS) == []
        except AssertionError as failure:
            raise AssertionError(f"at {width} px: {failure}") from failure
        shots = wanted_screenshots()
        if shots is not None and width == 1400:
            chromium.screenshot(shots / f"scenario-{stem}.png")


def _answers(chromium: Any, charts: list[dict[str, Any]], run: dict[str, Any],
             summary: dict[str, Any]) -> None:
    driver = chromium.driver
    assert_charts_drawn(charts)
    assert chromium.network_requests() == []

    assert driver.execute_script(_WIDE) == []
    assert driver.execute_script(
        "return document.documentElement.scrollWidth - window.innerWidth") <= 1

    first = driver.execute_script(_FIRST)
    for variant in run["variants"]:
        box = first["verdicts"].get(variant)
        assert box is not None, (variant, first["verdicts"])
        assert box["bottom"] <= FIRST_SCREEN, (variant, box)
    for i, expectation in enumerate(summary["expectations"]):
        box = first["figures"].get(str(i))
        assert box is not None, (expectation, first["figures"])
        assert box["bottom"] <= FIRST_SCREEN, (expectation, box)

    titles = driver.execute_script(_TITLES)
    assert titles["bad"] == []
    assert titles["titles"] == titles["charts"] > 0  # every chart has its title above it
    assert chromium.console_errors() == []


def test_an_expected_violation_reads_as_such_in_the_report_and_the_index(
    chromium: Any, shipped: dict[str, Path], tmp_path: Path
) -> None:
    """kip101-data-loss: hw-truncation loses a record as the scenario expects; neither page
    calls that a plain PASS, and the lost record is the first figure."""
    from rig.report import render_index

    run_dir = shipped["kip101-data-loss"]
    chromium.open(run_dir / "report.html", width=1400)
    driver = chromium.driver
    line = driver.find_element("css selector", "#verdicts li:first-child").text
    assert line.startswith("VIOLATION EXPECTED BY THE SCENARIO hw-truncation"), line
    assert "no-acked-loss" in line
    figures = driver.find_element("id", "first-figures").text
    assert figures.splitlines()[1:2] == ["Lost, acknowledged with any acks"], figures
    lanes = driver.execute_script(
        "return document.getElementById('chart-fault-timeline').layout.yaxis.categoryarray")
    assert sorted(lanes) == ["hw-truncation<br>test-0", "leader-epoch<br>test-0"]
    index = render_index([run_dir], tmp_path / "index.html")
    chromium.open(index, width=1400)
    badges = {el.get_attribute("data-verdict"): el.text for el in
              driver.find_elements("css selector", "table.matrix [data-verdict]")}
    assert badges == {"hw-truncation": "VIOLATION EXPECTED BY THE SCENARIO",
                      "leader-epoch": "PASS"}


def test_a_kraft_reassignment_reads_as_one_on_the_first_screen_and_in_the_fault_table(
    chromium: Any, shipped: dict[str, Path]
) -> None:
    """kraft-reassign-leader: the controller's PartitionChangeRecords move orders-0 from
    [0, 1, 2] led by 0 to [1, 2, 3] led by 1, and the first screen draws that lane (it used to
    say no partition changed); the reassignment is never undone, so the fault table gives it no
    heal time, and it recovers when the target is complete and in sync, not at its injection;
    it names the partition and the broker it added, and counts what that broker copied."""
    chromium.open(shipped["kraft-reassign-leader"] / "report.html", width=1400)
    driver = chromium.driver
    assert driver.find_elements("id", "first-calm") == []
    lanes = driver.execute_script(
        "var p = document.getElementById('chart-fault-timeline');"
        "return p.data.map(function (t) { return [t.name, t.y, t.text]; });")
    bars = [(name, y, text) for name, ys, texts in lanes if name.startswith("leader")
            for y, text in zip(ys, texts, strict=True)]
    assert bars == [("leader: broker 0", "orders-0", "L0 · ISR 0,1,2"),
                    ("leader: broker 0", "orders-0", "L0 · ISR 0,1,2"),
                    ("leader: broker 1", "orders-0", "L1 · ISR 1,2,3")], bars
    caption = driver.find_element("css selector", "#first-screen figcaption").text
    assert "the KRaft controller's partition records" in caption, caption
    (row,) = driver.find_elements("css selector", "#recovery-faults tbody tr")
    cells = [cell.text for cell in row.find_elements("css selector", "td")]
    assert cells == ["kraft-4.1", "reassign #0", "orders-0, adds broker 3", "10.000", "—",
                     "+0.003", "not undone", "10.003", "0.003", "319 KiB"], cells
