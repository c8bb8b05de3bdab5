"""The ISR stage's walk through one variant's events, in `seq` order (rig.analysis.isr selects
them): each partition's committed leader, ISR and replicas after every write of the control
plane, each broker's metadata cache, and from both the propagation delays and stale stretches.

The control plane's state is ZooKeeper's /state znode (`zk.partition_state`) in ZooKeeper mode
and, in KRaft mode, the partition's registration as the active controller's
PartitionChangeRecords leave it (`partition.change`); a broker's cache is its MetadataCache
(`metadata.updated`) in both.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from rig.events import names

__all__ = ["DOWN", "VariantWalk", "spread"]

DOWN = (names.BROKER_CRASH, names.BROKER_POWER_LOSS, names.BROKER_SHUTDOWN,
        names.BROKER_STARTUP_FAILED)

State = tuple[int, tuple[int, ...]]  # (leader, sorted ISR)
Key = tuple[str, int]


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


class VariantWalk:
    """One variant's walk through its events (in `seq` order)."""

    def __init__(self, name: str):
        self.name = name
        # The control plane's state of each partition: ZooKeeper's /state, or the controller's
        # registration in KRaft; with the membership row it last gave (replicas, ISR as written).
        self.committed: dict[Key, State] = {}
        self.last: dict[Key, dict[str, Any]] = {}
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
        return held == self.committed.get(key)

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
            self.committed[key] = state
            self.assigned[key] = state
            self.last[key] = {"variant": self.name, "topic": key[0], "partition": key[1],
                              "t_ms": t, "leader": replicas[0], "isr": replicas,
                              "replicas": replicas, "writer": "start"}
            self.membership.append(self.last[key])
        elif event == names.ZK_PARTITION_STATE:
            self._write(row, t, row.get("writer"))
        elif event == names.PARTITION_CHANGE:
            # KRaft: every PartitionChangeRecord is the active controller's (a leader's ISR
            # change reaches it as AlterPartition, as AlterIsr does ZooKeeper's from IBP 2.7).
            self._write(row, t, "controller")
        elif event == names.METADATA_UPDATED:
            self._cache_update(row, t)
        elif event in DOWN:
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

    def _write(self, row: Mapping[str, Any], t: float, writer: Any) -> None:
        """A write of a partition's state by the control plane: ZooKeeper's /state (every field
        written) or a KRaft PartitionChangeRecord, whose absent leader, ISR or replicas keep
        the partition's (PartitionRegistration.merge applies only the fields a record sets;
        rig logs every field, a plain record as a plugin's may not)."""
        key = (str(row["topic"]), int(row["partition"]))
        last = self.last.get(key, {})
        leader = row.get("leader")
        leader = int(leader) if leader is not None else int(last.get("leader", -1))
        isr = [int(b) for b in (row["isr"] if row.get("isr") is not None
                                else last.get("isr") or ())]
        replicas = (last.get("replicas", []) if row.get("replicas") is None  # else a
                    else [int(b) for b in row["replicas"]])  # reassignment's: target + removing
        state = (leader, tuple(sorted(isr)))
        self.committed[key] = state
        self.last[key] = {"variant": self.name, "topic": key[0], "partition": key[1],
                          "t_ms": t, "leader": leader, "isr": isr,
                          "replicas": replicas, "writer": writer}
        self.membership.append(self.last[key])
        for broker, cache in self.cache.items():
            self.open_writes.pop((broker, key), None)
            if self.alive.get(broker) and cache.get(key) is not None and cache[key] != state:
                self.open_writes[(broker, key)] = (t, state, str(writer or ""))
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
