"""Property, KRaft with Eligible Leader Replicas on (Kafka 4.1), acks=all, min.insync.replicas 2:
no schedule of process faults loses an acknowledged record, lets replicas diverge or gives a
partition two leaders in one epoch. Faults: crashes with restarts, stalls, network partitions
(the controller's node included) and controlled shutdowns, at random times, overlapping freely
(power loss left out, as in the ZooKeeper property: Kafka does not fsync by default)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rig.scenario.profiles import profile
from tests.properties.test_property_no_acked_loss import BROKERS, check_schedule, draw_faults
from tests.properties.test_property_no_acked_loss import _fault as zk_fault


def _fault(kind: str, at_s: float, data: st.DataObject) -> dict[str, Any]:
    return zk_fault(kind, at_s, data, (*BROKERS, "controller"))


def _scenario(faults: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    return {
        "name": "property-kraft", "seed": seed, "duration": "30s", "kafka": "4.1",
        "quiesce": "90s",
        "cluster": {"brokers": 3, "config": {"min.insync.replicas": 2}},
        "topics": [{"name": "t", "partitions": 3, "replication_factor": 3}],
        "workload": {"producers": [{"name": "app", "topic": "t", "rate": 300, "acks": "all",
                                    "keys": {"uniform": 50}, "linger": "20ms"}]},
        "faults": faults,
    }


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.data_too_large])
@given(data=st.data(), seed=st.integers(0, 2**31))
def test_kraft_with_elr_loses_no_acknowledged_record(tmp_path_factory: pytest.TempPathFactory,
                                                     data: st.DataObject, seed: int) -> None:
    faults = draw_faults(data, ["crash", "stall", "network-partition", "controlled-shutdown"],
                         _fault)
    check_schedule(tmp_path_factory.mktemp("prop"), _scenario(faults, seed))


def test_the_kraft_property_runs_with_elr_on() -> None:
    assert profile("4.1").eligible_leader_replicas_enable  # the profile the property uses
