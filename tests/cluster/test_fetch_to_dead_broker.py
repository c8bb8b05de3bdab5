"""A fetch to a broker whose process is dead never goes on the wire: the connection is refused
(its machine answers the connection attempt with a reset, a round trip later), so the request
is built but not written, and no `fetch.request` is logged. Kafka's replica fetcher fails in
NetworkClientUtils.awaitReady before it sends; the consumer's request fails unsent
(ConsumerNetworkClient.checkDisconnects) and its fetch session handler resets. Both keep trying:
once the controller has elected a new leader, they fetch from it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rig.events import names
from rig.scenario.load import load_scenario
from tests.cluster.simulated import checked_run, named

# Broker 0 leads t-0 and crashes at 1 s; its ZooKeeper session (2 s) ends at about 2.67 s and
# the controller elects broker 1; broker 0 restarts at 5 s. Meanwhile the consumer and
# broker 2's replica fetcher try to reach broker 0.
SCENARIO = """
name: dead-leader
seed: 3
duration: 6s
kafka: "2.4"
cluster:
  brokers: 3
  config: {zookeeper.session.timeout.ms: 2s}
topics:
  - {name: t, partitions: 2, replication_factor: 3, assignment: [[0, 1, 2], [1, 2, 0]]}
workload:
  producers:
    - {name: app, topic: t, rate: 200, acks: all, linger: 5ms}
  consumers:
    - {group: g, topic: t, members: 1}
faults:
  - {kind: crash, broker: 0, at: 1s, restart_after: 4s}
"""


def test_no_fetch_is_logged_to_a_dead_process_and_clients_move_on(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    [variant] = load_scenario(write_scenario(SCENARIO, "s.yaml")).variants
    events, _ = checked_run(variant, tmp_path, "dead-leader")
    requests = named(events, names.FETCH_REQUEST)
    # Fetches reached broker 0 before the crash and after its restart, none in between.
    assert [e for e in requests if e["broker"] == 0 and e["t_ms"] < 1000]
    assert not [e for e in requests if e["broker"] == 0 and 1000 <= e["t_ms"] < 5000]
    assert not [e for e in named(events, names.FETCH_RESPONSE)
                if e["broker"] == 0 and 1000 <= e["t_ms"] < 5000]
    # The connections were refused, not given up: t-0's new leader is fetched from soon after
    # the election, by the follower at once, by the consumer after its metadata names it.
    [elected] = [e for e in named(events, names.LEADER_ELECTED) if e["partition"] == 0
                 and e["t_ms"] > 1000]
    assert elected["leader"] == 1 and 2000 < elected["t_ms"] < 3000

    def first_from_new_leader(role: str) -> float:
        return next(e["t_ms"] for e in requests if e["role"] == role and e["broker"] == 1
                    and e["t_ms"] > elected["t_ms"]
                    and ["t", 0] in [o[:2] for o in e.get("fetch_offsets", ())])

    assert first_from_new_leader("follower") - elected["t_ms"] < 10
    assert first_from_new_leader("consumer") - elected["t_ms"] < 200
