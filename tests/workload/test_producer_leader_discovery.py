"""KIP-951 and KAFKA-15415 (3.7): a producer refused NOT_LEADER_OR_FOLLOWER takes the new leader
the answer names and sends the batch to it at once; a batch retried after a network error goes as
soon as a metadata answer shows a newer leader epoch. Before 3.7 the retry waits out
retry.backoff.ms (100 ms) whatever the producer learns meanwhile."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rig.events import names
from rig.protocol.errors import NETWORK_EXCEPTION, NOT_LEADER_OR_FOLLOWER
from rig.scenario.load import load_scenario
from tests.cluster.simulated import checked_run, named

# Broker 0 leads t-0 and is shut down cleanly at 2,004 ms: its leadership moves to broker 1 first.
# Its process stops at 2,005 ms, just after the producer's next batch left (at 2,005 ms): the
# reset fails that request (ZooKeeper mode; KRaft's broker still runs and refuses it) before the
# metadata answer the reset asks for comes. (A batch sent after the stop would wait, never sent
# to the closed node: rig.cluster.client_connections.)
SCENARIO = """
name: leader-moves
seed: 3
duration: 4s
kafka: "3.7"
cluster: {brokers: 3}
topics:
  - {name: t, partitions: 1, replication_factor: 3, assignment: [[0, 1, 2]]}
workload:
  producers:
    - {name: app, topic: t, rate: 200, acks: 1, linger: 5ms}
faults:
  - {kind: controlled-shutdown, broker: 0, at: 2004ms, restart_after: 10s}
variants:
  zk-3.6: {kafka: "3.6"}
  zk-3.7: {kafka: "3.7"}
  kraft-3.6: {kafka: "3.6", strategies: {controller: kraft}}
  kraft-3.7: {kafka: "3.7", strategies: {controller: kraft}}
"""


def _retry(variant: str, write_scenario: Callable[[str, str], Path],
           tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    scenario = load_scenario(write_scenario(SCENARIO, "s.yaml"))
    [spec] = [v for v in scenario.variants if v.name == variant]
    events, _ = checked_run(spec, tmp_path, "leader-moves")
    [error] = named(events, names.PRODUCE_ERROR)
    retry = next(e for e in named(events, names.PRODUCE_REQUEST) if e["t_ms"] >= error["t_ms"])
    return error, retry, events


@pytest.mark.parametrize(("variant", "wait_ms"), [("kraft-3.6", 100), ("kraft-3.7", 0)])
def test_a_refused_batch_goes_to_the_leader_the_answer_names(
        variant: str, wait_ms: int, write_scenario: Callable[[str, str], Path],
        tmp_path: Path) -> None:
    error, retry, _ = _retry(variant, write_scenario, tmp_path)
    assert error["error_code"] == NOT_LEADER_OR_FOLLOWER and error["retrying"]
    assert retry["broker"] == 1
    assert retry["t_ms"] - error["t_ms"] == pytest.approx(wait_ms, abs=0.001)


@pytest.mark.parametrize("variant", ["zk-3.6", "zk-3.7"])
def test_a_retry_after_a_network_error_goes_once_metadata_shows_a_newer_leader(
        variant: str, write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    error, retry, _ = _retry(variant, write_scenario, tmp_path)
    assert error["error_code"] == NETWORK_EXCEPTION  # the stopped broker closed the connection
    assert retry["broker"] == 1
    if variant == "zk-3.6":
        assert retry["t_ms"] - error["t_ms"] == pytest.approx(100, abs=0.001)
    else:  # once the metadata answer the broken connection asked for comes, at once
        assert 0 < retry["t_ms"] - error["t_ms"] < 5
