"""How a follower truncates its log (rig.cluster.fetcher.ReplicaFetcher's base): by the
replication strategy's reading of the leader's epoch ends, an OffsetsForLeaderEpoch answer or a
fetch response's diverging epoch (AbstractFetcherThread.getOffsetTruncationState), by KIP-279's
walk-back one epoch at a time (2.0–2.7), and on OFFSET_OUT_OF_RANGE to the leader's end (or,
before 2.1, the broker halts where that would be an unclean truncation) or wholly, to start
again at the leader's log start."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rig.cluster.fetch_client import FetchClient
from rig.cluster.log_rewrite import truncate_fully_and_start_at
from rig.cluster.partition import TopicPartition
from rig.cluster.replica import Role
from rig.events import names
from rig.protocol import (
    LIST_OFFSETS,
    list_offsets_request_body_size,
    list_offsets_response_body_size,
    request_wire_size,
    response_wire_size,
)
from rig.strategies.replication import AskLeader
from rig.strategies.replication.base import FollowerView

if TYPE_CHECKING:
    from rig.cluster.broker import Broker
    from rig.cluster.replica import Replica

LATEST, EARLIEST = "latest", "earliest"  # ListOffsets' timestamps −1 and −2


class FollowerTruncation(FetchClient):
    """The truncation steps of a follower's fetcher; the fetch loop is ReplicaFetcher's."""

    broker: Broker
    broker_id: int
    truncating: dict[TopicPartition, int]  # partition → epoch asked about
    out_of_range: dict[TopicPartition, str]  # partition → the ListOffsets it asks next
    if TYPE_CHECKING:
        def _delay(self, key: TopicPartition) -> None: ...  # ReplicaFetcher's back-off
    stuck: set[TopicPartition]  # walk-backs that ask the same epoch again (KAFKA-10706)

    @property
    def _truncates_on_fetch(self) -> bool:
        return self.broker.config.truncation_on_fetch and self.version >= 12

    def _last_fetched_epoch(self, replica: Replica) -> int:
        """The epoch of the log's last batch when truncating on fetch, else −1 (not sent)."""
        return replica.log.latest_epoch if self._truncates_on_fetch else -1

    def _fetch_from_end(self, key: TopicPartition, replica: Replica) -> None:
        """Fetch `key` next from the log's end, with the epoch of its last batch
        (AbstractFetcherThread: PartitionFetchState after an append or a truncation)."""
        state = self.partitions[key]
        state.fetch_offset = replica.leo
        state.last_fetched_epoch = self._last_fetched_epoch(replica)
        self.dirty[key] = None

    def restate(self, key: TopicPartition, log_start_offset: int) -> None:
        """The partition's log start moved here (retention, or the leader's): the next request
        lists it again with the new one (FetchSessionHandler compares the whole PartitionData)."""
        state = self.partitions.get(key)
        if state is None or state.log_start_offset == log_start_offset:
            return
        if self.coast is not None:
            self.coast.wake()
        state.log_start_offset = log_start_offset
        self.dirty[key] = None

    def _view(self, key: TopicPartition) -> FollowerView:
        replica = self.broker.replicas[key]
        return FollowerView(replica.leo, replica.high_watermark, replica.log.latest_epoch,
                            replica.log.end_offset_for_epoch)

    def _walk_back(self, key: TopicPartition, view: FollowerView, epoch: int) -> None:
        """KIP-279's intermediate step (2.0–2.7, AbstractFetcherThread.getOffsetTruncationState:
        the leader answered with an epoch this log does not have): truncate now to the end of
        the log's epoch `epoch` (the largest below the leader's, `truncationCompleted = false`),
        and stay truncating; the next OffsetsForLeaderEpoch asks about the log's latest epoch
        (fetchTruncatingPartitions → latestEpoch), which is `epoch` once the truncation dropped
        the epochs after it. A truncation at or past the log end drops none before KAFKA-10706
        (2.7, Log.truncateTo's early return): the replica then asks the same epoch again, gets
        the same answer, and never completes (the liveness bug KAFKA-10706 fixed)."""
        own_epoch, own_end = view.end_offset_for_epoch(epoch)
        if own_epoch != -1:
            self._truncate(key, own_end, "leader-epoch")
        replica = self.broker.replicas[key]
        latest = replica.log.latest_epoch
        asked = self.truncating.get(key)
        self.truncating[key] = latest if latest != -1 else epoch
        if self.truncating[key] == asked and key not in self.stuck:
            self.stuck.add(key)  # the same question next, and the same answer
            self.cluster.log.emit(names.REPLICA_TRUNCATION_STUCK, broker=self.broker_id,
                                  topic=key[0], partition=key[1], leader=self.leader_id,
                                  epoch=asked)

    def _truncate(self, key: TopicPartition, offset: int, reason: str) -> None:
        replica = self.broker.replicas[key]
        before = replica.leo
        offset = max(0, min(offset, before))
        removed = replica.log.truncate_to(offset, self.broker.now_ms)
        if offset >= before and self.broker.config.truncate_epochs_at_log_end:
            # Kafka 2.7+ (KAFKA-10706, Log.truncateTo): "Always truncate epoch cache since we
            # may have a conflicting epoch entry at the end of the log from the leader".
            replica.log.truncate_epochs_from_end()
        replica.high_watermark = min(replica.high_watermark, replica.leo)
        self.broker.replica_manager.hw_dirty[key] = None
        if not removed:
            return  # nothing was cut: not an event
        self.cluster.log.emit(names.REPLICA_TRUNCATE, broker=self.broker_id, topic=key[0],
                              partition=key[1], leader=self.leader_id, from_offset=before,
                              to_offset=replica.leo, records=removed, reason=reason,
                              strategy=self.cluster.strategies.replication.name)

    def _diverged(self, key: TopicPartition, leader_epoch: int, leader_end: int) -> None:
        """The leader found our log diverging from its own: truncate by its (epoch, end offset)
        as an OffsetsForLeaderEpoch answer is read, then fetch from the new log end with its
        epoch (AbstractFetcherThread.truncateOnFetchResponse → getOffsetTruncationState, the
        partition staying in Fetching). Where the leader's epoch is one this log does not have,
        Kafka truncates to the end of the log's largest epoch below it and the next fetch asks
        again: a divergence of several epochs takes several answers."""
        state = self.partitions[key]
        view = self._view(key)
        decision = self.cluster.strategies.replication.on_epoch_end(
            view, state.last_fetched_epoch, leader_epoch, leader_end)
        if isinstance(decision, AskLeader):
            offset = view.end_offset_for_epoch(decision.epoch)[1]
        else:
            offset = decision.offset
        self._truncate(key, offset, "diverging-epoch")
        self._fetch_from_end(key, self.broker.replicas[key])

    # -- OFFSET_OUT_OF_RANGE --------------------------------------------------------------------
    def _list_offsets(self) -> None:
        """OFFSET_OUT_OF_RANGE: the fetch offset is past the leader's log end, or below its log
        start. The follower asks the leader, one ListOffsets round trip at a time, for its log
        end and then, unless that is below ours, its log start; its fetcher thread waits for
        each answer and fetches nothing meanwhile (AbstractFetcherThread.fetchOffsetAndTruncate
        → fetchLatestOffsetFromLeader, fetchEarliestOffsetFromLeader; before 2.1
        ReplicaFetcherThread.handleOffsetOutOfRange, through a SimpleConsumer before 0.11).
        A broker that no longer leads the partition answers NOT_LEADER_OR_FOLLOWER, and a
        failed connection fails the request: the partition is retried after the back-off."""
        key, kind = next(iter(self.out_of_range.items()))
        cluster = self.cluster
        self.in_flight = True
        sent = self._sent = self._sent + 1
        if self._refused(sent):
            return
        leader = cluster.brokers[self.leader_id]
        # On the wire: one partition, at the version inter.broker.protocol.version gives, through
        # the fetcher's own connection (its client.id); docs/kafka.md §1.
        version = self.broker.config.list_offsets_version
        asked = ((key[0], 1),)

        def at_leader() -> None:  # (only delivered to the process it was sent to, alive)
            replica = leader.replicas.get(key)
            answer = None
            if replica is not None and replica.role is Role.LEADER:
                answer = replica.leo if kind == LATEST else replica.log.log_start_offset
            size = response_wire_size(LIST_OFFSETS, version, list_offsets_response_body_size(
                version, asked, answer is not None))
            cluster.send(self.leader_id, self.broker_id, size,
                         lambda: self._on_offset(sent, key, kind, answer))

        size = request_wire_size(LIST_OFFSETS, version, self.client_id,
                                 list_offsets_request_body_size(version, asked))
        cluster.send(self.broker_id, self.leader_id, size, at_leader)
        self._arm_timeout(sent)

    def _on_offset(self, sent: int, key: TopicPartition, kind: str, answer: int | None) -> None:
        if sent != self._sent or self.stopped:
            return
        self._disarm()
        if self.out_of_range.get(key) == kind:
            if answer is None:
                del self.out_of_range[key]
                self._delay(key)
            elif kind == LATEST:
                if self._leader_end(key, answer):
                    return  # the broker halted: its fetchers are gone
            else:
                self._leader_start(key, answer)
        self.send()

    def _disconnected(self) -> None:
        """The connection failed; with a ListOffsets open its partition is retried after the
        back-off, as a partition in error (processFetchRequest's partitionsWithError)."""
        for key in list(self.out_of_range):
            del self.out_of_range[key]
            self._delay(key)
        super()._disconnected()

    def _leader_end(self, key: TopicPartition, leader_end: int) -> bool:
        """The leader's log end below our own: truncate to it (Kafka does so, even though it may
        throw away records only this replica had). Before 2.1, with unclean leader election off
        for the topic, the broker halts instead, as truncating could throw away records the ISR
        acknowledged ("Halting because log truncation is not allowed for topic …",
        Runtime.halt(1) in 0.8.2; FatalExitError later; KAFKA-7414 made it never fatal).
        Otherwise ask for its log start next. Returns whether the broker halted."""
        replica = self.broker.replicas[key]
        own = replica.leo
        if leader_end >= own:
            self.out_of_range[key] = EARLIEST
            return False
        if self.broker.config.out_of_range_halts and not self.cluster.unclean_election(key):
            self.cluster.halt(self.broker_id, key, self.leader_id, leader_end, own)
            return True
        self._truncate(key, leader_end, "offset-out-of-range")
        del self.out_of_range[key]
        self._fetch_from_end(key, replica)
        return False

    def _leader_start(self, key: TopicPartition, leader_start: int) -> None:
        """Our log ending below the leader's log start (retention deleted what we would fetch
        next: a replica down for long, or new): delete the whole log and start it again at the
        leader's log start. Else fetch on from our end. Before 0.9.0.1 the log starts again at
        the leader's start whenever the leader is not behind, whatever it holds (KAFKA-2143: a
        leader that grew past us between its answer and our asking)."""
        replica = self.broker.replicas[key]
        if self.broker.config.out_of_range_restarts_log or leader_start > replica.leo:
            self._truncate_fully(key, replica, leader_start)
        del self.out_of_range[key]
        self._fetch_from_end(key, replica)

    def _truncate_fully(self, key: TopicPartition, replica: Replica, offset: int) -> None:
        """truncateFullyAndStartAt(`offset`): the replica's log is deleted and starts again,
        empty, at the leader's log start; its HW moves up to it (UnifiedLog.updateHighWatermark;
        before 2.x the next fetch response raised it)."""
        log = replica.log
        before, start = log.log_end_offset, log.log_start_offset
        removed = truncate_fully_and_start_at(log, offset, self.broker.now_ms)
        self.partitions[key].log_start_offset = offset  # (retention's moves: restate)
        replica.high_watermark = max(replica.high_watermark, offset)
        self.broker.replica_manager.hw_dirty[key] = None
        self.cluster.log.emit(names.REPLICA_TRUNCATE_FULLY, broker=self.broker_id, topic=key[0],
                              partition=key[1], leader=self.leader_id, log_start_offset=start,
                              log_end_offset=before, to_offset=offset, records=removed)
