"""ISR membership, shrink timing and metadata propagation, from a run's event log.

Spark selects, from the event table, the few events that say who is in sync and what each
broker's metadata cache holds; Python then walks them in order per partition (a handful of rows
per ISR change):
- shrink delay: from the fault that hit a replica to the shrink that removed it;
- propagation delay: from a ZooKeeper write of a partition's state to the moment a live
  broker's metadata cache holds that state (writes a cache already showed, or that were
  superseded before it did, have none);
- metadata staleness: each stretch during which a live broker's cache of a partition disagrees
  with ZooKeeper (leader or ISR), from the write that made it stale to the update that ends it.
The caches start equal to ZooKeeper's initial state; a crash empties one (not measured until the
broker is told again).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rig import rundir
from rig.analysis.analysis import Analysis
from rig.analysis.events import spark_sorted
from rig.analysis.stages import FunctionStage, run_stage
from rig.events import names

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

__all__ = ["STAGE", "analyze_isr", "isr_metrics", "spread"]

# The tables: rundir.ISR_MEMBERSHIP, per partition its ISR after each ZooKeeper write;
# rundir.ISR_PROPAGATION, per (write, broker) how long until the cache had it;
# rundir.ISR_STALENESS, per (broker, partition) each stretch of disagreement.

_EVENTS = (
    names.PARTITION_ASSIGNED, names.ZK_PARTITION_STATE, names.METADATA_UPDATED,
    names.ISR_SHRINK, names.ISR_EXPAND, names.ISR_CHANGE_NOTIFICATION, names.FAULT_INJECT,
    names.BROKER_CRASH, names.BROKER_POWER_LOSS, names.BROKER_SHUTDOWN, names.BROKER_RESTART,
    names.BROKER_START, names.RUN_END,
)
_DOWN = (names.BROKER_CRASH, names.BROKER_POWER_LOSS, names.BROKER_SHUTDOWN)

State = tuple[int, tuple[int, ...]]  # (leader, sorted ISR)
Key = tuple[str, int]


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


def spread(values: Iterable[float]) -> dict[str, float] | None:
    """{min, p50, max} of `values` (p50: the smallest value with at least half at or below
    it, as the fetch metrics take it); None when there are none."""
    ordered = sorted(values)
    if not ordered:
        return None
    p50 = ordered[math.ceil(len(ordered) / 2) - 1]
    return {"min": round(ordered[0], 3), "p50": round(p50, 3), "max": round(ordered[-1], 3)}


def _state(row: Mapping[str, Any]) -> State:
    return (int(row["leader"]), tuple(sorted(int(b) for b in row.get("isr") or ())))


def _targets(row: Mapping[str, Any]) -> set[int]:
    found = set()
    for target in row.get("targets") or ():
        try:
            found.add(int(target))
        except (TypeError, ValueError):
            continue  # "zk" or a client: not a replica
    return found


class _Variant:
    """One variant's walk through its events (in `seq` order)."""

    def __init__(self, name: str):
        self.name = name
        self.zk: dict[Key, State] = {}
        self.replicas: dict[Key, list[int]] = {}
        self.cache: dict[int, dict[Key, State | None]] = {}  # None: unknown after a crash
        self.alive: dict[int, bool] = {}
        self.open_writes: dict[tuple[int, Key], tuple[float, State, str]] = {}
        self.stale: dict[tuple[int, Key], float] = {}
        self.fault_at: dict[int, float] = {}  # replica → latest fault that hit it
        # Assignments not yet copied into the caches: a cluster of 100,000 partitions is built
        # with 100,000 partition.assigned in a row, and one dict.update per broker copies them
        # in a few milliseconds where a loop per event and broker took seconds. Copied before
        # any other event is walked, so every cache sees them exactly when it did.
        self.assigned: dict[Key, State] = {}
        self.membership: list[dict[str, Any]] = []
        self.propagation: list[dict[str, Any]] = []
        self.staleness: list[dict[str, Any]] = []
        self.shrink_delays: list[float] = []
        self.counts = {"shrinks": 0, "expands": 0, "shrinks_by_leader": 0,
                       "shrinks_by_controller": 0, "notifications": 0}
        self.end_ms = 0.0

    # -- staleness episodes ------------------------------------------------------------------
    def _agree(self, broker: int, key: Key) -> bool | None:
        held = self.cache.get(broker, {}).get(key)
        if held is None:
            return None
        return held == self.zk.get(key)

    def _recheck(self, broker: int, key: Key, t: float) -> None:
        """Open or close the stale stretch of (broker, key) after either side changed."""
        agree = self._agree(broker, key) if self.alive.get(broker) else None
        started = self.stale.get((broker, key))
        if agree is False and started is None:
            self.stale[(broker, key)] = t
        elif agree is not False and started is not None:
            self._close(broker, key, t)

    def _close(self, broker: int, key: Key, t: float, open_at_end: bool = False) -> None:
        started = self.stale.pop((broker, key))
        self.staleness.append({"variant": self.name, "broker": broker, "topic": key[0],
                               "partition": key[1], "start_ms": started, "end_ms": t,
                               "duration_ms": round(t - started, 3),
                               "open_at_end": open_at_end})

    # -- events --------------------------------------------------------------------------------
    def on(self, row: Mapping[str, Any]) -> None:
        event, t = row["event"], float(row["t_ms"] or 0.0)
        if t > self.end_ms:
            self.end_ms = t
        if self.assigned and event != names.PARTITION_ASSIGNED:
            self._copy_assigned()
        if event == names.BROKER_START and row.get("broker") is not None:
            self.alive[int(row["broker"])] = True
            self.cache.setdefault(int(row["broker"]), {})
        elif event == names.PARTITION_ASSIGNED:
            key = (str(row["topic"]), int(row["partition"]))
            replicas = [int(b) for b in row.get("replicas") or ()]
            state = (replicas[0], tuple(sorted(replicas)))
            self.zk[key] = state
            self.replicas[key] = replicas
            self.assigned[key] = state
            self.membership.append({"variant": self.name, "topic": key[0],
                                    "partition": key[1], "t_ms": t, "leader": replicas[0],
                                    "isr": replicas, "replicas": replicas, "writer": "start"})
        elif event == names.ZK_PARTITION_STATE:
            self._zk_write(row, t)
        elif event == names.METADATA_UPDATED:
            self._cache_update(row, t)
        elif event in _DOWN:
            broker = int(row["broker"])
            self.alive[broker] = False
            for (b, key) in [k for k in self.stale if k[0] == broker]:
                self._close(b, key, t)
            for pending in [k for k in self.open_writes if k[0] == broker]:
                del self.open_writes[pending]
            self.cache[broker] = dict.fromkeys(self.cache.get(broker, {}))
        elif event == names.BROKER_RESTART:
            self.alive[int(row["broker"])] = True
        elif event == names.FAULT_INJECT:
            for broker in _targets(row):
                self.fault_at[broker] = t
        elif event == names.ISR_SHRINK:
            self.counts["shrinks"] += 1
            by = "shrinks_by_controller" if row.get("by") == "controller" else "shrinks_by_leader"
            self.counts[by] += 1
            for broker in row.get("removed") or ():
                hit = self.fault_at.get(int(broker))
                if hit is not None and hit <= t:
                    self.shrink_delays.append(t - hit)
        elif event == names.ISR_EXPAND:
            self.counts["expands"] += 1
        elif event == names.ISR_CHANGE_NOTIFICATION:
            self.counts["notifications"] += 1

    def _copy_assigned(self) -> None:
        """Every cache now holds the assignments walked since the last copy."""
        for cache in self.cache.values():
            cache.update(self.assigned)
        self.assigned.clear()

    def _zk_write(self, row: Mapping[str, Any], t: float) -> None:
        key = (str(row["topic"]), int(row["partition"]))
        state = _state(row)
        self.zk[key] = state
        replicas = self.replicas.get(key, [])
        self.membership.append({"variant": self.name, "topic": key[0], "partition": key[1],
                                "t_ms": t, "leader": state[0], "isr": list(row.get("isr") or ()),
                                "replicas": replicas, "writer": row.get("writer")})
        for broker, cache in self.cache.items():
            self.open_writes.pop((broker, key), None)
            if self.alive.get(broker) and cache.get(key) is not None and cache[key] != state:
                self.open_writes[(broker, key)] = (t, state, str(row.get("writer") or ""))
            self._recheck(broker, key, t)

    def _cache_update(self, row: Mapping[str, Any], t: float) -> None:
        broker = int(row["broker"])
        key = (str(row["topic"]), int(row["partition"]))
        state = _state(row)
        self.cache.setdefault(broker, {})[key] = state
        self.alive.setdefault(broker, True)
        pending = self.open_writes.get((broker, key))
        if pending is not None and pending[1] == state:
            del self.open_writes[(broker, key)]
            self.propagation.append({"variant": self.name, "broker": broker, "topic": key[0],
                                     "partition": key[1], "written_ms": pending[0],
                                     "delay_ms": round(t - pending[0], 3),
                                     "writer": pending[2]})
        self._recheck(broker, key, t)

    def finish(self) -> None:
        self._copy_assigned()
        for broker, key in list(self.stale):
            self._close(broker, key, self.end_ms, open_at_end=True)

    def summary(self) -> dict[str, Any]:
        stale = [s["duration_ms"] for s in self.staleness]
        return {
            **self.counts,
            "shrink_delay_ms": spread(self.shrink_delays),
            "propagation_delay_ms": spread(p["delay_ms"] for p in self.propagation),
            "propagation_delay_by_writer_ms": {
                writer: spread(p["delay_ms"] for p in self.propagation if p["writer"] == writer)
                for writer in ("leader", "controller")},
            "max_metadata_staleness_ms": round(max(stale), 3) if stale else 0.0,
            "stale_partition_seconds": round(sum(stale) / 1000, 3),
        }


def isr_metrics(rows: Iterable[Mapping[str, Any]],
                variants: Sequence[str] = ()) -> tuple[dict[str, dict[str, Any]],
                                                       dict[str, list[dict[str, Any]]]]:
    """Per-variant `isr` summaries and the three tables, from the selected events."""
    walks: dict[str, _Variant] = {name: _Variant(name) for name in variants}
    for row in sorted(rows, key=lambda r: (str(r.get("variant")), r.get("seq") or 0)):
        if row.get("variant") is None or row.get("event") is None:
            continue
        name = str(row["variant"])
        walk = walks.get(name)
        if walk is None:
            walk = walks[name] = _Variant(name)
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
