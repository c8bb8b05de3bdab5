"""Metric tables written beside the fetch tables at the end of `analyze_run`: one hook, one call.

metrics/fetch_timeline.json (the coarse timeline the report draws) and metrics/faults.json (the
fault markers). New tables join here so analyze_run itself does not grow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rig.analysis.faults import read_fault_rows
from rig.analysis.spark import get_spark
from rig.analysis.tables import write_json_atomic
from rig.analysis.timeline import fetch_timeline

__all__ = ["FAULTS", "TIMELINE", "write_extra_tables"]

TIMELINE = "fetch_timeline.json"
FAULTS = "faults.json"


def write_extra_tables(
    run_dir: Path,
    *,
    files: Sequence[Path],
    timeseries: Sequence[Mapping[str, Any]],
    durations: Mapping[str, int | None],
    variants: Sequence[str],
    spark_master: str | None = None,
) -> None:
    """Write the extra tables of RUN_DIR/metrics from what analyze_run already has.

    `timeseries` is the per-second table analyze_run collected; `files` the event logs (the fault
    scan reuses the process's Spark session; no files, no Spark).
    """
    metrics = Path(run_dir) / "metrics"
    write_json_atomic(metrics / TIMELINE, fetch_timeline(timeseries, durations, variants))
    faults = read_fault_rows(get_spark(spark_master), files, variants) if files else []
    write_json_atomic(metrics / FAULTS, faults)
