"""The partitions leaders refused to fetch clients, by error: summary.json's
`variants.<name>.fetch_refusals.{follower,consumer}` ({error name: partitions refused}).

A `fetch.response` names what it refused in `errors` ([[topic, partition, error_code], ...],
only when there is one): NOT_LEADER_OR_FOLLOWER from a broker that no longer leads the
partition, FENCED_ / UNKNOWN_LEADER_EPOCH from a leader at another epoch than the client's,
OFFSET_OUT_OF_RANGE… Each entry is one partition refused once; a follower answers most of them
by backing off `replica.fetch.backoff.ms`, so on the failure path they say how long followers
waited on leaders that did not know yet (or no longer) what the controller decided. Few
responses carry the field, so they are read on the driver (`Analysis.rare`), not by Spark.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from rig.analysis.analysis import Analysis
from rig.analysis.fetch_metrics import ROLES
from rig.analysis.stages import FunctionStage, run_stage
from rig.events import names
from rig.protocol.errors import name_of

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

__all__ = ["STAGE", "analyze_fetch_refusals"]


def _schema() -> StructType:
    from pyspark.sql import types as T

    # `errors` is a list of lists: the table keeps it as its JSON text.
    return T.StructType([T.StructField(name, T.StringType(), nullable=True)
                         for name in ("event", "variant", "role", "errors")])


def _refusals_stage(analysis: Analysis) -> dict[str, dict[str, Any]]:
    counts: dict[tuple[str, str], Counter[str]] = {}
    for row in analysis.rare((names.FETCH_RESPONSE,), _schema(), present="errors"):
        refused = orjson.loads(row["errors"])
        counts.setdefault((str(row["variant"]), str(row["role"])), Counter()).update(
            name_of(code) for _topic, _partition, code in refused)
    variants = analysis.variants + sorted({v for v, _ in counts} - set(analysis.variants))
    roles = list(ROLES) + sorted({r for _, r in counts} - set(ROLES))
    return {variant: {"fetch_refusals": {
        role: dict(sorted(counts.get((variant, role), Counter()).items())) for role in roles}}
        for variant in variants}


STAGE = FunctionStage(name="fetch_refusals", writes=(), schema=_schema, job=_refusals_stage)


def analyze_fetch_refusals(run_dir: Path) -> dict[str, Any]:
    """The stage alone on RUN_DIR: `{"variants": {name: {"fetch_refusals": {...}}}}`."""
    return run_stage(STAGE, run_dir)
