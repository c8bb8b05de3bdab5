"""The quorum leader's rules (KIP-595): its epoch start and LeaderChangeRecord, BeginQuorumEpoch,
the voters' Fetch and the high watermark on a majority, check-quorum (KAFKA-15489)."""

from __future__ import annotations

from collections.abc import Callable

from rig.cluster.kraft.metadata_log import FETCH_MAX_WAIT_MS, LeaderChangeRecord
from rig.cluster.kraft.quorum_state import (
    BEGIN_EPOCH_BYTES,
    CHECK_QUORUM_TIMEOUT_FACTOR,
    LEADER,
    RESIGNED,
    FetchReply,
    QuorumState,
)
from rig.engine import Timer


class LeaderState(QuorumState):
    """Kafka's LeaderState (and KafkaRaftClient's leader side)."""

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
