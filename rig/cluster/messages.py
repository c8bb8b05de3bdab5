"""Fetch requests and responses as they travel through the simulation.

They carry what the model needs (session fields, the partitions whose fetch data changed) and
the shape the byte accounting needs; the wire bytes themselves are the codec's business.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from rig.cluster.current_leader import NO_LEADERS, CurrentLeaders
from rig.cluster.log import Batch
from rig.cluster.network import Node
from rig.cluster.partition import FetchState, TopicPartition
from rig.protocol import NodeEndpoint, ResponsePartitionShape, ResponseShape, ResponseTopicShape
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
    # The leader's last-fetched-epoch check of it (rig.cluster.diverging_epoch), made on arrival.
    diverging: dict[TopicPartition, tuple[int, int]] | None = None
    # Its partitions fenced on arrival (rig.cluster.fetch_epochs): (error, the epoch sent).
    fenced: dict[TopicPartition, tuple[int, int]] | None = None


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
    # Fetch v12+: partitions whose log diverges from the leader's, with the leader's (epoch,
    # end offset) to truncate by, and no records (Partition.readRecords, KAFKA-10554).
    diverging: dict[TopicPartition, tuple[int, int]] = field(default_factory=dict)
    # KIP-320: the partitions answered FENCED_ / UNKNOWN_LEADER_EPOCH, with the epoch they sent.
    fenced: dict[TopicPartition, int] = field(default_factory=dict)
    # Fetch v5+ (KIP-107): the leader's log start of each partition answered to a follower,
    # where it is above 0 (a consumer reads it only for a metric).
    log_starts: dict[TopicPartition, int] = field(default_factory=dict)
    # Fetch v16+ (KIP-951): the leader and epoch the broker knows for each partition answered
    # NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH, and which of those leaders it has alive.
    current_leaders: CurrentLeaders = NO_LEADERS


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


def listed_incremental(cache: Any, context: SessionContext,
                       records: Mapping[TopicPartition, Any],
                       errors: Mapping[TopicPartition, Any],
                       *changed: Mapping[TopicPartition, Any]) -> dict[TopicPartition, None]:
    """What an incremental response lists: the session's `changed`, the partitions with
    `records` or `errors`, and those of each of `changed` (a preferred read replica, a diverging
    epoch); nothing for a full fetch, which lists everything. Tells the session cache what was
    sent, and which partitions had errors (listed again next time)."""
    if context.error_code != NONE or context.full:
        _errors_again(cache, context, errors)
        return {}
    listed = dict(context.changed or {})
    for keys in (records, errors, *changed):
        if keys:
            listed.update(dict.fromkeys(keys))
    # Optional cache API: list in the session's order, and rotate the partitions that
    # returned records to its end (KIP-227's fairness under the response size limit). An idle
    # round lists nothing, in any order.
    in_order = getattr(cache, "listed_in_order", None) if listed else None
    if in_order is not None:
        listed = in_order(context, listed)
    cache.sent(context, listed)
    rotate = getattr(cache, "moved_to_end", None)
    if rotate is not None and records:
        rotate(context, [key for key in listed if key in records])
    _errors_again(cache, context, errors)
    return listed


def _errors_again(cache: Any, context: SessionContext,
                  errors: Mapping[TopicPartition, Any]) -> None:
    """Optional cache API: a partition answered with an error is listed again next time."""
    again = getattr(cache, "answered_errors", None) if errors and context.session_id else None
    if again is not None:
        again(context, errors)


def response_sizes(meter: Meter, request: FetchRequestMsg, context: SessionContext,
                   records: dict[TopicPartition, tuple[list[Batch], int]],
                   listed: dict[TopicPartition, None],
                   diverging: Mapping[TopicPartition, Any] | None = None,
                   current: Mapping[TopicPartition, Any] | None = None,
                   endpoints: tuple[NodeEndpoint, ...] = ()) -> Sizes:
    """The response's body, header and wire bytes. A full response without records, a
    diverging epoch or a current leader (an idle round's, the same round after round) is sized
    by its topic runs, without its shape; an incremental one that lists nothing has no topics."""
    if context.error_code == NONE and not records and not diverging and not current:
        if context.full:
            return meter.idle_response(request.version, request.topic_runs)
        if not listed:  # an incremental response listing nothing: an idle session's round
            return meter.idle_response(request.version, ())
    return meter.response(response_shape(request, context, records, listed, diverging, current,
                                         endpoints))


def response_shape(request: FetchRequestMsg, context: SessionContext,
                   records: dict[TopicPartition, tuple[list[Batch], int]],
                   listed: dict[TopicPartition, None],
                   diverging: Mapping[TopicPartition, Any] | None = None,
                   current: Mapping[TopicPartition, Any] | None = None,
                   endpoints: tuple[NodeEndpoint, ...] = ()) -> ResponseShape:
    """What the codec needs to size a response: its topics, in order, with the partitions that
    carry records or a tagged field (a diverging epoch, a current leader: KIP-951) and how many
    are idle, and the NodeEndpoints of those leaders."""
    if context.error_code != NONE:
        return ResponseShape(request.version, ())
    busy = {key: ResponsePartitionShape(records=size) for key, (_, size) in records.items()}
    for key in diverging or ():
        busy[key] = ResponsePartitionShape(diverging_epoch=True)  # never with records
    for key in current or ():
        busy[key] = ResponsePartitionShape(current_leader=True)  # an error: no records
    if context.full:
        runs = request.topic_runs
        if len(runs) > 1 and len({topic for topic, _ in runs}) != len(runs):
            # A topic in several runs (partitions of two topics interleaved after
            # leadership moved): each run carries its own partitions, in request order.
            return ResponseShape(request.version, _walk_runs(runs, request.partitions, busy),
                                 endpoints)
        busy_by_topic: dict[str, list[ResponsePartitionShape]] = {}
        for (topic, _), shape in busy.items():
            busy_by_topic.setdefault(topic, []).append(shape)
        return ResponseShape(request.version, tuple(
            _topic_shape(topic, n, busy_by_topic.pop(topic, [])) for topic, n in runs), endpoints)
    # A topic may come back in a later run: walk the runs in order.
    return ResponseShape(request.version, _walk_runs(topic_runs(listed), listed, busy), endpoints)


def _topic_shape(topic: str, listed: int,
                 busy: list[ResponsePartitionShape]) -> ResponseTopicShape:
    """One topic of a response: `listed` partitions, of which those in `busy` are not idle."""
    return ResponseTopicShape(topic, idle=listed - len(busy), partitions=tuple(busy))


def _walk_runs(runs: Iterable[tuple[str, int]], keys: Iterable[TopicPartition],
               busy: Mapping[TopicPartition, ResponsePartitionShape]
               ) -> tuple[ResponseTopicShape, ...]:
    """The topics of a response whose partitions come in `keys` order, `runs` giving each
    topic run's length: each run carries its own partitions."""
    walk = iter(keys)
    shaped = []
    for topic, n in runs:
        run = [next(walk) for _ in range(n)]
        shaped.append(_topic_shape(topic, n, [busy[k] for k in run if k in busy]))
    return tuple(shaped)
