"""Command-line bounds and --variant (issue 15, items 7, 11, 12): each absurd argument is one
line and exit 2 before any work; expectations about variants not run are skipped, said so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rig.cli import app
from tests.conftest import SMALL

runner = CliRunner()


def one_line_error(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


@pytest.mark.parametrize(("args", "expected"), [
    (["protocol", "fetch", "--version", "7", "--partitions", "1000000000"],
     "error: --partitions must be between 0 and 200,000 (got 1,000,000,000)"),
    (["protocol", "fetch", "--version", "7", "--partitions", "1", "--response",
      "--records-bytes", "1000000000000"],
     "error: --records-bytes 1,000,000,000,000 × 1 partitions is 1,000,000,000,000 bytes"),
    (["protocol", "fetch", "--version", "7", "--partitions", "100000", "--response",
      "--records-bytes", "10000"], "error: --records-bytes 10,000 × 100,000 partitions is "
     "1,000,000,000 bytes of records; rig builds responses of at most 268,435,456"),
    (["protocol", "fetch", "--decode", "/dev/zero"],
     "error: --decode /dev/zero: is not a regular file"),
    (["assign", "--brokers", "0,1,2", "--partitions", "100000000", "--replication-factor", "2"],
     "error: --partitions must be between 1 and 1,000,000 (got 100,000,000)"),
])
def test_absurd_sizes_are_refused_before_any_work(args: list[str], expected: str) -> None:
    assert one_line_error(args).startswith(expected)


def test_a_sweep_of_a_million_points_is_refused_at_once(write_scenario: Any) -> None:
    values = ",".join(str(n) for n in range(1, 101))
    line = one_line_error(["sweep", str(write_scenario()), "--grid", f"seed={values}",
                           "--grid", f"topics.0.partitions={values}",
                           "--grid", f"cluster.config.num.replica.fetchers={values}"])
    assert "is 1,000,000 runs; a sweep runs at most 10,000" in line


def test_seed_errors_name_the_seed_option(write_scenario: Any) -> None:
    line = one_line_error(["run", str(write_scenario()), "--seed", "-1"])
    assert line == "--seed: $.seed: must be between 0 and 9223372036854775807 (got -1)"


@pytest.fixture
def no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the simulation and the expectations matter here: no Spark analysis."""
    import rig.analysis
    import rig.analysis.stages

    monkeypatch.setattr(rig.analysis, "analyze_run",
                        lambda run_dir, spark_master=None: {"variants": {}})
    monkeypatch.setattr(rig.analysis.stages, "run_stages",
                        lambda run_dir, spark_master=None: {})


def test_variant_skips_expectations_about_other_variants(write_scenario: Any, tmp_path: Path,
                                                         no_spark: None) -> None:
    path = write_scenario(SMALL + """
expect:
  - {metric: variants.v6.simulation.events, op: '>', value: 0}
  - {metric: variants.v7.simulation.events, op: '>', value: 0}
  - {ratio: [variants.v6.simulation.events, variants.v7.simulation.events], op: '>', value: 0}
""")
    result = runner.invoke(app, ["run", str(path), "--variant", "v7", "--no-report",
                                 "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert "pass    variants.v7.simulation.events > 0" in result.output
    assert "skipped 2 expectations about variants not run (--variant v7):" in result.output
    assert "  skipped variants.v6.simulation.events > 0" in result.output
    assert "FAIL" not in result.output and "UNKNOWN" not in result.output
