"""KRaft's metadata quorum (KIP-595) as Kafka's KafkaRaftClient and QuorumState run it: one
RaftNode per controller (rig.cluster.kraft.raft), holding its copy of the metadata log
(rig.cluster.kraft.metadata_log).

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
  offset); a pre-vote is granted on the log alone, except by a follower whose leader has
  answered one of its Fetches since it began following it (FollowerState
  .hasFetchedFromLeader). A request from a higher epoch (not a pre-vote) moves the voter to
  that epoch first.
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

from rig.cluster.kraft.metadata_log import MetadataLog
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

    def raft_node(self, node: int) -> QuorumState: ...

    def became_leader(self, node: QuorumState) -> None: ...

    def stopped_leading(self, node: QuorumState, reason: str) -> None: ...

    def committed(self, node: QuorumState) -> None: ...

    def election_started(self, node: QuorumState, pre_vote: bool) -> None: ...


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


class QuorumState:
    """One voter's state in the quorum and what every state shares (Kafka's QuorumState:
    the epoch, the vote, the leader, the transitions between states, the vote a voter
    grants); each state's own rules are in LeaderState, CandidateState (with
    ProspectiveState) and FollowerState."""

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
        # follower: whether a Fetch to its leader has been answered since it began following
        # it (FollowerState.hasFetchedFromLeader)
        self._fetched_from_leader = False
        self._fetch_token = 0
        self._timer: Timer | None = None
        self._leader_timers: list[Timer] = []

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

    def _send(self, dst: int, nbytes: int, deliver: Callable[[QuorumState], None]) -> None:
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
            # FollowerState.canGrantVote (KIP-996): a follower whose leader has answered a Fetch
            # since it began following it rejects pre-votes (until then the leader may be
            # unreachable from here: KafkaRaftClientPreVoteTest.testHandlePreVoteRequestAs
            # Follower); a leader rejects them too.
            heard = self.state == FOLLOWER and self._fetched_from_leader
            reply(self.epoch, up_to_date and not heard and self.state != LEADER, self.leader)
            return
        granted = (up_to_date and self.state == UNATTACHED
                   and self.voted_for in (None, candidate))
        if granted and self.voted_for is None:
            self.voted_for = candidate
            # transitionToVoted resets the election timer
            self._arm(self.random_election_timeout_ms(), self._stand)
        reply(self.epoch, granted, self.leader)

    # -- what each state's class provides (RaftNode combines them) -------------------------------
    def _stand(self) -> None:
        raise NotImplementedError

    def _follow(self, epoch: int, leader: int) -> None:
        raise NotImplementedError

    def _lead(self, epoch_start: int, initial: bool = False) -> None:
        raise NotImplementedError

    def on_begin_quorum_epoch(self, epoch: int, leader: int) -> None:
        raise NotImplementedError

    def on_fetch(self, replica: int, epoch: int, offset: int, last_epoch: int,
                 reply: Callable[[FetchReply], None], observer: bool = False) -> None:
        raise NotImplementedError
