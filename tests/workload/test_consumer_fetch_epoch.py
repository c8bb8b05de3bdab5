"""A consumer's fetch carries the leader epoch its metadata names from 2.3 (KIP-320's client
half, KAFKA-7747: Fetcher.prepareFetchRequests sends position.currentLeader.epoch); a 2.1 or 2.2
consumer's Fetch v10 carries none (Optional.empty(): -1), so no leader refuses it for its
epoch."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rig.cluster.partition import FetchState, TopicPartition
from rig.scenario.load import load_scenario
from rig.workload.consumer import ConsumerFetcher
from tests.cluster.simulated import checked_run

# Broker 0 leads t-0 and crashes at 1 s: t-0's leader epoch grows, and the consumer fetches it
# from the new leader with whatever epoch it sends.
SCENARIO = """
name: consumer-fetch-epoch
seed: 5
duration: 2s
cluster: {brokers: 3}
topics:
  - {name: t, partitions: 2, replication_factor: 3, assignment: [[0, 1, 2], [1, 2, 0]]}
workload:
  producers:
    - {name: app, topic: t, rate: 100, acks: all, linger: 5ms}
  consumers:
    - {group: g, topic: t, members: 1}
faults:
  - {kind: crash, broker: 0, at: 1s}
variants:
  k2.1: {kafka: "2.1"}
  k2.3: {kafka: "2.3"}
"""


@pytest.mark.parametrize(("variant", "sends"), [("k2.1", False), ("k2.3", True)])
def test_a_consumer_sends_its_leader_epoch_from_2_3(
        variant: str, sends: bool, write_scenario: Callable[[str, str], Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[tuple[TopicPartition, int, int]] = []  # (partition, broker, epoch sent)
    fetch = ConsumerFetcher.fetch

    def recording(self: ConsumerFetcher, key: TopicPartition, state: FetchState) -> Any:
        sent.append((key, self.leader_id, state.current_leader_epoch))
        return fetch(self, key, state)

    monkeypatch.setattr(ConsumerFetcher, "fetch", recording)
    scenario = load_scenario(write_scenario(SCENARIO, "s.yaml"))
    [spec] = [v for v in scenario.variants if v.name == variant]
    checked_run(spec, tmp_path, "consumer-fetch-epoch")
    moved = [epoch for key, broker, epoch in sent if key == ("t", 0) and broker != 0]
    assert moved, sent  # t-0 was fetched from its new leader
    if sends:
        assert all(epoch >= 1 for epoch in moved), sent  # the epoch the election gave
    else:
        assert {epoch for _, _, epoch in sent} == {-1}, sent
