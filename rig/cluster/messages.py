"""Fetch requests and responses as they travel through the simulation.

They carry what the model needs (session fields, the partitions whose fetch data changed) and
the shape the byte accounting needs; the wire bytes themselves are the codec's business.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from rig.cluster.log import Batch
from rig.cluster.network import Node
from rig.cluster.partition import FetchState, TopicPartition
from rig.protocol import ResponsePartitionShape, ResponseShape, ResponseTopicShape
from rig.protocol.errors import NONE
from rig.strategies.fetch_session import SessionContext, SessionRequest

if TYPE_CHECKING:
    from rig.cluster.wire import Meter, Sizes


class Fetcher(Protocol):
    """Who sent a fetch, as the leader sees it (rig.cluster.fetch_client.FetchClient)."""

    client_id: str
    node: Node

    @property
    def role(self) -> str: ...
    @property
    def privileged(self) -> bool: ...
    @property
    def slot_key(self) -> tuple[int | str, int]: ...
    @property
    def replica_id(self) -> int: ...
    @property
    def source(self) -> Node: ...
    @property
    def fetcher_id(self) -> int: ...

    def on_response(self, request: FetchRequestMsg, response: FetchResponseMsg) -> None: ...


@dataclass(slots=True)
class FetchRequestMsg:
    fetcher: Fetcher
    version: int
    session: SessionRequest
    partitions: dict[TopicPartition, None]  # every partition of the fetcher (for a full fetch)
    topic_runs: tuple[tuple[str, int], ...]  # the partitions of a full fetch, as topic runs
    updates: dict[TopicPartition, FetchState]  # fetch data that changed since the last request
    max_wait_ms: int
    min_bytes: int
    request_id: int = 0  # the fetcher's count: an answer to an older request is dropped
    max_bytes: int = 0  # the request's max_bytes (0: the broker's replica default)
    partition_max_bytes: int = 0
    arrived_us: int = -1  # when it reached the leader
    rack_id: str = ""  # a consumer's client.rack (Fetch v11+): its ClientMetadata
    replica_epoch: int = -1  # a follower's broker epoch (ReplicaState, Fetch v15+, KIP-903)


@dataclass(slots=True)
class FetchResponseMsg:
    error_code: int
    session_id: int
    listed: int
    records_bytes: int
    records: dict[TopicPartition, tuple[list[Batch], int]] = field(default_factory=dict)
    high_watermarks: dict[TopicPartition, int] = field(default_factory=dict)
    errors: dict[TopicPartition, int] = field(default_factory=dict)
    body_bytes: int = 0  # the response's sizes, as the leader's fetch.response logged them
    header_bytes: int = 0
    wire_bytes: int = 0
    sent_us: int = -1  # when the leader sent it
    # KIP-392: partitions the leader tells the consumer to read from another replica (v11+).
    preferred: dict[TopicPartition, int] = field(default_factory=dict)


def topic_runs(keys: object) -> tuple[tuple[str, int], ...]:
    """Consecutive partitions of one topic form one topic entry, as Kafka's builders group them."""
    runs: list[tuple[str, int]] = []
    current, count = None, 0
    for topic, _ in keys:  # type: ignore[attr-defined]
        if topic == current:
            count += 1
            continue
        if current is not None:
            runs.append((current, count))
        current, count = topic, 1
    if current is not None:
        runs.append((current, count))
    return tuple(runs)


def response_sizes(meter: Meter, request: FetchRequestMsg, context: SessionContext,
                   records: dict[TopicPartition, tuple[list[Batch], int]],
                   listed: dict[TopicPartition, None]) -> Sizes:
    """The response's body, header and wire bytes. A full response without records (an idle
    round's, the same round after round) is sized by its topic runs, without its shape."""
    if context.full and not records and context.error_code == NONE:
        return meter.idle_response(request.version, request.topic_runs)
    return meter.response(response_shape(request, context, records, listed))


def response_shape(request: FetchRequestMsg, context: SessionContext,
                   records: dict[TopicPartition, tuple[list[Batch], int]],
                   listed: dict[TopicPartition, None]) -> ResponseShape:
    """What the codec needs to size a response: its topics, in order, with the sizes of the
    partitions that carry records and how many are idle."""
    if context.error_code != NONE:
        return ResponseShape(request.version, ())
    if context.full:
        runs = request.topic_runs
        if len({topic for topic, _ in runs}) != len(runs):
            # A topic in several runs (partitions of two topics interleaved after
            # leadership moved): each run carries its own partitions, in request order.
            return ResponseShape(request.version,
                                 _walk_runs(runs, request.partitions, records))
        busy_by_topic: dict[str, list[int]] = {}
        for (topic, _), (_, size) in records.items():
            busy_by_topic.setdefault(topic, []).append(size)
        return ResponseShape(request.version, tuple(
            _topic_shape(topic, n, busy_by_topic.pop(topic, [])) for topic, n in runs))
    # A topic may come back in a later run: walk the runs in order.
    return ResponseShape(request.version, _walk_runs(topic_runs(listed), listed, records))


def _topic_shape(topic: str, listed: int, sizes: list[int]) -> ResponseTopicShape:
    """One topic of a response: `listed` partitions, of which those in `sizes` carry records."""
    return ResponseTopicShape(topic, idle=listed - len(sizes),
                              partitions=tuple(ResponsePartitionShape(records=s) for s in sizes))


def _walk_runs(runs: Iterable[tuple[str, int]], keys: Iterable[TopicPartition],
               records: Mapping[TopicPartition, tuple[Any, int]]
               ) -> tuple[ResponseTopicShape, ...]:
    """The topics of a response whose partitions come in `keys` order, `runs` giving each
    topic run's length: each run carries its own partitions."""
    walk = iter(keys)
    shaped = []
    for topic, n in runs:
        run = [next(walk) for _ in range(n)]
        shaped.append(_topic_shape(topic, n, [records[k][1] for k in run if k in records]))
    return tuple(shaped)
