"""KRaft's metadata quorum (KIP-595) as Kafka's KafkaRaftClient and QuorumState run it: one
RaftNode per controller, holding its copy of the metadata log (rig.cluster.kraft.metadata_log).

- States (QuorumState): unattached (with or without a vote: Kafka 4.0 folded VotedState into
  UnattachedState), prospective (pre-vote, KIP-996), candidate, leader, follower, resigned.
- Election timeout: `controller.quorum.election.timeout.ms` plus a random 0–1× of it
  (QuorumState.randomElectionTimeoutMs), from the node's seeded stream. A voter that has no
  leader and whose timer runs out stands: with pre-vote (4.0+) it first asks for pre-votes at
  its epoch + 1 without bumping its own epoch (ProspectiveState) and becomes a candidate only
  with a majority; without, it becomes a candidate at once (epoch + 1, a vote for itself).
  A candidate that loses backs off (KafkaRaftClient.binaryExponentialElectionBackoffMs) and
  stands again.
- Votes (KafkaRaftClient.handleVoteRequest, UnattachedState/FollowerState.canGrantVote): one
  per epoch, only to a candidate whose log is at least as up to date (last epoch, then end
  offset); a pre-vote is granted on the log alone, except by a follower that has heard from
  its leader within the fetch timeout. A request from a higher epoch (not a pre-vote) moves
  the voter to that epoch first.
- The leader writes a LeaderChangeRecord at its epoch start, tells the voters
  (BeginQuorumEpoch, again every fetch timeout / 2 to those that have not fetched) and serves
  their Fetch: a follower whose last fetched epoch diverges is told where that epoch ends and
  truncates (ReplicatedLog.endOffsetForEpoch). The high watermark is the end offset a
  majority of voters holds, once that is past the epoch start (LeaderState
  .maybeUpdateHighWatermark).
- A follower that has not had a Fetch answered by its leader for
  `controller.quorum.fetch.timeout.ms` stands for election (FollowerState's fetch timer).
- Check-quorum (3.7+, KAFKA-15489): a leader that has not had Fetches from a majority of voters
  (itself included) for 1.5 × the fetch timeout resigns (LeaderState.checkQuorumTimer).
- A voter keeps its log and its quorum state across a restart (the quorum-state file): a former
  leader comes back resigned in its epoch, a voter with a vote keeps it (QuorumState.initialize).

The host (the KRaft control plane) carries the messages and hears of each node's leadership.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from rig.cluster.kraft.metadata_log import FETCH_MAX_WAIT_MS, LeaderChangeRecord, MetadataLog
from rig.engine import Simulation, Timer

UNATTACHED = "unattached"
PROSPECTIVE = "prospective"
CANDIDATE = "candidate"
LEADER = "leader"
FOLLOWER = "follower"
RESIGNED = "resigned"

VOTE_BYTES = 80
BEGIN_EPOCH_BYTES = 60
RAFT_FETCH_BYTES = 100
RECORD_BYTES = 60
REQUEST_TIMEOUT_MS = 2000  # controller.quorum.request.timeout.ms
RETRY_BACKOFF_BASE_MS = 100  # KafkaRaftClient.RETRY_BACKOFF_BASE_MS
ELECTION_BACKOFF_MAX_MS = 1000  # controller.quorum.election.backoff.max.ms
CHECK_QUORUM_TIMEOUT_FACTOR = 1.5  # LeaderState: "1.5x of fetch timeout"


class QuorumHost(Protocol):
    sim: Simulation

    def send(self, src: Any, dst: Any, nbytes: int, deliver: Callable[[], None]) -> None: ...

    def raft_node(self, node: int) -> RaftNode: ...

    def became_leader(self, node: RaftNode) -> None: ...

    def stopped_leading(self, node: RaftNode, reason: str) -> None: ...

    def committed(self, node: RaftNode) -> None: ...

    def election_started(self, node: RaftNode, pre_vote: bool) -> None: ...


@dataclass(frozen=True)
class QuorumConfig:
    election_timeout_ms: int = 1000
    fetch_timeout_ms: int = 2000
    pre_vote: bool = True
    check_quorum: bool = True


@dataclass(frozen=True)
class FetchReply:
    """A Fetch response of the metadata partition: the leader's epoch and id as the answering
    node knows them, and either records with the HW, or where a diverging epoch ends, or
    NOT_LEADER_OR_FOLLOWER (`error`)."""

    epoch: int
    leader: int | None
    start: int = 0
    records: tuple[Any, ...] = ()
    epochs: tuple[int, ...] = ()
    hw: int = 0
    diverging: tuple[int, int] | None = None  # (epoch, its end offset)
    error: bool = False


class RaftNode:
    def __init__(self, host: QuorumHost, node: int, voters: tuple[int, ...], log: MetadataLog,
                 config: QuorumConfig, rng: random.Random):
        self.host = host
        self.sim = host.sim
        self.id = node
        self.voters = voters
        self.log = log
        self.config = config
        self.rng = rng
        self.alive = True
        self.incarnation = 0
        self.state = UNATTACHED
        self.epoch = 0
        self.voted_for: int | None = None
        self.leader: int | None = None
        # leader
        self.epoch_start = 0
        self.voter_ends: dict[int, int] = {}
        self._fetched: set[int] = set()  # voters heard from since the check-quorum timer reset
        # Fetches parked at the leader's end: (offset, answer, timer, refuse).
        self._parked: list[tuple[int, Callable[[], None], Timer, Callable[[], None]]] = []
        # candidate and prospective
        self.granted: set[int] = set()
        self.rejected: set[int] = set()
        self.retries = 0
        self._backing_off = False
        self._round = 0  # a vote response answers one round of requests
        # follower
        self._last_fetch_us = 0
        self._fetch_token = 0
        self._timer: Timer | None = None
        self._leader_timers: list[Timer] = []

    # -- small helpers -------------------------------------------------------------------------
    @property
    def majority(self) -> int:
        return len(self.voters) // 2 + 1

    def random_election_timeout_ms(self) -> int:
        """QuorumState.randomElectionTimeoutMs: the timeout plus nextInt(timeout). Kafka's
        0 → 0 branch cannot happen here: validation refuses a timeout under 1 ms."""
        timeout = self.config.election_timeout_ms
        return timeout + self.rng.randrange(timeout)

    def _arm(self, delay_ms: float, action: Callable[[], None]) -> None:
        if self._timer is not None:
            self._timer.cancel()
        incarnation = self.incarnation

        def fire() -> None:
            if self.alive and self.incarnation == incarnation:
                self._timer = None
                action()

        self._timer = self.sim.after(round(delay_ms * 1000), fire)

    def _send(self, dst: int, nbytes: int, deliver: Callable[[RaftNode], None]) -> None:
        """A message to voter `dst`, handled there only by the process it was sent to."""
        target = self.host.raft_node(dst)
        incarnation = target.incarnation
        if not self.alive:
            return
        self.host.send(self.id, dst, nbytes, lambda: deliver(target)
                       if target.alive and target.incarnation == incarnation else None)

    def _others(self) -> list[int]:
        return [v for v in self.voters if v != self.id]

    def _up_to_date(self, last_epoch: int, end_offset: int) -> bool:
        return (last_epoch, end_offset) >= (self.log.last_epoch, self.log.end_offset)

    # -- lifecycle -------------------------------------------------------------------------------
    def start_leader(self, epoch: int) -> None:
        """The running cluster at t=0: this voter leads `epoch`, every record committed."""
        self.epoch = epoch
        self.log.epoch = epoch
        self.log.advance_hw(self.log.end_offset)
        self._lead(self.log.end_offset, initial=True)

    def start_follower(self, epoch: int, leader: int) -> None:
        self.epoch = epoch
        self.log.advance_hw(self.log.end_offset)
        self._follow(epoch, leader)

    def crash(self) -> None:
        if not self.alive:
            return
        was_leader = self.state == LEADER
        self.alive = False
        self._stop_timers()
        if was_leader:
            self.host.stopped_leading(self, "crash")

    def restart(self) -> None:
        """QuorumState.initialize from the quorum-state file and the log on disk."""
        if self.alive:
            return
        self.alive = True
        self.incarnation += 1
        if self.state in (LEADER, RESIGNED) and self.leader == self.id:
            self.state = RESIGNED  # "a leader will always be re-initialized in this state"
            self._arm(self.random_election_timeout_ms(), self._stand)
        elif self.state == FOLLOWER and self.leader is not None:
            self._follow(self.epoch, self.leader)
        else:
            self.state = UNATTACHED
            self.leader = None
            self._arm(self.random_election_timeout_ms(), self._stand)

    def _stop_timers(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for timer in self._leader_timers:
            timer.cancel()
        self._leader_timers = []
        parked, self._parked = self._parked, []
        for _, _, timer, refuse in parked:
            timer.cancel()
            if self.alive:  # a leader that steps down refuses them (a dead one answers none)
                self.sim.after(0, refuse)
        self.log.abandon_waiting()
        self._fetch_token += 1

    # -- transitions -----------------------------------------------------------------------------
    def _leave(self) -> None:
        """Leave the current state (a leader stops leading)."""
        was_leader = self.state == LEADER
        self._stop_timers()
        if was_leader:
            self.host.stopped_leading(self, "higher-epoch")

    def _unattached(self, epoch: int) -> None:
        """transitionToUnattached: a higher epoch, its leader not known yet. A voter already
        waiting for an election (unattached, candidate) keeps the time it had left; any other
        draws a new timeout."""
        waiting = self.state in (UNATTACHED, PROSPECTIVE, CANDIDATE) and self._timer is not None
        left_ms = ((self._timer.time_us - self.sim.now_us) / 1000
                   if waiting and self._timer is not None else None)
        self._leave()
        self.state = UNATTACHED
        self.epoch = epoch
        self.voted_for = None
        self.leader = None
        self._arm(left_ms if left_ms is not None else self.random_election_timeout_ms(),
                  self._stand)

    def _follow(self, epoch: int, leader: int) -> None:
        """transitionToFollower: fetch from `leader`; stand if it goes quiet for the fetch
        timeout."""
        if self.state != FOLLOWER or self.epoch != epoch or self.leader != leader:
            self._leave()
        self.state = FOLLOWER
        self.epoch = epoch
        self.leader = leader
        self._last_fetch_us = self.sim.now_us
        self._arm(self.config.fetch_timeout_ms, self._fetch_timed_out)
        self._fetch()

    def _fetch_timed_out(self) -> None:
        self._stand()

    def _stand(self) -> None:
        """The election (or fetch) timer ran out: pre-vote first (4.0+), else a candidacy."""
        if self.id not in self.voters:
            return
        if self.config.pre_vote:
            self._prospective()
        else:
            self._candidate()

    def _prospective(self) -> None:
        """ProspectiveState (KIP-996): ask for pre-votes at epoch + 1 without bumping ours."""
        keep_leader = self.leader if self.state == FOLLOWER else None
        self._leave()
        self.state = PROSPECTIVE
        self.leader = keep_leader
        self._start_round(pre_vote=True)

    def _candidate(self) -> None:
        """transitionToCandidate: epoch + 1, a vote for ourselves, Vote to every other voter."""
        self.retries = self.retries + 1 if self.state == CANDIDATE else 1
        self._leave()
        self.state = CANDIDATE
        self.epoch += 1
        self.voted_for = self.id
        self.leader = None
        self._backing_off = False
        self._start_round(pre_vote=False)

    def _start_round(self, pre_vote: bool) -> None:
        self._round += 1
        self.granted = {self.id}
        self.rejected = set()
        self.host.election_started(self, pre_vote)
        self._arm(self.random_election_timeout_ms(), self._election_timed_out)
        if len(self.granted) >= self.majority:
            self._won(pre_vote)
            return
        round_, epoch = self._round, self.epoch + (1 if pre_vote else 0)
        last_epoch, end = self.log.last_epoch, self.log.end_offset
        for voter in self._others():
            self._ask_vote(voter, round_, epoch, last_epoch, end, pre_vote)

    def _ask_vote(self, voter: int, round_: int, epoch: int, last_epoch: int, end: int,
                  pre_vote: bool) -> None:
        def answer(e: int, granted: bool, leader: int | None) -> None:
            target = self.host.raft_node(voter)
            target._send(self.id, VOTE_BYTES, lambda _n: self.on_vote_response(
                round_, e, granted, leader, voter, pre_vote))

        self._send(voter, VOTE_BYTES, lambda node: node.on_vote(
            self.id, epoch, last_epoch, end, pre_vote, answer))

    def _election_timed_out(self) -> None:
        if self.state == PROSPECTIVE:
            self._prospective()  # a new pre-vote round (ProspectiveState's election timeout)
        elif self.state == CANDIDATE:
            if self._backing_off:
                self._stand_again()
            else:
                self._back_off()

    def _back_off(self) -> None:
        """KafkaRaftClient.binaryExponentialElectionBackoffMs."""
        self._backing_off = True
        spread = 2 << min(20, self.retries - 1)
        self._arm(min(RETRY_BACKOFF_BASE_MS * self.rng.randrange(spread),
                      ELECTION_BACKOFF_MAX_MS), self._stand_again)

    def _stand_again(self) -> None:
        if self.config.pre_vote:
            self._prospective()
        else:
            self._candidate()

    def _won(self, pre_vote: bool) -> None:
        if pre_vote:
            self._candidate()
        else:
            self._lead(self.log.end_offset)

    def _lead(self, epoch_start: int, initial: bool = False) -> None:
        """transitionToLeader: write the LeaderChangeRecord, tell the voters. The leader of
        the running cluster at t=0 (`initial`) has all its records committed already."""
        self._stop_timers()
        self.state = LEADER
        self.leader = self.id
        self.retries = 0
        self.log.epoch = self.epoch
        self.epoch_start = epoch_start
        self.voter_ends = {v: 0 for v in self._others()}
        self._fetched = set()
        self.log.on_append = self._appended
        if not initial:
            self.log.append(LeaderChangeRecord(self.id, self.epoch, self.voters))
            self.host.became_leader(self)
        else:
            self.epoch_start = epoch_start - 1  # nothing of this epoch to wait for
        self._begin_quorum_epoch()
        if self.config.check_quorum and len(self.voters) > 1:
            self._arm(self.config.fetch_timeout_ms * CHECK_QUORUM_TIMEOUT_FACTOR,
                      self._check_quorum_expired)
        self._maybe_advance_hw()

    def _begin_quorum_epoch(self) -> None:
        """BeginQuorumEpoch to every voter that has not fetched in this epoch, again every
        fetch timeout / 2 (LeaderState.beginQuorumEpochTimer)."""
        epoch = self.epoch
        for voter in self._others():
            if self.voter_ends.get(voter, 0) == 0:
                self._send(voter, BEGIN_EPOCH_BYTES,
                           lambda node: node.on_begin_quorum_epoch(epoch, self.id))
        incarnation = self.incarnation
        now = self.sim.now_us
        self._leader_timers = [t for t in self._leader_timers
                               if not t.cancelled and t.time_us > now]
        self._leader_timers.append(self.sim.after(
            self.config.fetch_timeout_ms // 2 * 1000,
            lambda: self._begin_quorum_epoch() if (self.alive and self.state == LEADER
                                                   and self.incarnation == incarnation
                                                   and self.epoch == epoch) else None))

    def _check_quorum_expired(self) -> None:
        """LeaderState: no Fetch from a majority within 1.5 × fetch timeout: resign."""
        self._stop_timers()
        self.state = RESIGNED
        self.host.stopped_leading(self, "check-quorum")
        self._arm(self.random_election_timeout_ms(), self._stand)

    # -- requests a voter handles ----------------------------------------------------------------
    def on_vote(self, candidate: int, epoch: int, last_epoch: int, end_offset: int,
                pre_vote: bool, reply: Callable[[int, bool, int | None], None]) -> None:
        """KafkaRaftClient.handleVoteRequest."""
        if epoch < self.epoch:
            reply(self.epoch, False, self.leader)
            return
        if epoch > self.epoch and not pre_vote:
            self._unattached(epoch)
        up_to_date = self._up_to_date(last_epoch, end_offset)
        if pre_vote:
            # FollowerState.canGrantVote (KIP-996): a follower that hears from its leader
            # rejects pre-votes; a leader rejects them too.
            heard = (self.state == FOLLOWER and self.sim.now_us - self._last_fetch_us
                     < self.config.fetch_timeout_ms * 1000)
            reply(self.epoch, up_to_date and not heard and self.state != LEADER, self.leader)
            return
        granted = (up_to_date and self.state == UNATTACHED
                   and self.voted_for in (None, candidate))
        if granted and self.voted_for is None:
            self.voted_for = candidate
            # transitionToVoted resets the election timer
            self._arm(self.random_election_timeout_ms(), self._stand)
        reply(self.epoch, granted, self.leader)

    def on_vote_response(self, round_: int, epoch: int, granted: bool, leader: int | None,
                         voter: int, pre_vote: bool) -> None:
        if epoch > self.epoch:
            if leader is not None:
                self._follow(epoch, leader)
            else:
                self._unattached(epoch)
            return
        if round_ != self._round or self.state not in (PROSPECTIVE, CANDIDATE):
            return
        if pre_vote and leader is not None and leader != self.id and not granted:
            # ProspectiveState → Follower "after discovering a leader with an equal or larger
            # epoch" (KIP-996): the voter still hears from the leader of our epoch.
            self._follow(epoch, leader)
            return
        (self.granted if granted else self.rejected).add(voter)
        if len(self.granted) >= self.majority:
            self._won(pre_vote)
        elif len(self.rejected) >= self.majority:
            if pre_vote:
                # prospectiveTransitionAfterElectionLoss: wait a new election timeout
                self._arm(self.random_election_timeout_ms(), self._prospective)
            elif not self._backing_off:
                self._back_off()

    def on_begin_quorum_epoch(self, epoch: int, leader: int) -> None:
        if epoch < self.epoch or (epoch == self.epoch and self.state == LEADER):
            return
        if self.state != FOLLOWER or self.leader != leader or self.epoch != epoch:
            self._follow(epoch, leader)

    def on_fetch(self, replica: int, epoch: int, offset: int, last_epoch: int,
                 reply: Callable[[FetchReply], None], observer: bool = False) -> None:
        """KafkaRaftClient.handleFetchRequest at the leader; any other node answers
        NOT_LEADER_OR_FOLLOWER with the leader it knows."""
        if self.state != LEADER:
            reply(FetchReply(self.epoch, self.leader, error=True))
            return
        if not observer and epoch > self.epoch:
            reply(FetchReply(self.epoch, self.leader, error=True))
            return
        log = self.log
        if offset > 0 and not observer:
            at = log.epochs[offset - 1] if offset <= log.end_offset else None
            if at != last_epoch:
                end_epoch, end = log.end_for_epoch(last_epoch)
                reply(FetchReply(self.epoch, self.id, diverging=(end_epoch, min(end, offset))))
                return
        if not observer:
            self.voter_ends[replica] = offset
            self._fetched.add(replica)
            if (self.config.check_quorum and len(self._fetched) + 1 >= self.majority
                    and len(self.voters) > 1):
                self._fetched = set()
                self._arm(self.config.fetch_timeout_ms * CHECK_QUORUM_TIMEOUT_FACTOR,
                          self._check_quorum_expired)
            self._maybe_advance_hw()
        end = log.hw if observer else log.end_offset

        def answer() -> None:
            stop = log.hw if observer else log.end_offset
            reply(FetchReply(self.epoch, self.id, offset, tuple(log.records[offset:stop]),
                             tuple(log.epochs[offset:stop]), log.hw))

        if offset < end:
            answer()
            return
        entry: list[tuple[int, Callable[[], None], Timer, Callable[[], None]]] = []

        def expire() -> None:
            if entry and entry[0] in self._parked:
                self._parked.remove(entry[0])
                answer()

        def refuse() -> None:
            """KafkaRaftClient completes the fetch purgatory exceptionally when the leader
            steps down: NOT_LEADER_OR_FOLLOWER, with the leader it knows by then."""
            reply(FetchReply(self.epoch, self.leader, error=True))

        entry.append((offset, answer, self.sim.after(FETCH_MAX_WAIT_MS * 1000, expire), refuse))
        self._parked.append(entry[0])

    def _appended(self) -> None:
        """The active controller appended a batch: answer the parked voter fetches."""
        if self.state != LEADER:
            return
        self._wake_parked()
        self._maybe_advance_hw()

    def _wake_parked(self) -> None:
        parked, self._parked = self._parked, []
        for _, answer, timer, _ in parked:
            timer.cancel()
            answer()

    def _maybe_advance_hw(self) -> None:
        """LeaderState.maybeUpdateHighWatermark: the end offset a majority holds, once past
        the epoch start."""
        ends = sorted([self.log.end_offset, *self.voter_ends.values()], reverse=True)
        hw = ends[self.majority - 1]
        if hw > self.epoch_start and hw > self.log.hw:
            self.log.advance_hw(hw)
            self._wake_parked()  # the voters learn the new HW (onUpdateLeaderHighWatermark)
            self.host.committed(self)

    # -- a follower's fetch ------------------------------------------------------------------------
    def _fetch(self) -> None:
        self._fetch_token += 1
        token, epoch, leader = self._fetch_token, self.epoch, self.leader
        if leader is None:
            return
        offset, last_epoch = self.log.end_offset, self.log.last_epoch
        incarnation = self.incarnation
        self._send(leader, RAFT_FETCH_BYTES, lambda node: node.on_fetch(
            self.id, epoch, offset, last_epoch, lambda reply: node._send(
                self.id, RAFT_FETCH_BYTES + RECORD_BYTES * len(reply.records),
                lambda _n: self._fetched_reply(token, reply))))

        def timed_out() -> None:
            if (self.alive and self.incarnation == incarnation and token == self._fetch_token
                    and self.state == FOLLOWER):
                self._fetch()

        now = self.sim.now_us
        self._leader_timers = [t for t in self._leader_timers
                               if not t.cancelled and t.time_us > now]
        self._leader_timers.append(self.sim.after(
            (FETCH_MAX_WAIT_MS + REQUEST_TIMEOUT_MS) * 1000, timed_out))

    def _fetched_reply(self, token: int, reply: FetchReply) -> None:
        if token != self._fetch_token or self.state != FOLLOWER:
            return
        if reply.epoch > self.epoch:
            if reply.leader is not None:
                self._follow(reply.epoch, reply.leader)
            else:
                self._unattached(reply.epoch)
            return
        if reply.error:
            return  # the timer sends again
        self._last_fetch_us = self.sim.now_us
        self._arm(self.config.fetch_timeout_ms, self._fetch_timed_out)
        log = self.log
        if reply.diverging is not None:
            log.truncate(reply.diverging[1])
        else:
            if reply.start == log.end_offset:
                log.replicate(reply.records, reply.epochs)
            log.advance_hw(min(reply.hw, log.end_offset))
        self._fetch()
