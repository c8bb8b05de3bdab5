"""Standing for election (KIP-595, KIP-996): pre-votes without an epoch bump, then a candidacy
at epoch + 1, the votes counted, the back-off after a lost election."""

from __future__ import annotations

from rig.cluster.kraft.quorum_state import (
    CANDIDATE,
    ELECTION_BACKOFF_MAX_MS,
    FOLLOWER,
    PROSPECTIVE,
    RETRY_BACKOFF_BASE_MS,
    VOTE_BYTES,
    QuorumState,
)


class CandidateState(QuorumState):
    """Kafka's CandidateState and ProspectiveState (KIP-996)."""

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
