"""A batch whose partition has no leader goes as soon as a metadata answer names one, though
nothing else drains the producer: Kafka's Sender asks for a metadata update when a ready
partition's leader is unknown and runs its loop again when the answer comes (retrying every
retry.backoff.ms while there is still none). Found among `rig fuzz` runs that never settled once
restarts inside a ZooKeeper session failed: after the producers stopped, a batch refused by a
partition that went offline sat queued for ever, since only a new record drained again."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rig.events import names
from rig.scenario.load import load_scenario
from tests.cluster.simulated import checked_run, named

# One replica on broker 0, which crashes at 4 s (its session expires at 8 s: the partition goes
# offline) and comes back at 11 s. The producer's only record is made at 5 s.
SCENARIO = """
name: leaderless
duration: 30s
quiesce: 10s
kafka: "2.4"
cluster: {brokers: 2, config: {zookeeper.session.timeout.ms: 6s}}
topics:
  - {name: t, assignment: [[0]]}
workload:
  producers:
    - {name: one, topic: t, rate: 1, count: 1, start: 5s, acks: 1}
faults:
  - {kind: crash, broker: 0, at: 4s, restart_after: 7s}
"""


def test_a_batch_waiting_for_a_leader_goes_when_the_metadata_names_one(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    [variant] = load_scenario(write_scenario(SCENARIO, "s.yaml")).variants
    events, result = checked_run(variant, tmp_path, "leaderless")
    [offline] = [e for e in named(events, names.ZK_PARTITION_STATE) if e["leader"] == -1]
    [elected] = named(events, names.LEADER_ELECTED)
    assert offline["t_ms"] < 11_000 < elected["t_ms"]
    # Delivered within a metadata round trip and a retry backoff of the election, not never.
    [ack] = named(events, names.PRODUCE_ACK)
    assert ack["id"] == [0, 0] and ack["t_ms"] - elected["t_ms"] < 110
    assert result.settled
