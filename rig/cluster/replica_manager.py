"""A broker's replicas and what changes them: becoming leader or follower, appends, the high
watermark, and what the leader knows of each fetch client's progress (Kafka's ReplicaManager
with its Partitions; docs/kafka.md §8, §9).

A leader keeps, for each fetch client (keyed by its slot), the partitions where that client is
behind ("pending") and those whose HW it has not yet seen, so an idle fetch of 500 partitions
costs nothing per partition. Waiting operations (parked fetches, acks=all produces) are
completed only through the broker's purgatories, and the fetch purgatory hears of a change to a
client's slot twice: just before it (`announced` is None: only an operation that must see the
state as it was acts, such as a fetch client's idle rounds held in closed form,
rig.cluster.coast) and just after it (`announced` says what came: a parked fetch may answer).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from rig.cluster.context import NodeContext, Process
from rig.cluster.fetcher_manager import FetcherManager
from rig.cluster.log import Batch
from rig.cluster.log_manager import LogManager
from rig.cluster.partition import TopicPartition
from rig.cluster.purgatory import AbortableOperation, DelayedOperation, Purgatory
from rig.cluster.replica import Replica, Role
from rig.events import names
from rig.protocol.errors import NOT_LEADER_OR_FOLLOWER
from rig.strategies.fetch_session import SessionCache
from rig.strategies.isr import NEVER_CAUGHT_UP, FollowerProgress
from rig.strategies.replication.base import FollowerView

Slot = tuple[Any, int]  # a fetch client's key: (follower broker, fetcher slot) or (client, 0)


class ReplicaManager:
    """The replicas of one broker and the bookkeeping of who fetched what from them."""

    def __init__(self, broker: Process, ctx: NodeContext, *,
                 fetch_purgatory: Purgatory[Slot, Any],
                 produce_purgatory: Purgatory[TopicPartition, Any],
                 fetcher_manager: FetcherManager, log_manager: LogManager,
                 cache: SessionCache, touched: dict[TopicPartition, Replica],
                 written: dict[TopicPartition, Replica], replicas: dict[TopicPartition, Replica]):
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
        self.replicas = replicas  # the broker's: every part reads the same map
        self._emit_hw = ctx.emitter(names.HW_ADVANCE, "topic", "partition", "hw", "leader",
                                    broker=broker.id)
        self.pending: dict[Slot, dict[TopicPartition, None]] = {}
        self.hw_unseen: dict[Slot, dict[TopicPartition, None]] = {}
        self.last_fetch_ms: dict[Slot, float] = {}
        self.hw_dirty: dict[TopicPartition, None] = {}  # HW changed since the last checkpoint
        self.hw_behind: dict[TopicPartition, None] = {}  # led here, HW below the LEO
        # Per follower, the partitions led here that have it outside their ISR: its every
        # fetch is a chance to rejoin (Partition.maybeExpandIsr runs on each follower fetch).
        self.outside_isr: dict[int, dict[TopicPartition, None]] = {}
        # Consumers (keyed by their fetch client): last known positions, and who watches what.
        self.consumer_positions: dict[Any, dict[TopicPartition, int]] = {}
        self.consumer_watchers: dict[TopicPartition, dict[Any, None]] = {}
        # What the change announced to the fetch purgatory brought: an append's bytes, 0 for a
        self.announced: int | None = None  # HW advance; None before a change
        self.hw_eligible: Callable[[int, int], bool] | None = None  # KRaft 3.6+ (candidate_hw)

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
        return sum(replica.restart(power_loss) for replica in self.replicas.values())

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
            # the followers' fetch offsets, takes the controller's ISR and resets every
            # follower's lastCaughtUpTimeMs (now if in the new ISR, else never), so one the
            # controller removed no longer holds the HW back (Partition.makeLeader with
            # Replica.resetLastCaughtUpTime, the same in 0.11–3.x; docs/kafka.md §11).
            now = broker.now_ms
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
        same_leader = replica.role is Role.FOLLOWER and replica.leader == state.leader
        if replica.role is Role.LEADER:
            # Waiting acks=all produces get NOT_LEADER_OR_FOLLOWER for it.
            self.produce_purgatory.abort(key, NOT_LEADER_OR_FOLLOWER)
            self.hw_behind.pop(key, None)
            self.set_isr(replica, ())
            replica.followers.clear()
            replica.pending_isr = None  # makeFollower: CommittedIsr(empty)
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

    def _follower_slots(self, replica: Replica) -> Iterable[Slot]:
        me = self.broker.id  # (nothing waits on its own slot: a broker never fetches from itself)
        return ((f, replica.fetcher_slot) for f in replica.assignment if f != me)

    def _before_change(self, slots: Iterable[Slot]) -> None:
        """What these clients fetch is about to change: whatever waits on their slots and must
        see the state as it was acts now."""
        check = self.fetch_purgatory.check_and_complete
        for slot in slots:
            check(slot)

    def _announce(self, slot: Slot, appended_bytes: int) -> None:
        """What a client fetches changed (an append of `appended_bytes`, or 0 for a HW
        advance): its parked fetch may answer."""
        before, self.announced = self.announced, appended_bytes
        self.fetch_purgatory.check_and_complete(slot)
        self.announced = before

    def follower_hw_behind(self, follower: int) -> bool:
        """Whether a partition led here with its HW below its log end has `follower` among its
        replicas (its every fetch then looks at that partition's HW)."""
        return any(follower in self.replicas[key].assignment for key in self.hw_behind)

    # -- high watermark ------------------------------------------------------------------------
    def maybe_advance_hw(self, replica: Replica, followers_told: bool = False) -> None:
        """`followers_told`: an append or a leadership told the followers' slots of its change
        in this call; what waits there did not act, and no message arrives within a call."""
        broker = self.broker
        config = self.config
        holds = config.hw_holds_below_min_isr  # min ISR matters to the HW only then (3.7+)
        min_isr = self.ctx.topics.leader_min_isr(replica.key, len(replica.assignment),
                                                 config) if holds else 0
        new_hw = replica.candidate_hw(broker.now_ms, config.replica_lag_time_max_ms, min_isr,
                                      holds, self.hw_eligible)
        if new_hw < replica.leo:
            if replica.key not in self.hw_behind and not followers_told:
                self._before_change(self._follower_slots(replica))
            self.hw_behind[replica.key] = None
        else:
            self.hw_behind.pop(replica.key, None)
        if new_hw <= replica.high_watermark:
            return
        if not followers_told:
            self._before_change(self._follower_slots(replica))
        self._before_change(self.consumer_watchers.get(replica.key, ()))
        replica.high_watermark = new_hw
        self.hw_dirty[replica.key] = None
        self._emit_hw(replica.key[0], replica.key[1], new_hw, True)
        for follower in replica.assignment:
            if follower != broker.id:
                self.hw_unseen.setdefault((follower, replica.fetcher_slot), {})[replica.key] = None
        self.cache.mark_changed(replica.key)
        self.produce_purgatory.check_and_complete(replica.key)
        self._consumers_see(replica, new_hw)

    def _consumers_see(self, replica: Replica, new_hw: int) -> None:
        """New data is visible to consumers now: their long polls wake on a HW advance."""
        for slot in self.consumer_watchers.get(replica.key, ()):
            position = self.consumer_positions.get(slot, {}).get(replica.key, -1)
            if 0 <= position < new_hw:
                self.pending.setdefault(slot, {})[replica.key] = None
                self._announce(slot, 0)

    def follower_hw(self, replica: Replica, leader_hw: int) -> None:
        """A follower learned the leader's HW: its own is min(that, its LEO); readers wake."""
        new_hw = min(leader_hw, replica.leo)
        self.hw_dirty[replica.key] = None
        if new_hw <= replica.high_watermark:  # most responses: nothing new to tell
            replica.high_watermark = new_hw
            return
        watched = self.consumer_watchers.get(replica.key)
        if watched:
            self._before_change(watched)
        replica.high_watermark = new_hw
        self._emit_hw(replica.key[0], replica.key[1], new_hw, False)
        if watched:
            self.cache.mark_changed(replica.key)
            self._consumers_see(replica, new_hw)
