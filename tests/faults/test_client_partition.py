"""Network partitions that cut clients: a producer or consumer named in a partition group is cut
from the nodes of the other groups, and its requests time out and are retried as for any
broker it cannot reach (request.timeout.ms, 30 s)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from rig.errors import ScenarioError
from rig.events import names
from rig.scenario.load import load_scenario
from tests.faults.test_fault_schedule import CLUSTER, run

GROUPS = """
workload:
  producers:
    - {name: p, topic: t, rate: 10, acks: all}
  consumers:
    - {group: g, topic: t, members: 3}
faults:
  - {kind: network-partition, groups: GROUPS, at: 5s, heal_after: 3s}
"""


def _groups(tmp_path: Path, groups: str) -> tuple[tuple[int | str, ...], ...]:
    base = CLUSTER.split("workload:")[0].replace("ACKS", "all")
    path = tmp_path / "s.yaml"
    path.write_text("name: s\n" + base + textwrap.dedent(GROUPS).replace("GROUPS", groups))
    (variant,) = load_scenario(path).variants
    return variant.faults[0].groups


def test_a_partition_group_names_producers_groups_and_members(tmp_path: Path) -> None:
    assert _groups(tmp_path, "[[{producer: p}, {consumer: g, member: 1}], [0, 1, 2, zk]]") == (
        ("producer-p", "consumer-g-1"), (0, 1, 2, "zk"))
    assert _groups(tmp_path, "[[{consumer: g}], [0]]") == (
        ("consumer-g-0", "consumer-g-1", "consumer-g-2"), (0,))


@pytest.mark.parametrize(("groups", "message"), [
    ("[[{producer: q}], [0]]", "no producer is named 'q' (producers: p)"),
    ("[[{consumer: h}], [0]]", "no consumer group is named 'h' (groups: g)"),
    ("[[{consumer: g, member: 3}], [0]]", "group 'g' has 3 member(s): member 3 does not exist"),
])
def test_a_client_not_in_the_workload_is_refused_with_its_place(tmp_path: Path, groups: str,
                                                                message: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        _groups(tmp_path, groups)
    text = str(caught.value)
    assert message in text and "s.yaml:" in text and "$.faults[0].groups[0][0]" in text


def test_a_producer_cut_from_the_brokers_times_out_and_retries(tmp_path: Path) -> None:
    events = run(tmp_path, "cut", """
        faults:
          - {kind: network-partition, groups: [[{producer: p}], [0, 1, 2, zk]], at: 5s,
             heal_after: 3s}
        duration: 60s
        """)
    acks = [e["t_ms"] for e in events if e["event"] == names.PRODUCE_ACK]
    # Nothing is acknowledged from the cut on: the requests sent into it are lost, and the
    # producer learns that only at request.timeout.ms (30 s) after each, then retries.
    assert max(t for t in acks if t < 35_000) < 5000
    errors = [e for e in events if e["event"] == names.PRODUCE_ERROR]
    assert errors and all(e["error_code"] == 7 and e["retrying"] for e in errors)
    assert 35_000 <= errors[0]["t_ms"] < 35_500
    assert min(t for t in acks if t > 5000) > errors[0]["t_ms"]
    # The brokers are untouched: no election, no ISR change.
    assert not [e for e in events if e["event"] in (names.LEADER_ELECTED, names.ISR_SHRINK)]
