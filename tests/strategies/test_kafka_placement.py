"""Kafka's AdminUtils placement: the examples from its documentation and its invariants."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rig.scenario.model import BrokerSpec, TopicSpec
from rig.strategies.placement import PlacementError, check_assignment
from rig.strategies.placement.explicit import ExplicitPlacement
from rig.strategies.placement.kafka import KafkaPlacement, kafka_assignment, rack_alternated
from tests.examples import examples


def brokers(racks: str | None = None, n: int = 0) -> list[BrokerSpec]:
    if racks is None:
        return [BrokerSpec(i) for i in range(n)]
    return [BrokerSpec(i, r) for i, r in enumerate(racks)]


def test_rack_alternated_order_of_the_seed() -> None:
    assert rack_alternated(brokers("aaabbb")) == [0, 3, 1, 4, 2, 5]


def test_rack_alternated_order_with_uneven_racks() -> None:
    specs = [BrokerSpec(0, "A"), BrokerSpec(1, "A"), BrokerSpec(2, "A"), BrokerSpec(3, "B"),
             BrokerSpec(4, "C"), BrokerSpec(5, "D")]
    assert rack_alternated(specs) == [0, 3, 4, 5, 1, 2]


def test_rack_alternated_order_from_adminutils_doc() -> None:
    # AdminUtils' comment: racks 0→rack1, 1→rack3, 2→rack3, 3→rack2, 4→rack2, 5→rack1
    specs = [BrokerSpec(0, "rack1"), BrokerSpec(1, "rack3"), BrokerSpec(2, "rack3"),
             BrokerSpec(3, "rack2"), BrokerSpec(4, "rack2"), BrokerSpec(5, "rack1")]
    assert rack_alternated(specs) == [0, 3, 1, 5, 4, 2]


def test_rack_unaware_table_from_adminutils_doc() -> None:
    # 5 brokers, 10 partitions, RF 3, start index 0: the table in AdminUtils' scaladoc.
    got = kafka_assignment(brokers(n=5), 10, 3, random.Random(0), start_index=0)
    assert got == [(0, 1, 2), (1, 2, 3), (2, 3, 4), (3, 4, 0), (4, 0, 1),
                   (0, 2, 3), (1, 3, 4), (2, 4, 0), (3, 0, 1), (4, 1, 2)]


def test_rack_aware_seed_example() -> None:
    got = kafka_assignment(brokers("aaabbb"), 6, 3, random.Random(0), start_index=0)
    assert got == [(0, 3, 1), (3, 1, 4), (1, 4, 2), (4, 2, 5), (2, 5, 0), (5, 0, 3)]


def test_random_start_comes_from_the_given_stream() -> None:
    a = kafka_assignment(brokers(n=6), 12, 2, random.Random(5))
    b = kafka_assignment(brokers(n=6), 12, 2, random.Random(5))
    assert a == b
    draws = {tuple(kafka_assignment(brokers(n=6), 12, 2, random.Random(s))) for s in range(20)}
    assert len(draws) > 1


@pytest.mark.parametrize(("specs", "partitions", "rf", "message"), [
    (brokers(n=3), 0, 1, "Number of partitions must be larger than 0."),
    (brokers(n=3), 3, 0, "Replication factor must be larger than 0."),
    (brokers(n=3), 3, 4, "Replication factor: 4 larger than available brokers: 3."),
    ([BrokerSpec(0, "a"), BrokerSpec(1)], 3, 1, "Not all brokers have rack information"),
])
def test_kafka_refusals(specs: list[BrokerSpec], partitions: int, rf: int, message: str) -> None:
    with pytest.raises(PlacementError, match=message.replace(".", r"\.")):
        kafka_assignment(specs, partitions, rf, random.Random(0))


@settings(max_examples=examples(200), deadline=None)
@given(n=st.integers(1, 12), racks=st.integers(1, 4), partitions=st.integers(1, 60),
       data=st.data())
def test_placement_invariants(n: int, racks: int, partitions: int, data: st.DataObject) -> None:
    rf = data.draw(st.integers(1, n))
    racked = data.draw(st.booleans())
    specs = [BrokerSpec(i, f"r{i % racks}" if racked else None) for i in range(n)]
    start = data.draw(st.none() | st.integers(0, n - 1))
    topic = TopicSpec("t", partitions, rf)
    got = KafkaPlacement(start_index=start).assign(specs, topic, random.Random(data.draw(
        st.integers(0, 2**32))))
    assert check_assignment(got, specs, topic) == []
    # Leaders are spread round-robin: counts differ by at most one.
    leaders = Counter(replicas[0] for replicas in got)
    assert max(leaders.values()) - min(leaders.get(b.id, 0) for b in specs) <= 1 or partitions < n
    if racked:
        used_racks = {b.rack for b in specs}
        for replicas in got:
            spread = {specs[r].rack for r in replicas}
            assert len(spread) == min(rf, len(used_racks))


def test_explicit_placement_takes_the_written_lists() -> None:
    topic = TopicSpec("t", 2, 2, assignment=((1, 0), (0, 1)))
    assert ExplicitPlacement().assign(brokers(n=2), topic, random.Random(0)) == [(1, 0), (0, 1)]
    with pytest.raises(PlacementError, match="no assignment"):
        ExplicitPlacement().assign(brokers(n=2), TopicSpec("u", 1, 1), random.Random(0))
