"""The profiles 3.3, 3.4 and 3.6 (issue 18): what each switches, checked where it shows.

- 3.3 (KIP-833): KRaft is production-ready, so a variant may run the kraft controller; the
  default stays ZooKeeper up to 3.9. Its controller refuses a fenced replica in a proposed ISR
  with INELIGIBLE_REPLICA (KIP-841: ReplicationControlManager.validateAlterPartitionData at the
  3.3.0 tag), and its ZooKeeper controller does the same (KafkaController.processAlterPartition).
- 3.3 and 3.4: followers send Fetch v13 (MetadataVersion.fetchRequestVersion at both tags:
  IBP_3_1_IV0 → 13) without ReplicaState, so AlterPartition (v2 there) carries no broker epochs
  (KIP-903 is 3.5's); a shrink by the controller still bumps the leader epoch.
- 3.6 (KAFKA-15021, MetadataVersion.isLeaderEpochBumpRequiredOnIsrShrink: below IBP_3_6_IV0):
  a shrink bumps only the partition epoch; 3.5 still bumps both. Fetch v15 at both.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from rig.cluster.kraft.replication_control import AlterPartitionRequest
from rig.events import names
from rig.protocol.errors import INELIGIBLE_REPLICA
from rig.scenario.load import load_scenario
from rig.scenario.model import VariantSpec
from rig.simulate import simulate
from tests.cluster.test_kraft_controller import Host, beat, part
from tests.scenario.test_load import problems

Write = Callable[[str, str], Path]

BASE = """
name: kraft-profile
duration: 25s
kafka: "{kafka}"
cluster: {{brokers: 3, config: {{min.insync.replicas: 2}}}}
topics:
  - {{name: t, partitions: 3, replication_factor: 3,
     assignment: [[0, 1, 2], [1, 2, 0], [0, 2, 1]]}}
workload:
  producers:
    - {{name: app, topic: t, rate: 100, keys: {{uniform: 100}}, acks: all, linger: 20ms}}
faults:
  - {{kind: crash, broker: 2, at: 5s, restart_after: 12s}}
strategies: {{controller: {controller}}}
"""


def variant(write: Write, kafka: str, controller: str = "kraft") -> VariantSpec:
    [one] = load_scenario(write(BASE.format(kafka=kafka, controller=controller),
                                "s.yaml")).variants
    return one


@pytest.mark.parametrize(("kafka", "fetch", "kip_903", "bump"), [
    ("3.3", 13, False, True), ("3.4", 13, False, True), ("3.5", 15, True, True),
    ("3.6", 15, True, False)])
def test_the_profile_sets_what_its_release_had(write_scenario: Write, kafka: str, fetch: int,
                                               kip_903: bool, bump: bool) -> None:
    kraft = variant(write_scenario, kafka)
    assert kraft.strategies["controller"].name == "kraft"
    assert kraft.config.fetch_version == fetch
    assert (kraft.config.fetch_version >= 15) is kip_903  # ReplicaState carries the epoch
    assert kraft.config.leader_epoch_bump_on_shrink is bump
    assert kraft.config.alter_partition_ineligible  # KIP-841, 3.3+
    assert not kraft.config.eligible_leader_replicas_enable
    assert not kraft.config.raft_check_quorum and not kraft.config.raft_pre_vote
    # ZooKeeper stays the default up to 3.9
    document = BASE.format(kafka=kafka, controller="kraft").replace(
        "strategies: {controller: kraft}\n", "")
    [default] = load_scenario(write_scenario(document, "d.yaml")).variants
    assert default.strategies["controller"].name == "zookeeper"


def test_kraft_is_refused_before_3_3_with_the_field_named(write_scenario: Write) -> None:
    path = write_scenario(BASE.format(kafka="3.1", controller="kraft"), "s.yaml")
    [message] = problems(path)
    assert message.startswith(f"{path}:13: $.strategies.controller: Kafka 3.1 has no KRaft "
                              "mode")
    assert "use kafka ≥ 3.3" in message
    assert variant(write_scenario, "3.1", "zookeeper").config.alter_partition_ineligible is False


def _controller(config: Any) -> Host:
    """A KRaft controller over one partition (0, 1, 2) with the variant's rules."""
    host = Host([(0, 1, 2)], elr=config.eligible_leader_replicas_enable,
                bump=config.leader_epoch_bump_on_shrink,
                fenced_lkl=config.elect_fenced_last_known_leader)
    host.controller.start_running([0, 1, 2])
    return host


def test_a_3_3_kraft_controller_refuses_a_fenced_replica_with_ineligible_replica(
        write_scenario: Write) -> None:
    host = _controller(variant(write_scenario, "3.3").config)
    c = host.controller
    host.sim.run(8000_000)
    beat(c, 0)
    beat(c, 1)
    host.sim.run(9000_000)  # 2 is silent: fenced, out of the ISR
    now = part(c, 0)
    assert now.isr == (0, 1)
    assert (now.leader_epoch, now.partition_epoch) == (1, 1)  # 3.3 bumps both on a shrink
    got: list[int] = []
    c.alter_partition(AlterPartitionRequest(("foo", 0), 0, c.registrations[0].epoch,
                                            now.leader_epoch, now.partition_epoch, (0, 1, 2)),
                      lambda error, _: got.append(error))
    assert got == [INELIGIBLE_REPLICA]
    assert part(c, 0) == now


def _run(write: Write, tmp_path: Path, kafka: str) -> list[dict[str, Any]]:
    scenario = load_scenario(write(BASE.format(kafka=kafka, controller="kraft"), "s.yaml"))
    [one] = scenario.variants
    log = tmp_path / f"{kafka}.jsonl"
    result = simulate(one, log, scenario=scenario.name)
    assert all(check.status.value == "ok" for check in result.checks), result.checks
    return [orjson.loads(line) for line in log.read_bytes().splitlines()]


@pytest.mark.parametrize(("kafka", "bump"), [("3.3", True), ("3.4", True), ("3.5", True),
                                             ("3.6", False)])
def test_a_fencing_shrink_bumps_the_leader_epoch_only_before_3_6(
        write_scenario: Write, tmp_path: Path, kafka: str, bump: bool) -> None:
    events = _run(write_scenario, tmp_path, kafka)
    fenced = next(e for e in events if e["event"] == names.BROKER_FENCED and e["broker"] == 2)
    changes = [e for e in events if e["event"] == names.PARTITION_CHANGE]
    # Partition 0 (leader 0) loses follower 2 in the fencing batch; its leader stays.
    [shrink] = [e for e in changes if e["partition"] == 0 and e["t_ms"] == fenced["t_ms"]]
    before = [e for e in changes if e["partition"] == 0 and e["seq"] < shrink["seq"]]
    old_leader_epoch = before[-1]["leader_epoch"] if before else 0
    old_partition_epoch = before[-1]["partition_epoch"] if before else 0
    assert (shrink["leader"], shrink["isr"]) == (0, [0, 1])
    assert shrink["partition_epoch"] == old_partition_epoch + 1
    assert shrink["leader_epoch"] == old_leader_epoch + bump
    # Followers fetch with the profile's version; before 3.5 without their broker epoch.
    fetches = [e for e in events if e["event"] == names.FETCH_REQUEST
               and e["role"] == "follower"]
    assert {e["version"] for e in fetches} == {13 if kafka < "3.5" else 15}
    # Broker 2 comes back: registered, unfenced and in the ISR again, through AlterPartition.
    back = [e for e in changes if e["partition"] == 0 and e["reason"] == "alter-partition"
            and 2 in e["isr"]]
    assert back and back[-1]["leader_epoch"] == shrink["leader_epoch"]
