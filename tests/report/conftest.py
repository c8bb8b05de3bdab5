"""A synthetic run directory for report tests: run.json, summary.json, metrics/, scenario.yaml.

Numbers follow the seed measurement (two brokers following each other, 500 partitions each, two
fetches per second per broker): v6 sends 12031-byte requests, v7 one 12043-byte full fetch per
broker and then 33-byte incremental ones. Written by hand, no Spark involved.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

HOSTILE = "Idle cluster <script>alert('pwned')</script> & friends"
COMMAND = "rig run scenarios/idle-fetch.yaml --seed 7 --out 'reports/idle fetch'"
DURATION_S = 300
SIZES = {"v6": (12_031, 12_031), "v7": (12_043, 33)}  # (first, steady) request body bytes
RESPONSE = {"v6": (19_008, 19_008), "v7": (19_020, 14)}


def _series(variant: str, consumers: bool) -> tuple[list[dict], list[dict], dict[str, Any]]:
    """Timeseries rows, size rows and the fetch summary of one variant."""
    first, steady = SIZES[variant]
    r_first, r_steady = RESPONSE[variant]
    rows, req_sizes, resp_sizes = [], [], []
    for broker in (0, 1):
        for second in range(DURATION_S):
            reqs = [first, steady] if second == 0 else [steady, steady]
            resps = [r_first, r_steady] if second == 0 else [r_steady, r_steady]
            req_sizes += reqs
            resp_sizes += resps
            rows.append(
                {
                    "variant": variant,
                    "role": "follower",
                    "broker": broker,
                    "second": second,
                    "requests": 2,
                    "responses": 2,
                    "request_bytes": sum(reqs),
                    "response_bytes": sum(resps),
                    "wire_request_bytes": sum(reqs) + 2 * 35,
                    "wire_response_bytes": sum(resps) + 2 * 12,
                }
            )
    sizes = []
    for kind, values in (("request", req_sizes), ("response", resp_sizes)):
        for size in sorted(set(values)):
            sizes.append(
                {
                    "variant": variant,
                    "role": "follower",
                    "kind": kind,
                    "body_bytes": size,
                    "count": values.count(size),
                }
            )

    def stats(values: list[int]) -> dict[str, int]:
        ordered = sorted(values)
        return {
            "total": sum(values),
            "min": ordered[0],
            "max": ordered[-1],
            "p50": ordered[(len(ordered) - 1) // 2],
        }

    follower = {
        "requests": len(req_sizes),
        "responses": len(resp_sizes),
        "full_requests": 2 if variant == "v7" else len(req_sizes),
        "incremental_requests": len(req_sizes) - 2 if variant == "v7" else 0,
        "request_bytes": stats(req_sizes),
        "response_bytes": stats(resp_sizes),
        "first_request_bytes": first,
        "request_bytes_per_second": sum(req_sizes) / DURATION_S,
        "response_bytes_per_second": sum(resp_sizes) / DURATION_S,
    }
    empty = {"total": 0, "min": None, "max": None, "p50": None}
    consumer: dict[str, Any] = {
        "requests": 0,
        "responses": 0,
        "full_requests": 0,
        "incremental_requests": 0,
        "request_bytes": empty,
        "response_bytes": empty,
        "first_request_bytes": None,
        "request_bytes_per_second": 0.0,
        "response_bytes_per_second": 0.0,
    }
    if consumers:
        c_sizes = [900 if s % 10 == 0 else 120 for s in range(DURATION_S)]
        for second, size in enumerate(c_sizes):
            rows.append(
                {
                    "variant": variant,
                    "role": "consumer",
                    "broker": 0,
                    "second": second,
                    "requests": 1,
                    "responses": 1,
                    "request_bytes": size,
                    "response_bytes": 4_000,
                    "wire_request_bytes": size + 40,
                    "wire_response_bytes": 4_012,
                }
            )
        for size in sorted(set(c_sizes)):
            sizes.append(
                {
                    "variant": variant,
                    "role": "consumer",
                    "kind": "request",
                    "body_bytes": size,
                    "count": c_sizes.count(size),
                }
            )
        sizes.append(
            {
                "variant": variant,
                "role": "consumer",
                "kind": "response",
                "body_bytes": 4_000,
                "count": DURATION_S,
            }
        )
        consumer = {
            **consumer,
            "requests": DURATION_S,
            "responses": DURATION_S,
            "full_requests": DURATION_S,
            "request_bytes": stats(c_sizes),
            "response_bytes": stats([4_000] * DURATION_S),
            "first_request_bytes": 900,
            "request_bytes_per_second": sum(c_sizes) / DURATION_S,
            "response_bytes_per_second": 4_000.0,
        }
    return rows, sizes, {"follower": follower, "consumer": consumer}


FAULTS = [
    {"variant": "v7", "t_ms": 60_000.0, "seq": 900, "event": "broker.crash", "broker": 1,
     "label": "broker 1 crashed", "short": "b1 crash", "details": {"broker": 1}},
    {"variant": "v7", "t_ms": 90_500.0, "seq": 1200, "event": "broker.restart", "broker": 1,
     "label": "broker 1 restarted", "short": "b1 restart", "details": {"broker": 1}},
    {"variant": "v6", "t_ms": 200_000.0, "seq": 5000, "event": "fault.network_partition",
     "broker": None, "label": "network partition <i>(brokers 0, 1)</i>",
     "short": "network partition", "details": {"brokers": [0, 1]}},
]


def write_report_run(
    root: Path, *, consumers: bool = False, faults: bool = False, timeline: bool = False
) -> Path:
    """Write a complete synthetic run directory under `root` and return it.

    `faults` adds metrics/faults.json (a crash and restart in v7, a partition in v6);
    `timeline` adds the coarse metrics/fetch_timeline.json the analysis writes today.
    """
    root.mkdir(parents=True, exist_ok=True)
    timeseries, sizes, variants = [], [], {}
    for variant in ("v6", "v7"):
        rows, size_rows, fetch = _series(variant, consumers)
        timeseries += rows
        sizes += size_rows
        variants[variant] = {"fetch": fetch}
    variants["v6"]["checks"] = {"ok": True, "violations": []}
    variants["v7"]["checks"] = {
        "ok": False,
        "violations": [{"message": "high watermark went backwards <b>", "broker": 1}],
    }
    run = {
        "scenario": "idle-fetch",
        "description": HOSTILE,
        "seed": 7,
        "rig_version": "0.1.0",
        "scenario_sha256": "ab" * 32,
        "command": COMMAND,
        "variants": {
            "v6": {
                "duration_ms": DURATION_S * 1000,
                "fetch_version": 6,
                "strategies": {"fetch_session": "sessionless", "placement": "kafka"},
            },
            "v7": {
                "duration_ms": DURATION_S * 1000,
                "fetch_version": 7,
                "strategies": {"fetch_session": "incremental", "placement": "kafka"},
            },
        },
    }
    summary = {
        "scenario": "idle-fetch",
        "seed": 7,
        "rig_version": "0.1.0",
        "variants": variants,
        "expectations": [
            {"expect": "v6 follower request p50 == 12031 bytes", "value": 12031, "ok": True},
            {"expect": "v7 steady request <= 40 bytes", "value": 33, "ok": True},
            {"expect": "v7 costs < 1% of v6", "value": 0.0526, "ok": False},
            {"expect": "max recovery < 30 s", "value": None, "ok": None},
        ],
    }
    (root / "metrics").mkdir(exist_ok=True)
    (root / "run.json").write_bytes(orjson.dumps(run))
    (root / "summary.json").write_bytes(orjson.dumps(summary))
    (root / "metrics" / "fetch_timeseries.json").write_bytes(orjson.dumps(timeseries))
    (root / "metrics" / "fetch_sizes.json").write_bytes(orjson.dumps(sizes))
    if faults:
        (root / "metrics" / "faults.json").write_bytes(orjson.dumps(FAULTS))
    if timeline:
        from rig.analysis.timeline import fetch_timeline

        durations = {v: DURATION_S * 1000 for v in ("v6", "v7")}
        rows = fetch_timeline(timeseries, durations, ["v6", "v7"])
        (root / "metrics" / "fetch_timeline.json").write_bytes(orjson.dumps(rows))
    (root / "scenario.yaml").write_text(
        'name: idle-fetch\ndescription: "</pre><script>alert(2)</script>"\n'
        "brokers: 2\ntopics:\n  - name: test\n    partitions: 1000\n    replication_factor: 2\n",
        encoding="utf-8",
    )
    return root


@pytest.fixture
def report_run(tmp_path: Path) -> Path:
    return write_report_run(tmp_path / "run")


@pytest.fixture
def report_run_with_consumers(tmp_path: Path) -> Path:
    return write_report_run(tmp_path / "run-consumers", consumers=True)


@pytest.fixture
def report_run_with_faults(tmp_path: Path) -> Path:
    return write_report_run(tmp_path / "run-faults", faults=True, timeline=True)


# Headless Chromium for the browser tests ------------------------------------------------------

# Where a browser and its driver are looked for, first found wins: RIG_CHROME / RIG_CHROMEDRIVER
# when set, then Debian's chromium, then Google Chrome (what GitHub's ubuntu-latest runners have,
# with chromedriver on PATH and in $CHROMEWEBDRIVER). Ubuntu's `chromium-browser` is a snap stub
# that does not run in CI, so it is never picked.
BROWSERS = ("/usr/bin/chromium", "chromium", "google-chrome", "google-chrome-stable")
DRIVERS = ("/usr/bin/chromedriver", "chromedriver")
WIDTH, HEIGHT = 1280, 1600

_CHART_STATE = """
return Array.from(document.querySelectorAll('[data-chart]')).map(function (el) {
  var svg = el.querySelector('svg.main-svg');
  var box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
  var traces = el.querySelectorAll('.main-svg .trace');
  var points = (el.data || []).map(function (t) { return (t.y || []).length; });
  var xtitle = (el.querySelector('.xtitle') || {}).textContent || '';
  var ytitle = (el.querySelector('.ytitle') || {}).textContent || '';
  var caption = (el.parentNode.querySelector('figcaption') || {}).textContent || '';
  return {id: el.id, svg: el.querySelectorAll('.main-svg').length, width: box.width,
          height: box.height, traces: traces.length, points: points, xtitle: xtitle,
          ytitle: ytitle, caption: caption,
          title: (el.parentNode.querySelector('.chart-title') || el.querySelector('.gtitle')
                  || {}).textContent || '',
          shapes: el.querySelectorAll('.shapelayer path').length};
});
"""


def _first(env: str, names: tuple[str, ...], extra: tuple[str, ...] = ()) -> str | None:
    """The path in $env if set, else the first of `names` (absolute, or looked up on PATH)."""
    if os.environ.get(env):
        return os.environ[env]
    for name in (*names, *extra):
        found = name if Path(name).is_absolute() and Path(name).exists() else shutil.which(name)
        if found:
            return found
    return None


def find_browser() -> tuple[str | None, str | None]:
    """(browser binary, chromedriver) for the browser tests; None where none is installed."""
    webdriver_dir = os.environ.get("CHROMEWEBDRIVER")
    extra = (str(Path(webdriver_dir) / "chromedriver"),) if webdriver_dir else ()
    return _first("RIG_CHROME", BROWSERS), _first("RIG_CHROMEDRIVER", DRIVERS, extra)


def need(what: str) -> None:
    """Skip on a developer machine, but fail in CI: CI must never skip silently."""
    message = (f"{what} is not installed (Debian: apt-get install chromium chromium-driver; "
               "or Google Chrome and its chromedriver; or set RIG_CHROME and RIG_CHROMEDRIVER)")
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def assert_charts_drawn(charts: list[dict]) -> None:
    """Every chart of a shipped report drawn: an SVG with traces, a usable width, points in every
    trace, and the SIMULATED mark in its title."""
    assert charts, "no charts on the page"
    for chart in charts:
        assert chart["svg"] and chart["traces"] and chart["width"] > 200, chart
        assert all(n > 0 for n in chart["points"]), chart
        assert "SIMULATED" in chart["title"], chart


def wanted_screenshots() -> Path | None:
    """RIG_SCREENSHOT_DIR when set, else None: the pictures of every shipped scenario's report
    are for people (CI uploads them), and a full-page screenshot re-lays the whole page out at
    its full height, a second or more per report; nobody opens a temp folder's copy."""
    folder = os.environ.get("RIG_SCREENSHOT_DIR")
    if not folder:
        return None
    Path(folder).mkdir(parents=True, exist_ok=True)
    return Path(folder)


def screenshot_dir(tmp_path: Path) -> Path:
    """RIG_SCREENSHOT_DIR when set (CI uploads it), else the test's temp folder."""
    shots = Path(os.environ.get("RIG_SCREENSHOT_DIR") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    return shots


class Browser:
    """A Chromium session with the checks every page gets: charts, console, network."""

    def __init__(self, driver: Any):
        self.driver = driver
        self.url = ""
        self.width = WIDTH

    def _metrics(self, height: int) -> None:
        # Device metrics rather than the window size: a window cannot be phone-narrow.
        self.driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": self.width, "height": height, "deviceScaleFactor": 1,
             "mobile": self.width < 700},
        )

    def open(self, page: Path, *, width: int = WIDTH, print_media: bool = False) -> list[dict]:
        """Load `page` (logs of earlier pages dropped); return each chart's state once drawn."""
        self.driver.get_log("performance")
        self.driver.get_log("browser")
        self.driver.execute_cdp_cmd(
            "Emulation.setEmulatedMedia", {"media": "print" if print_media else ""}
        )
        self.width = width
        self._metrics(HEIGHT)
        self.url = page.resolve().as_uri()
        self.driver.get(self.url)
        return self.wait_for_charts()

    def resize(self, width: int) -> list[dict]:
        """Widen or narrow the open page's viewport, as a person resizing a window does, and
        let every chart re-fit its box (plotly's responsive resize); return the charts' state.
        The page keeps what it chose at load (a phone's layout below 640 px): to see a width
        as a page loaded at it, `open` it there."""
        self.width = width
        self._metrics(HEIGHT)
        self.driver.set_script_timeout(30)
        self.driver.execute_async_script("""
            var done = arguments[arguments.length - 1];
            var plots = Array.from(document.querySelectorAll('[data-chart]'))
                .filter(function (el) { return el.data; });
            Promise.all(plots.map(function (el) { return Plotly.Plots.resize(el); }))
                .then(function () { done(true); }, function () { done(false); });
        """)
        return self.wait_for_charts()

    def wait_for_charts(self, timeout_s: float = 30.0) -> list[dict]:
        deadline = time.monotonic() + timeout_s
        while True:
            state = self.driver.execute_script(_CHART_STATE)
            if all(c["svg"] and c["traces"] for c in state):
                return state
            if time.monotonic() > deadline:
                return state
            time.sleep(0.2)

    def requests(self) -> list[str]:
        """Every URL the page asked for since it was opened (CDP Network events)."""
        urls = []
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message.get("method") == "Network.requestWillBeSent":
                urls.append(message["params"]["request"]["url"])
        return urls

    def network_requests(self) -> list[str]:
        """Requests other than the page itself; data: URLs are inline bytes, and chrome:// the
        browser's own pages (its new-tab page loads resources before ours opens): not network."""
        return [u for u in self.requests() if u != self.url
                and not u.startswith(("data:", "chrome://", "chrome-untrusted://"))]

    def console_errors(self) -> list[dict]:
        return [e for e in self.driver.get_log("browser") if e.get("level") == "SEVERE"]

    def screenshot(self, path: Path) -> Path:
        """The whole page, however long."""
        height = self.driver.execute_script("return document.documentElement.scrollHeight")
        self._metrics(int(height))
        try:
            time.sleep(0.3)
            assert self.driver.save_screenshot(str(path))
        finally:
            self._metrics(HEIGHT)
        return path


def _start_browser(profile: str) -> Browser:
    """A headless Chromium under chromedriver, its profile in `profile`."""
    binary, driver_path = find_browser()
    if not binary:
        need("chromium (or google-chrome)")
    if not driver_path:
        need("chromedriver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        need("selenium")

    options = webdriver.ChromeOptions()
    options.binary_location = str(binary)
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        f"--window-size={WIDTH},{HEIGHT}",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    options.add_experimental_option("perfLoggingPrefs", {"enableNetwork": True})
    return Browser(webdriver.Chrome(service=Service(str(driver_path)), options=options))


class _Browsers:
    """The test process's one Chromium, started on first use and again if a test left it dead."""

    def __init__(self) -> None:
        self.profile = tempfile.mkdtemp(prefix="rig-chromium-")
        self.browser: Browser | None = None

    def get(self) -> Browser:
        if self.browser is not None:
            try:
                self.browser.driver.current_url  # noqa: B018 - a round trip to the driver
            except Exception:  # the browser or chromedriver is gone: start another
                self.close()
        if self.browser is None:
            self.browser = _start_browser(self.profile)
        return self.browser

    def close(self) -> None:
        if self.browser is not None:
            browser, self.browser = self.browser, None
            with contextlib.suppress(Exception):
                browser.driver.quit()


@pytest.fixture(scope="session")
def _browsers() -> Iterator[_Browsers]:
    browsers = _Browsers()
    try:
        yield browsers
    finally:
        browsers.close()
        shutil.rmtree(browsers.profile, ignore_errors=True)


@pytest.fixture
def chromium(_browsers: _Browsers) -> Browser:
    """The test process's headless Chromium, shared by every browser test it runs: each test
    loads its page with `open`, which resets what an earlier test set (viewport, print media,
    logs). A browser per test module was started again at almost every browser test, as
    tests of different modules are interleaved (grouped by the shipped scenario they read):
    54 starts in a suite, each with a cold profile (the first screen cost 7.7 Chromium CPU s a
    scenario on average then, 4.2 now)."""
    return _browsers.get()


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The process-wide session the analysis and the Parquet export reuse; started once."""
    from rig.analysis.spark import get_spark, stop_spark

    session = get_spark()
    yield session
    stop_spark()
