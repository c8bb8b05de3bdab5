"""The broker's side of AlterIsr in ZooKeeper mode (inter.broker.protocol.version 2.7+, KIP-497;
docs/kafka.md §11): Kafka's AlterIsrManager (2.7 AlterIsrManagerImpl, 2.8+ DefaultAlterIsrManager).
The partition's and the controller's sides are rig.cluster.alter_isr.

- Each broker keeps one AlterIsr request in flight and batches the partitions queued meanwhile
  (2.7, AlterIsrManagerImpl: the queue goes out every 50 ms; 2.8+, DefaultAlterIsrManager: at
  once, and again as soon as the answer comes, or 50 ms after a top-level error), through its
  channel to the controller (rig.cluster.broker_to_controller_channel: which controller, and
  what a dead one does to the request).
- From 3.3 (KIP-841) a leader proposes no follower its metadata cache does not list alive
  (Partition.isReplicaIsrEligible: ZkMetadataCache.hasAliveBroker), at any IBP.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rig.cluster.alter_isr import Answer, handle_response, process_alter_isr, propose
from rig.cluster.broker_to_controller_channel import BrokerToControllerChannel
from rig.cluster.controller_wire import alter_partition_bytes, alter_partition_response_bytes
from rig.cluster.kraft.replication_control import AlterPartitionRequest
from rig.cluster.partition import TopicPartition
from rig.cluster.replica import PendingIsr, Replica
from rig.cluster.zk_client import ZkClient
from rig.protocol.errors import NONE, NOT_CONTROLLER

SEND_INTERVAL_MS = 50  # 2.7's send-alter-isr task; 2.8+'s retry after a top-level error


# -- the broker's side (AlterIsrManager) ---------------------------------------------------------
@dataclass(eq=False)
class _Item:
    """AlterIsrItem: one partition's proposal, as queued and sent."""

    replica: Replica
    pending: PendingIsr
    request: AlterPartitionRequest


@dataclass(eq=False)
class _Queue:
    """One broker process's AlterIsrManager: the queue, the request in flight."""

    incarnation: int
    started_ms: float
    unsent: dict[TopicPartition, _Item] = field(default_factory=dict)
    inflight: list[_Item] | None = None  # the items of the request in flight
    tick: bool = False  # 2.7: a send-alter-isr tick is scheduled
    channel: BrokerToControllerChannel | None = None  # (None: a leader before IBP 2.7)


class AlterIsrManager:
    """The ISR writer of a ZooKeeper cluster (rig.cluster.context.IsrWriter): AlterIsr for the
    brokers at inter.broker.protocol.version 2.7+, the leader's own ZooKeeper write
    (rig.cluster.zk_client) before."""

    def __init__(self, plane: Any):
        self.plane = plane
        self.zk_client = ZkClient(plane)
        self._queues: dict[int, _Queue] = {}

    def broker_started(self, broker: Any) -> None:
        """A broker process starts (its send-alter-isr task's clock starts with it)."""
        self._queues[broker.id] = self._new_queue(broker)

    def _new_queue(self, broker: Any) -> _Queue:
        queue = _Queue(broker.incarnation, broker.now_ms)
        if broker.config.isr_update != "zookeeper-write":  # a leader before IBP 2.7 sends none
            queue.channel = BrokerToControllerChannel(self.plane, broker)
        return queue

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
        queue = self._queue(broker)
        pending = propose(replica, isr, expand)
        request = AlterPartitionRequest(replica.key, broker.id, broker.incarnation,
                                        replica.leader_epoch, replica.zk_version, isr)
        # An item still queued for this partition belongs to a change a LeaderAndIsr ended
        # (clearPending): this one replaces it.
        queue.unsent[replica.key] = _Item(replica, pending, request)
        self._wake(broker, queue)

    # -- internals -------------------------------------------------------------------------
    def _queue(self, broker: Any) -> _Queue:
        queue = self._queues.get(broker.id)
        if queue is None or queue.incarnation != broker.incarnation:
            queue = self._queues[broker.id] = self._new_queue(broker)
        return queue

    def _wake(self, broker: Any, queue: _Queue) -> None:
        """Queued work: 2.8+ sends now (if nothing is in flight); 2.7 at the next tick."""
        if broker.config.isr_update != "alter-isr-every-50ms":
            self._maybe_propagate(broker, queue)
            return
        if queue.tick or not queue.unsent:
            return
        queue.tick = True
        now = broker.now_ms
        ticks = int((now - queue.started_ms) // SEND_INTERVAL_MS) + 1
        delay_ms = queue.started_ms + ticks * SEND_INTERVAL_MS - now

        def tick() -> None:
            queue.tick = False
            self._maybe_propagate(broker, queue)

        broker.schedule(max(1, round(delay_ms * 1000)), tick)

    def _maybe_propagate(self, broker: Any, queue: _Queue) -> None:
        """Send every queued change, unless a request is in flight."""
        if queue.inflight is not None or queue.incarnation != broker.incarnation:
            return
        items = [i for i in queue.unsent.values() if i.replica.pending_isr is i.pending]
        queue.unsent = {i.replica.key: i for i in items}
        if items:
            queue.inflight = items
            self._send(broker, queue, items)

    def _send(self, broker: Any, queue: _Queue, items: list[_Item]) -> None:
        plane = self.plane
        requests = [i.request for i in items]
        epoch = broker.incarnation

        def at_target(target: int, reply: Callable[[int, int, Any], None]) -> None:
            # KafkaController.processAlterIsr on the broker the request reached: NOT_CONTROLLER
            # unless that process is the active controller now.
            controller = plane.controller
            results: dict[TopicPartition, tuple[int, Answer | None]] = {}
            if controller is None or controller.broker != target or not controller.active:
                top = NOT_CONTROLLER
            else:
                top, results = process_alter_isr(controller, broker.id, epoch, requests)
            answers = [(key, len(answer[1]) if answer else 0)
                       for key, (_, answer) in results.items()]
            reply(top, alter_partition_response_bytes(plane.variant, broker, answers), results)
            if controller is not None and not top:
                # After the answer: reassignments the accepted changes complete.
                controller.reassignment.isr_changed(
                    [key for key, (error, _) in results.items() if not error])

        proposed = [(r.key, len(r.new_isr)) for r in requests]
        assert queue.channel is not None
        queue.channel.send(alter_partition_bytes(plane.variant, broker, proposed), at_target,
                           lambda top, results: self._answered(broker, queue, items, top,
                                                               results))

    def _answered(self, broker: Any, queue: _Queue, items: list[_Item], top: int,
                  results: dict[TopicPartition, tuple[int, Answer | None]]) -> None:
        queue.inflight = None
        if top != NONE:  # STALE_BROKER_EPOCH: the queue is sent again after the backoff
            if broker.config.isr_update == "alter-isr-every-50ms":
                self._wake(broker, queue)
            else:
                broker.schedule(SEND_INTERVAL_MS * 1000,
                                lambda: self._maybe_propagate(broker, queue))
            return
        emit = self.plane.log.emit
        for item in items:
            key = item.replica.key
            if queue.unsent.get(key) is item:
                del queue.unsent[key]
            error, answer = results.get(key, (NONE, None))
            if key not in results:
                queue.unsent.setdefault(key, item)  # left out of the answer: sent again
            elif handle_response(broker, emit, item.replica, item.pending, item.request, error,
                                 answer):
                queue.unsent.setdefault(key, item)
        self._wake(broker, queue)
