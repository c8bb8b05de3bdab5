"""The lost, diverged and skipped records of a run, one row each, for the report's table of them.

Lost: every `record.lost` event (an acknowledged batch absent at the end of the run), kept whole
by the pass that parses the logs. Diverged: the `replicas-agree` violations the online checks
recorded in checks.json (a replica holding a batch its leader does not). Skipped: the
`consumers-skip-nothing` violations there (committed batches a consumer group's position passed
unread, one row per group and partition). Rows come per variant in run.json order (others
after, by name), lost, then diverged, then skipped, each in log order; every row has `variant`
and `what` ("lost", "diverged" or "skipped") beside the event's or violation's own fields.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rig import rundir
from rig.analysis.analysis import Analysis
from rig.analysis.stages import FunctionStage, run_stage

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

__all__ = ["STAGE", "analyze_lost_records", "lost_rows"]

DIVERGED_CHECK = "replicas-agree"
SKIPPED_CHECK = "consumers-skip-nothing"


def lost_rows(lost: list[dict[str, Any]], checks: dict[str, Any] | None,
              variants: list[str]) -> list[dict[str, Any]]:
    """The table's rows from the record.lost events and checks.json (see the module)."""
    by_variant: dict[str, list[dict[str, Any]]] = {}
    for event in lost:
        variant = str(event.get("variant"))
        by_variant.setdefault(variant, []).append(
            {**{k: v for k, v in event.items() if k != "event"}, "variant": variant,
             "what": "lost"})
    for variant, entry in ((checks or {}).get("variants") or {}).items():
        violations = [v for v in ((entry or {}).get("checks") or {}).get("violations") or []
                      if isinstance(v, dict)]
        for check, what in ((DIVERGED_CHECK, "diverged"), (SKIPPED_CHECK, "skipped")):
            by_variant.setdefault(str(variant), []).extend(
                {**violation, "variant": str(variant), "what": what}
                for violation in violations if violation.get("check") == check)
    order = [*variants, *sorted(set(by_variant) - set(variants))]
    return [row for variant in order for row in by_variant.get(variant, [])]


def _schema() -> StructType:
    from pyspark.sql import types as T

    return T.StructType([])  # reads no columns: the events come whole from the parse


def _lost_stage(analysis: Analysis) -> dict[str, dict[str, Any]]:
    lost = analysis.parsed.lost if analysis.parsed is not None else []
    rows = lost_rows(lost, rundir.read_checks(analysis.run_dir), analysis.variants)
    rundir.write_metric(analysis.run_dir, rundir.LOST_RECORDS, rows)
    return {}


STAGE = FunctionStage(name="lost_records", writes=(rundir.LOST_RECORDS,), schema=_schema,
                      job=_lost_stage)


def analyze_lost_records(run_dir: Path) -> list[dict[str, Any]]:
    """The stage alone: write RUN_DIR/metrics/lost_records.json; return its rows."""
    run_stage(STAGE, run_dir)
    rows: list[dict[str, Any]] = rundir.read_metric(run_dir, rundir.LOST_RECORDS)
    return rows
