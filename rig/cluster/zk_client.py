"""A partition leader's ZooKeeper client: its conditional ISR write, and the
/isr_change_notification child that announces ISR changes (docs/kafka.md §10; Kafka's
KafkaZkClient as Partition and ReplicaManager use it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from rig.cluster.network import Node
from rig.cluster.replica import PendingIsr, Replica, Role, TopicPartition
from rig.cluster.zookeeper import NODE as ZK
from rig.cluster.zookeeper import ZK_MESSAGE_BYTES, ZooKeeper
from rig.events import EventLog, names


class ZkClientHost(Protocol):
    zk: ZooKeeper
    log: EventLog

    def send(self, src: Node, dst: Node, nbytes: int, deliver: Callable[[], None], *,
             reliable: bool = False) -> None: ...

    def notify_controller(self, action: Callable[[Any], None]) -> None: ...


class ZkClient:
    """The ISR writes of the brokers (rig.cluster.context.IsrWriter); `broker` is the writer."""

    def __init__(self, host: ZkClientHost):
        self.host = host

    def change_isr(self, broker: Any, replica: Replica, isr: tuple[int, ...],
                   shrink: list[int] | None = None, expand: list[int] | None = None) -> None:
        # Kafka's write is synchronous (Partition.expandIsrWithZk / shrinkIsrWithZk): no
        # maximal ISR; rig's round trip to ZooKeeper only holds the next change back. The
        # request and its answer are retried until the connection is back
        # (KafkaZkClient.retryRequestsUntilConnected): sent reliably.
        replica.pending_isr = PendingIsr(isr)
        key = replica.key
        epoch = replica.leader_epoch
        version = replica.zk_version
        incarnation = broker.incarnation

        def at_zk() -> None:
            written = self.host.zk.update_isr(key, epoch, isr, version)
            self.host.send(ZK, broker.id, ZK_MESSAGE_BYTES, lambda: applied(written),
                           reliable=True)

        def applied(written: int | None) -> None:
            if broker.incarnation != incarnation or replica.leader_epoch != epoch:
                return
            replica.pending_isr = None
            if written is None or replica.role is not Role.LEADER:
                return  # the controller changed the partition first: its LeaderAndIsr wins
            broker.replica_manager.set_isr(replica, isr)
            replica.zk_version = written
            broker.isr.record_change(key)
            if shrink:
                self.host.log.emit(names.ISR_SHRINK, topic=key[0], partition=key[1],
                              leader=broker.id, isr=list(isr), removed=shrink, by="leader")
            if expand:
                self.host.log.emit(names.ISR_EXPAND, topic=key[0], partition=key[1],
                              leader=broker.id, isr=list(isr), added=expand)
            broker.replica_manager.maybe_advance_hw(replica)

        self.host.send(broker.id, ZK, ZK_MESSAGE_BYTES, at_zk, reliable=True)

    def propagate_isr_changes(self, broker: Any, keys: tuple[TopicPartition, ...]) -> None:
        """`broker` creates an /isr_change_notification child for `keys` (retried until
        connected, as the ISR write); the controller's watch on that path fires when it is
        created."""

        def at_zk() -> None:
            seq = self.host.zk.add_isr_change_notification(keys)
            self.host.log.emit(names.ISR_CHANGE_NOTIFICATION, broker=broker.id, notification=seq,
                          partitions=len(keys))
            self.host.notify_controller(lambda c: c.on_isr_change_notification())

        self.host.send(broker.id, ZK, ZK_MESSAGE_BYTES + 30 * len(keys), at_zk, reliable=True)
