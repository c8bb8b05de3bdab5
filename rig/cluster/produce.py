"""Produce at a partition leader: append, and answer per `acks` (Kafka's handleProduceRequest
with ReplicaManager.appendRecords and DelayedProduce; docs/kafka.md §8).

acks=0/1 are answered once appended; acks=all waits in the produce purgatory, watched under
each partition it appended to, until the HW passes every batch, the leadership moves away, or
its timeout ends.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from rig.cluster.context import NodeContext, Process
from rig.cluster.current_leader import NO_LEADERS, CurrentLeaders, current_leaders
from rig.cluster.log import Batch
from rig.cluster.metadata_cache import MetadataCache
from rig.cluster.partition import TopicPartition
from rig.cluster.purgatory import Purgatory
from rig.cluster.replica import Role
from rig.cluster.replica_manager import ReplicaManager
from rig.engine import Timer
from rig.protocol.errors import (
    NONE,
    NOT_ENOUGH_REPLICAS,
    NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    NOT_LEADER_OR_FOLLOWER,
    REQUEST_TIMED_OUT,
)


@dataclass(eq=False, slots=True)
class DelayedProduce:
    """An acks=all produce waiting for the HW to pass every batch it appended."""

    handler: ProduceHandler
    reply: Callable[[dict[TopicPartition, int]], None]
    waiting: dict[TopicPartition, int]  # partition → offset the HW must reach
    errors: dict[TopicPartition, int] = field(default_factory=dict)
    timer: Timer | None = None
    done: bool = False

    def try_complete(self) -> bool:
        """Each partition whose HW passed its batch is answered: acknowledged, unless the ISR
        shrank below min.insync.replicas meanwhile (Kafka's checkEnoughReplicasReachOffset);
        the produce finishes with its last partition."""
        if self.done:
            return True
        replicas = self.handler.replica_manager.replicas
        topics = self.handler.ctx.topics
        config = self.handler.broker.config
        for key, required in list(self.waiting.items()):
            replica = replicas[key]
            if replica.high_watermark < required:
                continue
            min_isr = topics.leader_min_isr(key, len(replica.assignment), config)
            # Partition.checkEnoughReplicasReachOffset counts the maximal ISR (2.7+, KIP-497).
            self.errors[key] = (NOT_ENOUGH_REPLICAS_AFTER_APPEND
                                if len(replica.maximal_isr) < min_isr else NONE)
            del self.waiting[key]
        if self.waiting:
            return False
        self._finish()
        return True

    def expire(self) -> None:
        """The produce's timeout ended: every partition still waiting times out."""
        self.done = True
        for key in self.waiting:
            self.errors[key] = REQUEST_TIMED_OUT
        self.reply(self.errors)

    def abort(self, key: Hashable, error: int) -> bool:
        """`key` will not be acknowledged (`error`); True if that finished the produce."""
        if self.done or key not in self.waiting:
            return False
        self.errors[key] = error
        del self.waiting[key]
        if self.waiting:
            return False
        self._finish()
        return True

    def _finish(self) -> None:
        self.done = True
        if self.timer:
            self.timer.cancel()
        self.reply(self.errors)


FIRST_CURRENT_LEADER_VERSION = 10  # ProduceResponse v10 (KIP-951, Kafka 3.7)


class ProduceHandler:
    """A broker's produce requests and the acks=all produces waiting for the HW."""

    def __init__(self, broker: Process, ctx: NodeContext, replica_manager: ReplicaManager,
                 purgatory: Purgatory[TopicPartition, DelayedProduce],
                 metadata_cache: MetadataCache):
        self.broker = broker
        self.metadata_cache = metadata_cache
        self.ctx = ctx
        self.replica_manager = replica_manager
        self.purgatory = purgatory

    def _with_current_leaders(self, reply: Callable[[dict[TopicPartition, Any], CurrentLeaders],
                                                    None],
                              results: dict[TopicPartition, Any], _: CurrentLeaders) -> None:
        refused = [key for key, result in results.items() if result == NOT_LEADER_OR_FOLLOWER]
        reply(results, current_leaders(self.replica_manager.replicas, self.metadata_cache,
                                       refused))

    def reset(self) -> None:
        """The process died: the waiting produces die with it, unanswered."""
        for produce in self.purgatory.clear():
            if produce.timer:
                produce.timer.cancel()

    def on_produce(self, batches: dict[TopicPartition, Batch], acks: int, timeout_ms: int,
                   reply: Callable[[dict[TopicPartition, Any], CurrentLeaders], None],
                   version: int = 0) -> None:
        """Append each batch at its partition's leader; answer per partition per `acks`, and
        from Produce v10 with the current leader of each partition refused
        NOT_LEADER_OR_FOLLOWER (KIP-951)."""
        if version >= FIRST_CURRENT_LEADER_VERSION:  # looked up as the answer goes
            reply = partial(self._with_current_leaders, reply)
        replica_manager = self.replica_manager
        results: dict[TopicPartition, Any] = {}
        waiting: dict[TopicPartition, int] = {}
        for key, batch in batches.items():
            replica = replica_manager.replicas.get(key)
            if replica is None or replica.role is not Role.LEADER:
                results[key] = NOT_LEADER_OR_FOLLOWER
                continue
            if acks == -1 and len(replica.isr) < self.ctx.topics.leader_min_isr(
                    key, len(replica.assignment), self.broker.config):
                results[key] = NOT_ENOUGH_REPLICAS
                continue
            placed = replica_manager.append_as_leader(replica, batch)
            if acks == -1:
                waiting[key] = placed.end_offset
            results[key] = placed
        if acks != -1 or not waiting:
            reply(results, NO_LEADERS)
            return

        def answer(errors: dict[TopicPartition, int]) -> None:
            # A partition whose wait ended well answers with its placed batch (its offset).
            reply({**results, **{key: results[key] if error == NONE else error
                                 for key, error in errors.items()}}, NO_LEADERS)

        produce = DelayedProduce(self, answer, waiting)
        self.purgatory.watch(list(waiting), produce)
        if produce.try_complete():
            self.purgatory.forget(produce)
            return
        incarnation = self.broker.incarnation
        produce.timer = self.ctx.sim.after(timeout_ms * 1000,
                                           lambda: self._expire(produce, incarnation))

    def _expire(self, produce: DelayedProduce, incarnation: int) -> None:
        broker = self.broker
        if produce.done or broker.incarnation != incarnation:
            return
        if broker.stalled:
            self.ctx.after_stall(broker.id, lambda: self._expire(produce, incarnation))
            return
        self.purgatory.forget(produce)
        produce.expire()
