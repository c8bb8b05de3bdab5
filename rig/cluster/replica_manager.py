"""A broker's replicas and what changes them: becoming leader or follower, appends, the high
watermark, and what the leader knows of each fetch client's progress (Kafka's ReplicaManager
with its Partitions; KAFKA.md §8, §9).

A leader keeps, for each fetch client (keyed by its slot), the partitions where that client is
behind ("pending") and those whose HW it has not yet seen, so an idle fetch of 500 partitions
costs nothing per partition. Waiting operations (parked fetches, acks=all produces) are
completed only through the broker's purgatories.
"""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping
from typing import Any

from rig.cluster.context import NodeContext, Process, Wakeable
from rig.cluster.fetcher_manager import FetcherManager
from rig.cluster.log import Batch
from rig.cluster.log_manager import LogManager
from rig.cluster.messages import FetchRequestMsg
from rig.cluster.partition import TopicPartition
from rig.cluster.purgatory import AbortableOperation, DelayedOperation, Purgatory
from rig.cluster.replica import Replica, Role
from rig.events import names
from rig.protocol.errors import NOT_LEADER_OR_FOLLOWER
from rig.strategies.fetch_session import SessionCache
from rig.strategies.isr import FollowerProgress
from rig.strategies.replication.base import FollowerView

Slot = tuple[Any, int]  # a fetch client's key: (follower broker, fetcher slot) or (client, 0)


class ReplicaManager:
    """The replicas of one broker and the bookkeeping of who fetched what from them."""

    def __init__(self, broker: Process, ctx: NodeContext, *,
                 fetch_purgatory: Purgatory[Slot, Any],
                 produce_purgatory: Purgatory[TopicPartition, Any],
                 fetcher_manager: FetcherManager, log_manager: LogManager,
                 cache: SessionCache, touched: dict[TopicPartition, Replica],
                 written: dict[TopicPartition, Replica],
                 coasts: MutableMapping[Slot, Wakeable],
                 replicas: dict[TopicPartition, Replica]):
        self.broker = broker
        self.ctx = ctx
        self.config = broker.config
        self.fetch_purgatory: Purgatory[Slot, DelayedOperation] = fetch_purgatory
        self.produce_purgatory: Purgatory[TopicPartition, AbortableOperation] = produce_purgatory
        self.fetcher_manager = fetcher_manager
        self.log_manager = log_manager
        self.cache = cache
        self.touched = touched  # logs read or written (the storage's samples look at them)
        self.written = written  # logs written (retention looks at them)
        self.coasts = coasts
        self.replicas = replicas  # the broker's: every part reads the same map
        self.pending: dict[Slot, dict[TopicPartition, None]] = {}
        self.hw_unseen: dict[Slot, dict[TopicPartition, None]] = {}
        self.last_fetch_ms: dict[Slot, float] = {}
        self.hw_dirty: dict[TopicPartition, None] = {}  # HW changed since the last checkpoint
        self.hw_behind: dict[TopicPartition, None] = {}  # led here, HW below the LEO
        # Consumers (keyed by their fetch client): last known positions, and who watches what.
        self.consumer_positions: dict[Any, dict[TopicPartition, int]] = {}
        self.consumer_watchers: dict[TopicPartition, dict[Any, None]] = {}
        # The size of the batch being announced to parked follower fetches (see append).
        self.announced_bytes = 0

    def reset(self, power_loss: bool) -> int:
        """The process died: forget every client's progress, the replicas fall back to what
        is on disk (with `power_loss`, less the unflushed records). Returns records lost."""
        self.pending.clear()
        self.hw_unseen.clear()
        self.hw_dirty.clear()
        self.hw_behind.clear()
        self.consumer_positions.clear()
        self.consumer_watchers.clear()
        lost = 0
        for replica in self.replicas.values():
            if power_loss:
                lost += replica.log.lose_unflushed()
            replica.role = Role.NONE
            replica.isr = ()
            replica.followers.clear()
            # On restart the HW is the checkpointed one (never above the log end).
            replica.high_watermark = min(replica.checkpointed_hw, replica.leo)
            replica.leader_epoch = -1
        return lost

    def checkpoint_hw(self) -> None:
        """The HW checkpoint task: only the HWs that changed since it last ran."""
        for key in self.hw_dirty:
            replica = self.replicas[key]
            replica.checkpointed_hw = replica.high_watermark
        self.hw_dirty.clear()

    # -- becoming leader or follower (LeaderAndIsr) ----------------------------------------
    def become_leader(self, replica: Replica, state: Any, quiet: bool = False) -> None:
        broker = self.broker
        key = replica.key
        if replica.role is Role.LEADER:
            # Still the leader, at a new epoch (the controller changed the ISR): Kafka keeps
            # what it knows of its followers; only the epoch and the ISR change.
            replica.leader_epoch = state.leader_epoch
            replica.zk_version = state.version
            replica.isr = tuple(state.isr)
            replica.isr_change_pending = False
            replica.log.assign_epoch(state.leader_epoch)
            self.maybe_advance_hw(replica)
            return
        if replica.role is Role.FOLLOWER:
            self.fetcher_manager.stop_fetching(replica)
        now = broker.now_ms
        replica.role = Role.LEADER
        replica.leader = broker.id
        replica.leader_epoch = state.leader_epoch
        replica.zk_version = state.version
        replica.isr = tuple(state.isr)
        replica.isr_change_pending = False
        replica.log.assign_epoch(state.leader_epoch)
        # Follower LEOs are unknown until they fetch; those in the ISR count as caught up now.
        replica.followers = {b: FollowerProgress(-1, now if b in state.isr else 0.0, now, 0)
                             for b in replica.assignment if b != broker.id}
        self._idle_rounds_end(self._follower_slots(replica))
        for follower in replica.followers:
            slot = (follower, replica.fetcher_slot)
            pending = self.pending.get(slot)
            if pending is None:
                pending = self.pending[slot] = {}
            pending[key] = None
        if not quiet:
            self.ctx.emit(names.REPLICA_BECOME_LEADER, broker=broker.id, topic=key[0],
                          partition=key[1], epoch=state.leader_epoch, isr=list(state.isr),
                          leo=replica.leo, hw=replica.high_watermark)
        self.maybe_advance_hw(replica)

    def become_follower(self, replica: Replica, state: Any, quiet: bool = False,
                        to_wake: dict[Any, None] | None = None) -> None:
        """Follow the new leader; with `to_wake`, the fetcher is woken by the caller."""
        broker = self.broker
        key = replica.key
        same_leader = replica.role is Role.FOLLOWER and replica.leader == state.leader
        if replica.role is Role.LEADER:
            # Waiting acks=all produces get NOT_LEADER_OR_FOLLOWER for it.
            self.produce_purgatory.abort(key, NOT_LEADER_OR_FOLLOWER)
            self.hw_behind.pop(key, None)
            replica.isr = ()
            replica.followers.clear()
        replica.leader_epoch = state.leader_epoch
        replica.zk_version = state.version
        if same_leader:
            return  # only the ISR changed: keep fetching, no truncation (Kafka's makeFollower)
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

    # -- appends -------------------------------------------------------------------------------
    def append_as_leader(self, replica: Replica, batch: Batch) -> Batch:
        broker = self.broker
        placed = Batch(replica.leo, batch.count, replica.leader_epoch, batch.size,
                       batch.producer, batch.sequence, batch.timestamp_ms, batch.keys,
                       batch.tombstones)
        replica.log.append(placed, broker.now_ms)
        self.after_append(replica)
        # Idle rounds of its followers end: rebuilt before anything reads what they left.
        self._idle_rounds_end(self._follower_slots(replica))
        fetches = self.fetch_purgatory
        for follower in replica.assignment:
            if follower == broker.id:
                continue
            slot = (follower, replica.fetcher_slot)
            pending = self.pending.setdefault(slot, {})
            if replica.key not in pending:
                # Until now the follower was caught up as of its last fetch: record that lazily,
                # as Kafka's per-fetch bookkeeping would have.
                progress = replica.followers.setdefault(follower, FollowerProgress())
                seen = self.last_fetch_ms.get(slot)
                if seen is not None and progress.log_end_offset == placed.base_offset:
                    progress.last_caught_up_ms = max(progress.last_caught_up_ms, seen)
                    progress.last_fetch_ms = seen
                    progress.last_fetch_leader_leo = placed.base_offset
                pending[replica.key] = None
            # A follower's parked fetch completes when this one append brings its min bytes.
            self.announced_bytes = batch.size
            fetches.check_and_complete(slot)
            self.announced_bytes = 0
        self.maybe_advance_hw(replica)
        return placed

    def after_append(self, replica: Replica) -> None:
        """Bookkeeping of any append, as leader or follower: unflushed, written, read."""
        self.log_manager.appended(replica)
        self.touched[replica.key] = replica
        self.written[replica.key] = replica

    def _follower_slots(self, replica: Replica) -> Iterable[Slot]:
        return ((follower, replica.fetcher_slot) for follower in replica.assignment)

    def _idle_rounds_end(self, slots: Iterable[Slot]) -> None:
        """What comes next changes what the idle rounds of these clients would return: rebuild
        them now (rig.cluster.coast)."""
        coasts = self.coasts
        if coasts:
            for slot in slots:
                coast = coasts.get(slot)
                if coast is not None:
                    coast.wake()

    def follower_hw_behind(self, follower: int) -> bool:
        """Whether a partition led here with its HW below its log end has `follower` among its
        replicas (its every fetch then looks at that partition's HW)."""
        return any(follower in self.replicas[key].assignment for key in self.hw_behind)

    # -- high watermark ------------------------------------------------------------------------
    def maybe_advance_hw(self, replica: Replica) -> None:
        broker = self.broker
        config = self.config
        new_hw = replica.candidate_hw(broker.now_ms, config.replica_lag_time_max_ms,
                                      self.ctx.topics.min_isr(replica.key),
                                      config.hw_holds_below_min_isr)
        if new_hw < replica.leo:
            if replica.key not in self.hw_behind:
                self._idle_rounds_end(self._follower_slots(replica))
            self.hw_behind[replica.key] = None
        else:
            self.hw_behind.pop(replica.key, None)
        if new_hw <= replica.high_watermark:
            return
        if self.coasts:
            self._idle_rounds_end(self._follower_slots(replica))
            self._idle_rounds_end(self.consumer_watchers.get(replica.key, ()))
        replica.high_watermark = new_hw
        self.hw_dirty[replica.key] = None
        for follower in replica.assignment:
            if follower != broker.id:
                self.hw_unseen.setdefault((follower, replica.fetcher_slot), {})[replica.key] = None
        self.cache.mark_changed(replica.key)
        self.produce_purgatory.check_and_complete(replica.key)
        # New data is visible to consumers now: their long polls wake on a HW advance.
        fetches = self.fetch_purgatory
        for slot in self.consumer_watchers.get(replica.key, ()):
            position = self.consumer_positions.get(slot, {}).get(replica.key, -1)
            if 0 <= position < new_hw:
                self.pending.setdefault(slot, {})[replica.key] = None
                fetches.check_and_complete(slot)

    # -- what fetch clients have fetched -------------------------------------------------------
    def fetch_offset(self, request: FetchRequestMsg, replica: Replica, follower: Any) -> int:
        state = request.updates.get(replica.key)
        if state is not None:
            return state.fetch_offset
        if request.fetcher.role == "consumer":
            return self.consumer_positions.get(request.fetcher.slot_key, {}).get(replica.key, -1)
        return replica.followers.setdefault(follower, FollowerProgress()).log_end_offset

    def update_fetch_state(self, slot: Slot, request: FetchRequestMsg) -> None:
        """Record the follower's fetch offsets (after reading), expand the ISR, advance HWs
        (Kafka's updateFollowerFetchState)."""
        if request.fetcher.role == "consumer":
            self._update_consumer(slot, request)
            return
        broker = self.broker
        follower = slot[0]
        now = broker.now_ms
        self.last_fetch_ms[slot] = now
        isr_strategy = self.ctx.strategies.isr
        touched = dict.fromkeys(request.updates)
        touched.update(self.pending.get(slot, {}))
        # Kafka recomputes the HW of every partition in a follower's fetch; a HW can move with
        # nothing new from this follower (a lagging replica aged out of the lag time), so the
        # partitions whose HW is below their LEO are looked at on every fetch of a follower.
        for key in self.hw_behind:
            if key not in touched and follower in self.replicas[key].assignment:
                touched[key] = None
        pending = self.pending.get(slot)
        for key in touched:
            replica = self.replicas.get(key)
            if replica is None or replica.role is not Role.LEADER:
                continue
            offset = self.fetch_offset(request, replica, follower)
            if offset < 0 or offset > replica.leo:
                continue  # unknown, or out of range (answered with an error): not progress
            progress = replica.followers.setdefault(follower, FollowerProgress())
            isr_strategy.on_fetch(progress, offset, replica.leo, now)
            if pending is not None and offset >= replica.leo:
                pending.pop(key, None)
            if (follower not in replica.isr and not replica.isr_change_pending
                    and follower in replica.assignment
                    and isr_strategy.may_join(progress, replica.high_watermark,
                                              replica.epoch_start_offset()
                                              if self.config.isr_rejoin_needs_epoch_start
                                              else 0)):
                self.ctx.isr_writer.change_isr(broker, replica, (*replica.isr, follower),
                                               expand=[follower])
            self.maybe_advance_hw(replica)

    def _update_consumer(self, slot: Slot, request: FetchRequestMsg) -> None:
        """A consumer's positions: partitions it is behind on (below the HW) stay pending, and
        it watches every partition it fetches so a HW advance wakes its long poll."""
        positions = self.consumer_positions.setdefault(slot, {})
        pending = self.pending.setdefault(slot, {})
        for key, state in request.updates.items():
            replica = self.replicas.get(key)
            if replica is None or replica.role is not Role.LEADER:
                continue
            positions[key] = state.fetch_offset
            self.consumer_watchers.setdefault(key, {})[slot] = None
            if state.fetch_offset < replica.high_watermark:
                pending[key] = None
            else:
                pending.pop(key, None)

    # -- leader epochs (OffsetsForLeaderEpoch) ------------------------------------------------
    def end_offset_for_epoch(self, key: TopicPartition, epoch: int) -> tuple[int, int] | None:
        """The leader's (largest epoch ≤ `epoch`, its end offset), or None if not leader."""
        replica = self.replicas.get(key)
        if replica is None or replica.role is not Role.LEADER:
            return None
        return replica.log.end_offset_for_epoch(epoch)
