"""The controller's requests reach a broker in the order it sent them (ControllerChannelManager:
one RequestSendThread per broker, one request at a time), also across a network partition that
holds several of them (rig.cluster.transport).

Found by `rig fuzz` on 3.9: broker 0, the controller, loses its ZooKeeper session at 7.5 s and
registers again at 8 s; broker 1, the new controller, sends leader 2 an UpdateMetadata without
broker 0 (its election, 7.5 s) and then one with it (8 s), both held by the cut between 1 and 2
until 11.3 s. Each was tried again on its own every 100 ms, so the newer got through first and
the older overwrote it: leader 2 kept believing broker 0 dead, and from 3.3 a leader proposes no
follower its metadata does not list alive (KIP-841), so broker 0 never rejoined the ISR."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rig.events import names
from rig.scenario.load import load_scenario
from tests.cluster.simulated import FUZZ_LOAD, checked_run, named

SCENARIO = """
name: in-order
seed: 1262294715
duration: 12s
quiesce: 60s
kafka: "3.9"
cluster:
  brokers: 3
  config: {min.insync.replicas: 2, replica.lag.time.max.ms: 10s,
           zookeeper.session.timeout.ms: 6s}
LOAD
faults:
  - {kind: link, at: 1841ms, between: [1, 2], loss: 1.0, heal_after: 9448ms}
  - {kind: link, at: 4068ms, between: [2, 0], loss: 0.5, heal_after: 6786ms}
  - {kind: zk-session-expiry, at: 7487ms, broker: 0}
  - {kind: link, at: 10166ms, between: [2, zk], loss: 1.0, heal_after: 7241ms}
""".replace("LOAD\n", FUZZ_LOAD)


def test_a_newer_update_metadata_is_not_overwritten_by_an_older_one(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    [variant] = load_scenario(write_scenario(SCENARIO, "s.yaml")).variants
    events, _ = checked_run(variant, tmp_path, "in-order")
    [shrink] = [e for e in named(events, names.ISR_SHRINK) if e["removed"] == [0]]
    assert shrink["by"] == "controller" and shrink["t_ms"] < 7_500
    # Broker 0 is back in the ISR soon after the cut between 1 and 2 heals (11.3 s) ...
    [back] = [e for e in named(events, names.ISR_EXPAND) if e["added"] == [0]]
    assert 11_289 < back["t_ms"] < 13_000
    # ... and the run settles (it did not, within its minute, when the older UpdateMetadata won).
    [quiesced] = named(events, names.RUN_QUIESCED)
    assert quiesced["settled"]
