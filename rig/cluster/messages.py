"""Fetch requests and responses as they travel through the simulation.

They carry what the model needs (session fields, the partitions whose fetch data changed) and
the shape the byte accounting needs; the wire bytes themselves are the codec's business.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rig.cluster.log import Batch
from rig.cluster.partition import FetchState, TopicPartition
from rig.strategies.fetch_session import SessionRequest

if TYPE_CHECKING:
    from rig.cluster.fetch_client import FetchClient


@dataclass(slots=True)
class FetchRequestMsg:
    fetcher: FetchClient
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
