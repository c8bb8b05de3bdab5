"""Network partitions that cut clients: a producer or consumer named in a partition group is cut
from the nodes of the other groups. TCP sends what the cut dropped again, the timeout doubling
from 200 ms; a request still not through at request.timeout.ms (30 s) fails with its connection
and is retried, as for any broker the client cannot reach."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from rig.errors import ScenarioError
from rig.events import names
from rig.scenario.load import load_scenario
from tests.faults.test_fault_schedule import CLUSTER, Event, run

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


def _producer_cut(tmp_path: Path, seconds: int) -> tuple[list[Event], list[float]]:
    """The producer cut from every broker and ZooKeeper at 5 s for `seconds`: events, acks."""
    events = run(tmp_path, "cut", f"""
        faults:
          - {{kind: network-partition, groups: [[{{producer: p}}], [0, 1, 2, zk]], at: 5s,
             heal_after: {seconds}s}}
        duration: 60s
        """)
    return events, [e["t_ms"] for e in events if e["event"] == names.PRODUCE_ACK]


def test_a_producer_cut_from_the_brokers_for_3_s_goes_on_once_tcp_sends_again(
        tmp_path: Path) -> None:
    events, acks = _producer_cut(tmp_path, 3)
    # Nothing is acknowledged during the cut: TCP sends the first request lost again at 0.2,
    # 0.6, 1.4 and 3.0 s after it went (the timeout doubling from 200 ms); the last goes
    # through, the cut healed at 8 s, with everything queued behind it.
    lost = min(e["t_ms"] for e in events if e["event"] == names.PRODUCE_REQUEST
               and e["t_ms"] >= 5_000)
    assert not [t for t in acks if 5_010 < t < 8_000]
    assert 0 < min(t for t in acks if t > 5_010) - (lost + 3_000) < 5
    # Long before request.timeout.ms (30 s): no error, so no retry.
    assert not [e for e in events if e["event"] == names.PRODUCE_ERROR]
    # The brokers are untouched: no election, no ISR change.
    assert not [e for e in events if e["event"] in (names.LEADER_ELECTED, names.ISR_SHRINK)]


def test_a_producer_cut_for_longer_than_its_request_timeout_retries(tmp_path: Path) -> None:
    events, acks = _producer_cut(tmp_path, 40)
    # The requests sent into the cut time out at request.timeout.ms (30 s): the producer closes
    # the connection, TCP stops sending them, and the batches are retried.
    assert max(t for t in acks if t < 45_000) < 5_010
    errors = [e for e in events if e["event"] == names.PRODUCE_ERROR]
    assert errors and all(e["error_code"] == 7 and e["retrying"] for e in errors)
    assert 35_000 <= errors[0]["t_ms"] < 35_500
    assert min(t for t in acks if t > 5_010) > 45_000
    assert not [e for e in events if e["event"] in (names.LEADER_ELECTED, names.ISR_SHRINK)]
