"""Rendering report.html from a synthetic run directory (no browser, no Spark)."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

from rig.report import render_report
from rig.report.charts.figure import plotly_text

COMMAND = "rig run scenarios/idle-fetch.yaml --seed 7 --out 'reports/idle fetch'"


def _page(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _without_plotly(page: str) -> str:
    """The page minus the inlined plotly.js, which is the only very large script."""
    scripts = re.findall(r"<script>(.*?)</script>", page, flags=re.S)
    biggest = max(scripts, key=len)
    return page.replace(biggest, "")


def _figures(page: str) -> dict[str, Any]:
    found = re.search(
        r'<script type="application/json" id="rig-figures">(.*?)</script>', page, flags=re.S
    )
    assert found
    return orjson.loads(found.group(1))


def test_default_output_path_and_no_temp_files_left(report_run: Path) -> None:
    out = render_report(report_run)
    assert out == report_run / "report.html"
    assert out.stat().st_size > 1_000_000  # plotly.js is inlined
    assert not [p for p in report_run.iterdir() if p.name.endswith(".tmp")]


def test_custom_output_path(report_run: Path, tmp_path: Path) -> None:
    out = render_report(report_run, tmp_path / "elsewhere" / "r.html")
    assert out == tmp_path / "elsewhere" / "r.html"
    assert out.exists()
    assert not (report_run / "report.html").exists()


def test_user_text_is_escaped(report_run: Path) -> None:
    page = _without_plotly(_page(render_report(report_run)))
    assert "<script>alert(" not in page
    assert "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt; &amp; friends" in page
    # The resolved scenario and checker violations are user-influenced text too.
    assert "&lt;/pre&gt;&lt;script&gt;alert(2)&lt;/script&gt;" in page
    assert "went backwards &lt;b&gt;" in page


def test_simulated_label_and_reproduce_block(report_run: Path) -> None:
    page = _page(render_report(report_run))
    body = _without_plotly(page)
    assert body.count("SIMULATED") >= 3
    assert "(simulated)" in re.search(r"<title>(.*?)</title>", body).group(1)  # type: ignore[union-attr]
    command = re.search(r'<code id="reproduce-command">(.*?)</code>', body, flags=re.S)
    assert command and html.unescape(command.group(1)) == COMMAND
    assert "ab" * 32 in body  # scenario hash
    assert ">0.1.0<" in body and ">7<" in body  # rig version, seed


def test_headline_table_compares_variants(report_run: Path) -> None:
    body = _without_plotly(_page(render_report(report_run)))
    text = html.unescape(re.sub(r"<[^>]+>", " ", body))
    text = re.sub(r"\s+", " ", text)
    assert "v6 is 364.6× v7" in text
    assert "First request body bytes 12,031 (11.7 KiB) 12,043 (11.8 KiB)" in text
    assert "Steady request body (p50) bytes 12,031 (11.7 KiB) 33" in text
    assert "Session strategy sessionless incremental" in text
    assert "Fetch version 6 7" in text
    assert "Request rate body bytes/s 48,124 B/s (47.0 KiB/s) 212 B/s" in text
    assert "364.6× 1.0× (smallest)" in text
    assert "Consumer fetches" not in text  # no consumer requests in this run


def test_consumer_table_only_with_consumers(report_run_with_consumers: Path) -> None:
    body = _without_plotly(_page(render_report(report_run_with_consumers)))
    assert 'id="headline-consumer"' in body
    assert "v6 · consumers" in orjson.dumps(_figures(body)).decode()


def test_expectations_and_checks_are_three_state(report_run: Path) -> None:
    page = _without_plotly(_page(render_report(report_run)))
    start = page.index('<section id="expectations">')
    body = page[start:page.index("</section>", start)]
    assert body.count('<span class="badge pass">PASS</span>') == 3  # 2 expectations + v6 checks
    assert body.count('<span class="badge fail">FAIL</span>') == 2
    assert body.count('<span class="badge unknown">UNKNOWN</span>') == 1
    # The first screen: v6 passes its checks, v7 fails them (no expectation names a variant).
    first = page[page.index('<section id="first-screen"'):start]
    assert first.count('<span class="badge pass">PASS</span>') == 1
    assert first.count('<span class="badge fail">FAIL</span>') == 1
    assert 'id="overall-status">FAILED<' in page


def test_charts_are_embedded_as_json_with_a_div_each(report_run: Path) -> None:
    page = _page(render_report(report_run))
    figures = _figures(page)
    # Five fetch charts and, with two variants, the bandwidth ranking.
    assert len(figures) == 6 and "chart-bandwidth-ranking" in figures
    for chart_id, figure in figures.items():
        assert f'id="{chart_id}"' in page
        assert figure["data"] and all(trace["y"] for trace in figure["data"])
        assert "SIMULATED" in figure["layout"]["title"]["text"]


def test_offline_no_external_resources(report_run: Path) -> None:
    page = _page(render_report(report_run))
    body = _without_plotly(page)
    assert not re.search(r"<script[^>]+src=", page)
    assert not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", body)
    assert "@import" not in body and "url(" not in body
    assert "Plotly" in page and "plotly.js v" in page


def test_hostile_variant_names_cannot_break_out_of_the_json(report_run: Path) -> None:
    run = orjson.loads((report_run / "run.json").read_bytes())
    evil = "</script><script>alert(3)</script>"
    run["variants"] = {evil: run["variants"]["v6"], **run["variants"]}
    (report_run / "run.json").write_bytes(orjson.dumps(run))
    rows = orjson.loads((report_run / "metrics" / "fetch_sizes.json").read_bytes())
    rows.append(
        {"variant": evil, "role": "follower", "kind": "request", "body_bytes": 5, "count": 1}
    )
    (report_run / "metrics" / "fetch_sizes.json").write_bytes(orjson.dumps(rows))
    page = _page(render_report(report_run))
    assert "<script>alert(3)" not in page
    names = [t["name"] for t in _figures(page)["chart-request-sizes"]["data"]]
    # Escaped for plotly, which decodes entities: the legend shows the name as typed.
    assert evil not in names and html.unescape(plotly_text(evil)) == evil
    assert plotly_text(evil) in names


def test_missing_files_and_keys_are_tolerated(tmp_path: Path) -> None:
    run_dir = tmp_path / "bare"
    run_dir.mkdir()
    body = _without_plotly(_page(render_report(run_dir)))
    assert "Not found in the run directory" in body
    assert "run.json" in body and "summary.json" in body
    assert 'id="overall-status">UNKNOWN<' in body
    assert _figures(body) == {}

    (run_dir / "run.json").write_bytes(orjson.dumps({"scenario": "x", "variants": {"a": {}}}))
    (run_dir / "summary.json").write_bytes(orjson.dumps({"variants": {"a": {"fetch": {}}}}))
    body = _without_plotly(_page(render_report(run_dir)))
    assert "Follower fetches" in body


def test_render_never_imports_pyspark(report_run: Path) -> None:
    code = (
        "import sys; from pathlib import Path; from rig.report import render_report; "
        f"render_report(Path({str(report_run)!r})); "
        "assert 'pyspark' not in sys.modules; "
        # The report reads the analysis's tables and shares its bucketing rule, nothing else.
        "assert {m for m in sys.modules if m.startswith('rig.analysis')} <= "
        "{'rig.analysis', 'rig.analysis.buckets'}, sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[2])


def test_fault_table_and_markers(report_run_with_faults: Path) -> None:
    page = _page(render_report(report_run_with_faults))
    body = _without_plotly(page)
    assert 'id="faults"' in body
    assert "network partition &lt;i&gt;(brokers 0, 1)&lt;/i&gt;" in body  # escaped
    figures = _figures(page)
    assert all("shapes" in figures[c]["layout"] for c in
               ("chart-request-rate", "chart-response-rate", "chart-cumulative"))


def test_no_fault_section_without_faults(report_run: Path) -> None:
    assert 'id="faults"' not in _without_plotly(_page(render_report(report_run)))


def test_every_chart_says_what_it_shows(report_run_with_faults: Path) -> None:
    body = _without_plotly(_page(render_report(report_run_with_faults)))
    figures = body.count('<figure class="chart"')
    assert figures == 6  # the five fetch charts and the bandwidth ranking
    assert body.count("<figcaption><strong>What this shows:</strong>") == figures


def test_long_scenarios_and_many_expectations_are_capped(report_run: Path) -> None:
    from rig.report.render import MAX_EXPECTATIONS_SHOWN, MAX_SCENARIO_LINES

    (report_run / "scenario.yaml").write_text(
        "".join(f"line{i}: x\n" for i in range(MAX_SCENARIO_LINES + 500)), encoding="utf-8")
    summary = orjson.loads((report_run / "summary.json").read_bytes())
    summary["expectations"] = [{"expect": f"e{i}", "value": i, "ok": True}
                               for i in range(MAX_EXPECTATIONS_SHOWN + 7)]
    (report_run / "summary.json").write_bytes(orjson.dumps(summary))
    body = _without_plotly(_page(render_report(report_run)))
    assert f"line{MAX_SCENARIO_LINES - 1}: x" in body
    assert f"line{MAX_SCENARIO_LINES}: x" not in body
    assert f"The first {MAX_SCENARIO_LINES} of {MAX_SCENARIO_LINES + 500} lines" in body
    assert "and 7 more in summary.json" in body


def test_a_million_row_run_renders_fast(tmp_path: Path) -> None:
    """A long run: the coarse timeline keeps the page small whatever the per-second table."""
    import time

    from rig.analysis.timeline import fetch_timeline
    from tests.report.conftest import write_report_run

    run = write_report_run(tmp_path / "long")
    seconds = 86_400
    rows = [{"variant": v, "role": "follower", "broker": b, "second": s, "requests": 2,
             "responses": 2, "request_bytes": 66 if v == "v7" else 24_062,
             "response_bytes": 28, "wire_request_bytes": 0, "wire_response_bytes": 0}
            for v in ("v6", "v7") for b in range(6) for s in range(seconds)]
    assert len(rows) > 1_000_000
    run_json = orjson.loads((run / "run.json").read_bytes())
    for v in ("v6", "v7"):
        run_json["variants"][v]["duration_ms"] = seconds * 1000
    (run / "run.json").write_bytes(orjson.dumps(run_json))
    timeline = fetch_timeline(rows, {"v6": seconds * 1000, "v7": seconds * 1000}, ["v6", "v7"])
    (run / "metrics" / "fetch_timeline.json").write_bytes(orjson.dumps(timeline))
    (run / "metrics" / "fetch_timeseries.json").write_bytes(b"[" + b"0," * 10 + b"0]")
    del rows
    started = time.perf_counter()
    page = render_report(run)
    assert time.perf_counter() - started < 5
    figures = _figures(_page(page))
    assert all(len(t["x"]) <= 2000 for f in figures.values() for t in f["data"])
    assert page.stat().st_size < 6_000_000  # plotly.js (4.6 MB) plus a little
