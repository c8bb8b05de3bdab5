"""A replica fetcher: one follower thread fetching a set of partitions from one leader.

It keeps one request in flight, as Kafka's ReplicaFetcherThread does. A partition that just
became follower may first have to find where its log is valid (the replication strategy asks
the leader where an epoch ends); only then is it fetched. Each round of its loop takes one such
step and then fetches the partitions that are ready, as Kafka's AbstractFetcherThread.doWork.
From Kafka 2.8 (truncation on fetch) a log with an epoch skips the question: it is fetched at
once, and the leader's answer may carry a diverging epoch to truncate by.
Partitions whose fetch data changed are "dirty" until the next request, which is what an
incremental fetch session lists. A partition answered NOT_LEADER_OR_FOLLOWER (or, 2.1+,
UNKNOWN_LEADER_EPOCH) is retried after replica.fetch.backoff.ms; one answered FENCED_LEADER_EPOCH
waits for a LeaderAndIsr (KIP-320, rig.cluster.fetch_epochs); how a follower truncates is its
base's (rig.cluster.follower_truncation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rig.cluster.client_host import ClientHost
from rig.cluster.follower_truncation import LATEST, FollowerTruncation
from rig.cluster.messages import FetchResponseMsg
from rig.cluster.partition import FetchState, TopicPartition, partitions_by_topic
from rig.events import names
from rig.protocol import (
    OFFSETS_FOR_LEADER_EPOCH,
    offsets_for_leader_epoch_request_body_size,
    offsets_for_leader_epoch_response_body_size,
    request_wire_size,
    response_wire_size,
)
from rig.protocol.errors import FENCED_LEADER_EPOCH, OFFSET_OUT_OF_RANGE
from rig.strategies.fetch_session import SessionClient
from rig.strategies.replication import AskLeader
from rig.strategies.replication.base import Decision

if TYPE_CHECKING:
    from rig.cluster.broker import Broker



class ReplicaFetcher(FollowerTruncation):
    role: ClassVar[str] = "follower"
    privileged: ClassVar[bool] = True  # follower sessions are privileged in the session cache

    def __init__(self, cluster: ClientHost, broker: Broker, leader_id: int, slot: int,
                 client: SessionClient):
        config = broker.config
        super().__init__(cluster, broker.id, leader_id, f"broker-{broker.id}-fetcher-{slot}",
                         config.fetch_version, client, config.replica_fetch_wait_max_ms,
                         config.replica_fetch_min_bytes, config.replica_socket_timeout_ms,
                         config.replica_fetch_backoff_ms, slot_key=(broker.id, slot),
                         replica_id=broker.id, fetcher_id=slot)
        self.broker = broker
        self.broker_id = broker.id
        self.slot = slot
        self.truncating: dict[TopicPartition, int] = {}  # partition → epoch asked about
        self.out_of_range: dict[TopicPartition, str] = {}  # → the ListOffsets it asks next
        self.stuck: set[TopicPartition] = set()  # walk-backs that cannot end (KAFKA-10706)
        self._backing_off = False  # records it could not append: wait replica.fetch.backoff.ms
        self._fetch_turn = False  # a truncation round ended: the fetchable partitions go next
        # Partitions answered NOT_LEADER_OR_FOLLOWER, and the state they come back with (_delay)
        self.delayed: dict[TopicPartition, FetchState] = {}

    @property
    def replica_epoch(self) -> int:
        return self.broker.broker_epoch

    def up(self) -> bool:
        # A stalled broker's fetchers resume when the stall ends.
        return self.broker.alive and not self.broker.stalled

    def may_coast(self) -> bool:
        return (not self.truncating and not self.out_of_range and not self._backing_off
                and not self.broker.fetch_stuck
                and not self.stopped and self.up())

    # -- membership ------------------------------------------------------------------------
    def add_partition(self, key: TopicPartition, decision: Decision, wake: bool = True) -> None:
        """Start following `key`: truncate now, or first ask the leader where an epoch ends
        (`wake=False`: the caller wakes the fetcher once it has added all its partitions)."""
        if self.coast is not None:
            self.coast.wake()
        self.delayed.pop(key, None)  # a new LeaderAndIsr: its state replaces a delayed one
        self.stuck.discard(key)
        if isinstance(decision, AskLeader) and self._truncates_on_fetch:
            # Kafka 2.8+ (IBP 2.7+, KAFKA-10554): a log with an epoch is fetched at once from
            # its end with that epoch; the leader's diverging epoch says where to truncate
            # (AbstractFetcherThread.partitionFetchState: Fetching when latestEpoch is
            # defined; ReplicaManager.initialFetchOffset: the log end offset).
            self._fetch(key)
        elif isinstance(decision, AskLeader):
            self.truncating[key] = decision.epoch
        else:
            self._truncate(key, decision.offset, "become-follower")
            self._fetch(key)
        if wake:
            self.wake()

    def _fetch(self, key: TopicPartition) -> None:
        replica = self.broker.replicas[key]
        self.fetch(key, FetchState(replica.leo, replica.log.log_start_offset,
                                   replica.leader_epoch, self._last_fetched_epoch(replica)))

    def remove_partition(self, key: TopicPartition) -> None:
        self.truncating.pop(key, None)
        self.out_of_range.pop(key, None)
        self.delayed.pop(key, None)
        self.stuck.discard(key)
        super().remove_partition(key)

    @property
    def idle(self) -> bool:
        return not self.partitions and not self.truncating and not self.delayed

    def _delay(self, key: TopicPartition) -> None:
        """NOT_LEADER_OR_FOLLOWER (the broker does not lead it, or not yet): Kafka retries the
        partition after replica.fetch.backoff.ms, out of the requests meanwhile (a session
        forgets it) and back with the same state (AbstractFetcherThread.delayPartitions)."""
        self.delayed[key] = state = self.partitions[key]
        super().remove_partition(key)
        self.broker.schedule(self.broker.config.replica_fetch_backoff_ms * 1000,
                             lambda: self._undelay(key, state))

    def _undelay(self, key: TopicPartition, state: FetchState) -> None:
        if self.stopped or self.delayed.get(key) is not state:
            return  # removed, or followed anew, meanwhile
        del self.delayed[key]
        self.fetch(key, state)
        self.wake()

    # -- the loop ------------------------------------------------------------------------------
    def send(self) -> None:
        if self.in_flight or self.stopped or not self.up():
            return
        if self.out_of_range:  # answered while processing the last response
            self._list_offsets()
            return
        if self._backing_off:
            # As Kafka's fetcher does with a partition it failed to process: retry later.
            self._backing_off = False
            self._retry_later()
            return
        if self.truncating and not self._fetch_turn:
            self._ask_epochs()
            return
        self._fetch_turn = False
        super().send()

    def _ask_epochs(self) -> None:
        """OffsetsForLeaderEpoch for every partition still deciding where to truncate."""
        cluster = self.cluster
        asked = dict(self.truncating)
        self.in_flight = True
        sent = self._sent = self._sent + 1
        leader = cluster.brokers[self.leader_id]
        # On the wire: every partition asked about, by topic, at the version
        # inter.broker.protocol.version gives; an answer per partition, errors included.
        version = self.broker.config.offsets_for_leader_epoch_version
        topics = partitions_by_topic(asked)

        def at_leader() -> None:
            answers = {key: leader.on_epoch_request(key, epoch) for key, epoch in asked.items()}
            size = response_wire_size(OFFSETS_FOR_LEADER_EPOCH, version,
                                      offsets_for_leader_epoch_response_body_size(version,
                                                                                  topics.items()))
            cluster.send(self.leader_id, self.broker_id, size,
                         lambda: self._on_epochs(sent, asked, answers))

        size = request_wire_size(OFFSETS_FOR_LEADER_EPOCH, version, self.client_id,
                                 offsets_for_leader_epoch_request_body_size(version,
                                                                            topics.items()))
        cluster.send(self.broker_id, self.leader_id, size, at_leader)
        self._arm_timeout(sent)

    def _on_epochs(self, sent: int, asked: dict[TopicPartition, int],
                   answers: dict[TopicPartition, tuple[int, int] | None]) -> None:
        if sent != self._sent or self.stopped:
            return
        self._disarm()
        strategy = self.cluster.strategies.replication
        for key, epoch in asked.items():
            if self.truncating.get(key) != epoch:
                continue  # removed or re-added meanwhile
            answer = answers.get(key)
            if answer is None:
                continue  # not leader (any more): wait for the controller's word
            view = self._view(key)
            decision = strategy.on_epoch_end(view, epoch, *answer)
            if isinstance(decision, AskLeader):
                self._walk_back(key, view, decision.epoch)
                continue
            del self.truncating[key]
            self._truncate(key, decision.offset, "leader-epoch")
            self._fetch(key)
        # One truncation step per round of the fetcher's loop, then a fetch of the partitions
        # that are ready, or replica.fetch.backoff.ms when none is (KIP-279's walk-back, one
        # OffsetsForLeaderEpoch per step: AbstractFetcherThread.doWork = maybeTruncate();
        # maybeFetch(), which waits fetchBackOffMs when it has nothing to fetch; 2.0–2.7).
        if self.truncating and not self.partitions:
            self._retry_later()
        else:
            self._fetch_turn = bool(self.truncating)
            self.send()

    def _send_fetch(self) -> None:
        if not self._sent:
            self.cluster.log.emit(names.FETCHER_START, broker=self.broker_id,
                                  leader=self.leader_id, fetcher=self.fetcher_id,
                                  client=self.client_id, partitions=len(self.partitions))
        super()._send_fetch()

    def _apply(self, response: FetchResponseMsg) -> None:
        broker = self.broker
        now_ms = broker.now_ms
        if broker.fetch_stuck and response.records:
            self._backing_off = True  # stuck: the records are dropped, the offsets stay
        for key, (batches, _size) in ({} if broker.fetch_stuck else response.records).items():
            state = self.partitions.get(key)
            replica = broker.replicas.get(key)
            if state is None or replica is None:
                continue
            for batch in batches:
                if batch.base_offset >= replica.leo:  # a compacted log has gaps
                    replica.log.append(batch, now_ms, gap_ok=True)
            broker.replica_manager.after_append(replica)
            if state.fetch_offset != replica.leo:
                self._fetch_from_end(key, replica)
        for key, (epoch, end_offset) in response.diverging.items():
            if key in self.partitions:
                self._diverged(key, epoch, end_offset)
        for key, hw in response.high_watermarks.items():
            replica = broker.replicas.get(key)
            if replica is not None and key in self.partitions:
                broker.replica_manager.follower_hw(replica, hw)
        for key, start in response.log_starts.items():
            replica = broker.replicas.get(key)
            if replica is not None and key in self.partitions:
                broker.replica_manager.follower_log_start(replica, start)
        for key, error in response.errors.items():
            if error == OFFSET_OUT_OF_RANGE and key in self.partitions:
                self.out_of_range[key] = LATEST  # ListOffsets before the next fetch
            elif error == FENCED_LEADER_EPOCH and key in self.partitions:
                self._fenced(key, response.fenced.get(key, -1))
            elif key in self.partitions:  # not leader there (yet), or an epoch it has not heard
                self._delay(key)  # of (UNKNOWN_LEADER_EPOCH): retry after the back-off

    def _fenced(self, key: TopicPartition, sent_epoch: int) -> None:
        """FENCED_LEADER_EPOCH: the leader knows a newer epoch than the one sent. A partition
        still at that epoch leaves the fetcher until a LeaderAndIsr brings the new one
        (AbstractFetcherThread.onPartitionFenced → markPartitionFailed; the new epoch makes the
        follower fetch again, rig.cluster.replica_manager.keeps_fetching). One followed anew at
        another epoch since the request went is, in Kafka, truncating, and the answer is dropped
        (processFetchRequest: isReadyForFetch); with truncation on fetch (2.8+) it is already
        fetching, and onPartitionFenced (2.5+) retries it after the back-off."""
        state = self.partitions[key]
        if sent_epoch != state.current_leader_epoch:
            if self._truncates_on_fetch:
                self._delay(key)
            return
        self.cluster.log.emit(names.FETCHER_FENCED, broker=self.broker_id, leader=self.leader_id,
                              topic=key[0], partition=key[1], epoch=state.current_leader_epoch,
                              fetcher=self.fetcher_id)
        self.remove_partition(key)

