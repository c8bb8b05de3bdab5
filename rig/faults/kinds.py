"""The fault kinds. Each is built from its FaultSpec and acts on the cluster model only."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from rig.events import names
from rig.scenario.model import FaultSpec, LinkSpec

if TYPE_CHECKING:
    from rig.cluster.cluster import Cluster, ShutdownHandle


class Fault:
    kind: ClassVar[str] = ""
    heals_by: ClassVar[str] = "heal_after"  # the spec field that times the heal
    undoes: ClassVar[bool] = True  # does heal undo anything? (undone())

    def __init__(self, spec: FaultSpec):
        self.spec = spec

    def targets(self, cluster: Cluster) -> list[int | str]:
        return list(self.spec.brokers)

    def undone(self) -> bool:
        """Does `heal` undo anything? A fault that changes the cluster for good (a
        reassignment, a configuration change with no heal_after) or is one instant (an expired
        session, a controller's resignation: the cluster recovers by itself) has no heal step:
        no fault.heal, at its time or the run's end; its recovery runs from its injection."""
        return self.undoes

    def inject(self, cluster: Cluster) -> None:
        raise NotImplementedError

    def heal(self, cluster: Cluster) -> None:
        raise NotImplementedError  # (never called when not undone())


class Crash(Fault):
    """The broker process dies; the page cache survives. Heal: restart. A KRaft controller
    node (`controller`: its id, or "active") dies the same way; its Raft log and quorum state
    are on disk (KafkaRaftClient flushes before it acknowledges), so a power loss keeps them
    too."""

    kind = "crash"
    heals_by = "restart_after"
    power_loss = False

    def __init__(self, spec: FaultSpec):
        super().__init__(spec)
        self.controllers: list[int] = []  # the controller nodes it crashed

    def targets(self, cluster: Cluster) -> list[int | str]:
        control = cluster.control
        nodes: list[Any] = self.controllers or [control.active_node() if c == "active" else c
                                                for c in self.spec.controllers]
        return [*self.spec.brokers, *(f"controller:{n}" for n in nodes if n is not None)]

    def inject(self, cluster: Cluster) -> None:
        for broker in self.spec.brokers:
            cluster.crash(int(broker), power_loss=self.power_loss)
        crashed = [cluster.crash_controller(node) for node in self.spec.controllers]
        self.controllers = [node for node in crashed if node is not None]

    def heal(self, cluster: Cluster) -> None:
        for broker in self.spec.brokers:
            cluster.restart(int(broker))
        for node in self.controllers:
            cluster.restart_controller(node)


class PowerLoss(Crash):
    """The machine loses power: what was not flushed to disk is gone. Heal: restart."""

    kind = "power-loss"
    power_loss = True


class ControlledShutdown(Fault):
    """The broker is stopped cleanly: it asks the controller to move its leaderships and take
    it out of the ISRs, then stops with its logs flushed (ZooKeeper mode: retrying while it
    still leads, rig.cluster.controlled_shutdown; KRaft: its lifecycle manager). Heal:
    restart, as a crash, once it has stopped."""

    kind = "controlled-shutdown"
    heals_by = "restart_after"

    def __init__(self, spec: FaultSpec):
        super().__init__(spec)
        self.shutdowns: list[ShutdownHandle] = []

    def inject(self, cluster: Cluster) -> None:
        self.shutdowns = [cluster.controlled_shutdown(int(b)) for b in self.targets(cluster)
                          if cluster.brokers[int(b)].alive]

    def heal(self, cluster: Cluster) -> None:
        for shutdown in self.shutdowns:
            shutdown.heal()


class RackFailure(PowerLoss):
    """Every broker of a rack loses power at once."""

    kind = "rack-failure"

    def targets(self, cluster: Cluster) -> list[int | str]:
        return [b.id for b in cluster.variant.brokers if b.rack == self.spec.rack]

    def inject(self, cluster: Cluster) -> None:
        for broker in self.targets(cluster):
            cluster.crash(int(broker), power_loss=True)

    def heal(self, cluster: Cluster) -> None:
        for broker in self.targets(cluster):
            cluster.restart(int(broker))


class NetworkPartition(Fault):
    """No message crosses between nodes of different groups (ZooKeeper is node "zk")."""

    kind = "network-partition"

    def targets(self, cluster: Cluster) -> list[int | str]:
        return [n for group in self.spec.groups for n in group]

    def _pairs(self) -> list[tuple[int | str, int | str]]:
        groups = self.spec.groups
        return [(a, b) for i, g in enumerate(groups) for h in groups[i + 1:]
                for a in g for b in h]

    def inject(self, cluster: Cluster) -> None:
        for a, b in self._pairs():
            cluster.network.cut(a, b, True)

    def heal(self, cluster: Cluster) -> None:
        for a, b in self._pairs():
            cluster.network.cut(a, b, False)


class Link(Fault):
    """A degraded link between two nodes: more latency, less bandwidth, packet loss."""

    kind = "link"

    def targets(self, cluster: Cluster) -> list[int | str]:
        return list(self.spec.between)

    def inject(self, cluster: Cluster) -> None:
        a, b = self.spec.between
        base = cluster.network.base_link(a, b)
        spec = LinkSpec(self.spec.latency_us if self.spec.latency_us is not None
                        else base.latency_us,
                        self.spec.bandwidth_bytes_per_s or base.bandwidth_bytes_per_s)
        cluster.network.degrade(a, b, spec, self.spec.loss)

    def heal(self, cluster: Cluster) -> None:
        a, b = self.spec.between
        cluster.network.degrade(a, b, None)


class Stall(Fault):
    """The broker stops working for a while (a GC pause, a slow disk): no fetching, no
    answers, no ZooKeeper heartbeats; what arrives meanwhile is handled when it ends."""

    kind = "stall"

    def inject(self, cluster: Cluster) -> None:
        for broker in self.targets(cluster):
            cluster.stall(cluster.brokers[int(broker)], True)

    def heal(self, cluster: Cluster) -> None:
        for broker in self.targets(cluster):
            cluster.stall(cluster.brokers[int(broker)], False)


class FetcherStuck(Fault):
    """The broker's replica fetchers keep fetching but cannot append what they get (a record
    larger than replica.fetch.max.bytes before KIP-74, a failing disk): its fetch requests keep
    arriving at the same offsets, once per replica.fetch.backoff.ms, and its logs stop growing.
    Everything else on the broker works (heartbeats, leading). Heal: it appends again."""

    kind = "fetcher-stuck"

    def inject(self, cluster: Cluster) -> None:
        for broker in self.targets(cluster):
            cluster.wake_coasts(int(broker))
            cluster.brokers[int(broker)].fetch_stuck = True

    def heal(self, cluster: Cluster) -> None:
        for broker in self.targets(cluster):
            target = cluster.brokers[int(broker)]
            target.fetch_stuck = False
            for fetcher in list(target.fetchers.values()):
                fetcher.wake()


class ZkSessionExpiry(Fault):
    """ZooKeeper expires a broker's session; the broker registers again with a new one."""

    kind = "zk-session-expiry"
    undoes = False  # the broker's next heartbeat opens a new session

    def inject(self, cluster: Cluster) -> None:
        for broker in self.targets(cluster):
            cluster.zk.expire(int(broker), "injected")


class ControllerFailover(Fault):
    """The /controller znode goes away: the brokers elect a new controller."""

    kind = "controller-failover"
    undoes = False  # the brokers elect a new controller

    def targets(self, cluster: Cluster) -> list[int | str]:
        return [cluster.zk.controller] if cluster.zk.controller is not None else []

    def inject(self, cluster: Cluster) -> None:
        if cluster.zk.controller is not None:
            cluster.zk.resign_controller()


class AlterConfig(Fault):
    """An operator changes min.insync.replicas (IncrementalAlterConfigs) of one topic, or the
    cluster-wide default: the leaders apply the new value at once, and the control plane
    reacts (KRaft with ELR on clears the ELRs, KIP-966). Heal (with heal_after): the previous
    value is set again, as a second change."""

    kind = "alter-config"

    def __init__(self, spec: FaultSpec):
        super().__init__(spec)
        self.previous: int | None = None

    def targets(self, cluster: Cluster) -> list[int | str]:
        return []  # no node: the cluster's configuration

    def undone(self) -> bool:
        return self.spec.heal_after_ms is not None and "min.insync.replicas" in self.spec.config

    def inject(self, cluster: Cluster) -> None:
        topic, value = self.spec.topic, self.spec.config.get("min.insync.replicas")
        self.previous = cluster.topics.explicit_min_isr(topic)
        if value is not None:
            _alter_min_isr(cluster, topic, int(value))

    def heal(self, cluster: Cluster) -> None:
        _alter_min_isr(cluster, self.spec.topic, self.previous)  # only when undone()


def _alter_min_isr(cluster: Cluster, topic: str | None, value: int | None) -> None:
    """Set min.insync.replicas (None: drop the alteration), log what each topic's leaders now
    apply, and tell the control plane (KRaft: ConfigurationControlManager
    .createClearElrRecordsAsNeeded, a ClearElrRecord for the topic or for every topic)."""
    topics = cluster.topics
    following = [t.name for t in cluster.variant.topics
                 if t.name == topic or (topic is None and topics.follows_default(t.name))]
    topics.alter_min_isr(topic, value)
    for name in following:
        rf = len(cluster.assignments[name][0])
        cluster.log.emit(names.CONFIG_ALTERED, topic=name, config="min.insync.replicas",
                         value=value, scope="topic" if topic is not None else "cluster",
                         min_insync_replicas=topics.leader_min_isr((name, 0), rf, cluster.config))
    cluster.control.min_isr_altered(topic)


class Reassign(Fault):
    """An operator reassigns one partition to `replicas`, in that order (kafka-reassign-partitions
    --execute: AlterPartitionReassignments, KIP-455). KRaft: the active controller writes the
    first step; the leader's AlterPartition that brings the whole target into the ISR completes
    it, electing a leader from the target if the old one left (NEW_LEADER_ELECTED to it).
    ZooKeeper (2.4+): the controller's onPartitionReassignment (rig.cluster.zk_reassignment).
    Not undone at the end: a reassignment is not a condition that heals. A controller that
    cannot take it (none active, or a target it refuses) is logged as `reassignment.rejected`."""

    kind = "reassign"
    undoes = False

    def targets(self, cluster: Cluster) -> list[int | str]:
        return []  # no node fails: the analysis measures no detection for it

    def inject(self, cluster: Cluster) -> None:
        spec = self.spec
        assert spec.topic is not None and spec.partition is not None
        error = cluster.control.reassign((spec.topic, spec.partition), spec.replicas)
        if error:
            cluster.log.emit(names.REASSIGNMENT_REJECTED, topic=spec.topic,
                             partition=spec.partition, replicas=list(spec.replicas),
                             error_code=error)


KINDS: dict[str, type[Fault]] = {k.kind: k for k in (
    Crash, PowerLoss, ControlledShutdown, RackFailure, NetworkPartition, Link, Stall,
    FetcherStuck, ZkSessionExpiry, ControllerFailover, AlterConfig, Reassign)}
