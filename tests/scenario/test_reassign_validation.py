"""The `reassign` fault's validation: every problem at once, each naming file, line and field
(ReplicationControlManager.validateManualPartitionAssignment's rules, checked before the run)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rig.errors import ScenarioError
from rig.scenario.load import load_scenario

BASE = """name: r
duration: 20s
kafka: "{kafka}"
cluster: {{brokers: 4}}
topics: [{{name: t, partitions: 2, replication_factor: 3}}]
faults:
  - {{kind: reassign, at: 5s, {fault}}}
"""


def problems(write: Callable[[str, str], Path], fault: str, kafka: str = "4.1") -> str:
    with pytest.raises(ScenarioError) as error:
        load_scenario(write(BASE.format(kafka=kafka, fault=fault), "s.yaml"))
    return str(error.value)


def test_a_good_reassign_loads(write_scenario: Callable[[str, str], Path]) -> None:
    # any replica count: Kafka lets a reassignment change the replication factor
    [variant] = load_scenario(write_scenario(BASE.format(
        kafka="4.1", fault="topic: t, partition: 1, replicas: [3, 2]"), "s.yaml")).variants
    [fault] = variant.faults
    assert (fault.kind, fault.topic, fault.partition, fault.replicas) == ("reassign", "t", 1,
                                                                          (3, 2))


@pytest.mark.parametrize(("fault", "message"), [
    ("topic: u, partition: 0, replicas: [1, 2, 3]",
     "s.yaml:7: $.faults[0].topic: no topic is named 'u' (topics: t)"),
    ("topic: t, partition: 2, replicas: [1, 2, 3]",
     "s.yaml:7: $.faults[0].partition: topic 't' has 2 partition(s): partition 2 does not exist"),
    ("topic: t, partition: 0, replicas: [1, 2, 9]",
     "s.yaml:7: $.faults[0].replicas: broker 9 is not in the cluster (brokers: 0, 1, 2, 3)"),
    ("topic: t, partition: 0, replicas: [1, 2, 1]",
     "s.yaml:7: $.faults[0].replicas: broker 1 is listed more than once"),
    ("topic: t, replicas: [1, 2, 3]",
     "s.yaml:7: $.faults[0]: a reassign fault needs `partition`"),
])
def test_each_mistake_is_one_located_message(write_scenario: Callable[[str, str], Path],
                                             fault: str, message: str) -> None:
    assert message in problems(write_scenario, fault)


def test_reassign_fields_belong_to_reassign(write_scenario: Callable[[str, str], Path]) -> None:
    text = BASE.format(kafka="4.1", fault="topic: t, partition: 0, replicas: [1, 2, 3]").replace(
        "kind: reassign", "kind: crash, broker: 1")
    with pytest.raises(ScenarioError) as error:
        load_scenario(write_scenario(text, "s.yaml"))
    assert "$.faults[0].partition: `partition` is for a reassign fault, not crash" in str(
        error.value)


def test_zookeeper_mode_before_2_4_names_the_field(
        write_scenario: Callable[[str, str], Path]) -> None:
    assert "s.yaml:7: $.faults[0].kind: reassign is modelled from Kafka 2.4" in (
        problems(write_scenario, "topic: t, partition: 0, replicas: [1, 2, 3]", kafka="2.3"))


def test_zookeeper_mode_from_2_4_loads(write_scenario: Callable[[str, str], Path]) -> None:
    [variant] = load_scenario(write_scenario(BASE.format(
        kafka="2.4", fault="topic: t, partition: 0, replicas: [1, 2, 3]"), "s.yaml")).variants
    assert variant.strategies["controller"].name == "zookeeper"
    assert [f.replicas for f in variant.faults] == [(1, 2, 3)]
