"""ISR membership, shrink timing and metadata propagation, from a run's event log.

Spark selects, from the event table, the few events that say who is in sync and what each
broker's metadata cache holds; Python then walks them in order per partition (a handful of rows
per ISR change; rig.analysis.isr_walk):
- membership: each partition's leader, ISR and replicas after each write of the control plane
  (ZooKeeper's /state znode, or KRaft's PartitionChangeRecord);
- shrink delay: from the fault that hit a replica to the shrink that removed it;
- propagation delay: from a write of a partition's state (ZooKeeper's, or the controller's
  append to the metadata log) to the moment a live broker's metadata cache holds that state
  (writes a cache already showed, or that were superseded before it did, have none);
- metadata staleness: each stretch during which a live broker's cache of a partition disagrees
  with the control plane (leader or ISR), from the write that made it stale to the update that
  ends it.
The caches start equal to the initial state; a crash empties one (not measured until the broker
is told again).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rig import rundir
from rig.analysis.analysis import Analysis
from rig.analysis.events import spark_sorted
from rig.analysis.isr_walk import VariantWalk, spread
from rig.analysis.stages import FunctionStage, run_stage
from rig.events import names

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

__all__ = ["STAGE", "analyze_isr", "isr_metrics", "spread"]

# The tables: rundir.ISR_MEMBERSHIP, per partition its ISR after each write (ZooKeeper's, or a
# KRaft PartitionChangeRecord);
# rundir.ISR_PROPAGATION, per (write, broker) how long until the cache had it;
# rundir.ISR_STALENESS, per (broker, partition) each stretch of disagreement.

_EVENTS = (
    names.PARTITION_ASSIGNED, names.ZK_PARTITION_STATE, names.PARTITION_CHANGE,
    names.METADATA_UPDATED,
    names.ISR_SHRINK, names.ISR_EXPAND, names.ISR_CHANGE_NOTIFICATION, names.FAULT_INJECT,
    names.BROKER_CRASH, names.BROKER_POWER_LOSS, names.BROKER_SHUTDOWN, names.BROKER_RESTART,
    names.BROKER_STARTUP_FAILED, names.BROKER_START, names.RUN_END,
)
def _schema() -> StructType:
    from pyspark.sql import types as T

    long, text = T.LongType(), T.StringType()
    fields: list[tuple[str, Any]] = [
        ("t_ms", T.DoubleType()), ("seq", long), ("event", text), ("variant", text),
        ("topic", text), ("partition", long), ("broker", long), ("leader", long),
        ("isr", T.ArrayType(long)), ("replicas", T.ArrayType(long)),
        ("removed", T.ArrayType(long)), ("added", T.ArrayType(long)), ("by", text),
        ("writer", text), ("kind", text), ("targets", T.ArrayType(text)),
    ]
    return T.StructType([T.StructField(n, k, nullable=True) for n, k in fields])


def isr_metrics(rows: Iterable[Mapping[str, Any]],
                variants: Sequence[str] = ()) -> tuple[dict[str, dict[str, Any]],
                                                       dict[str, list[dict[str, Any]]]]:
    """Per-variant `isr` summaries and the three tables, from the selected events."""
    walks: dict[str, VariantWalk] = {name: VariantWalk(name) for name in variants}
    for row in sorted(rows, key=lambda r: (str(r.get("variant")), r.get("seq") or 0)):
        if row.get("variant") is None or row.get("event") is None:
            continue
        name = str(row["variant"])
        walk = walks.get(name)
        if walk is None:
            walk = walks[name] = VariantWalk(name)
        walk.on(row)
    tables: dict[str, list[dict[str, Any]]] = {"membership": [], "propagation": [],
                                               "staleness": []}
    summaries = {}
    for name, walk in walks.items():
        walk.finish()
        summaries[name] = walk.summary()
        tables["membership"] += walk.membership
        tables["propagation"] += walk.propagation
        tables["staleness"] += walk.staleness
    return summaries, tables


def _select(analysis: Analysis) -> list[dict[str, Any]]:
    """The events of interest, in (variant, seq) order, nulls first: a few rows of a log that is
    mostly fetches and produces."""
    chosen = [row for row in analysis.rare(_EVENTS, _schema()) if row["variant"] is not None]
    return spark_sorted(chosen, "variant", "seq")


def _isr_stage(analysis: Analysis) -> dict[str, dict[str, Any]]:
    """`{v: {"isr": {...}}}`; writes the membership, propagation and staleness tables."""
    rows = _select(analysis)
    summaries, tables = isr_metrics(rows, analysis.variants)
    rundir.write_metric(analysis.run_dir, rundir.ISR_MEMBERSHIP, tables["membership"])
    rundir.write_metric(analysis.run_dir, rundir.ISR_PROPAGATION, tables["propagation"])
    rundir.write_metric(analysis.run_dir, rundir.ISR_STALENESS, tables["staleness"])
    return {name: {"isr": summary} for name, summary in summaries.items()}


STAGE = FunctionStage(
    name="isr", writes=(rundir.ISR_MEMBERSHIP, rundir.ISR_PROPAGATION, rundir.ISR_STALENESS),
    schema=_schema, job=_isr_stage)


def analyze_isr(run_dir: Path, *, spark_master: str | None = None) -> dict[str, Any]:
    """The ISR stage alone: `{"variants": {v: {"isr": {...}}}}`; writes the membership,
    propagation and staleness tables under RUN_DIR/metrics/."""
    return run_stage(STAGE, run_dir, spark_master=spark_master)
