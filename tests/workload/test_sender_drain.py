"""A producer's drain as RecordAccumulator.drainBatchesForOneNode takes batches: per leader, from
where its last drain stopped, and a batch that would take a request past max.request.size ends
that request (it goes first in the next one); it is not skipped for a smaller one behind it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from rig.engine.rng import Streams
from rig.workload.accumulator import BatchQueues, OpenBatch
from rig.workload.sender import MAX_REQUEST, Sender

TOPIC = "t"


def _sender(sizes: list[int], leaders: list[int]) -> tuple[Sender, list[list[int]]]:
    keys = [(TOPIC, p) for p in range(len(sizes))]
    cluster: Any = SimpleNamespace(
        variant=SimpleNamespace(kafka="3.9"), sim=SimpleNamespace(now_us=0),
        network=SimpleNamespace(cuts={}),
        brokers={0: SimpleNamespace(alive=True), 1: SimpleNamespace(alive=True)},
        streams=Streams(0),
        partition_states={key: SimpleNamespace(leader=leader, leader_epoch=0)
                          for key, leader in zip(keys, leaders, strict=True)})
    spec: Any = SimpleNamespace(node="producer-p", topic=TOPIC, delivery_timeout_ms=120_000,
                                request_timeout_ms=30_000)
    queues = BatchQueues()
    for p, (key, size) in enumerate(zip(keys, sizes, strict=True)):
        queues.append(key, OpenBatch(1, size, p, 0.0))
    accumulator: Any = SimpleNamespace(queues=queues)
    sender = Sender(cluster, spec, 7, accumulator)
    requests: list[list[int]] = []

    def send(leader: int, group: dict[Any, OpenBatch]) -> None:
        requests.append([p for _, p in group])
        sender.sending.update(group)  # in flight until answered

    sender._send = send  # type: ignore[method-assign]
    return sender, requests


def test_a_batch_that_does_not_fit_ends_the_request_and_leads_the_next() -> None:
    big, small = MAX_REQUEST * 6 // 10, MAX_REQUEST // 10
    sender, requests = _sender([big, big, small], [0, 0, 0])
    sender.drain(0.0)
    # Kafka breaks at partition 1 (600 KiB + 600 KiB > 1 MiB) instead of taking partition 2.
    assert requests == [[0], [1, 2]]


def test_the_first_batch_goes_whatever_its_size() -> None:
    sender, requests = _sender([MAX_REQUEST * 2, 100], [0, 0])
    sender.drain(0.0)
    assert requests == [[0], [1]]


def test_each_leader_drains_its_own_partitions_from_its_own_index() -> None:
    big = MAX_REQUEST * 6 // 10
    sender, requests = _sender([big, 100, big, big], [0, 1, 0, 0])
    sender.drain(0.0)
    assert requests == [[0], [2], [3], [1]]  # leader 0's three requests, then leader 1's
