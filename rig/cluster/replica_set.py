"""A broker's replicas as a partition's replica set changes (a reassignment, KIP-455), in both
controller modes: Kafka's ReplicaManager.getOrCreatePartition, stopPartitions / stopReplicas and
Partition.updateAssignmentAndIsr. A broker a partition's replicas newly name creates an empty
replica, which follows the leader from offset 0 (then makeFollower); one they no longer name
stops it and deletes its log (delete = true); a leader whose replica set changed takes the new
set. KRaft reaches them from the metadata (TopicDelta.localChanges, ReplicaManager.applyDelta:
rig.cluster.kraft.metadata_publisher), a ZooKeeper controller by LeaderAndIsr and StopReplica
(rig.cluster.zk_reassignment)."""

from __future__ import annotations

from typing import Any

from rig.cluster.log_config import log_factory
from rig.cluster.replica import Replica, Role
from rig.events import names
from rig.hashing import OFFSETS_TOPIC, fetcher_id
from rig.protocol.errors import NOT_LEADER_OR_FOLLOWER
from rig.strategies.isr import NEVER_CAUGHT_UP, FollowerProgress


def new_replica(cluster: Any, broker_id: int, key: tuple[str, int],
                replicas: tuple[int, ...]) -> Replica:
    """An empty replica of `key` on a broker a reassignment added, with the topic's log
    settings and the partition's fetcher slot (as rig.cluster.cluster places them)."""
    variant = cluster.variant
    topic = next(t for t in variant.topics if t.name == key[0])
    log = log_factory(topic.config, variant.broker_config(broker_id),
                      internal=key[0] == OFFSETS_TOPIC)()
    return Replica(key, broker_id, replicas, log,
                   fetcher_id(key[0], key[1], variant.config.num_replica_fetchers))


def create(cluster: Any, broker: Any, key: tuple[str, int], replicas: tuple[int, ...]) -> Replica:
    """ReplicaManager.getOrCreatePartition for a partition new to this broker: an empty log
    (its leader epoch unknown, -1, so the LeaderAndIsr or metadata that follows makes it a
    follower or the leader). `cluster` is rig.cluster.cluster.Cluster."""
    cluster.wake_coasts(broker.id)
    replica = new_replica(cluster, broker.id, key, replicas)
    broker.add_replica(replica)
    cluster.log.emit(names.REPLICA_CREATED, broker=broker.id, topic=key[0], partition=key[1],
                     replicas=list(replicas))
    return replica


def delete(cluster: Any, broker: Any, replica: Replica) -> None:
    """ReplicaManager.stopPartitions(delete = true): a leader stops leading (waiting acks=all
    produces get NOT_LEADER_OR_FOLLOWER), a follower stops fetching, and the log is deleted
    with everything the broker kept about the partition. Kafka deletes a replica the delta
    removes (TopicDelta.localChanges); one removed while its broker was down is a stray log,
    deleted once the broker is back (LogManager's stray detection, KAFKA-14616). A ZooKeeper
    controller sends StopReplica with delete = true (ReplicaDeletionStarted)."""
    cluster.wake_coasts(broker.id)
    rm = broker.replica_manager
    key = replica.key
    if replica.role is Role.LEADER:
        rm.produce_purgatory.abort(key, NOT_LEADER_OR_FOLLOWER)
        rm.set_isr(replica, ())
    elif replica.role is Role.FOLLOWER:
        rm.fetcher_manager.stop_fetching(replica)
    for slots in (rm.pending, rm.hw_unseen):
        for partitions in slots.values():
            partitions.pop(key, None)
    for outside in rm.outside_isr.values():
        outside.pop(key, None)
    for held in (rm.hw_behind, rm.hw_dirty, rm.touched, rm.written,
                 broker.log_manager.dirty_logs, rm.consumer_watchers):
        held.pop(key, None)
    replica.role = Role.NONE
    replica.leader = -1
    replica.followers.clear()
    replica.pending_isr = None
    del broker.replicas[key]
    cluster.log.emit(names.REPLICA_DELETED, broker=broker.id, topic=key[0], partition=key[1],
                     replicas=list(replica.assignment), log_end_offset=replica.leo)


def update_assignment(cluster: Any, broker: Any, replica: Replica,
                      replicas: tuple[int, ...]) -> None:
    """Partition.updateAssignmentAndIsr: the replica takes the new replica set. As leader, a
    replica new to the set gets a fresh record (LEO unknown, never caught up: it joins the ISR
    by catching up, maybeExpandIsr), and one that left is forgotten (it no longer holds the HW
    or anyone's fetch state)."""
    old, replica.assignment = replica.assignment, replicas
    if replica.role is not Role.LEADER:
        return
    cluster.wake_coasts(broker.id)
    rm = broker.replica_manager
    key, slot = replica.key, replica.fetcher_slot
    for follower in old:
        if follower not in replicas and follower != broker.id:
            replica.followers.pop(follower, None)
            rm.pending.get((follower, slot), {}).pop(key, None)
            rm.hw_unseen.get((follower, slot), {}).pop(key, None)
            rm.outside_isr.get(follower, {}).pop(key, None)
    now = broker.now_ms
    for follower in replicas:
        if follower not in old and follower != broker.id:
            replica.followers[follower] = FollowerProgress(-1, NEVER_CAUGHT_UP, now, 0)
            rm.pending.setdefault((follower, slot), {})[key] = None
    rm.set_isr(replica, replica.isr)  # a new follower outside the ISR may rejoin on any fetch
    rm.maybe_advance_hw(replica)
