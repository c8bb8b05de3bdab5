"""`rig sweep` on a standalone Spark cluster (master and worker on 127.0.0.1): one grid
parameter × one seed, simulated on the cluster's executors, analysed by the driver. (Several
seeds per point are tested in local mode, test_sweep_local.py, the cross product of two
parameters in test_search_grid.py and the heatmaps it draws in test_report_browser_sweep.py:
what this file proves is where the work runs, and two points prove it as well as four did, at
half the analyses.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.search.conftest import Standalone


@pytest.mark.slow
@pytest.mark.spark
def test_sweep_on_a_standalone_cluster(standalone_spark: Standalone, tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    proc = subprocess.run(
        [sys.executable, "-m", "rig", "sweep", "scenarios/fuzz-replication.yaml",
         "--grid", "workload.producers.0.rate=50,200",
         "--seeds", "1", "--spark-master", standalone_spark.url, "--out", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"as Spark tasks on {standalone_spark.url}" in proc.stdout
    # The simulations ran in the worker's executors: it kept their logs for this application.
    assert list(standalone_spark.work.glob("app-*/*/stderr")), "no executor ran on the worker"
    record = json.loads((out / "sweep.json").read_text())
    assert record["spark_master"] == standalone_spark.url
    assert record["grid"] == {"workload.producers.0.rate": [50, 200]}
    assert len(record["points"]) == 2 and record["seeds"] == [7]
    for point in record["points"]:
        run_dir = out / point["run_dir"]
        run = json.loads((run_dir / "run.json").read_text())
        assert run["sweep"]["params"] == point["params"]
        summary = json.loads((run_dir / "summary.json").read_text())
        assert summary["seed"] == point["seed"]
        acked = summary["variants"]["leader-epoch"]["produce"]["acked"]
        assert acked == point["metrics"]["leader-epoch"]["produce.acked"] > 0
    # More load, more records acknowledged: the grid values reached the simulations.
    by_rate = {r: sum(p["metrics"]["leader-epoch"]["produce.acked"] for p in record["points"]
                      if p["params"]["workload.producers.0.rate"] == r) for r in (50, 200)}
    assert by_rate[200] > 3 * by_rate[50] > 0
    html = (out / "report.html").read_text()
    assert "sweep-line-0" in html and "Sweep of fuzz-replication" in html


@pytest.mark.slow
@pytest.mark.spark
def test_fuzz_on_a_standalone_cluster(standalone_spark: Standalone, tmp_path: Path) -> None:
    out = tmp_path / "fuzz"
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    proc = subprocess.run(
        [sys.executable, "-m", "rig", "fuzz", "scenarios/fuzz-replication.yaml", "--variant",
         "hw-truncation", "--runs", "12", "--seed", "1", "--spark-master", standalone_spark.url,
         "--out", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200, check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    entry = json.loads((out / "fuzz.json").read_text())["variants"]["hw-truncation"]
    # The same schedule a local session finds first (tests/search/test_fuzz_cli.py).
    assert entry["runs_done"] == 12 and entry["violation"]["index"] == 5
    assert (out / "hw-truncation-minimal.yaml").is_file()
