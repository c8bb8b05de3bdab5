"""kraft-striped against Kafka's own StripedReplicaPlacerTest: a port of Kafka's MockRandom
(a java.util.Random with a fixed LCG) drives the placer, and the assignments must be Kafka's,
number for number. Then the invariants, on random clusters."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rig.scenario.model import BrokerSpec, TopicSpec
from rig.strategies.placement import PlacementError, check_assignment, check_leaders
from rig.strategies.placement.kafka import KafkaPlacement
from rig.strategies.placement.kraft import (
    KraftStripedPlacement,
    RackList,
    hashmap_order,
    java_string_hash,
    striped_assignment,
)
from tests.examples import examples


class JavaMockRandom(random.Random):
    """org.apache.kafka.server.util.MockRandom: `next(bits)` from a fixed LCG, and
    `java.util.Random.nextInt(bound)` on top of it (what the placer calls as randrange)."""

    def __init__(self, state: int = 17):
        super().__init__(0)
        self.state = state

    def _next(self, bits: int) -> int:
        self.state = (self.state * 2862933555777941757 + 3037000493) & (2**64 - 1)
        return self.state >> (64 - bits)

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:
        assert stop is None and step == 1
        bound = start
        r = self._next(31)
        m = bound - 1
        if bound & m == 0:
            return (bound * r) >> 31
        u = r
        while True:
            r = u % bound
            if (u - r + m) < 2**31:  # Java's `u - r + m < 0`, i.e. the int overflowed
                return r
            u = self._next(31)


def b(broker: int, rack: str | None = None, fenced: bool = False) -> BrokerSpec:
    return BrokerSpec(broker, rack, fenced)


def test_avoid_fenced_replica_if_possible_on_single_rack() -> None:
    racks = RackList(JavaMockRandom(), [b(3), b(1, fenced=True), b(0), b(4), b(2)])
    assert (racks.total, racks.unfenced, racks.names) == (5, 4, [None])
    assert [racks.place(4) for _ in range(5)] == [
        [3, 4, 0, 2], [4, 0, 2, 3], [0, 2, 3, 4], [2, 3, 4, 0], [0, 4, 3, 2]]


def test_placement_on_fenced_replica_on_single_rack() -> None:
    racks = RackList(JavaMockRandom(), [b(3), b(1, fenced=True), b(2)])
    assert [racks.place(3) for _ in range(4)] == [[3, 2, 1], [2, 3, 1], [3, 2, 1], [2, 3, 1]]


def test_rack_list_with_multiple_racks() -> None:
    racks = RackList(JavaMockRandom(), [b(11, "1"), b(10, "1"), b(30, "3"), b(31, "3"),
                                        b(21, "2"), b(20, "2", fenced=True)])
    assert racks.names == ["1", "2", "3"]
    assert [racks.place(4) for _ in range(3)] == [
        [11, 21, 31, 10], [21, 30, 10, 20], [31, 11, 21, 30]]


def test_rack_list_with_invalid_racks() -> None:
    racks = RackList(JavaMockRandom(), [
        b(11, "1"), b(10, "1"), b(30, "3", True), b(31, "3", True), b(20, "2", True),
        b(21, "2", True), b(41, "4"), b(40, "4", True)])
    assert (racks.total, racks.unfenced) == (8, 3)
    assert [racks.place(4) for _ in range(3)] == [
        [41, 11, 21, 30], [10, 20, 31, 41], [41, 21, 30, 11]]


def test_successful_placement() -> None:
    assert striped_assignment([b(0), b(3), b(2), b(1)], 5, 3, JavaMockRandom()) == [
        (2, 3, 0), (3, 0, 1), (0, 1, 2), (1, 2, 3), (1, 0, 2)]


def test_multi_partition_topic_on_a_single_unfenced_broker() -> None:
    assert striped_assignment([b(0), b(1, fenced=True)], 3, 1, JavaMockRandom()) == [(0,)] * 3


def test_first_placement_rack_unaware_and_rack_aware() -> None:
    # The first call of testPlaceShiftsInitialOffsetsRackUnaware / ...RackAware.
    assert striped_assignment([b(i) for i in range(12)], 2, 3, JavaMockRandom()) == [
        (7, 8, 9), (8, 9, 10)]
    assert striped_assignment([b(i, str(1 + i // 4)) for i in range(12)], 2, 3,
                              JavaMockRandom()) == [(6, 8, 2), (9, 3, 7)]
    assert striped_assignment([b(i, str(i + 1)) for i in range(4)], 1, 2,
                              JavaMockRandom()) == [(0, 1)]


def test_even_distribution_through_the_reshuffles() -> None:
    counts = Counter(striped_assignment([b(i) for i in range(4)], 200, 2, JavaMockRandom()))
    assert counts == {(0, 1): 14, (0, 2): 22, (0, 3): 14, (1, 0): 17, (1, 2): 17, (1, 3): 16,
                      (2, 0): 13, (2, 1): 17, (2, 3): 20, (3, 0): 20, (3, 1): 19, (3, 2): 11}


@pytest.mark.parametrize(("brokers", "rf", "message"), [
    ([b(11, "1", True), b(10, "1", True)], 1, "All brokers are currently fenced."),
    ([b(11, "1"), b(10, "1")], 3, "The target replication factor of 3 cannot be reached "
                                  "because only 2 broker(s) are registered."),
    ([b(11, "1"), b(10, "1")], 0, "Invalid replication factor 0: the replication factor must "
                                  "be positive."),
])
def test_kafkas_refusals_and_messages(brokers: list[BrokerSpec], rf: int, message: str) -> None:
    with pytest.raises(PlacementError) as refused:
        striped_assignment(brokers, 1, rf, JavaMockRandom())
    assert str(refused.value) == message


def test_java_hash_codes_and_hashmap_iteration_order() -> None:
    assert java_string_hash("1") == 49
    # "rack-a".hashCode() is -938608917 as a Java int: s[0]*31^5 + … + s[5], mod 2^32.
    assert java_string_hash("rack-a") == 3356358379 == -938608917 + 2**32
    assert java_string_hash("\U0001f600") == 0xD83D * 31 + 0xDE00  # UTF-16 code units
    # Buckets (h ^ h >>> 16) & 15: empty rack 0, "a" (97) 1, "b" (98) 2: not insertion order.
    assert hashmap_order(["b", "a", None]) == [None, "a", "b"]
    # "q" (113) shares bucket 1 with "a": within a bucket, insertion order.
    assert hashmap_order(["q", "a"]) == ["q", "a"]
    assert hashmap_order(["a", "q"]) == ["a", "q"]


def test_kafka_placement_leaves_fenced_brokers_out() -> None:
    brokers = [b(0), b(1), b(2, fenced=True)]
    assignment = KafkaPlacement(start_index=0).assign(brokers, TopicSpec("t", 6, 2),
                                                      random.Random(1))
    assert all(2 not in replicas for replicas in assignment)
    with pytest.raises(PlacementError, match=r"Replication factor: 3 larger than available "
                                             r"brokers: 2\."):
        KafkaPlacement().assign(brokers, TopicSpec("t", 1, 3), random.Random(1))


@settings(max_examples=examples(200), deadline=None)
@given(n=st.integers(1, 12), racks=st.integers(0, 4), partitions=st.integers(1, 60),
       seed=st.integers(0, 2**32), data=st.data())
def test_striped_placement_invariants(n: int, racks: int, partitions: int, seed: int,
                                      data: st.DataObject) -> None:
    fenced = data.draw(st.sets(st.integers(0, n - 1), max_size=n - 1))
    rf = data.draw(st.integers(1, n))
    brokers = [b(i, f"r{i % racks}" if racks else None, i in fenced) for i in range(n)]
    topic = TopicSpec("t", partitions, rf)
    assignment = KraftStripedPlacement().assign(brokers, topic, random.Random(seed))
    assert check_assignment(assignment, brokers, topic) == []
    assert check_leaders(assignment, brokers) == []
    assert assignment == KraftStripedPlacement().assign(brokers, topic, random.Random(seed))
    # Rack striping: when there are enough racks, a partition never repeats one.
    if racks and rf <= racks and not fenced and n >= racks:
        assert all(len({f"r{r % racks}" for r in replicas}) == rf for replicas in assignment)
