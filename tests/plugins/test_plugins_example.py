"""The example plugin package, installed (`.ci/run` does `pip install -e examples/plugins`): its
strategies appear by name, its own conformance tests pass, and its scenario compares them with
Kafka's built-ins in one report. Without the package these tests are skipped, except under CI,
where a missing install is a failure."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from rig.cli import app
from rig.strategies import registry
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "plugins"
SCENARIO = EXAMPLE / "scenarios" / "compare-strategies.yaml"


def _require_example() -> None:
    if importlib.util.find_spec("rig_example_plugins") is not None:
        return
    why = "the example plugins are not installed: pip install -e examples/plugins"
    if os.environ.get("CI"):
        pytest.fail(f"{why} (CI must install them: .ci/run does)")
    pytest.skip(why)


def test_the_example_strategies_are_registered_by_their_package() -> None:
    _require_example()
    registry.refresh()
    placement = registry.available()["placement"]["least-loaded"]
    sessions = registry.available()["fetch_session"]["lru"]
    assert placement.distribution == sessions.distribution == "rig-example-plugins"
    assert placement.origin.startswith("rig-example-plugins ")
    listed = CliRunner().invoke(app, ["plugins"]).output
    assert "least-loaded" in listed and "lru" in listed


def test_the_example_package_passes_its_own_conformance_tests() -> None:
    _require_example()
    # The same rig as this test session: this source tree first on the child's path.
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                          cwd=EXAMPLE, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": path})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert " passed" in proc.stdout


@pytest.mark.spark
@pytest.mark.slow
def test_the_example_scenario_compares_plugins_and_builtins_in_one_report(tmp_path: Path) -> None:
    _require_example()
    out = tmp_path / "compare"
    result = CliRunner().invoke(app, ["run", str(SCENARIO), "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    summary = orjson.loads((out / "summary.json").read_bytes())
    assert list(summary["variants"]) == ["kafka", "kraft-striped", "least-loaded",
                                         "small-cache-kafka", "small-cache-lru"]
    assert all(e["ok"] is True for e in summary["expectations"])
    report = (out / "report.html").read_text(encoding="utf-8")
    assert all(name in report for name in summary["variants"])
