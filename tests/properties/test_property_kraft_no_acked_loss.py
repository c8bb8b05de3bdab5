"""Property, KRaft with Eligible Leader Replicas on (Kafka 4.1), acks=all, min.insync.replicas 2:
no schedule of process faults loses an acknowledged record, lets replicas diverge or gives a
partition two leaders in one epoch. Faults: crashes with restarts, stalls, network partitions
(the controller's node included) and controlled shutdowns, at random times, overlapping freely
(power loss left out, as in the ZooKeeper property: Kafka does not fsync by default).

The cluster has the one built-in controller (node "controller", which never fails) or a quorum
of three voters (`cluster.controllers: 3`, nodes 3, 4 and 5) whose processes crash too (the
active one or a voter by id) and which a network partition may cut off, voter 3 (the first
leader) included: failovers, check-quorum resignations and brokers finding the new leader then
run under the same faults (docs/kafka.md §12)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rig.scenario.profiles import profile
from tests.examples import examples
from tests.properties.test_property_no_acked_loss import BROKERS, check_schedule, draw_faults
from tests.properties.test_property_no_acked_loss import _fault as zk_fault

VOTERS = (3, 4, 5)  # cluster.controllers: 3 takes the ids after the brokers'
BROKER_KINDS = ["crash", "stall", "network-partition", "controlled-shutdown"]


def _fault(kind: str, at_s: float, data: st.DataObject) -> dict[str, Any]:
    return zk_fault(kind, at_s, data, (*BROKERS, "controller"))


def _crash_voter(at_s: float, data: st.DataObject) -> dict[str, Any]:
    """The active controller's process, or a voter's by id, dies and starts again later."""
    return {"kind": "crash", "at": f"{int(at_s * 1000)}ms",
            "controller": data.draw(st.sampled_from(["active", *VOTERS])),
            "restart_after": f"{data.draw(st.integers(200, 15_000))}ms"}


def _quorum_fault(kind: str, at_s: float, data: st.DataObject) -> dict[str, Any]:
    """A fault of a cluster with three voters: a partition may cut off a voter too."""
    if kind == "controller-crash":
        return _crash_voter(at_s, data)
    return zk_fault(kind, at_s, data, (*BROKERS, *VOTERS))


def _voter_fault(data: st.DataObject) -> dict[str, Any]:
    """The fault every quorum schedule has: a voter crashes, or is cut off from every other
    node (voter 3 leads from the start, so cutting it off cuts off the active controller until
    a failover moved it)."""
    at_s = data.draw(st.floats(1.0, 25.0))
    if data.draw(st.booleans()):
        return _crash_voter(at_s, data)
    alone = data.draw(st.sampled_from(VOTERS))
    return {"kind": "network-partition", "at": f"{int(at_s * 1000)}ms",
            "groups": [[alone], [n for n in (*BROKERS, *VOTERS) if n != alone]],
            "heal_after": f"{data.draw(st.integers(200, 15_000))}ms"}


def _scenario(faults: list[dict[str, Any]], seed: int, quorum: bool = False) -> dict[str, Any]:
    cluster: dict[str, Any] = {"brokers": 3, "config": {"min.insync.replicas": 2}}
    if quorum:
        cluster["controllers"] = len(VOTERS)
    return {
        "name": "property-kraft", "seed": seed, "duration": "30s", "kafka": "4.1",
        "quiesce": "90s",
        "cluster": cluster,
        "topics": [{"name": "t", "partitions": 3, "replication_factor": 3}],
        "workload": {"producers": [{"name": "app", "topic": "t", "rate": 300, "acks": "all",
                                    "keys": {"uniform": 50}, "linger": "20ms"}]},
        "faults": faults,
    }


# Each cluster shape gets its own examples, so a derandomized run (CI) always has both.
@pytest.mark.slow
@pytest.mark.parametrize("quorum", [False, True], ids=["one-controller", "three-voters"])
@settings(max_examples=examples(6), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.data_too_large])
@given(data=st.data(), seed=st.integers(0, 2**31))
def test_kraft_with_elr_loses_no_acknowledged_record(tmp_path_factory: pytest.TempPathFactory,
                                                     quorum: bool, data: st.DataObject,
                                                     seed: int) -> None:
    if quorum:
        faults = [_voter_fault(data),
                  *draw_faults(data, [*BROKER_KINDS, "controller-crash"], _quorum_fault)]
    else:
        faults = draw_faults(data, BROKER_KINDS, _fault)
    check_schedule(tmp_path_factory.mktemp("prop"), _scenario(faults, seed, quorum))


def test_the_kraft_property_runs_with_elr_on() -> None:
    assert profile("4.1").eligible_leader_replicas_enable  # the profile the property uses
