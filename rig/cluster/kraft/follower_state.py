"""A voter following the leader of its epoch (KIP-595): it fetches the metadata log, truncates
where its last epoch diverges, and stands for election after the fetch timeout."""

from __future__ import annotations

from rig.cluster.kraft.quorum_state import (
    FOLLOWER,
    LEADER,
    RAFT_FETCH_BYTES,
    RECORD_BYTES,
    REQUEST_TIMEOUT_MS,
    FetchReply,
    QuorumState,
)


class FollowerState(QuorumState):
    """Kafka's FollowerState (and KafkaRaftClient's fetch loop)."""

    def _follow(self, epoch: int, leader: int) -> None:
        """transitionToFollower: fetch from `leader`; stand if it goes quiet for the fetch
        timeout."""
        if self.state != FOLLOWER or self.epoch != epoch or self.leader != leader:
            self._leave()
        self.state = FOLLOWER
        self.epoch = epoch
        self.leader = leader
        self._fetched_from_leader = False
        self._arm(self.config.fetch_timeout_ms, self._fetch_timed_out)
        self._fetch()

    def _fetch_timed_out(self) -> None:
        self._stand()

    def on_begin_quorum_epoch(self, epoch: int, leader: int) -> None:
        if epoch < self.epoch or (epoch == self.epoch and self.state == LEADER):
            return
        if self.state != FOLLOWER or self.leader != leader or self.epoch != epoch:
            self._follow(epoch, leader)

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
        # Its timeout runs from the send, the long poll included (RequestManager
        # .hasRequestTimedOut: lastSendTimeMs + controller.quorum.request.timeout.ms).
        self._leader_timers.append(self.sim.after(REQUEST_TIMEOUT_MS * 1000, timed_out))

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
        self._fetched_from_leader = True
        self._arm(self.config.fetch_timeout_ms, self._fetch_timed_out)
        log = self.log
        if reply.diverging is not None:
            log.truncate(reply.diverging[1])
        else:
            if reply.start == log.end_offset:
                log.replicate(reply.records, reply.epochs)
            log.advance_hw(min(reply.hw, log.end_offset))
        self._fetch()
