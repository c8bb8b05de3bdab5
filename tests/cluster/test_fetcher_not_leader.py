"""A follower whose leader answers NOT_LEADER_OR_FOLLOWER keeps the partition and fetches it
again after replica.fetch.backoff.ms (AbstractFetcherThread.handlePartitionsWithErrors →
delayPartitions), and the broker answers such a fetch at once (ReplicaManager.fetchMessages:
errorReadingData). First found by `rig fuzz` on ZooKeeper 3.9 with a leader restarted inside its
ZooKeeper session, which Kafka refuses (the start fails: test_zk_restart_within_session.py). The
case here is one Kafka allows: the leader of t-0 (broker 1) crashes and is restarted once its
session has expired, while the controller (broker 0) is cut off from ZooKeeper, so no election
happens until the controller hears of the change; meanwhile the new process leads nothing and
its followers ask it again every second. Before the fix they dropped the partition on the first
answer, and the broker held each such fetch for the max wait."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rig.events import names
from rig.protocol.errors import NOT_LEADER_OR_FOLLOWER
from rig.scenario.load import load_scenario
from tests.cluster.simulated import checked_run, fuzzed_scenario, named

SCENARIO = fuzzed_scenario("restarted-leader", """\
  - {kind: crash, at: 3700ms, broker: 1, restart_after: 4800ms}
  - {kind: network-partition, at: 7900ms, groups: [[0], [zk]], heal_after: 1990ms}""",
                           kafka="3.9", seed=1264905771, brokers=4)


def test_followers_retry_a_restarted_leader_until_the_controller_elects_again(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    [variant] = load_scenario(write_scenario(SCENARIO, "s.yaml")).variants
    events, _ = checked_run(variant, tmp_path, "restarted-leader")  # no acknowledged loss
    [assigned] = [e for e in named(events, names.PARTITION_ASSIGNED) if e["partition"] == 0]
    assert assigned["leader"] == 1 and assigned["replicas"] == [1, 2, 3]
    [expired] = named(events, names.ZK_SESSION_EXPIRED)
    [restart] = named(events, names.BROKER_RESTART)
    assert expired["broker"] == restart["broker"] == 1 and expired["t_ms"] < restart["t_ms"]
    # The controller hears of it when its link to ZooKeeper heals (at 9.89 s): broker 1's new
    # registration is a bounce (KIP-380), so t-0 gets a new leader.
    [elected] = [e for e in named(events, names.LEADER_ELECTED) if e["partition"] == 0]
    assert (elected["leader"], elected["epoch"], elected["reason"]) == (2, 1, "broker-failure")
    assert 9890 < elected["t_ms"] < 9910
    for follower in (2, 3):
        asks = [e for e in named(events, names.FETCH_REQUEST)
                if e["role"] == "follower" and e["source"] == follower and e["broker"] == 1
                and restart["t_ms"] < e["t_ms"] < elected["t_ms"]]
        answers = [e for e in named(events, names.FETCH_RESPONSE)
                   if e["role"] == "follower" and e["source"] == follower and e["broker"] == 1
                   and restart["t_ms"] < e["t_ms"] < elected["t_ms"]]
        # Each NOT_LEADER_OR_FOLLOWER comes back at once, and the partition is asked for again
        # replica.fetch.backoff.ms (1 s) after the answer arrived (0.5 ms on the link).
        assert len(answers) >= 2 and all(a["waited_ms"] == 0 for a in answers), answers
        # The event names the refused partition and the error (6: NOT_LEADER_OR_FOLLOWER).
        assert all(a["error_code"] == 0 and a["errors"] == [["t", 0, NOT_LEADER_OR_FOLLOWER]]
                   for a in answers), answers
        gaps = [b["t_ms"] - a["t_ms"] for a, b in zip(answers, asks[1:], strict=False)]
        assert gaps and all(1000 < gap < 1001 for gap in gaps), gaps
    # Broker 3 fetches records from the new leader at once.
    back = next(e for e in named(events, names.FETCH_RESPONSE)
                if e["role"] == "follower" and e["source"] == 3 and e["broker"] == 2
                and e["t_ms"] > elected["t_ms"] and e["records_bytes"] > 0)
    assert back["t_ms"] - elected["t_ms"] < 100
    assert "errors" not in back  # a response without an error has no such field
