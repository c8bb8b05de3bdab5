"""A producer: records at a rate, batched per partition by its RecordAccumulator
(rig.workload.accumulator), sent to each partition's leader, acknowledged per `acks`, retried on
retriable errors.

Time advances in ticks of `linger.ms`: the records of one tick are drawn and appended to
per-partition batches, and at the end of the tick every open batch closes and what may go is sent.
"""

from __future__ import annotations

import random
from collections import deque
from typing import TYPE_CHECKING, Any

from rig.cluster.log import Batch
from rig.cluster.partition import TopicPartition
from rig.events import names
from rig.protocol.errors import (
    NETWORK_EXCEPTION,
    REQUEST_TIMED_OUT,
    RETRIABLE,
)
from rig.scenario.model import ProducerSpec
from rig.workload.accumulator import OpenBatch, RecordAccumulator

if TYPE_CHECKING:
    from rig.cluster.cluster import Cluster

RETRY_BACKOFF_MS = 100  # retry.backoff.ms
MAX_IN_FLIGHT = 5  # max.in.flight.requests.per.connection
MAX_REQUEST = 1 << 20  # max.request.size
PRODUCE_OVERHEAD_BYTES = 60  # request header and per-request fields: not one of the exact sizes


class Producer:
    def __init__(self, cluster: Cluster, spec: ProducerSpec, index: int, rng: random.Random):
        self.cluster = cluster
        self.spec = spec
        self.id = index
        self.node = spec.node
        cluster.place_client(self.node, "producer", spec.rack)
        self.rng = rng
        topic = next(t for t in cluster.variant.topics if t.name == spec.topic)
        self.partitions = topic.partitions
        self.metadata = {key: state.leader for key, state in cluster.partition_states.items()
                         if key[0] == spec.topic}
        self.sent = 0
        # Key ids travel with the batches only where the cleaner needs them: compacted topics.
        policy = str(cluster.topic_config.get(spec.topic, {}).get("cleanup.policy", ""))
        self.accumulator = RecordAccumulator(spec, topic.partitions, rng,
                                             cluster.config.message_format, "compact" in policy)
        self.stopped = False
        self._carry = 1.0  # the first record goes out at `start`
        self._sending: dict[TopicPartition, OpenBatch] = {}
        self._in_flight: dict[int, int] = {}
        self._backoff_until: dict[TopicPartition, float] = {}
        self._refreshing = False
        self._open_requests: dict[int, list[tuple[dict[TopicPartition, OpenBatch], list[bool]]]]
        self._open_requests = {}

    @property
    def busy(self) -> bool:
        """Batches still queued or in flight (the run settles only when none are)."""
        return bool(self._sending) or any(self.accumulator.queues.values())

    # -- scheduling ----------------------------------------------------------------------------
    def start(self) -> None:
        self.cluster.sim.at(self.spec.start_ms * 1000, self._tick)

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
            self._drain(now_ms)
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
                or self._sending
                or any(self.accumulator.queues.values())):
            return 1
        step = spec.rate * tick_ms / 1000
        ticks, limit = 1, max(1, 1000 // tick_ms)
        while ticks < limit and self._carry + step < 1:
            self._carry += step
            ticks += 1
        return ticks

    # -- the sender ----------------------------------------------------------------------------
    def _drain(self, now_ms: float) -> None:
        """Kafka's Sender: per leader, one batch per partition per request, at most
        MAX_IN_FLIGHT requests per connection; retried partitions wait out their backoff."""
        self._expire(now_ms)
        by_leader: dict[int, list[TopicPartition]] = {}
        for key, queue in self.accumulator.queues.items():
            if queue and self._backoff_until.get(key, 0.0) <= now_ms:
                by_leader.setdefault(self.metadata.get(key, -1), []).append(key)
        for leader, keys in sorted(by_leader.items()):
            if leader < 0:
                self._refresh_metadata()
                continue
            while self._in_flight.get(leader, 0) < MAX_IN_FLIGHT:
                group = {}
                size = PRODUCE_OVERHEAD_BYTES
                for key in keys:
                    queue = self.accumulator.queues[key]
                    if queue and key not in self._sending and size + queue[0].size <= MAX_REQUEST:
                        group[key] = queue.popleft()
                        size += group[key].size
                if not group:
                    break
                self._send(leader, group)

    def _expire(self, now_ms: float) -> None:
        timeout = self.spec.delivery_timeout_ms
        for key, queue in self.accumulator.queues.items():
            while queue and now_ms - queue[0].created_ms > timeout:
                batch = queue.popleft()
                self.cluster.log.emit(names.PRODUCE_ERROR, producer=self.spec.name,
                                      topic=key[0], partition=key[1], error_code=REQUEST_TIMED_OUT,
                                      records=batch.records, id=[self.id, batch.sequence],
                                      retrying=False)

    def _send(self, leader: int, group: dict[TopicPartition, OpenBatch]) -> None:
        cluster = self.cluster
        spec = self.spec
        size = PRODUCE_OVERHEAD_BYTES + sum(b.size for b in group.values())
        records = sum(b.records for b in group.values())
        cluster.log.emit(names.PRODUCE_REQUEST, producer=spec.name, broker=leader,
                         partitions=len(group), records=records, bytes=size, acks=spec.acks)
        wire = {key: Batch(0, b.records, -1, b.size, self.id, b.sequence, b.created_ms,
                           b.keys if len(b.keys) == b.records else None)
                for key, b in group.items()}
        for batch in group.values():
            batch.attempts += 1
        if spec.acks == 0:
            cluster.send(self.node, leader, size, lambda: cluster.brokers[leader].on_produce(
                wire, 0, spec.request_timeout_ms, lambda results: None), kind="produce")
            return
        self._in_flight[leader] = self._in_flight.get(leader, 0) + 1
        self._sending.update(group)  # one batch in flight per partition keeps order
        answered = [False]
        if not cluster.brokers[leader].alive:
            # The connection is refused (a dead process) or reset: the client sees a network
            # error after a round trip, not after request.timeout.ms.
            refused = dict.fromkeys(group, NETWORK_EXCEPTION)
            cluster.sim.call_after(2 * cluster.network.base_link(self.node, leader).latency_us,
                              lambda: self._on_response(leader, group, refused, answered))
            return

        self._open_requests.setdefault(leader, []).append((group, answered))

        def reply(results: dict[TopicPartition, Any]) -> None:
            cluster.send(leader, self.node, 50 + 20 * len(results),
                         lambda: self._on_response(leader, group, results, answered),
                         kind="produce")

        cluster.send(self.node, leader, size, lambda: cluster.brokers[leader].on_produce(
            wire, spec.acks, spec.request_timeout_ms, reply), kind="produce")
        cluster.sim.call_after(spec.request_timeout_ms * 1000, lambda: self._on_response(
            leader, group, dict.fromkeys(group, REQUEST_TIMED_OUT), answered))

    def connection_reset(self, broker: int) -> None:
        """`broker`'s process died: every request open to it fails with a network error."""
        for group, answered in self._open_requests.pop(broker, []):
            self._on_response(broker, group, dict.fromkeys(group, NETWORK_EXCEPTION), answered)

    def _on_response(self, leader: int, group: dict[TopicPartition, OpenBatch],
                     results: dict[TopicPartition, Any], answered: list[bool]) -> None:
        if answered[0]:
            return
        answered[0] = True
        requests = self._open_requests.get(leader, [])
        self._open_requests[leader] = [r for r in requests if r[1] is not answered]
        self._in_flight[leader] -= 1
        log = self.cluster.log
        now_ms = self.cluster.sim.now_us / 1000
        refresh = False
        for key, batch in group.items():
            self._sending.pop(key, None)
            result = results.get(key, REQUEST_TIMED_OUT)
            if isinstance(result, Batch):
                log.emit(names.PRODUCE_ACK, producer=self.spec.name, topic=key[0],
                         partition=key[1], offset=result.base_offset, records=batch.records,
                         id=[self.id, batch.sequence], acks=self.spec.acks,
                         epoch=result.epoch)
                continue
            retrying = result in RETRIABLE and batch.attempts <= self.spec.retries
            log.emit(names.PRODUCE_ERROR, producer=self.spec.name, topic=key[0],
                     partition=key[1], error_code=result, records=batch.records,
                     id=[self.id, batch.sequence], retrying=retrying)
            if retrying:
                # Back to the head of its partition's queue, after the retry backoff.
                self.accumulator.queues.setdefault(key, deque()).appendleft(batch)
                self._backoff_until[key] = now_ms + RETRY_BACKOFF_MS
                refresh = True
        if refresh:
            self._refresh_metadata()
            self.cluster.sim.after(RETRY_BACKOFF_MS * 1000, lambda: self._drain(
                self.cluster.sim.now_us / 1000))
        else:
            self._drain(now_ms)

    def _refresh_metadata(self) -> None:
        """Ask a live broker for the partition leaders (one request at a time)."""
        cluster = self.cluster
        if self._refreshing:
            return
        live = [b for b in sorted(cluster.brokers) if cluster.brokers[b].alive]
        if not live:
            return
        self._refreshing = True
        source = live[self.rng.randrange(len(live))]

        def learn() -> None:
            leaders = dict(cluster.brokers[source].metadata_cache.leaders)
            cluster.send(source, self.node, 200, lambda: update(leaders))

        def update(leaders: dict[TopicPartition, int]) -> None:
            self._refreshing = False
            for key in self.metadata:
                if key in leaders:
                    self.metadata[key] = leaders[key]

        cluster.send(self.node, source, 60, learn)
        cluster.sim.after(RETRY_BACKOFF_MS * 1000, lambda: setattr(self, "_refreshing", False))


__all__ = ["Producer"]
