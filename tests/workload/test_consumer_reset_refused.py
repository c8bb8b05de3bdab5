"""A consumer's reset refused by the leader stays awaiting its reset: the consumer asks for
metadata at once and sends the ListOffsets again after retry.backoff.ms, never fetching from the
old position meanwhile (Fetcher.resetOffsetsAsync: requestFailed, metadata.requestUpdate). Here a
2.3+ consumer whose metadata names a leader epoch older than the leader's (KIP-320,
KAFKA-7747: ListOffsets v4+ carries it) is refused FENCED_LEADER_EPOCH; before 2.3 it sends no
epoch and is answered at once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rig.events import names
from rig.scenario.load import load_scenario
from rig.workload.consumer_group import ConsumerGroup
from tests.cluster.simulated import checked_run, named

SCENARIO = """
name: reset-refused
duration: 2s
kafka: "{kafka}"
network: {{latency: 1ms}}
cluster: {{brokers: 3}}
topics:
  - {{name: t, partitions: 1, replication_factor: 3}}
workload:
  producers:
    - {{name: app, topic: t, rate: 200, acks: all, linger: 5ms}}
  consumers:
    - {{group: g, topic: t, members: 1, start: earliest}}
"""
KEY = ("t", 0)
RESET_AT_US = 1_000_000


@pytest.mark.parametrize(("kafka", "refused"), [("2.1", False), ("2.4", True), ("3.9", True)])
def test_a_reset_at_a_stale_leader_epoch_waits_for_metadata_and_is_sent_again(
        kafka: str, refused: bool, write_scenario: Callable[[str, str], Path],
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    start = ConsumerGroup.start

    def start_and_keep(group: ConsumerGroup) -> None:
        start(group)

        def stale_reset() -> None:  # as if a fetch had been answered OFFSET_OUT_OF_RANGE
            [member] = group.members
            leader = group.cluster.partition_states[KEY].leader
            member.leader_epochs[KEY] -= 1  # metadata older than the leader's epoch
            for fetcher in member.fetchers.values():
                fetcher.remove_partition(KEY)
            member.offsets.reset(KEY, leader)

        group.cluster.sim.call_at(RESET_AT_US, stale_reset)

    monkeypatch.setattr(ConsumerGroup, "start", start_and_keep)
    [variant] = load_scenario(write_scenario(SCENARIO.format(kafka=kafka), "s.yaml")).variants
    events, _ = checked_run(variant, tmp_path, "reset-refused")
    [reset] = named(events, names.CONSUMER_OFFSET_RESET)
    backoff_ms = variant.consumers[0].retry_backoff_ms
    waited = reset["t_ms"] - RESET_AT_US / 1000
    reads = [e for e in named(events, names.CONSUMER_READ)
             if RESET_AT_US / 1000 < e["t_ms"] < reset["t_ms"]]
    if refused:
        # refused (2 ms), retry.backoff.ms (SubscriptionState.requestFailed; the metadata asked
        # for meanwhile), ListOffsets again (2 ms)
        assert backoff_ms + 4 <= waited < backoff_ms + 6
    else:
        assert waited < 3
    assert reads == []  # nothing fetched from the old position while the reset was awaited
