"""A producer (Kafka's KafkaProducer): records at a rate, batched per partition by its
RecordAccumulator (rig.workload.accumulator), sent to the partition leaders by its Sender
(rig.workload.sender), acknowledged per `acks`, retried on retriable errors.

Time advances in ticks of `linger.ms`: the records of one tick are drawn and appended to
per-partition batches, and at the end of the tick every open batch closes and what may go is sent.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from rig.scenario.model import ProducerSpec
from rig.workload.accumulator import RecordAccumulator
from rig.workload.producer_metadata import ProducerMetadata
from rig.workload.sender import Sender

if TYPE_CHECKING:
    from rig.cluster.cluster import Cluster


class Producer:
    """The clock of a producer's records (rate, bursts, count, stop) over its accumulator and
    sender. The accumulator draws the records from the producer's stream (`rng`); the sender's
    draws (a metadata refresh's broker, the retry backoff's jitter) have streams of their own."""

    def __init__(self, cluster: Cluster, spec: ProducerSpec, index: int, rng: random.Random):
        self.cluster = cluster
        self.spec = spec
        self.node = spec.node
        cluster.place_client(self.node, "producer", spec.rack)
        topic = next(t for t in cluster.variant.topics if t.name == spec.topic)
        self.sent = 0
        # Key ids travel with the batches only where the cleaner needs them: compacted topics.
        policy = str(cluster.topic_config.get(spec.topic, {}).get("cleanup.policy", ""))
        self.accumulator = RecordAccumulator(spec, topic.partitions, rng,
                                             cluster.config.message_format, "compact" in policy)
        self.stopped = False
        self._carry = 1.0  # the first record goes out at `start`
        self.sender = Sender(cluster, spec, index, self.accumulator)

    @property
    def busy(self) -> bool:
        """Batches still queued or in flight (the run settles only when none are)."""
        return bool(self.sender.sending) or bool(self.accumulator.queues)

    def connection_reset(self, broker: int) -> None:
        """The cluster's call when `broker`'s process dies: the sender fails what is open to it."""
        self.sender.connection_reset(broker)

    # -- scheduling ----------------------------------------------------------------------------
    def start(self) -> None:
        self.cluster.sim.at(self.spec.start_ms * 1000, self._begin)

    def _begin(self) -> None:
        # The first send waits on metadata (KafkaProducer.waitOnMetadata): a producer knows the
        # leaders and epochs of when it starts, not of the cluster's start.
        self.sender.metadata = ProducerMetadata(self.cluster, self.spec.topic)
        self._tick()

    def stop(self) -> None:
        """No new records; what is queued is still delivered (or expires)."""
        self.stopped = True

    def _producing_now(self, now_ms: float) -> bool:
        spec = self.spec
        if spec.stop_ms is not None and now_ms >= spec.stop_ms:
            return False
        if spec.burst_on_ms:
            phase = (now_ms - spec.start_ms) % (spec.burst_on_ms + spec.burst_off_ms)
            return phase < spec.burst_on_ms
        return True

    def _tick(self) -> None:
        if self.stopped:
            return
        spec = self.spec
        now_ms = self.cluster.sim.now_us / 1000
        tick_ms = max(1, spec.linger_ms)
        if self._producing_now(now_ms):
            self._carry += spec.rate * tick_ms / 1000
            due = int(self._carry)
            self._carry -= due
            if spec.count is not None:
                due = min(due, spec.count - self.sent)
            self.accumulator.add_records(due, now_ms)
            self.sent += due
            # Whatever waited a full linger is sent now.
            self.accumulator.close_all(now_ms)
            self.sender.drain(now_ms)
        if spec.count is not None and self.sent >= spec.count:
            return
        if spec.stop_ms is not None and now_ms >= spec.stop_ms:
            return
        self.cluster.sim.call_after(self._ticks_until_due(tick_ms) * tick_ms * 1000, self._tick)

    def _ticks_until_due(self, tick_ms: int) -> int:
        """How many linger ticks the next tick is away: 1, or, for a slow producer with nothing
        open, queued or in flight, as many as draw no record (up to a simulated second). The
        skipped ticks would have added their share of the rate and done nothing else, so their
        share is added here: the records come at the same ticks, with far fewer kernel events."""
        spec = self.spec
        if (spec.burst_on_ms or spec.stop_ms is not None or self.accumulator.open_batches
                or self.sender.sending
                or bool(self.accumulator.queues)):
            return 1
        step = spec.rate * tick_ms / 1000
        ticks, limit = 1, max(1, 1000 // tick_ms)
        while ticks < limit and self._carry + step < 1:
            self._carry += step
            ticks += 1
        return ticks


__all__ = ["Producer"]
