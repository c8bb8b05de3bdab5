"""Kafka's range and round-robin assignors, and KIP-881's rack-aware range assignment, against
the cases of Kafka's RangeAssignorTest and AbstractPartitionAssignor.useRackAwareAssignment."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rig.errors import ScenarioError
from rig.scenario.load import load_scenario
from rig.workload.assignor import assign, rack_aware

Write = Callable[..., Path]


def layout(partitions: int, rf: int, racks: int) -> list[frozenset[str]]:
    """RangeAssignorTest's topic: broker b in rack b, partition p on brokers p, p+1, … mod racks."""
    return [frozenset(f"rack{(p + j) % racks}" for j in range(rf)) for p in range(partitions)]


MEMBERS = ["rack0", "rack1", "rack2"]


def test_plain_range_gives_contiguous_runs_the_first_members_one_more() -> None:
    assert assign(3, 7, "range") == [[0, 1, 2], [3, 4], [5, 6]]
    assert assign(4, 2, "range") == [[0], [1], [], []]


@given(st.integers(1, 40), st.integers(0, 200))
def test_plain_range_is_balanced_contiguous_and_complete(members: int, partitions: int) -> None:
    out = assign(members, partitions, "range")
    assert [p for taken in out for p in taken] == list(range(partitions))
    sizes = [len(taken) for taken in out]
    assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)


def test_round_robin_deals_partitions_in_turn_and_ignores_racks() -> None:
    expected = [[0, 3, 6], [1, 4], [2, 5]]
    assert assign(3, 7, "round-robin") == expected
    assert assign(3, 7, "round-robin", member_racks=MEMBERS,
                  partition_racks=layout(7, 1, 3)) == expected


def test_kip881_one_replica_each_member_gets_its_racks_partitions() -> None:
    # RangeAssignorTest.testRackAwareAssignmentWithUniformSubscription, topic t2 (7 partitions),
    # replication factor 1: "t2-0, t2-3, t2-6" / "t2-1, t2-4" / "t2-2, t2-5".
    assert assign(3, 7, "range", member_racks=MEMBERS, partition_racks=layout(7, 1, 3)) == [
        [0, 3, 6], [1, 4], [2, 5]]


def test_kip881_balance_comes_before_rack_alignment() -> None:
    # The same test with replication factor 2: "t2-0, t2-2, t2-3" / "t2-1, t2-4" / "t2-5, t2-6".
    # The third member finds only partition 5 on its rack; the plain pass gives it 6 as well.
    racks = layout(7, 2, 3)
    out = assign(3, 7, "range", member_racks=MEMBERS, partition_racks=racks)
    assert out == [[0, 2, 3], [1, 4], [5, 6]]
    assert "rack2" not in racks[6]


def test_every_partition_on_every_rack_keeps_the_plain_ranges() -> None:
    racks = layout(7, 3, 3)
    assert not rack_aware(MEMBERS, racks)
    assert assign(3, 7, "range", member_racks=MEMBERS, partition_racks=racks) == assign(
        3, 7, "range")


@pytest.mark.parametrize("member_racks", [
    [None, None, None],  # no member has a client.rack
    ["d", "e", "f"],  # no member's rack holds a replica
])
def test_without_matching_racks_the_ranges_are_plain(member_racks: list[str | None]) -> None:
    racks = layout(7, 1, 3)
    assert not rack_aware(member_racks, racks)
    assert assign(3, 7, "range", member_racks=member_racks, partition_racks=racks) == [
        [0, 1, 2], [3, 4], [5, 6]]


def test_a_member_without_a_rack_may_take_any_partition_in_the_rack_pass() -> None:
    # Member 0 has no rack (racksMatch is true for it): it takes the lowest three; member 1
    # (rack1) then takes its rack's partitions 4 and 7 (1 is gone), member 2 (rack2) 5 and 8;
    # the plain pass tops each up with the lowest left: 3, then 6.
    racks = layout(9, 1, 3)
    assert assign(3, 9, "range", member_racks=[None, "rack1", "rack2"],
                  partition_racks=racks) == [[0, 1, 2], [3, 4, 7], [5, 6, 8]]


@given(st.integers(1, 12), st.integers(0, 60), st.integers(1, 3), st.integers(1, 4))
def test_rack_aware_range_stays_balanced_and_complete(members: int, partitions: int, rf: int,
                                                      zones: int) -> None:
    racks = layout(partitions, min(rf, zones), zones)
    member_racks = [f"rack{i % zones}" for i in range(members)]
    out = assign(members, partitions, "range", member_racks=member_racks, partition_racks=racks)
    assert sorted(p for taken in out for p in taken) == list(range(partitions))
    sizes = [len(taken) for taken in out]
    assert max(sizes) - min(sizes) <= 1
    assert all(taken == sorted(taken) for taken in out)


# -- the scenario key ---------------------------------------------------------------------------
GROUP = """
cluster:
  brokers:
    - {id: 0, rack: a}
    - {id: 1, rack: b}
    - {id: 2, rack: c}
topics:
  - {name: t, partitions: 6, replication_factor: 1}
workload:
  consumers:
    - {group: g, topic: t, members: 3, rack: [a, b, c]EXTRA}
"""


def _group(write: Write, kafka: str, extra: str = "") -> Path:
    return write(f'name: kip881\nduration: 5s\nkafka: "{kafka}"\n'
                 + GROUP.replace("EXTRA", extra))


@pytest.mark.parametrize(("kafka", "extra", "expected"), [
    ("3.1", "", False),  # before KIP-881's clients
    ("3.5", "", True),
    ("3.9", ", rack_aware_assignment: false", False),
    ("3.1", ", rack_aware_assignment: true", True),
    ("3.9", ", assignment: round-robin", False),  # RoundRobinAssignor is never rack-aware
])
def test_rack_aware_assignment_defaults_by_profile(write_scenario: Write, kafka: str,
                                                   extra: str, expected: bool) -> None:
    [variant] = load_scenario(_group(write_scenario, kafka, extra)).variants
    assert variant.consumers[0].rack_aware_assignment is expected


def test_rack_aware_round_robin_is_refused_naming_the_field(write_scenario: Write) -> None:
    path = _group(write_scenario, "3.9", ", assignment: round-robin, rack_aware_assignment: true")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    [problem] = [str(p) for p in info.value.problems]
    assert problem.startswith(f"{path}:")
    assert "workload.consumers[0].rack_aware_assignment" in problem
    assert "round-robin assignor is not rack-aware" in problem
