"""A broker: its replicas, the requests it answers, and the periodic tasks it runs.

Fetch (KAFKA.md §3, §8): the leader reads first and then records the follower's fetch offset,
so a response carries the HW from before that fetch and a follower learns that a record is
committed one round later. A fetch that finds less than min_bytes waits in purgatory up to
max_wait; new data wakes it, a HW change alone does not.

Cost follows what changes: for each follower fetcher the leader keeps the partitions where that
follower is behind ("pending") and those whose HW it has not yet seen, so an idle fetch of 500
partitions costs nothing per partition.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rig.cluster.log import Batch
from rig.cluster.messages import FetchRequestMsg, FetchResponseMsg, topic_runs
from rig.cluster.replica import Replica, Role, TopicPartition
from rig.cluster.storage import BrokerStorage
from rig.engine import Timer
from rig.errors import InternalError
from rig.events import names
from rig.protocol import ResponsePartitionShape, ResponseShape, ResponseTopicShape
from rig.protocol.errors import (
    NOT_ENOUGH_REPLICAS,
    NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    NOT_LEADER_OR_FOLLOWER,
    OFFSET_OUT_OF_RANGE,
    REQUEST_TIMED_OUT,
)
from rig.strategies.fetch_session import FINAL_EPOCH, NONE, SessionCache, SessionContext
from rig.strategies.isr import FollowerProgress
from rig.strategies.replication.base import FollowerView

if TYPE_CHECKING:
    from rig.cluster.cluster import Cluster
    from rig.cluster.coast import Coast
    from rig.cluster.fetcher import ReplicaFetcher


# ReplicaManager's isr-change-propagation task: period, and the two throttle bounds.
ISR_CHANGE_PROPAGATION_INTERVAL_MS = 2500
ISR_CHANGE_PROPAGATION_BLACKOUT_MS = 5000  # no change for this long: announce
ISR_CHANGE_PROPAGATION_MAX_DELAY_MS = 60_000  # last announcement this old: announce anyway

Slot = tuple[Any, int]  # a fetch client's key: (follower broker, fetcher slot) or (client, 0)
SESSION_SAMPLE_MS = 1000  # how often the session-cache gauges are looked at


@dataclass(eq=False)
class DelayedFetch:
    request: FetchRequestMsg
    context: SessionContext
    arrived_us: int
    timer: Timer | None = None


@dataclass(eq=False)
class DelayedProduce:
    """An acks=all produce waiting for the HW to pass every batch it appended."""

    reply: Callable[[dict[TopicPartition, int]], None]
    waiting: dict[TopicPartition, int]  # partition → offset the HW must reach
    errors: dict[TopicPartition, int] = field(default_factory=dict)
    timer: Timer | None = None
    done: bool = False


class Broker:
    def __init__(self, cluster: Cluster, broker_id: int, rack: str | None, cache: SessionCache):
        self.cluster = cluster
        self.id = broker_id
        self.rack = rack
        self.config = cluster.variant.broker_config(broker_id)
        self.cache = cache
        self._cache_sample: tuple[int, int | None] = (0, 0)
        self.alive = True
        self.stalled = False
        self.fetch_stuck = False  # its fetchers fetch but cannot append (a fetcher-stuck fault)
        self.incarnation = 0
        self.replicas: dict[TopicPartition, Replica] = {}
        self.pending: dict[Slot, dict[TopicPartition, None]] = {}
        self.hw_unseen: dict[Slot, dict[TopicPartition, None]] = {}
        self.last_fetch_ms: dict[Slot, float] = {}
        self.delayed_fetches: dict[Slot, DelayedFetch] = {}
        self.delayed_produces: dict[TopicPartition, list[DelayedProduce]] = {}
        self.fetchers: dict[Slot, ReplicaFetcher] = {}  # as follower: (leader, slot)
        self.controller_epoch_seen = 0
        self.hw_dirty: dict[TopicPartition, None] = {}  # HW changed since the last checkpoint
        self.hw_behind: dict[TopicPartition, None] = {}  # led here, HW below the LEO
        self.dirty_logs: dict[TopicPartition, Replica] = {}  # logs with unflushed appends
        self.metadata: dict[TopicPartition, int] = {}  # partition → leader, as last told
        self.metadata_isr: dict[TopicPartition, tuple[int, ...]] = {}  # partition → ISR, as told
        self._metadata_shared = False  # both still the start-up maps every broker holds
        # ISR changes this leader wrote and has not yet announced (ReplicaManager.isrChangeSet).
        self.isr_change_set: dict[TopicPartition, None] = {}
        self.last_isr_change_ms = 0.0
        self.last_isr_propagation_ms = 0.0
        # Consumers (keyed by their fetch client): last known positions, and who watches what.
        self.consumer_positions: dict[Any, dict[TopicPartition, int]] = {}
        self.consumer_watchers: dict[TopicPartition, dict[Any, None]] = {}
        self.tasks: list[Timer] = []
        self.storage = BrokerStorage(self)  # the cleaner, retention, log samples
        self.coasts: dict[Slot, Coast] = {}  # fetchers idling on this leader in closed form

    # -- life cycle ------------------------------------------------------------------------
    @property
    def now_ms(self) -> float:
        return self.cluster.sim.now_us / 1000

    def add_replica(self, replica: Replica) -> None:
        self.replicas[replica.key] = replica

    def start_tasks(self) -> None:
        """The periodic tasks of a running broker: ISR expiration, HW checkpoint, flushes."""
        cluster = self.cluster
        isr = cluster.strategies["isr"]
        self._every(isr.check_interval_ms(self.config.replica_lag_time_max_ms),
                    self._expire_isr)
        self._every(self.config.replica_high_watermark_checkpoint_interval_ms,
                    self._checkpoint_hw)
        # A new process starts with an empty change set and both clocks at its start.
        self.isr_change_set.clear()
        self.last_isr_change_ms = self.last_isr_propagation_ms = self.now_ms
        self._every(ISR_CHANGE_PROPAGATION_INTERVAL_MS, self.maybe_propagate_isr_changes)
        if self.config.log_flush_interval_ms:
            self._every(self.config.log_flush_interval_ms, self._flush_by_time)
        if cluster.variant.os.dirty_expire_ms and cluster.variant.os.writeback_interval_ms:
            self._every(cluster.variant.os.writeback_interval_ms, self._os_writeback)
        self._every(SESSION_SAMPLE_MS, self._sample_session_cache)
        self.storage.start()

    def _every(self, period_ms: int, action: Callable[[], None]) -> None:
        incarnation = self.incarnation
        sim = self.cluster.sim

        def tick() -> None:
            if self.incarnation != incarnation or not self.alive:
                return
            if not self.stalled:
                action()
            self.tasks.append(sim.after(period_ms * 1000, tick))

        self.tasks.append(sim.after(period_ms * 1000, tick))

    def _sample_session_cache(self) -> None:
        """Emit the fetch-session cache's gauges when they changed since the last sample."""
        cache = self.cache
        partitions = getattr(cache, "partitions_cached", None)  # a plugin's cache may not say
        sample = (cache.occupancy(), partitions() if callable(partitions) else None)
        if sample != self._cache_sample:
            self._cache_sample = sample
            self.cluster.log.emit(names.SESSION_CACHE, broker=self.id, sessions=sample[0],
                                  partitions=sample[1],
                                  slots=self.config.max_incremental_fetch_session_cache_slots)

    def report_lost_sessions(self) -> None:
        """After a crash: the gauge drops to what the emptied cache holds (the sessions died
        with the process; their clients learn it from error 70 after the restart)."""
        if self._cache_sample[0]:
            self._sample_session_cache()

    def crash(self, power_loss: bool) -> int:
        """The process dies (and with `power_loss`, unflushed data too). Returns records lost."""
        self.alive = False
        self.incarnation += 1
        for timer in self.tasks:
            timer.cancel()
        self.tasks.clear()
        for delayed in self.delayed_fetches.values():
            if delayed.timer:
                delayed.timer.cancel()
        for waiting in self.delayed_produces.values():
            for produce in waiting:
                if produce.timer:
                    produce.timer.cancel()
        self.delayed_fetches.clear()
        self.delayed_produces.clear()
        for fetcher in self.fetchers.values():
            fetcher.stop()
        self.fetchers.clear()
        self.pending.clear()
        self.hw_unseen.clear()
        self.hw_dirty.clear()
        self.hw_behind.clear()
        self.dirty_logs = {r.key: r for r in self.replicas.values() if r.log.dirty}
        self.consumer_positions.clear()
        self.consumer_watchers.clear()
        self.cache.clear()
        self.isr_change_set.clear()  # in memory only: a crash loses unannounced changes
        self.metadata_isr = {}  # the next UpdateMetadata refills the cache
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

    def restart(self) -> None:
        self.alive = True
        self.stalled = False
        self.start_tasks()

    # -- periodic tasks ----------------------------------------------------------------------
    # The periodic tasks visit only what changed since they last ran: an idle broker with
    # thousands of partitions costs nothing every 5 s.
    def _checkpoint_hw(self) -> None:
        for key in self.hw_dirty:
            replica = self.replicas[key]
            replica.checkpointed_hw = replica.high_watermark
        self.hw_dirty.clear()

    def _flush_by_time(self) -> None:
        for replica in self.dirty_logs.values():
            replica.log.flush()
        self.dirty_logs.clear()

    def _os_writeback(self) -> None:
        cutoff = self.now_ms - self.cluster.variant.os.dirty_expire_ms
        for key, replica in list(self.dirty_logs.items()):
            replica.log.write_back(cutoff)
            if not replica.log.dirty:
                del self.dirty_logs[key]

    def record_isr_change(self, key: TopicPartition) -> None:
        """This leader wrote a new ISR for `key` to ZooKeeper (ReplicaManager.recordIsrChange)."""
        self.isr_change_set[key] = None
        self.last_isr_change_ms = self.now_ms

    def maybe_propagate_isr_changes(self) -> None:
        """The `isr-change-propagation` task (every 2.5 s): announce the recorded changes when
        there are some and either none came in the last 5 s or the last announcement is over
        60 s old (ReplicaManager.maybePropagateIsrChanges; both comparisons strict)."""
        now = self.now_ms
        if self.isr_change_set and (
                self.last_isr_change_ms + ISR_CHANGE_PROPAGATION_BLACKOUT_MS < now
                or self.last_isr_propagation_ms + ISR_CHANGE_PROPAGATION_MAX_DELAY_MS < now):
            self.cluster.propagate_isr_changes(self, tuple(self.isr_change_set))
            self.isr_change_set.clear()
            self.last_isr_propagation_ms = now

    def _expire_isr(self) -> None:
        """Only a follower that is behind can be out of sync (Kafka: LEOs differ and not caught
        up for the lag time): the partitions pending for some follower are the candidates."""
        isr_strategy = self.cluster.strategies["isr"]
        now = self.now_ms
        lag = self.config.replica_lag_time_max_ms
        behind: dict[TopicPartition, None] = {}
        for slot, keys in self.pending.items():
            if isinstance(slot[0], int):
                behind.update(keys)
        for key in behind:
            replica = self.replicas[key]
            if replica.role is not Role.LEADER or replica.isr_change_pending:
                continue
            out = [b for b in replica.isr if b != self.id and isr_strategy.out_of_sync(
                replica.followers.setdefault(b, FollowerProgress()), replica.leo, now, lag)]
            if out:
                self.cluster.change_isr(self, replica,
                                        tuple(b for b in replica.isr if b not in out),
                                        shrink=out)

    # -- produce -------------------------------------------------------------------------------
    def on_produce(self, batches: dict[TopicPartition, Batch], acks: int, timeout_ms: int,
                   reply: Callable[[dict[TopicPartition, Any]], None]) -> None:
        """Append each batch at its partition's leader; answer per partition per `acks`."""
        results: dict[TopicPartition, Any] = {}
        waiting: dict[TopicPartition, int] = {}
        for key, batch in batches.items():
            replica = self.replicas.get(key)
            if replica is None or replica.role is not Role.LEADER:
                results[key] = NOT_LEADER_OR_FOLLOWER
                continue
            min_isr = self.cluster.min_isr(key)
            if acks == -1 and len(replica.isr) < min_isr:
                results[key] = NOT_ENOUGH_REPLICAS
                continue
            placed = self.append_as_leader(replica, batch)
            if acks == -1:
                waiting[key] = placed.end_offset
            results[key] = placed
        if acks != -1 or not waiting:
            reply(results)
            return
        def answer(errors: dict[TopicPartition, int]) -> None:
            # A partition whose wait ended well answers with its placed batch (its offset).
            reply({**results, **{key: results[key] if error == NONE else error
                                 for key, error in errors.items()}})

        produce = DelayedProduce(answer, waiting)
        for key in list(waiting):
            self.delayed_produces.setdefault(key, []).append(produce)
        for key in list(waiting):
            self._try_complete_produce(self.replicas[key])
        if not produce.done:
            incarnation = self.incarnation
            produce.timer = self.cluster.sim.after(
                timeout_ms * 1000, lambda: self._expire_produce(produce, incarnation))

    def append_as_leader(self, replica: Replica, batch: Batch) -> Batch:
        placed = Batch(replica.leo, batch.count, replica.leader_epoch, batch.size,
                       batch.producer, batch.sequence, batch.timestamp_ms, batch.keys,
                       batch.tombstones)
        replica.log.append(placed, self.now_ms)
        self._after_append(replica)
        if self.coasts:
            self.wake_follower_coasts(replica)  # their idle rounds end: rebuilt before reading
        for follower in replica.assignment:
            if follower == self.id:
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
            delayed = self.delayed_fetches.get(slot)
            if delayed is not None and delayed.request.min_bytes <= batch.size:
                self._complete_fetch(slot, delayed)
        self.maybe_advance_hw(replica)
        return placed

    def wake_follower_coasts(self, replica: Replica) -> None:
        """Rebuild the idle rounds of the followers of `replica` coasting on this leader: what
        comes next changes what their rounds would return."""
        self._wake_coasts((follower, replica.fetcher_slot) for follower in replica.assignment)

    def _wake_coasts(self, slots: Iterable[Slot]) -> None:
        for slot in slots:
            coast = self.coasts.get(slot)
            if coast is not None:
                coast.wake()

    def follower_hw_behind(self, follower: int) -> bool:
        """Whether a partition led here with its HW below its log end has `follower` among its
        replicas (its every fetch then looks at that partition's HW)."""
        return any(follower in self.replicas[key].assignment for key in self.hw_behind)

    def _after_append(self, replica: Replica) -> None:
        self.dirty_logs[replica.key] = replica
        self.storage.touched[replica.key] = replica
        self.storage.written[replica.key] = replica
        limit = self.cluster.flush_messages(replica.key, self.config)
        if limit and replica.log.unflushed_records() >= limit:
            replica.log.flush()

    def _try_complete_produce(self, replica: Replica) -> None:
        waiting = self.delayed_produces.get(replica.key)
        if not waiting:
            return
        min_isr = self.cluster.min_isr(replica.key)
        for produce in list(waiting):
            required = produce.waiting.get(replica.key)
            if required is None or replica.high_watermark < required:
                continue
            # The HW passed the batch: acknowledged, unless the ISR shrank below min.insync
            # in the meantime (Kafka's checkEnoughReplicasReachOffset).
            produce.errors[replica.key] = (NOT_ENOUGH_REPLICAS_AFTER_APPEND
                                           if len(replica.isr) < min_isr else NONE)
            del produce.waiting[replica.key]
            waiting.remove(produce)
            if not produce.waiting and not produce.done:
                produce.done = True
                if produce.timer:
                    produce.timer.cancel()
                produce.reply(produce.errors)

    def _expire_produce(self, produce: DelayedProduce, incarnation: int) -> None:
        if produce.done or self.incarnation != incarnation:
            return
        if self.stalled:
            self.cluster.after_stall(self, lambda: self._expire_produce(produce, incarnation))
            return
        produce.done = True
        for key in produce.waiting:
            produce.errors[key] = REQUEST_TIMED_OUT
            listed = self.delayed_produces.get(key, [])
            if produce in listed:
                listed.remove(produce)
        produce.reply(produce.errors)

    def fail_waiting_produces(self, replica: Replica) -> None:
        """Leadership moved away: waiting acks=all produces get NOT_LEADER_OR_FOLLOWER."""
        for produce in self.delayed_produces.pop(replica.key, []):
            if produce.done:
                continue
            produce.errors[replica.key] = NOT_LEADER_OR_FOLLOWER
            del produce.waiting[replica.key]
            if not produce.waiting:
                produce.done = True
                if produce.timer:
                    produce.timer.cancel()
                produce.reply(produce.errors)

    # -- high watermark ------------------------------------------------------------------------
    def maybe_advance_hw(self, replica: Replica) -> None:
        config = self.config
        new_hw = replica.candidate_hw(self.now_ms, config.replica_lag_time_max_ms,
                                      self.cluster.min_isr(replica.key),
                                      config.hw_holds_below_min_isr)
        if new_hw < replica.leo:
            if self.coasts and replica.key not in self.hw_behind:
                self.wake_follower_coasts(replica)
            self.hw_behind[replica.key] = None
        else:
            self.hw_behind.pop(replica.key, None)
        if new_hw <= replica.high_watermark:
            return
        if self.coasts:
            self.wake_follower_coasts(replica)
            self._wake_coasts(self.consumer_watchers.get(replica.key, ()))
        replica.high_watermark = new_hw
        self.hw_dirty[replica.key] = None
        for follower in replica.assignment:
            if follower != self.id:
                self.hw_unseen.setdefault((follower, replica.fetcher_slot), {})[replica.key] = None
        self.cache.mark_changed(replica.key)
        self._try_complete_produce(replica)
        # New data is visible to consumers now: their long polls wake on a HW advance.
        for slot in self.consumer_watchers.get(replica.key, ()):
            position = self.consumer_positions.get(slot, {}).get(replica.key, -1)
            if 0 <= position < new_hw:
                self.pending.setdefault(slot, {})[replica.key] = None
                delayed = self.delayed_fetches.get(slot)
                # Kafka's DelayedFetch completes once fetch.min.bytes are readable.
                if delayed is not None and (
                        delayed.request.min_bytes <= 1
                        or self._readable(slot, delayed.request, delayed.request.min_bytes)
                        >= delayed.request.min_bytes):
                    self._complete_fetch(slot, delayed)

    # -- fetch ---------------------------------------------------------------------------------
    def on_fetch(self, request: FetchRequestMsg) -> None:
        cluster = self.cluster
        fetcher = request.fetcher
        request.arrived_us = cluster.sim.now_us
        if self.coasts and request.session.full and request.session.epoch != FINAL_EPOCH:
            # A session may be created, evicting by last use: coasting sessions catch up first.
            for coast in list(self.coasts.values()):
                coast.wake()
        context = self.cache.open(request.session, request.partitions,
                                  privileged=fetcher.privileged, now_ms=self.now_ms)
        if context.created:
            cluster.log.emit(names.SESSION_CREATED, broker=self.id, client=fetcher.client_id,
                             session_id=context.session_id, partitions=len(context.partitions),
                             privileged=fetcher.privileged)
        for evicted in context.evicted:
            cluster.log.emit(names.SESSION_EVICTED, broker=self.id, session_id=evicted,
                             by_client=fetcher.client_id)
        if context.error_code != NONE:
            cluster.log.emit(names.SESSION_ERROR, broker=self.id, client=fetcher.client_id,
                             session_id=request.session.session_id,
                             session_epoch=request.session.epoch, error_code=context.error_code)
            self._respond(request, context, cluster.sim.now_us)
            return
        slot = fetcher.slot_key
        readable = self._readable(slot, request, request.min_bytes)
        self._account_fetch(slot, request)
        if readable >= request.min_bytes or request.max_wait_ms <= 0 or not context.partitions:
            self._respond(request, context, cluster.sim.now_us)
            return
        self._park(slot, request, context, cluster.sim.now_us)

    def _park(self, slot: Slot, request: FetchRequestMsg, context: SessionContext,
              arrived_us: int) -> None:
        """Hold the fetch in purgatory until data comes or its max wait ends."""
        delayed = DelayedFetch(request, context, arrived_us)
        incarnation = self.incarnation
        delayed.timer = self.cluster.sim.at(
            arrived_us + request.max_wait_ms * 1000,
            lambda: self._complete_fetch(slot, delayed) if self.incarnation == incarnation
            else None, scheduled_us=arrived_us)
        self.delayed_fetches[slot] = delayed

    def park_again(self, request: FetchRequestMsg, arrived_us: int) -> None:
        """A coasting fetcher's idle request that arrived at `arrived_us` is in purgatory now:
        its session opens it as it did then (nothing else about an idle fetch changes state)."""
        request.arrived_us = arrived_us
        context = self.cache.open(request.session, request.partitions,
                                  privileged=request.fetcher.privileged, now_ms=arrived_us / 1000)
        if context.error_code != NONE:
            raise InternalError(f"the idle fetch of {request.fetcher.client_id} held since "
                                f"{arrived_us} µs met error {context.error_code}: its session "
                                "changed while it coasted")
        self._park(request.fetcher.slot_key, request, context, arrived_us)

    def _fetch_offset(self, request: FetchRequestMsg, replica: Replica, follower: Any) -> int:
        state = request.updates.get(replica.key)
        if state is not None:
            return state.fetch_offset
        if request.fetcher.role == "consumer":
            return self.consumer_positions.get(request.fetcher.slot_key, {}).get(replica.key, -1)
        return replica.followers.setdefault(follower, FollowerProgress()).log_end_offset

    def _visible_end(self, request: FetchRequestMsg, replica: Replica) -> int:
        """Followers read to the log end; consumers only below the high watermark."""
        return replica.high_watermark if request.fetcher.role == "consumer" else replica.leo

    def _readable(self, slot: Slot, request: FetchRequestMsg, enough: int) -> int:
        total = 0
        for key in self.pending.get(slot, ()):
            replica = self.replicas[key]
            if replica.role is not Role.LEADER or key not in request.partitions:
                continue
            offset = self._fetch_offset(request, replica, slot[0])
            if offset > replica.leo:
                return enough  # an error to report: answer at once
            total += replica.log.bytes_after(offset, enough, self._visible_end(request, replica))
            if total >= enough:
                break
        return total

    def _account_fetch(self, slot: Slot, request: FetchRequestMsg) -> None:
        """Record the follower's fetch offsets (after reading), expand the ISR, advance HWs."""
        if request.fetcher.role == "consumer":
            self._account_consumer(slot, request)
            return
        follower = slot[0]
        now = self.now_ms
        self.last_fetch_ms[slot] = now
        isr_strategy = self.cluster.strategies["isr"]
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
            offset = self._fetch_offset(request, replica, follower)
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
                self.cluster.change_isr(self, replica, (*replica.isr, follower),
                                        expand=[follower])
            self.maybe_advance_hw(replica)

    def _account_consumer(self, slot: Slot, request: FetchRequestMsg) -> None:
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

    def _complete_fetch(self, slot: Slot, delayed: DelayedFetch) -> None:
        if self.stalled:
            # The purgatory reaper is paused with everything else: it fires when the stall ends.
            self.cluster.after_stall(self, lambda: self._complete_fetch(slot, delayed))
            return
        if self.delayed_fetches.get(slot) is not delayed:
            return
        del self.delayed_fetches[slot]
        if delayed.timer:
            delayed.timer.cancel()
        self._respond(delayed.request, delayed.context, delayed.arrived_us)

    def _respond(self, request: FetchRequestMsg, context: SessionContext, arrived_us: int) -> None:
        cluster = self.cluster
        fetcher = request.fetcher
        slot = fetcher.slot_key
        records: dict[TopicPartition, tuple[list[Batch], int]] = {}
        hws: dict[TopicPartition, int] = {}
        errors: dict[TopicPartition, int] = {}
        if context.error_code == NONE:
            budget = request.max_bytes or self.config.replica_fetch_response_max_bytes
            partition_max = request.partition_max_bytes or self.config.replica_fetch_max_bytes
            for key in self.pending.get(slot, ()):
                if key not in request.partitions:
                    continue
                replica = self.replicas[key]
                if replica.role is not Role.LEADER:
                    continue
                offset = self._fetch_offset(request, replica, slot[0])
                if offset > replica.leo:
                    errors[key] = OFFSET_OUT_OF_RANGE
                    continue
                batches, size = replica.log.read(offset, min(partition_max, max(budget, 1)),
                                                 self._visible_end(request, replica))
                if batches:
                    self.storage.touched[key] = replica
                if batches and (size <= budget or not records):
                    records[key] = (batches, size)
                    budget -= size
                hws[key] = replica.high_watermark
            for key in self.hw_unseen.pop(slot, {}):
                led = self.replicas.get(key)
                if key in request.partitions and led is not None and led.role is Role.LEADER:
                    hws[key] = led.high_watermark
            # A partition the client just added (or changed) that this broker does not lead;
            # the others it already learned about (cost follows change, not partitions).
            for key in request.updates:
                led = self.replicas.get(key)
                if led is None or led.role is not Role.LEADER:
                    errors[key] = NOT_LEADER_OR_FOLLOWER
        # What the response lists: everything for a full fetch; for an incremental one, the
        # partitions with records, a new HW, or an error (the session's `changed`).
        listed_changed: dict[TopicPartition, None] = {}
        if context.error_code == NONE and not context.full:
            listed_changed = dict(context.changed or {})
            listed_changed.update(dict.fromkeys(records))
            listed_changed.update(dict.fromkeys(errors))
            # Optional cache API: list in the session's order, and rotate the partitions that
            # returned records to its end (KIP-227's fairness under the response size limit).
            in_order = getattr(self.cache, "listed_in_order", None)
            if in_order is not None:
                listed_changed = in_order(context, listed_changed)
            self.cache.sent(context, listed_changed)
            rotate = getattr(self.cache, "moved_to_end", None)
            if rotate is not None and records:
                rotate(context, [key for key in listed_changed if key in records])
        shape = self._shape(request, context, records, listed_changed)
        body, header, wire = cluster.meter.response(shape)
        listed = (len(request.partitions) if context.full and context.error_code == NONE
                  else len(listed_changed))
        records_bytes = sum(size for _, size in records.values())
        now_us = cluster.sim.now_us
        cluster.log.emit(
            names.FETCH_RESPONSE, role=fetcher.role, client=fetcher.client_id,
            replica_id=fetcher.replica_id, broker=self.id, source=fetcher.source,
            fetcher=fetcher.fetcher_id, version=request.version, session_id=context.session_id,
            error_code=context.error_code, partitions=listed, records_bytes=records_bytes,
            waited_ms=(now_us - arrived_us) / 1000, body_bytes=body, header_bytes=header,
            wire_bytes=wire)
        response = FetchResponseMsg(context.error_code, context.session_id, listed,
                                    records_bytes, records, hws, errors, body, header, wire,
                                    now_us)
        cluster.send(self.id, fetcher.node, wire,
                     lambda: fetcher.on_response(request, response))

    def _shape(self, request: FetchRequestMsg, context: SessionContext,
               records: dict[TopicPartition, tuple[list[Batch], int]],
               listed: dict[TopicPartition, None]) -> ResponseShape:
        if context.error_code != NONE:
            return ResponseShape(request.version, ())
        if context.full:
            runs = request.topic_runs
            if len({topic for topic, _ in runs}) != len(runs):
                # A topic in several runs (partitions of two topics interleaved after
                # leadership moved): each run carries its own partitions, in request order.
                keys = iter(request.partitions)
                shaped = []
                for topic, n in runs:
                    run = [next(keys) for _ in range(n)]
                    sizes = [records[k][1] for k in run if k in records]
                    shaped.append(ResponseTopicShape(
                        topic, idle=n - len(sizes),
                        partitions=tuple(ResponsePartitionShape(records=s) for s in sizes)))
                return ResponseShape(request.version, tuple(shaped))
            busy_by_topic: dict[str, list[int]] = {}
            for (topic, _), (_, size) in records.items():
                busy_by_topic.setdefault(topic, []).append(size)
            topics = []
            for topic, n in runs:
                sizes = busy_by_topic.pop(topic, [])
                topics.append(ResponseTopicShape(
                    topic, idle=n - len(sizes),
                    partitions=tuple(ResponsePartitionShape(records=s) for s in sizes)))
            return ResponseShape(request.version, tuple(topics))
        topics = []
        keys = iter(listed)  # a topic may come back in a later run: walk the runs in order
        for topic, n in topic_runs(listed):
            run = [next(keys) for _ in range(n)]
            sizes = [records[k][1] for k in run if k in records]
            topics.append(ResponseTopicShape(
                topic, idle=n - len(sizes),
                partitions=tuple(ResponsePartitionShape(records=s) for s in sizes)))
        return ResponseShape(request.version, tuple(topics))

    def after_follower_append(self, replica: Replica) -> None:
        self._after_append(replica)

    # -- control plane: LeaderAndIsr, UpdateMetadata ------------------------------------------
    def on_leader_and_isr(self, controller_epoch: int, states: dict[TopicPartition, Any],
                          quiet: bool = False) -> None:
        """LeaderAndIsr. `quiet` is the start-up one, to a broker of a cluster that is already
        up: no events, and each fetcher is woken once, when all its partitions are added
        (a wake-up per partition would queue thousands of sends that find it busy)."""
        if controller_epoch < self.controller_epoch_seen:
            return  # a deposed controller: ignored (no split brain)
        self.controller_epoch_seen = controller_epoch
        to_wake: dict[ReplicaFetcher, None] | None = {} if quiet else None
        for key, state in states.items():
            replica = self.replicas.get(key)
            if replica is None or state.leader_epoch <= replica.leader_epoch:
                continue  # stale: this replica already knows a newer epoch
            if state.leader == self.id:
                self._become_leader(replica, state, quiet)
            elif state.leader >= 0:
                self._become_follower(replica, state, quiet, to_wake)
        for fetcher in to_wake or ():
            fetcher.wake()

    def _become_leader(self, replica: Replica, state: Any, quiet: bool = False) -> None:
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
            self._stop_fetching(replica)
        now = self.now_ms
        replica.role = Role.LEADER
        replica.leader = self.id
        replica.leader_epoch = state.leader_epoch
        replica.zk_version = state.version
        replica.isr = tuple(state.isr)
        replica.isr_change_pending = False
        replica.log.assign_epoch(state.leader_epoch)
        # Follower LEOs are unknown until they fetch; those in the ISR count as caught up now.
        replica.followers = {b: FollowerProgress(-1, now if b in state.isr else 0.0, now, 0)
                             for b in replica.assignment if b != self.id}
        if self.coasts:
            self.wake_follower_coasts(replica)
        for follower in replica.followers:
            slot = (follower, replica.fetcher_slot)
            pending = self.pending.get(slot)
            if pending is None:
                pending = self.pending[slot] = {}
            pending[key] = None
        if not quiet:
            self.cluster.log.emit(names.REPLICA_BECOME_LEADER, broker=self.id, topic=key[0],
                                  partition=key[1], epoch=state.leader_epoch,
                                  isr=list(state.isr), leo=replica.leo,
                                  hw=replica.high_watermark)
        self.maybe_advance_hw(replica)

    def _become_follower(self, replica: Replica, state: Any, quiet: bool = False,
                         to_wake: dict[ReplicaFetcher, None] | None = None) -> None:
        """Follow the new leader; with `to_wake`, the fetcher is woken by the caller."""
        key = replica.key
        same_leader = replica.role is Role.FOLLOWER and replica.leader == state.leader
        if replica.role is Role.LEADER:
            self.fail_waiting_produces(replica)
            self.hw_behind.pop(key, None)
            replica.isr = ()
            replica.followers.clear()
        replica.leader_epoch = state.leader_epoch
        replica.zk_version = state.version
        if same_leader:
            return  # only the ISR changed: keep fetching, no truncation (Kafka's makeFollower)
        self._stop_fetching(replica)
        replica.role = Role.FOLLOWER
        replica.leader = state.leader
        view = FollowerView(replica.leo, replica.high_watermark, replica.log.latest_epoch,
                            replica.log.end_offset_for_epoch)
        decision = self.cluster.strategies["replication"].on_become_follower(view)
        if not quiet:
            self.cluster.log.emit(names.REPLICA_BECOME_FOLLOWER, broker=self.id, topic=key[0],
                                  partition=key[1], leader=state.leader,
                                  epoch=state.leader_epoch, leo=replica.leo,
                                  hw=replica.high_watermark)
        if not self.alive:
            return  # a fault triggered by that event took this broker down
        slot = (state.leader, replica.fetcher_slot)
        fetcher = self.fetchers.get(slot)
        if fetcher is None or fetcher.stopped:
            fetcher = self.fetchers[slot] = self.cluster.new_fetcher(self, *slot)
        fetcher.add_partition(key, decision, wake=to_wake is None)
        if to_wake is not None:
            to_wake[fetcher] = None

    def _stop_fetching(self, replica: Replica) -> None:
        slot = (replica.leader, replica.fetcher_slot)
        fetcher = self.fetchers.get(slot)
        if fetcher is not None:
            fetcher.remove_partition(replica.key)
            if fetcher.idle:
                fetcher.stop()
                del self.fetchers[slot]

    def on_update_metadata(self, controller_epoch: int, leaders: dict[TopicPartition, int],
                           isrs: dict[TopicPartition, tuple[int, ...]] | None = None,
                           quiet: bool = False) -> None:
        """UpdateMetadata: the cache takes the listed partitions' leaders (and ISRs); a change
        of a partition's cached state is a `metadata.updated` event (cost follows change).

        The start-up UpdateMetadata (`quiet`, to an empty cache; `isrs`, if given, lists the
        partitions of `leaders`) is kept as it is, not copied: every broker of a large cluster
        then holds the same two maps until its first later UpdateMetadata, which copies them.
        The caller must not change them."""
        if controller_epoch < self.controller_epoch_seen:
            return
        self.controller_epoch_seen = controller_epoch
        if quiet and not self.metadata and (isrs is None or len(isrs) == len(leaders)):
            self.metadata = leaders
            if isrs is not None:
                self.metadata_isr = isrs
            self._metadata_shared = True
            return
        if self._metadata_shared:
            self.metadata = dict(self.metadata)
            self.metadata_isr = dict(self.metadata_isr)
            self._metadata_shared = False
        for key, leader in leaders.items():
            isr = isrs.get(key) if isrs is not None else None
            changed = self.metadata.get(key) != leader or (
                isr is not None and self.metadata_isr.get(key) != isr)
            self.metadata[key] = leader
            if isr is not None:
                self.metadata_isr[key] = isr
            if changed and not quiet:
                self.cluster.log.emit(names.METADATA_UPDATED, broker=self.id, topic=key[0],
                                      partition=key[1], leader=leader,
                                      isr=list(self.metadata_isr.get(key, ())))

    # -- leader epochs (OffsetsForLeaderEpoch) ------------------------------------------------
    def on_epoch_request(self, key: TopicPartition, epoch: int) -> tuple[int, int] | None:
        """The leader's (largest epoch ≤ `epoch`, its end offset), or None if not leader."""
        replica = self.replicas.get(key)
        if replica is None or replica.role is not Role.LEADER:
            return None
        return replica.log.end_offset_for_epoch(epoch)

