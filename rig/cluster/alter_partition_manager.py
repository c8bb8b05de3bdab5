"""A leader's ISR changes on their way to the controller, in both modes: Kafka's
DefaultAlterPartitionManager (2.7–3.1 DefaultAlterIsrManager; 2.7's AlterIsrManagerImpl), which
ZooKeeper-era brokers at inter.broker.protocol.version 2.7+ (rig.cluster.alter_isr_manager) and
KRaft brokers (rig.cluster.kraft.alter_partition_manager) share; each mode says where the
controller is and what it does with a request.

Each broker process keeps one AlterPartition request in flight and batches the partitions
queued meanwhile: 2.8+ sends the queue at once, and again as soon as the answer comes, or 50 ms
after a top-level error (STALE_BROKER_EPOCH); 2.7 sends it on a 50 ms tick. A change queued for
a partition replaces the one still queued for it; a partition left out of the answer, or whose
answer asks for it (Partition.handleAlterPartitionError: a retriable error), goes again. The
request travels through the broker's channel to the controller
(rig.cluster.broker_to_controller_channel), which finds the controller, and sends it again on
NOT_CONTROLLER or a dropped connection.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rig.cluster.alter_isr import Answer
from rig.cluster.broker_to_controller_channel import BrokerToControllerChannel
from rig.cluster.controller_wire import alter_partition_bytes, alter_partition_response_bytes
from rig.cluster.kraft.replication_control import AlterPartitionRequest
from rig.cluster.partition import TopicPartition
from rig.cluster.replica import PendingIsr, Replica
from rig.protocol.errors import NONE

SEND_INTERVAL_MS = 50  # 2.7's send-alter-isr task; 2.8+'s retry after a top-level error

Results = dict[TopicPartition, tuple[int, Answer | None]]  # per partition: error, answer
Reply = Callable[[int, Results], None]  # (top-level error, results): the controller answers


@dataclass(eq=False)
class AlterItem:
    """AlterPartitionItem: one partition's proposal, as queued and sent."""

    replica: Replica
    pending: PendingIsr
    request: AlterPartitionRequest


@dataclass(eq=False)
class _Queue:
    """One broker process's queue, its request in flight, and its channel."""

    incarnation: int
    started_ms: float
    channel: BrokerToControllerChannel
    unsent: dict[TopicPartition, AlterItem] = field(default_factory=dict)
    inflight: list[AlterItem] | None = None  # the items of the request in flight
    tick: bool = False  # 2.7: a send-alter-isr tick is scheduled


class DefaultAlterPartitionManager:
    """The queue and its request; a mode supplies the hooks below."""

    def __init__(self, plane: Any):
        self.plane = plane
        self._queues: dict[int, _Queue] = {}

    # -- what a mode supplies ------------------------------------------------------------------
    def _new_channel(self, broker: Any) -> BrokerToControllerChannel:
        raise NotImplementedError

    def _every_50ms(self, broker: Any) -> bool:
        """2.7's AlterIsrManagerImpl: the queue goes out on a tick."""
        return False

    def _at_controller(self, broker: Any, target: Any, items: list[AlterItem],
                       reply: Reply) -> None:
        """The request at the node `target` it reached: `reply` once it is answered."""
        raise NotImplementedError

    def _handle(self, broker: Any, item: AlterItem, error: int, answer: Answer | None) -> bool:
        """One partition's answer (Partition.handleAlterPartitionResponse): True to send the
        change again."""
        raise NotImplementedError

    # -- the queue ------------------------------------------------------------------------------
    def queue_started(self, broker: Any) -> None:
        """A broker process starts (its send-alter-isr task's clock starts with it)."""
        self._queues[broker.id] = _Queue(broker.incarnation, broker.now_ms,
                                         self._new_channel(broker))

    def submit(self, broker: Any, replica: Replica, pending: PendingIsr,
               request: AlterPartitionRequest) -> None:
        """Queue a partition's proposal; an item still queued for it belongs to a change that
        ended meanwhile (clearPending): this one replaces it."""
        queue = self._queues.get(broker.id)
        if queue is None or queue.incarnation != broker.incarnation:
            self.queue_started(broker)
            queue = self._queues[broker.id]
        queue.unsent[replica.key] = AlterItem(replica, pending, request)
        self._wake(broker, queue)

    def _wake(self, broker: Any, queue: _Queue) -> None:
        """Queued work: 2.8+ sends now (if nothing is in flight); 2.7 at the next tick."""
        if not self._every_50ms(broker):
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
        if not items:
            return
        queue.inflight = items
        plane = self.plane

        def at_target(target: Any, reply: Callable[[int, int, Any], None]) -> None:
            def answer(top: int, results: Results) -> None:
                answers = [(key, len(answer[1]) if answer else 0)
                           for key, (_, answer) in results.items()]
                reply(top, alter_partition_response_bytes(plane.variant, broker, answers),
                      results)

            self._at_controller(broker, target, items, answer)

        proposed = [(i.request.key, len(i.request.new_isr)) for i in items]
        queue.channel.send(alter_partition_bytes(plane.variant, broker, proposed), at_target,
                           lambda top, results: self._answered(broker, queue, items, top,
                                                               results))

    def _answered(self, broker: Any, queue: _Queue, items: list[AlterItem], top: int,
                  results: Results) -> None:
        queue.inflight = None
        if top != NONE:  # STALE_BROKER_EPOCH: the queue is sent again after the backoff
            if self._every_50ms(broker):
                self._wake(broker, queue)
            else:
                broker.schedule(SEND_INTERVAL_MS * 1000,
                                lambda: self._maybe_propagate(broker, queue))
            return
        for item in items:
            key = item.replica.key
            if queue.unsent.get(key) is item:
                del queue.unsent[key]
            if key not in results:
                queue.unsent.setdefault(key, item)  # left out of the answer: sent again
                continue
            error, answer = results[key]
            if self._handle(broker, item, error, answer):
                queue.unsent.setdefault(key, item)
        self._wake(broker, queue)


__all__ = ["SEND_INTERVAL_MS", "AlterItem", "DefaultAlterPartitionManager", "Reply", "Results"]
