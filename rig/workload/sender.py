"""Kafka's Sender as rig's producer needs it: the queued batches of its RecordAccumulator
grouped into one produce request per leader, in-flight limits, the replies (acks, errors), retries
after a backoff with a metadata refresh, and batches that outlive delivery.timeout.ms.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rig.backoff import ExponentialBackoff
from rig.cluster.client_connections import ClientConnections
from rig.cluster.current_leader import NO_LEADERS, CurrentLeaders
from rig.cluster.endpoints import node_endpoints
from rig.cluster.log import Batch
from rig.cluster.metadata_response import metadata_request_bytes
from rig.cluster.partition import TopicPartition, partitions_by_topic
from rig.events import names
from rig.protocol import (
    PRODUCE,
    produce_request_body_size,
    produce_response_body_size,
    request_wire_size,
    response_wire_size,
)
from rig.protocol.errors import NETWORK_EXCEPTION, REQUEST_TIMED_OUT, RETRIABLE, STALE_METADATA
from rig.scenario.api_versions import metadata_version, produce_version
from rig.scenario.client_config import RETRY_BACKOFF_MS
from rig.scenario.model import ProducerSpec
from rig.scenario.profiles import profile
from rig.workload.accumulator import OpenBatch, RecordAccumulator
from rig.workload.metadata_updater import MetadataUpdater
from rig.workload.poll_timer import PollTimer
from rig.workload.producer_metadata import ProducerMetadata, ask_for_metadata

if TYPE_CHECKING:
    from rig.cluster.cluster import Cluster

MAX_IN_FLIGHT = 5  # max.in.flight.requests.per.connection
MAX_REQUEST = 1 << 20  # max.request.size


class Sender:
    """One producer's requests to the partition leaders. It takes batches from the head of the
    accumulator's queues and, on a retriable error, puts them back there: with one batch in
    flight per partition (`sending`), a partition's batches reach its log in order."""

    def __init__(self, cluster: Cluster, spec: ProducerSpec, producer_id: int,
                 accumulator: RecordAccumulator):
        self.cluster = cluster
        self.spec = spec
        self.producer_id = producer_id
        self.node = spec.node
        # Produce on the wire (rig.protocol.produce): the release's newest version, and the bytes
        # around each body: the size prefix and the header, whose client.id is the node's name.
        self.version = produce_version(cluster.variant.kafka)
        self._request_framing = request_wire_size(PRODUCE, self.version, self.node, 0)
        self._response_framing = response_wire_size(PRODUCE, self.version, 0)
        # Metadata on the wire (rig.cluster.metadata_response): the release's newest version,
        # naming the producer's topic.
        self._metadata_version = metadata_version(cluster.variant.kafka)
        self._metadata_request = metadata_request_bytes(self._metadata_version, self.node,
                                                        (spec.topic,))
        # Streams of its own, so that how often it retries or asks for metadata leaves the
        # records' draws (the accumulator's) alone: which live broker a refresh asks.
        self.rng = cluster.streams.get(f"workload/producer/{producer_id}/metadata")
        self.queues = accumulator.queues
        self.metadata = ProducerMetadata(cluster, spec.topic)
        # 3.7+: a refusal's current leader (KIP-951), a retry to a newer leader (KAFKA-15415)
        release = profile(cluster.variant.kafka)
        self._discovery = release.client_leader_discovery
        self._backoff = ExponentialBackoff(RETRY_BACKOFF_MS, release.retry_backoff_max_ms,
                                           cluster.streams.get(f"workload/producer/{producer_id}"
                                                               "/retry-backoff"))
        # The next look at a batch backing off (the Sender's poll timeout)
        self._poll = PollTimer(cluster.sim, lambda: self.drain(cluster.sim.now_us / 1000))
        self.sending: dict[TopicPartition, OpenBatch] = {}
        self._in_flight: dict[int, int] = {}
        # When its metadata requests go (KIP-580's backoff from 3.7, as its batches'); a
        # stream of its own for the jitter, as the batches' retries have theirs.
        self.updater = MetadataUpdater(
            cluster.sim, ExponentialBackoff(RETRY_BACKOFF_MS, release.retry_backoff_max_ms,
                                            cluster.streams.get(f"workload/producer/"
                                                                f"{producer_id}/metadata-backoff")),
            spec.request_timeout_ms, release.metadata_disconnect_fails_update,
            self._ask_for_metadata)
        self._leader_not_available_asks = release.metadata_leader_not_available_asks
        self._connections: set[int] = set()  # the brokers it has sent a request to
        # Its NetworkClient: which leaders take a request now (a failed connection asks
        # for metadata and lets the Sender's loop run again after the reconnect backoff).
        self.network = ClientConnections(
            cluster, self.node, str(self.node), release.reconnect_backoff_max_ms,
            cluster.streams.get(f"workload/producer/{producer_id}/reconnect-backoff"),
            self.updater.connection_reset, lambda: self.drain(cluster.sim.now_us / 1000))
        self._open_requests: dict[int, list[tuple[dict[TopicPartition, OpenBatch], list[bool]]]]
        self._open_requests = {}

    def drain(self, now_ms: float) -> None:
        """Send what may go: per leader, one batch per partition per request, at most
        MAX_IN_FLIGHT requests per connection; retried partitions wait out their backoff."""
        self._expire(now_ms)
        now_us = self.cluster.sim.now_us
        by_leader: dict[int, set[TopicPartition]] = {}
        looks = self._discovery  # (3.7+: every head batch notes its partition's leader epoch)
        for key, head in self.queues.heads():
            if not ((looks or head.attempts) and self._backing_off(key, head, now_us)):
                by_leader.setdefault(self.metadata.leaders.get(key, -1), set()).add(key)
        for leader, ready in sorted(by_leader.items()):
            if leader < 0:  # Sender.sendProducerData: unknownLeaderTopics
                self.updater.request_update()
                continue
            ready.difference_update(self.sending)
            if ready and not self.network.ready(leader):
                continue
            while ready and self._in_flight.get(leader, 0) < MAX_IN_FLIGHT:
                group = self.queues.drain_node(
                    leader, self.metadata.partitions_for_node(leader), ready, MAX_REQUEST)
                if not group:
                    break
                self._send(leader, group)
                ready.difference_update(group)

    def _backing_off(self, key: TopicPartition, head: OpenBatch, now_us: int) -> bool:
        """RecordAccumulator.shouldBackoff: a retried batch waits out its backoff, unless (3.7+)
        its partition has a newer leader epoch than at its last attempt; the Sender looks again
        when its backoff says."""
        if self._discovery:
            head.maybe_update_leader_epoch(self.metadata.epochs.get(key, -1))
            if head.leader_changed_for_retry:
                return False
        if head.attempts == 0:
            return False
        look = self._backoff.next_look_us(head.attempts, head.last_attempt_us, now_us)
        if look is not None:
            self._poll.wake_at(look)
        return look is not None

    def _expire(self, now_ms: float) -> None:
        """delivery.timeout.ms: a queued batch older than that fails, and is not retried."""
        timeout = self.spec.delivery_timeout_ms
        queues = self.queues
        oldest = queues.oldest_head_ms()
        if oldest is None or now_ms - oldest <= timeout:
            return  # (the drain's every look: no queue walked in order unless a batch expires)
        for key in queues.held():
            while (head := queues.head(key)) is not None and now_ms - head.created_ms > timeout:
                batch = queues.popleft(key)
                self.cluster.log.emit(names.PRODUCE_ERROR, producer=self.spec.name,
                                      topic=key[0], partition=key[1], error_code=REQUEST_TIMED_OUT,
                                      records=batch.records, id=[self.producer_id, batch.sequence],
                                      retrying=False)

    def _send(self, leader: int, group: dict[TopicPartition, OpenBatch]) -> None:
        cluster = self.cluster
        spec = self.spec
        by_topic: dict[str, list[int]] = {}
        for (topic, _), b in group.items():
            by_topic.setdefault(topic, []).append(b.size)
        size = self._request_framing + produce_request_body_size(self.version, by_topic.items())
        records = sum(b.records for b in group.values())
        cluster.log.emit(names.PRODUCE_REQUEST, producer=spec.name, broker=leader,
                         partitions=len(group), records=records, bytes=size, acks=spec.acks)
        wire = {key: Batch(0, b.records, -1, b.size, self.producer_id, b.sequence, b.created_ms,
                           b.keys if len(b.keys) == b.records else None)
                for key, b in group.items()}
        for batch in group.values():
            batch.attempts += 1
        self._connections.add(leader)
        if spec.acks == 0:
            cluster.send(self.node, leader, size, lambda: cluster.brokers[leader].on_produce(
                wire, 0, spec.request_timeout_ms, lambda *_: None, self.version), kind="produce")
            return
        self._in_flight[leader] = self._in_flight.get(leader, 0) + 1
        self.sending.update(group)  # one batch in flight per partition keeps order
        self._write(leader, group, wire, size, [False])

    def _write(self, leader: int, group: dict[TopicPartition, OpenBatch],
               wire: dict[TopicPartition, Batch], size: int, answered: list[bool]) -> None:
        """The request goes on the connection to `leader`: answered, or (its process gone)
        timed out after request.timeout.ms, which closes the connection."""
        cluster = self.cluster
        spec = self.spec
        self._open_requests.setdefault(leader, []).append((group, answered))

        def reply(results: dict[TopicPartition, Any], current: CurrentLeaders) -> None:
            size = self._response_framing + produce_response_body_size(
                self.version, partitions_by_topic(results).items(), len(current.leaders),
                node_endpoints(current.nodes, cluster.node_context.racks))
            cluster.send(leader, self.node, size,
                         lambda: self._on_response(leader, group, results, answered, current),
                         kind="produce")

        def timed_out() -> None:
            # NetworkClient.handleTimedOutRequests: the connection closes, and every other
            # request open on it fails as disconnected.
            if not answered[0]:
                self._close(leader, answered)

        cluster.send(self.node, leader, size, lambda: cluster.brokers[leader].on_produce(
            wire, spec.acks, spec.request_timeout_ms, reply, self.version), kind="produce")
        cluster.sim.call_after(spec.request_timeout_ms * 1000, timed_out)

    def connection_reset(self, broker: int) -> None:
        """`broker`'s process died: every request open to it fails with a network error."""
        self._close(broker)

    def _close(self, broker: int, timed_out: list[bool] | None = None) -> None:
        """The connection to `broker` broke, or (`timed_out`: that request's flag) a request on
        it timed out: that one fails as timed out, every other open one as disconnected. As
        NetworkClient.processDisconnection: the metadata updater hears of it first, then the
        requests' callbacks run (their metadata request goes after the disconnect)."""
        if broker in self._connections:  # (a broker it never talked to breaks nothing here)
            self._connections.discard(broker)
            self.network.disconnected(broker)
            self.updater.connection_reset(broker)
        for group, answered in self._open_requests.pop(broker, []):
            error = REQUEST_TIMED_OUT if answered is timed_out else NETWORK_EXCEPTION
            self._on_response(broker, group, dict.fromkeys(group, error), answered)

    def _on_response(self, leader: int, group: dict[TopicPartition, OpenBatch],
                     results: dict[TopicPartition, Any], answered: list[bool],
                     current: CurrentLeaders = NO_LEADERS) -> None:
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
            self.sending.pop(key, None)
            result = results.get(key, REQUEST_TIMED_OUT)
            if isinstance(result, Batch):
                log.emit(names.PRODUCE_ACK, producer=self.spec.name, topic=key[0],
                         partition=key[1], offset=result.base_offset, records=batch.records,
                         id=[self.producer_id, batch.sequence], acks=self.spec.acks,
                         epoch=result.epoch)
                continue
            retrying = result in RETRIABLE and batch.attempts <= self.spec.retries
            log.emit(names.PRODUCE_ERROR, producer=self.spec.name, topic=key[0],
                     partition=key[1], error_code=result, records=batch.records,
                     id=[self.producer_id, batch.sequence], retrying=retrying)
            if retrying:
                # Back to the head of its partition's queue, after the retry backoff.
                self.queues.appendleft(key, batch)
                batch.last_attempt_us = self.cluster.sim.now_us
            refresh = refresh or result in STALE_METADATA
        if self._discovery:
            self.metadata.update_partition_leadership(current.leaders, current.nodes)
        if refresh:
            self.updater.request_update()
        # The Sender's loop runs again: what is ready goes, a retried batch backs off.
        self.drain(now_ms)

    def _ask_for_metadata(self, request: object) -> int | None:
        """A Metadata request to a live broker (None if there is none); its answer updates what
        the producer knows and lets the Sender's loop run again."""
        cluster = self.cluster
        live = cluster.live_brokers()
        if not live:
            return None
        source = live[self.rng.randrange(len(live))]
        self._connections.add(source)

        def update(leaders: dict[TopicPartition, int], epochs: dict[TopicPartition, int],
                   alive: frozenset[int]) -> None:
            if not self.updater.is_open(request):
                return
            # 2.3+ (KAFKA-7831): a partition without a leader asks for the next update itself.
            leaderless = self._leader_not_available_asks and any(
                leaders.get(key, -1) < 0 for key in self.metadata.leaders)
            newer = self.metadata.update(leaders, epochs, alive)  # (KIP-580: progress)
            self.updater.answered(newer, leaderless)
            self.drain(cluster.sim.now_us / 1000)

        ask_for_metadata(cluster, self.node, source, self._metadata_version,
                         self._metadata_request, self.spec.topic, self.metadata.leaders, update)
        return source


__all__ = ["Sender"]
