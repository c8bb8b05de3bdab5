"""A consumer group: its members, the fixed assignment they start with (range or round robin,
rack-aware from 3.5: KIP-881), and the group's lag sampled once a second."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rig.events import names
from rig.scenario.model import ConsumerSpec
from rig.workload.assignor import assign
from rig.workload.consumer import ConsumerMember

if TYPE_CHECKING:
    from rig.cluster.cluster import Cluster


class ConsumerGroup:
    def __init__(self, cluster: Cluster, spec: ConsumerSpec):
        self.cluster = cluster
        self.spec = spec
        topic = next(t for t in cluster.variant.topics if t.name == spec.topic)
        member_racks: list[str | None] = []
        partition_racks: list[frozenset[str]] = []
        if spec.rack_aware_assignment:  # KIP-881: match member racks with the replicas' racks
            rack_of = {b.id: b.rack for b in cluster.variant.brokers}
            member_racks = [spec.rack_of(i) for i in range(spec.members)]
            partition_racks = [frozenset(rack for b in replicas if (rack := rack_of[b]))
                               for replicas in cluster.assignments[topic.name]]
        assigned = assign(spec.members, topic.partitions, spec.assignment,
                          member_racks=member_racks, partition_racks=partition_racks)
        self.members = [ConsumerMember(cluster, spec, i, partitions)
                        for i, partitions in enumerate(assigned)]

    def start(self) -> None:
        self.cluster.sim.at(self.spec.start_ms * 1000, self._start)

    def _start(self) -> None:
        for member in self.members:
            member.start()
        if self.spec.lag_sample_ms > 0:
            self._sample()

    def _sample(self) -> None:
        """Once a second: the group's lag and records consumed so far."""
        cluster = self.cluster
        cluster.log.emit(names.CONSUMER_LAG, group=self.spec.group,
                         lag=sum(m.lag() for m in self.members),
                         consumed=sum(m.consumed for m in self.members))
        cluster.sim.after(self.spec.lag_sample_ms * 1000, self._sample)
