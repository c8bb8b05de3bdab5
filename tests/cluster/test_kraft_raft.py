"""KRaft's metadata quorum at the Raft level (rig.cluster.kraft.raft; KIP-595, KIP-996,
KAFKA-15489): elections with votes, pre-vote that bumps no epoch, check-quorum resignation,
the high watermark on a majority, and a stale candidate that cannot win."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from rig.cluster.kraft.metadata_log import LeaderChangeRecord, MetadataLog
from rig.cluster.kraft.raft import (
    CANDIDATE,
    FOLLOWER,
    LEADER,
    PROSPECTIVE,
    RESIGNED,
    QuorumConfig,
    RaftNode,
)
from rig.engine import Simulation

LATENCY_US = 1000


class Host:
    """Three (or N) voters over a wire with 1 ms latency and cuttable links."""

    def __init__(self, n: int = 3, **config: Any):
        self.sim = Simulation()
        self.cut: set[frozenset[int]] = set()
        self.events: list[tuple[str, int, int]] = []
        voters = tuple(range(n))
        cfg = QuorumConfig(**config)
        self.nodes = {v: RaftNode(self, v, voters, MetadataLog(self.sim, quorum=True), cfg,
                                  random.Random(v)) for v in voters}

    def send(self, src: Any, dst: Any, nbytes: int, deliver: Callable[[], None]) -> None:
        if frozenset((src, dst)) in self.cut:
            return

        def arrive() -> None:
            if frozenset((src, dst)) not in self.cut:
                deliver()

        self.sim.after(LATENCY_US, arrive)

    def raft_node(self, node: int) -> RaftNode:
        return self.nodes[node]

    def became_leader(self, node: RaftNode) -> None:
        self.events.append(("leader", node.id, node.epoch))

    def stopped_leading(self, node: RaftNode, reason: str) -> None:
        self.events.append((reason, node.id, node.epoch))

    def committed(self, node: RaftNode) -> None:
        pass

    def election_started(self, node: RaftNode, pre_vote: bool) -> None:
        self.events.append(("pre-vote" if pre_vote else "vote", node.id, node.epoch))

    def start(self, leader: int = 0, epoch: int = 1) -> None:
        for node in self.nodes.values():
            if node.id == leader:
                node.start_leader(epoch)
            else:
                node.start_follower(epoch, leader)

    def isolate(self, node: int) -> None:
        self.cut |= {frozenset((node, other)) for other in self.nodes if other != node}

    def run_ms(self, ms: int) -> None:
        self.sim.run(self.sim.now_us + ms * 1000)

    def leaders(self) -> list[RaftNode]:
        return [n for n in self.nodes.values() if n.alive and n.state == LEADER]


def test_a_crashed_leader_is_replaced_by_a_vote_within_the_election_timeout() -> None:
    host = Host(pre_vote=False, check_quorum=True)
    host.start()
    host.run_ms(500)
    host.nodes[0].crash()
    # Both followers' fetch timers (2 s, not randomised) run out together: both stand at
    # epoch 2 and split the vote; the randomised election timeout and backoff part them.
    host.run_ms(2000 + 2 * 2000 + 1000 + 100)
    (leader,) = host.leaders()
    assert leader.id in (1, 2) and leader.epoch in (2, 3)
    assert ("vote", leader.id, leader.epoch) in host.events
    # the new leader's first record is its LeaderChangeRecord, committed by a majority
    assert isinstance(leader.log.records[-1], LeaderChangeRecord)
    assert leader.log.hw == leader.log.end_offset
    other = host.nodes[3 - leader.id]
    assert other.state == FOLLOWER and other.leader == leader.id and other.epoch == leader.epoch


def test_the_high_watermark_moves_only_on_a_majority() -> None:
    host = Host()
    host.start()
    leader = host.nodes[0]
    host.isolate(1)
    host.isolate(2)
    leader.log.append(LeaderChangeRecord(0, 1, (0, 1, 2)))
    leader.log.appended()
    host.run_ms(100)
    assert leader.log.hw == 0  # only the leader holds it
    host.cut.discard(frozenset((0, 1)))
    host.run_ms(3000)  # node 1's next fetch carries it, the one after says it has it
    assert leader.log.hw == 1
    assert host.nodes[1].log.end_offset == 1 and host.nodes[2].log.end_offset == 0


def test_pre_vote_keeps_a_cut_off_voter_from_bumping_the_epoch() -> None:
    host = Host(pre_vote=True)
    host.start()
    host.run_ms(200)
    host.isolate(2)  # cut off: its fetch timer runs out over and over
    host.run_ms(10_000)
    cut = host.nodes[2]
    assert cut.state in (PROSPECTIVE, FOLLOWER) and cut.epoch == 1
    assert ("pre-vote", 2, 1) in host.events and not any(
        kind == "vote" for kind, _, _ in host.events)
    host.cut.clear()
    host.run_ms(3000)  # it rejoins without disturbing the leader
    assert host.nodes[0].state == LEADER and host.nodes[0].epoch == 1
    assert cut.state == FOLLOWER and cut.leader == 0


def test_without_pre_vote_a_cut_off_voter_bumps_the_epoch_and_disturbs_the_leader() -> None:
    host = Host(pre_vote=False)
    host.start()
    host.run_ms(200)
    host.isolate(2)
    host.nodes[0].log.append(LeaderChangeRecord(0, 1, (0, 1, 2)))  # node 2 misses it
    host.nodes[0].log.appended()
    host.run_ms(10_000)
    assert host.nodes[2].state == CANDIDATE and host.nodes[2].epoch > 2
    host.cut.clear()
    host.run_ms(5000)
    # its higher epoch unseats the leader; its shorter log loses it the vote
    (leader,) = host.leaders()
    assert leader.epoch >= host.nodes[2].epoch - 1 and leader.id in (0, 1)


def test_check_quorum_makes_a_cut_off_leader_resign() -> None:
    host = Host(check_quorum=True)
    host.start()
    host.run_ms(200)
    host.isolate(0)
    host.run_ms(2700)  # its last majority of fetches came at about t=1 ms
    assert host.nodes[0].state == LEADER
    host.run_ms(400)  # 1.5 × the 2 s fetch timeout after it
    assert host.nodes[0].state == RESIGNED
    assert ("check-quorum", 0, 1) in host.events
    host.run_ms(6000)
    (leader,) = host.leaders()
    assert leader.id in (1, 2) and leader.epoch >= 2  # (both followers may split a vote)


def test_without_check_quorum_a_cut_off_leader_stays_leader() -> None:
    host = Host(check_quorum=False)
    host.start()
    host.run_ms(200)
    host.isolate(0)
    host.run_ms(6000)
    assert host.nodes[0].state == LEADER and host.nodes[0].epoch == 1
    assert {n.id for n in host.leaders()} == {0, 1} or {n.id for n in host.leaders()} == {0, 2}


def test_a_stale_candidate_loses_and_the_up_to_date_voter_wins() -> None:
    host = Host(pre_vote=False)
    host.start()
    leader = host.nodes[0]
    host.run_ms(200)
    host.isolate(2)  # node 2 misses the next record
    leader.log.append(LeaderChangeRecord(0, 1, (0, 1, 2)))
    leader.log.appended()
    host.run_ms(1000)
    assert host.nodes[1].log.end_offset == 1 and host.nodes[2].log.end_offset == 0
    leader.crash()
    host.cut.clear()
    stale = host.nodes[2]
    stale._candidate()  # it stands first, at a higher epoch, with the shorter log
    host.run_ms(20)
    assert stale.state == CANDIDATE and stale.rejected == {1}  # node 0 is down
    assert host.nodes[1].voted_for != 2  # node 1 refused: its log is ahead
    host.run_ms(6000)
    (winner,) = host.leaders()
    assert winner.id == 1  # only the voter with every committed record can win


def test_one_vote_per_epoch() -> None:
    host = Host(pre_vote=False)
    host.start()
    voter = host.nodes[1]
    answers: list[bool] = []
    voter.on_vote(2, 5, 0, 0, False, lambda e, granted, leader: answers.append(granted))
    voter.on_vote(0, 5, 0, 0, False, lambda e, granted, leader: answers.append(granted))
    voter.on_vote(2, 5, 0, 0, False, lambda e, granted, leader: answers.append(granted))
    assert answers == [True, False, True] and voter.epoch == 5 and voter.voted_for == 2


def test_a_pre_vote_bumps_no_epoch_at_the_voter() -> None:
    host = Host(pre_vote=True)
    host.start()
    voter = host.nodes[1]
    answers: list[bool] = []
    host.run_ms(10)  # its first Fetch is still held by the leader (nothing new to send)
    voter.on_vote(2, 2, 1, 0, True, lambda e, granted, leader: answers.append(granted))
    assert answers == [True]  # no Fetch answered yet: the leader may be unreachable from here
    host.run_ms(600)
    voter.on_vote(2, 2, 1, 0, True, lambda e, granted, leader: answers.append(granted))
    assert answers[-1] is False and voter.epoch == 1  # it hears from its leader: refused
    host.nodes[0].crash()
    host.run_ms(2100)  # its fetch timer ran out
    before = (voter.epoch, voter.voted_for)
    voter.on_vote(2, voter.epoch + 1, voter.epoch, 10, True,
                  lambda e, granted, leader: answers.append(granted))
    assert answers[-1] is True and (voter.epoch, voter.voted_for) == before


def test_a_restarted_leader_comes_back_resigned() -> None:
    host = Host()
    host.start()
    host.run_ms(100)
    host.nodes[0].crash()
    host.nodes[0].restart()
    assert host.nodes[0].state == RESIGNED
    host.run_ms(8000)
    assert len(host.leaders()) == 1 and host.leaders()[0].epoch >= 2


def test_a_lost_fetch_is_sent_again_at_the_request_timeout_from_its_send() -> None:
    # A fetch timeout longer than the request timeout: the follower stays a follower.
    host = Host(fetch_timeout_ms=10_000, check_quorum=False)
    sent: list[int] = []
    send = host.send

    def recording(src: Any, dst: Any, nbytes: int, deliver: Callable[[], None]) -> None:
        if (src, dst) == (1, 0):
            sent.append(host.sim.now_us)
        send(src, dst, nbytes, deliver)

    host.send = recording  # type: ignore[method-assign]
    host.start()
    host.run_ms(100)  # follower 1's fetch waits in the leader's long poll (500 ms)
    host.cut.add(frozenset((0, 1)))  # the answer is lost
    host.run_ms(1000)
    host.cut.clear()
    last = sent[-1]
    host.run_ms(3000)
    # RequestManager.hasRequestTimedOut: lastSendTimeMs + controller.quorum.request.timeout.ms
    # (2 s), the long poll included; rig before 2026-11-30 waited 2.5 s.
    assert next(t - last for t in sent if t > last) == 2_000_000
