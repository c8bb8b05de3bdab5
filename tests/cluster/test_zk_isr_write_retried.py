"""A leader's ISR write to ZooKeeper (before IBP 2.7) is retried until the connection is back
(KafkaZkClient.retryRequestsUntilConnected, under Partition.expandIsr's lock), so an expansion
made while ZooKeeper is unreachable lands when it heals. Found by `rig fuzz` on
fuzz-replication (run 737 of 1,000, leader-epoch): broker 2, paused past its session, was
caught up again while ZooKeeper was cut off; the write was lost with the partition and its
pending state never cleared, so broker 2 stayed out of the ISR and the run never settled."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rig.events import names
from rig.scenario.load import load_scenario
from tests.cluster.simulated import checked_run, fuzzed_scenario, named

# Broker 2 pauses from 3.7 s to 9.8 s (its session expires at 8 s: the controller takes it out
# of the ISRs); ZooKeeper is cut off from every broker from 8.35 s to 12 s.
SCENARIO = fuzzed_scenario("isr-write-retried", """\
  - {kind: stall, at: 3710ms, broker: 2, heal_after: 6086ms}
  - {kind: network-partition, at: 8347ms, groups: [[zk], [0, 1, 2]], heal_after: 3653ms}""",
                           kafka="2.4", seed=466811928, brokers=3)


def test_an_isr_expansion_written_while_zookeeper_is_cut_off_lands_when_it_heals(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    [variant] = load_scenario(write_scenario(SCENARIO, "s.yaml")).variants
    events, result = checked_run(variant, tmp_path, "isr-write-retried")
    out = [e for e in named(events, names.ISR_SHRINK) if e["removed"] == [2]]
    assert out and all(e["by"] == "controller" and e["t_ms"] < 8100 for e in out)
    # Each leader's expansion reaches ZooKeeper just after the heal, not never.
    written = [e for e in named(events, names.ZK_PARTITION_STATE)
               if e["writer"] == "leader" and 2 in e["isr"] and e["t_ms"] > 8000]
    assert sorted(e["partition"] for e in written) == sorted(e["partition"] for e in out)
    assert all(12_000 < e["t_ms"] < 12_100 for e in written), written
    back = [e for e in named(events, names.ISR_EXPAND) if e["added"] == [2]]
    assert len(back) == len(out)
    assert result.settled
