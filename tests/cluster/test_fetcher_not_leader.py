"""A follower whose leader answers NOT_LEADER_OR_FOLLOWER keeps the partition and fetches it
again after replica.fetch.backoff.ms (AbstractFetcherThread.handlePartitionsWithErrors →
delayPartitions), and the broker answers such a fetch at once (ReplicaManager.fetchMessages:
errorReadingData). Found by `rig fuzz` on ZooKeeper 3.9: the controller (broker 0) is paused
while the leader of t-0 (broker 1) crashes and restarts within its ZooKeeper session, so no
election happens; broker 1 leads again only when it becomes controller itself, at the same leader
epoch. Its followers had dropped the partition on the first NOT_LEADER_OR_FOLLOWER and, the
epoch unchanged, ignored the LeaderAndIsr that would have brought it back: they never fetched
again, the ISR shrank to the leader alone and the acknowledged records counted as lost."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rig.events import names
from rig.scenario.load import load_scenario
from tests.cluster.simulated import checked_run, fuzzed_scenario, named

SCENARIO = fuzzed_scenario("restarted-leader", """\
  - {kind: stall, at: 2300ms, broker: 0, heal_after: 5720ms}
  - {kind: crash, at: 3700ms, broker: 1, restart_after: 1300ms}""",
                           kafka="3.9", seed=1264905771, brokers=4)


def test_followers_retry_a_leader_that_restarted_until_it_leads_again(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    [variant] = load_scenario(write_scenario(SCENARIO, "s.yaml")).variants
    events, _ = checked_run(variant, tmp_path, "restarted-leader")  # no acknowledged loss
    [assigned] = [e for e in named(events, names.PARTITION_ASSIGNED) if e["partition"] == 0]
    assert assigned["leader"] == 1 and assigned["replicas"] == [1, 2, 3]
    [led] = [e for e in named(events, names.REPLICA_BECOME_LEADER)
             if e["partition"] == 0 and e["t_ms"] > 5000]
    assert (led["broker"], led["epoch"]) == (1, 0)  # no election: the same epoch, after 8 s
    for follower in (2, 3):
        asks = [e for e in named(events, names.FETCH_REQUEST)
                if e["role"] == "follower" and e["source"] == follower and e["broker"] == 1
                and 5000 < e["t_ms"] < led["t_ms"] + 10]
        answers = [e for e in named(events, names.FETCH_RESPONSE)
                   if e["role"] == "follower" and e["source"] == follower and e["broker"] == 1
                   and 5000 < e["t_ms"] < led["t_ms"]]
        # Each NOT_LEADER_OR_FOLLOWER comes back at once, and the partition is asked for again
        # replica.fetch.backoff.ms (1 s) after the answer arrived (0.5 ms on the link).
        assert answers and all(a["waited_ms"] == 0 for a in answers)
        gaps = [b["t_ms"] - a["t_ms"] for a, b in zip(answers, asks[1:], strict=False)]
        assert len(gaps) >= 2 and all(1000 < gap < 1001 for gap in gaps), gaps
        # The first fetch after broker 1 leads again gets records: the follower is back.
        back = next(e for e in named(events, names.FETCH_RESPONSE)
                    if e["role"] == "follower" and e["source"] == follower and e["broker"] == 1
                    and e["t_ms"] > led["t_ms"] and e["records_bytes"] > 0)
        assert back["t_ms"] - led["t_ms"] < 1100
    assert not [e for e in named(events, names.ISR_SHRINK) if e["partition"] == 0]
