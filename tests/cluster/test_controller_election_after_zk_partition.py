"""A controller failover while ZooKeeper is cut off from every broker: the watch on /controller
fires into the partition, and each broker hears of it when it reconnects within its session
(ZooKeeper re-delivers a triggered watch), then creates /controller, its ZooKeeper client
retrying the request the connection lost (KafkaZkClient.retryRequestsUntilConnected). Found by
`rig fuzz` on ZooKeeper 3.9: the notifications were lost with the partition and no broker ever
ran for controller again; the cluster never settled."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rig.events import names
from rig.scenario.load import load_scenario
from tests.cluster.simulated import checked_run, fuzzed_scenario, named

SCENARIO = fuzzed_scenario("failover-in-a-zk-partition", """\
  - {kind: network-partition, at: 5s, groups: [[zk], [0, 1, 2]], heal_after: 2s}
  - {kind: controller-failover, at: 5500ms}""",
                           kafka="3.9", seed=7, brokers=3)


def test_the_brokers_run_for_controller_once_zookeeper_is_back(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    [variant] = load_scenario(write_scenario(SCENARIO, "s.yaml")).variants
    events, _ = checked_run(variant, tmp_path, "failover-in-a-zk-partition")
    [heal] = [e for e in named(events, names.FAULT_HEAL) if e["kind"] == "network-partition"]
    elected = [e for e in named(events, names.CONTROLLER_ELECTED) if e["t_ms"] > 0]
    # None while ZooKeeper is unreachable; one as soon as the resent create gets through.
    assert len(elected) == 1 and elected[0]["epoch"] == 2
    assert heal["t_ms"] < elected[0]["t_ms"] < heal["t_ms"] + 200
    [quiesced] = named(events, names.RUN_QUIESCED)
    assert quiesced["settled"] is True
