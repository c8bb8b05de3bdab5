"""A broker's replicas and what changes them: becoming leader or follower, the ISR it holds as
leader, appends (Kafka's ReplicaManager with its Partitions; docs/kafka.md §8, §9). What each
fetch client is owed (pending partitions, unseen HWs), the high watermark, and how a change
reaches the fetch clients and the operations waiting on it are in rig.cluster.high_watermark
(HighWatermarks), which this builds on.
"""

from __future__ import annotations

from typing import Any

from rig.cluster.context import NodeContext, Process
from rig.cluster.fetch_epochs import FetchEpochs
from rig.cluster.fetcher_manager import FetcherManager
from rig.cluster.high_watermark import HighWatermarks, Slot
from rig.cluster.log import Batch
from rig.cluster.log_manager import LogManager
from rig.cluster.log_rewrite import increment_log_start
from rig.cluster.partition import TopicPartition
from rig.cluster.purgatory import Purgatory
from rig.cluster.replica import Replica, Role
from rig.events import names
from rig.protocol.errors import NOT_LEADER_OR_FOLLOWER
from rig.strategies.fetch_session import SessionCache
from rig.strategies.isr import NEVER_CAUGHT_UP, FollowerProgress
from rig.strategies.replication.base import FollowerView

__all__ = ["ReplicaManager", "Slot"]


class ReplicaManager(HighWatermarks):
    """The replicas of one broker and the bookkeeping of who fetched what from them."""

    def __init__(self, broker: Process, ctx: NodeContext, *,
                 fetch_purgatory: Purgatory[Slot, Any],
                 produce_purgatory: Purgatory[TopicPartition, Any],
                 fetcher_manager: FetcherManager, log_manager: LogManager,
                 cache: SessionCache, touched: dict[TopicPartition, Replica],
                 written: dict[TopicPartition, Replica], replicas: dict[TopicPartition, Replica]):
        super().__init__(broker, ctx, fetch_purgatory=fetch_purgatory,
                         produce_purgatory=produce_purgatory, cache=cache, replicas=replicas)
        self.fetcher_manager = fetcher_manager
        self.log_manager = log_manager
        self.touched = touched  # logs read or written (the storage's samples look at them)
        self.written = written  # logs written (retention looks at them)
        self.last_fetch_ms: dict[Slot, float] = {}
        # Per follower, the partitions led here that have it outside their ISR: its every
        # fetch is a chance to rejoin (Partition.maybeExpandIsr runs on each follower fetch).
        self.outside_isr: dict[int, dict[TopicPartition, None]] = {}
        self.fetch_epochs = FetchEpochs(replicas, self.config.fetch_leader_epoch_checked)
        # The partitions the batch being applied made follower (Partition.makeFollower answered
        # true): their parked fetches are completed after the batch (complete_made_followers).
        self.made_follower: dict[TopicPartition, None] = {}

    def reset(self, power_loss: bool) -> int:
        """The process died: forget every client's progress, the replicas fall back to what
        is on disk (with `power_loss`, less the unflushed records). Returns records lost."""
        self.pending.clear()
        self.hw_unseen.clear()
        self.hw_dirty.clear()
        self.hw_behind.clear()
        self.outside_isr.clear()
        self.consumer_positions.clear()
        self.consumer_watchers.clear()
        self.unled.clear()
        self.made_follower.clear()
        self.fetch_epochs.clear()
        return sum(replica.restart(power_loss) for replica in self.replicas.values())

    # -- becoming leader or follower (LeaderAndIsr) ----------------------------------------
    def become_leader(self, replica: Replica, state: Any, quiet: bool = False) -> None:
        broker = self.broker
        key = replica.key
        self.fetch_epochs.changed()
        self._before_change(self.consumer_watchers.get(key, ()))  # a consumer's coast ends
        if replica.role is Role.LEADER:
            # Still the leader, at a new epoch (the controller changed the ISR): Kafka keeps
            # the followers' fetch offsets, takes the controller's ISR and resets every
            # follower's lastCaughtUpTimeMs (now if in the new ISR, else never), so one the
            # controller removed no longer holds the HW back (Partition.makeLeader with
            # Replica.resetLastCaughtUpTime, the same in 0.11–3.x; docs/kafka.md §11).
            now = broker.now_ms
            if self.fetch_epochs.enabled:  # the followers' fetches at the old epoch are fenced
                self._before_change(self._follower_slots(replica))  # (a coast ends)
            previous = replica.leader_epoch
            replica.leader_epoch = state.leader_epoch
            replica.zk_version = state.version
            self.set_isr(replica, tuple(state.isr))
            replica.pending_isr = None
            if self.config.epoch_start_at_election:  # 2.1+ (KAFKA-7415): before, first append
                replica.log.assign_epoch(state.leader_epoch)
            for follower in replica.assignment:
                if follower != broker.id:
                    replica.follower(follower).reset_caught_up(
                        replica.leo, now, now if follower in replica.isr else NEVER_CAUGHT_UP)
            if not quiet:
                self._log_epoch_changed(replica, previous)
            self.maybe_advance_hw(replica)
            return
        if replica.role is Role.FOLLOWER:
            self.fetcher_manager.stop_fetching(replica)
        now = broker.now_ms
        replica.role = Role.LEADER
        replica.leader = broker.id
        replica.leader_epoch = state.leader_epoch
        replica.zk_version = state.version
        self.set_isr(replica, tuple(state.isr))
        replica.pending_isr = None
        if self.config.epoch_start_at_election:  # Partition.makeLeader, 2.1+ (KAFKA-7415)
            replica.log.assign_epoch(state.leader_epoch)
        # Follower LEOs are unknown until they fetch; those in the ISR count as caught up now.
        replica.followers = {b: FollowerProgress(-1, now if b in state.isr else NEVER_CAUGHT_UP,
                                                 now, 0)
                             for b in replica.assignment if b != broker.id}
        self._before_change(self._follower_slots(replica))
        for follower in replica.followers:
            self.pending.setdefault((follower, replica.fetcher_slot), {})[key] = None
        if not quiet:
            self.ctx.emit(names.REPLICA_BECOME_LEADER, broker=broker.id, topic=key[0],
                          partition=key[1], epoch=state.leader_epoch, isr=list(state.isr),
                          leo=replica.leo, hw=replica.high_watermark)
        self.maybe_advance_hw(replica, followers_told=True)

    def become_follower(self, replica: Replica, state: Any, quiet: bool = False,
                        to_wake: dict[Any, None] | None = None) -> None:
        """Follow the new leader; with `to_wake`, the fetcher is woken by the caller."""
        broker = self.broker
        key = replica.key
        self.fetch_epochs.changed()
        # A consumer fetching the partition here is answered otherwise from now (not leader,
        # or fenced at the new epoch): its coast ends (rig.cluster.coast).
        self._before_change(self.consumer_watchers.get(key, ()))
        same_leader = (replica.role is Role.FOLLOWER and replica.leader == state.leader
                       and keeps_fetching(self.config.follower_refetch_on_new_epoch,
                                          replica.leader_epoch, state.leader_epoch))
        if replica.role is Role.LEADER:
            # Waiting acks=all produces get NOT_LEADER_OR_FOLLOWER for it; fetches too.
            self.produce_purgatory.abort(key, NOT_LEADER_OR_FOLLOWER)
            self.stopped_leading(replica)
            self.hw_behind.pop(key, None)
            self.set_isr(replica, ())
            replica.followers.clear()
            replica.pending_isr = None  # makeFollower: CommittedIsr(empty)
        previous = replica.leader_epoch
        replica.leader_epoch = state.leader_epoch
        replica.zk_version = state.version
        if same_leader:  # makeFollower answered false: keep fetching, no truncation
            if not quiet:
                self._log_epoch_changed(replica, previous)
            return
        self.made_follower[key] = None
        self.fetcher_manager.stop_fetching(replica)
        replica.role = Role.FOLLOWER
        replica.leader = state.leader
        view = FollowerView(replica.leo, replica.high_watermark, replica.log.latest_epoch,
                            replica.log.end_offset_for_epoch)
        decision = self.ctx.strategies.replication.on_become_follower(view)
        if not quiet:
            self.ctx.emit(names.REPLICA_BECOME_FOLLOWER, broker=broker.id, topic=key[0],
                          partition=key[1], leader=state.leader, epoch=state.leader_epoch,
                          leo=replica.leo, hw=replica.high_watermark)
        if not broker.alive:
            return  # a fault triggered by that event took this broker down
        self.fetcher_manager.follow(key, state.leader, replica.fetcher_slot, decision, to_wake)

    def _log_epoch_changed(self, replica: Replica, previous: int) -> None:
        """replica.epoch_changed: `replica` kept its role and its leader at a new leader epoch
        (Partition.makeLeader / makeFollower log it as they log a new leader)."""
        key = replica.key
        leader = replica.role is Role.LEADER
        self.ctx.emit(names.REPLICA_EPOCH_CHANGED, broker=self.broker.id, topic=key[0],
                      partition=key[1], role="leader" if leader else "follower",
                      leader=replica.leader, epoch=replica.leader_epoch, previous_epoch=previous,
                      **({"isr": list(replica.isr)} if leader else {}),
                      leo=replica.leo, hw=replica.high_watermark)

    def log_start_moved(self, replica: Replica) -> None:
        """Retention, or as a follower the leader's, moved the replica's log start. Every
        fetch session holding the partition here lists it in its next response, as for a HW
        change (KIP-227: CachedPartition.maybeUpdateResponseData compares the log start offset
        too), and the coasts of the clients fetching it here end first; as a follower, its next
        fetch request lists it with the new log start (Fetch v5+: FetchSessionHandler compares
        the whole PartitionData)."""
        if replica.role is Role.LEADER:
            self._before_change(self._follower_slots(replica))
        self._before_change(self.consumer_watchers.get(replica.key, ()))
        self.cache.mark_changed(replica.key)
        if replica.role is Role.FOLLOWER:
            fetcher = self.fetcher_manager.fetchers.get((replica.leader, replica.fetcher_slot))
            if fetcher is not None:
                fetcher.restate(replica.key, replica.log.log_start_offset)

    def follower_log_start(self, replica: Replica, log_start: int) -> None:
        """KIP-107 (Fetch v5+): a follower moves its log start up to the one the leader's
        response carries, after its HW (ReplicaFetcherThread.processPartitionData →
        maybeIncrementLogStartOffset, LeaderOffsetIncremented); its next retention pass deletes
        the segments below it (rig.cluster.retention)."""
        log = replica.log
        before = log.log_start_offset
        if not increment_log_start(log, log_start):
            return
        key = replica.key
        self.written[key] = replica
        self.ctx.emit(names.LOG_START_INCREMENT, broker=self.broker.id, topic=key[0],
                      partition=key[1], leader=replica.leader, from_offset=before,
                      log_start_offset=log_start)
        self.log_start_moved(replica)

    def set_isr(self, replica: Replica, isr: tuple[int, ...]) -> None:
        """The ISR this broker now holds for `replica` (as leader; () when it stops leading)."""
        replica.isr = isr
        key = replica.key
        for follower in replica.assignment:
            if follower == self.broker.id:
                continue
            if isr and follower not in isr:
                if key not in self.outside_isr.get(follower, ()):  # each fetch may rejoin it:
                    self._before_change(((follower, replica.fetcher_slot),))  # a coast ends
                self.outside_isr.setdefault(follower, {})[key] = None
            else:
                outside = self.outside_isr.get(follower)
                if outside:
                    outside.pop(key, None)

    def follower_outside_isr(self, follower: int) -> bool:
        """Whether a partition led here has `follower` among its replicas but not its ISR (its
        every fetch then checks whether it may rejoin)."""
        return bool(self.outside_isr.get(follower))

    # -- appends -------------------------------------------------------------------------------
    def append_as_leader(self, replica: Replica, batch: Batch) -> Batch:
        broker = self.broker
        placed = Batch(replica.leo, batch.count, replica.leader_epoch, batch.size,
                       batch.producer, batch.sequence, batch.timestamp_ms, batch.keys,
                       batch.tombstones)
        replica.log.append(placed, broker.now_ms)
        self.after_append(replica)
        self._before_change(self._follower_slots(replica))
        for follower in replica.assignment:
            if follower == broker.id:
                continue
            slot = (follower, replica.fetcher_slot)
            pending = self.pending.setdefault(slot, {})
            if replica.key not in pending:
                # Until now the follower was caught up as of its last fetch: record that lazily,
                # as Kafka's per-fetch bookkeeping would have.
                progress = replica.follower(follower)
                seen = self.last_fetch_ms.get(slot)
                if seen is not None and progress.log_end_offset == placed.base_offset:
                    progress.record_caught_up_fetch(seen, placed.base_offset)
                pending[replica.key] = None
            # A follower's parked fetch completes when this one append brings its min bytes.
            self._announce(slot, batch.size)
        self.maybe_advance_hw(replica, followers_told=True)
        return placed

    def after_append(self, replica: Replica) -> None:
        """Bookkeeping of any append, as leader or follower: unflushed, written, read."""
        self.log_manager.appended(replica)
        self.touched[replica.key] = replica
        self.written[replica.key] = replica


def keeps_fetching(rule: str, old_epoch: int, new_epoch: int) -> bool:
    """Whether a follower told of `new_epoch` (> `old_epoch`) with the leader it follows keeps
    fetching as it was: Partition.makeFollower answers false, so ReplicaManager.makeFollowers
    leaves its fetcher alone. Before 2.0 whatever the epoch; 2.0 for the next epoch only;
    2.1+ (KIP-320: the fetcher must send the new epoch) never."""
    if rule == "never":
        return True
    return rule == "beyond-next" and new_epoch == old_epoch + 1
