"""A metadata answer naming a partition at an older leader epoch than the client has seen is
ignored for that partition from 2.3 (KAFKA-7738, Metadata.updateLastSeenEpoch): a broker whose
metadata cache an UpdateMetadata has not reached yet answers with the old leader, and a client
that had learned the new one (an earlier answer, or a refusal's current leader: KIP-951) keeps
it. Before, and for an answer naming no epoch, the answer replaces what the client knew."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from rig.engine import Simulation, Streams
from rig.workload.consumer_metadata import ConsumerMetadata
from rig.workload.metadata_epochs import StaleAnswers
from rig.workload.producer_metadata import ProducerMetadata

T0, T1 = ("t", 0), ("t", 1)


def test_an_older_epoch_is_ignored_from_2_3_an_equal_or_unknown_one_taken() -> None:
    checked, unchecked = StaleAnswers("2.3"), StaleAnswers("2.1")
    assert checked.ignores(4, 5) and not unchecked.ignores(4, 5)
    assert not checked.ignores(5, 5) and not checked.ignores(6, 5)
    assert not checked.ignores(-1, 5)  # (no epoch in the answer: taken as it is)
    assert not checked.ignores(0, -1)  # (nothing seen yet)


def _cluster(kafka: str) -> Any:
    states = {T0: SimpleNamespace(leader=1, leader_epoch=4),
              T1: SimpleNamespace(leader=2, leader_epoch=7)}
    return SimpleNamespace(partition_states=states, brokers={0: None, 1: None, 2: None},
                           variant=SimpleNamespace(kafka=kafka), sim=Simulation(),
                           streams=Streams(7))


@pytest.mark.parametrize(("kafka", "kept"), [("3.7", True), ("2.1", False)])
def test_a_producer_keeps_the_leader_a_refusal_named_over_a_stale_answer(kafka: str,
                                                                          kept: bool) -> None:
    metadata = ProducerMetadata(_cluster(kafka), "t")
    metadata.update_partition_leadership({T0: (2, 5)}, (2,))  # KIP-951 (3.7+ clients)
    if kafka == "2.1":  # (no KIP-951: an answer taught it epoch 5 instead)
        metadata.update({T0: 2, T1: 2}, {T0: 5, T1: 7}, frozenset({0, 1, 2}))
    assert (metadata.leaders[T0], metadata.epochs[T0]) == (2, 5)
    # A broker whose cache still holds epoch 4 answers; T1's answer is current.
    newer = metadata.update({T0: 1, T1: 0}, {T0: 4, T1: 8}, frozenset({0, 1, 2}))
    assert (metadata.leaders[T0], metadata.epochs[T0]) == ((2, 5) if kept else (1, 4))
    assert (metadata.leaders[T1], metadata.epochs[T1]) == (0, 8) and newer
    assert metadata.partitions_for_node(2) == ([T0] if kept else [])


@pytest.mark.parametrize(("kafka", "kept"), [("3.7", True), ("2.1", False)])
def test_a_consumer_acts_on_the_leaders_it_keeps(kafka: str, kept: bool) -> None:
    told: list[dict[Any, tuple[int, int]]] = []

    def answered(leaders: Any) -> bool:
        told.append(dict(leaders))
        return False

    spec = SimpleNamespace(topic="t", retry_backoff_ms=100, request_timeout_ms=30_000)
    metadata = ConsumerMetadata(_cluster(kafka), spec, "c-0", [T0, T1],  # type: ignore[arg-type]
                                answered)
    metadata.learn(T0, 2, 5)
    metadata.learn(T1, 2, 7)
    metadata.updater.is_open = lambda request: True  # type: ignore[method-assign]
    metadata._answer(object(), {T0: (1, 4), T1: (0, 8)})
    assert told == [{T0: (2, 5) if kept else (1, 4), T1: (0, 8)}]
    assert (metadata.leaders[T0], metadata.epochs[T0]) == ((2, 5) if kept else (1, 4))
    assert (metadata.leaders[T1], metadata.epochs[T1]) == (0, 8)
