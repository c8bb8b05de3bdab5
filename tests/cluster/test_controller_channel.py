"""The ZooKeeper-era controller sends each broker one request at a time and waits for its
answer before the next (ControllerChannelManager's RequestSendThread:
NetworkClientUtils.sendAndReceive), and every answer is on the wire (rig.cluster
.controller_channel). Before, rig sent a broker's LeaderAndIsr and the UpdateMetadata behind it
at the same instant, so both arrived together, and no answer was counted."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rig.events import names
from rig.scenario.load import load_scenario
from tests.cluster.simulated import checked_run, named
from tests.conftest import ROOT

# Three brokers 1 ms apart (one way); broker 2 leads t-2 and crashes at 2 s. Broker 0 is the
# controller (the first to register).
SCENARIO = """
name: channel
duration: 4s
kafka: "{kafka}"
network: {{latency: 1ms}}
cluster: {{brokers: 3}}
topics:
  - {{name: t, partitions: 3, replication_factor: 3}}
faults:
  - {{kind: crash, broker: 2, at: 2s}}
"""


@pytest.mark.parametrize("kafka", ["0.10", "2.4", "3.9"])
def test_update_metadata_waits_for_the_answer_to_the_leader_and_isr_before_it(
        kafka: str, write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    [variant] = load_scenario(write_scenario(SCENARIO.format(kafka=kafka), "s.yaml")).variants
    events, _ = checked_run(variant, tmp_path, "channel")
    [controller] = {e["broker"] for e in named(events, names.CONTROLLER_ELECTED)}
    [elected] = [e for e in named(events, names.LEADER_ELECTED) if e["previous"] == 2]
    key, leader = (elected["topic"], elected["partition"]), elected["leader"]
    decided = elected["t_ms"]

    def first(name: str, broker: int) -> float:
        return min(e["t_ms"] for e in named(events, name) if e["broker"] == broker
                   and (e["topic"], e["partition"]) == key and e["t_ms"] >= decided)

    # rig puts one link's latency on every message, the controller's to itself too: 1 ms and
    # a few µs of serialization. The new leader takes its LeaderAndIsr one hop after the
    # election; its UpdateMetadata follows the answer: three hops.
    assert first(names.REPLICA_BECOME_LEADER, leader) == pytest.approx(decided + 1, abs=0.05)
    assert first(names.METADATA_UPDATED, leader) == pytest.approx(decided + 3, abs=0.05)
    # So for the other live broker, which is sent a LeaderAndIsr too (broker 2 left the ISRs).
    [other] = {0, 1} - {leader}
    assert first(names.REPLICA_BECOME_FOLLOWER, other) <= decided + 1.05
    assert first(names.METADATA_UPDATED, other) == pytest.approx(decided + 3, abs=0.05)
    # The answers are on the wire: each live broker sends the controller control bytes.
    answered = {e["src"] for e in named(events, names.NET_TRAFFIC)
                if e["dst"] == str(controller) and e["kind"] == "control" and e["bytes"] > 0}
    assert {"0", "1"} - {str(controller)} <= answered


def test_a_controller_that_stops_cleanly_sends_what_it_still_holds(tmp_path: Path) -> None:
    # Broker 0, the controller, stops cleanly at 12 s: payments-0 moves to broker 1, and broker
    # 2, behind the LeaderAndIsr of payments-0, still has queued the one that takes broker 0
    # out of payments-1's ISR. It goes before the process does (KafkaServer.shutdown stops the
    # controller late), not after the next controller's election a ZooKeeper round later.
    [variant] = load_scenario(ROOT / "scenarios" / "controlled-shutdown-vs-crash.yaml",
                              only_variants=["controlled"]).variants
    events, _ = checked_run(variant, tmp_path, "controlled-shutdown-vs-crash")
    [reply] = named(events, names.CONTROLLED_SHUTDOWN_REPLY)
    assert reply["controller"] == reply["broker"] == 0
    [elected] = [e for e in named(events, names.CONTROLLER_ELECTED) if e["epoch"] == 2]
    [told] = [e for e in named(events, names.REPLICA_BECOME_FOLLOWER)
              if (e["broker"], e["partition"]) == (2, 1) and e["t_ms"] > reply["t_ms"]][:1]
    assert told["t_ms"] < elected["t_ms"]
