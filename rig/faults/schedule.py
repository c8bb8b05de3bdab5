"""When faults happen: at a simulated time, or `delay` after the first event that matches a
trigger (e.g. "crash the leader as soon as broker 1 becomes follower" — KIP-101's race)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from rig.events import names
from rig.faults.kinds import KINDS, Fault
from rig.scenario.model import FaultSpec

if TYPE_CHECKING:
    from rig.cluster.cluster import Cluster


class FaultSchedule:
    def __init__(self, cluster: Cluster, specs: tuple[FaultSpec, ...]):
        self.cluster = cluster
        self.faults = [KINDS[spec.kind](spec) for spec in specs]
        self.active: dict[int, Fault] = {}
        self._waiting: list[Fault] = [f for f in self.faults if f.spec.after_event]
        self._done = False

    def arm(self) -> None:
        sim = self.cluster.sim
        for fault in self.faults:
            if fault.spec.at_ms is not None:
                sim.at(fault.spec.at_ms * 1000, partial(self.inject, fault))
        if self._waiting:
            self.cluster.log.observe(self._observe,
                                     {fault.spec.after_event for fault in self._waiting
                                      if fault.spec.after_event})

    def _observe(self, event: Mapping[str, Any]) -> None:
        if not self._waiting or self._done:
            return
        for fault in list(self._waiting):
            spec = fault.spec
            if event["event"] != spec.after_event:
                continue
            if any(event.get(k) != v for k, v in spec.after_where.items()):
                continue
            self._waiting.remove(fault)
            self.cluster.sim.after(spec.after_delay_ms * 1000, partial(self.inject, fault))

    def inject(self, fault: Fault) -> None:
        if self._done:
            return
        cluster = self.cluster
        spec = fault.spec
        cluster.log.emit(names.FAULT_INJECT, fault=spec.index, kind=spec.kind,
                         targets=fault.targets(cluster), description=spec.description)
        fault.inject(cluster)
        if not fault.undone():
            return  # nothing to heal: no fault.heal, now or at the run's end
        self.active[spec.index] = fault
        after = spec.restart_after_ms if fault.heals_by == "restart_after" else spec.heal_after_ms
        if after is not None:
            cluster.sim.after(after * 1000, lambda: self.heal(fault))

    def heal(self, fault: Fault) -> None:
        if self.active.pop(fault.spec.index, None) is None:
            return
        cluster = self.cluster
        cluster.log.emit(names.FAULT_HEAL, fault=fault.spec.index, kind=fault.spec.kind,
                         targets=fault.targets(cluster))
        fault.heal(cluster)

    def heal_all(self) -> None:
        """The run is over: nothing more is injected, and every active fault heals."""
        self._done = True
        for fault in list(self.active.values()):
            self.heal(fault)
