"""The broker's side of AlterIsr in ZooKeeper mode (inter.broker.protocol.version 2.7+, KIP-497;
docs/kafka.md §11): Kafka's AlterIsrManager (2.7 AlterIsrManagerImpl, 2.8+ DefaultAlterIsrManager).
The partition's and the controller's sides are rig.cluster.alter_isr.

- Each broker keeps one AlterIsr request in flight and batches the partitions queued meanwhile
  (rig.cluster.alter_partition_manager; 2.7: every 50 ms), through its channel to the
  controller (rig.cluster.broker_to_controller_channel), which it finds in its metadata cache:
  the controller id and live brokers of the last UpdateMetadata
  (MetadataCacheControllerNodeProvider).
- From 3.3 (KIP-841) a leader proposes no follower its metadata cache does not list alive
  (Partition.isReplicaIsrEligible: ZkMetadataCache.hasAliveBroker), at any IBP.
"""

from __future__ import annotations

from typing import Any

from rig.cluster.alter_isr import Answer, handle_response, process_alter_isr, propose
from rig.cluster.alter_partition_manager import AlterItem, DefaultAlterPartitionManager, Reply
from rig.cluster.broker_to_controller_channel import BrokerToControllerChannel
from rig.cluster.kraft.replication_control import AlterPartitionRequest
from rig.cluster.partition import TopicPartition
from rig.cluster.replica import Replica
from rig.cluster.zk_client import ZkClient
from rig.protocol.errors import NOT_CONTROLLER


class AlterIsrManager(DefaultAlterPartitionManager):
    """The ISR writer of a ZooKeeper cluster (rig.cluster.context.IsrWriter): AlterIsr for the
    brokers at inter.broker.protocol.version 2.7+, the leader's own ZooKeeper write
    (rig.cluster.zk_client) before."""

    def __init__(self, plane: Any):
        super().__init__(plane)
        self.zk_client = ZkClient(plane)

    def broker_started(self, broker: Any) -> None:
        if broker.config.isr_update != "zookeeper-write":  # a leader before IBP 2.7 sends none
            self.queue_started(broker)

    def propagate_isr_changes(self, broker: Any, keys: tuple[TopicPartition, ...]) -> None:
        self.zk_client.propagate_isr_changes(broker, keys)  # before 2.7 only

    def change_isr(self, broker: Any, replica: Replica, isr: tuple[int, ...],
                   shrink: list[int] | None = None, expand: list[int] | None = None) -> None:
        if (expand and broker.config.alter_partition_ineligible
                and not all(broker.metadata_cache.has_alive_broker(b) for b in expand)):
            # 3.3+ (KIP-841, KAFKA-13916): Partition.canAddReplicaToIsr asks
            # isReplicaIsrEligible, which in ZooKeeper mode is ZkMetadataCache.hasAliveBroker;
            # shutting down is the controller's to refuse (INELIGIBLE_REPLICA). Whatever the
            # inter.broker.protocol.version: the leader proposes nothing.
            return
        if broker.config.isr_update == "zookeeper-write":
            self.zk_client.change_isr(broker, replica, isr, shrink, expand)
            return
        pending = propose(replica, isr, expand)
        self.submit(broker, replica, pending, AlterPartitionRequest(
            replica.key, broker.id, broker.incarnation, replica.leader_epoch, replica.zk_version,
            isr))

    # -- the hooks ------------------------------------------------------------------------------
    def _new_channel(self, broker: Any) -> BrokerToControllerChannel:
        def controller() -> int | None:  # MetadataCacheControllerNodeProvider
            cache = broker.metadata_cache
            controller_id = cache.controller_id
            alive = controller_id is not None and cache.has_alive_broker(controller_id)
            return controller_id if alive else None

        return BrokerToControllerChannel(self.plane, broker, controller)

    def _every_50ms(self, broker: Any) -> bool:
        return bool(broker.config.isr_update == "alter-isr-every-50ms")

    def _at_controller(self, broker: Any, target: Any, items: list[AlterItem],
                       reply: Reply) -> None:
        # KafkaController.processAlterIsr on the broker the request reached: NOT_CONTROLLER
        # unless that process is the active controller now.
        controller = self.plane.controller
        results: dict[TopicPartition, tuple[int, Answer | None]] = {}
        if controller is None or controller.broker != target or not controller.active:
            top = NOT_CONTROLLER
        else:
            # (the broker epoch is the sending process's: its requests carry it)
            top, results = process_alter_isr(controller, broker.id, items[0].request.broker_epoch,
                                             [i.request for i in items])
        reply(top, results)
        if controller is not None and not top:
            # After the answer: reassignments the accepted changes complete.
            controller.reassignment.isr_changed(
                [key for key, (error, _) in results.items() if not error])

    def _handle(self, broker: Any, item: AlterItem, error: int, answer: Answer | None) -> bool:
        return handle_response(broker, self.plane.log.emit, item.replica, item.pending,
                               item.request, error, answer)


__all__ = ["AlterIsrManager"]
