"""A broker: who it is, whether it runs, and the parts it is made of (Kafka's KafkaServer
with KafkaApis' dispatch; docs/architecture.md maps each part to its Kafka class).

- `replica_manager` (ReplicaManager): replicas, leader/follower changes, appends, the HW;
- `fetch_server` (fetch at the leader, DelayedFetch) and `produces` (DelayedProduce), each with
  its purgatory;
- `fetcher_manager` (ReplicaFetcherManager), `isr` (the ISR tasks), `log_manager` (flushes),
  `metadata_cache` (MetadataCache), `storage` (the log cleaner, retention, samples).

Its periodic tasks belong to one incarnation: a crash cancels them and asks each part to reset
itself; a restart starts a new incarnation. A stalled broker (a GC pause) skips its ticks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rig.cluster.context import NodeContext
from rig.cluster.delayed_fetch import complete_made_followers
from rig.cluster.fetch_server import FetchServer
from rig.cluster.fetcher_manager import FetcherManager
from rig.cluster.isr import ISR_CHANGE_PROPAGATION_INTERVAL_MS, IsrTasks
from rig.cluster.log_manager import LogManager
from rig.cluster.metadata_cache import MetadataCache
from rig.cluster.partition import TopicPartition
from rig.cluster.produce import DelayedProduce, ProduceHandler
from rig.cluster.purgatory import Purgatory
from rig.cluster.replica import Replica, Role
from rig.cluster.replica_manager import ReplicaManager, Slot
from rig.cluster.session_gauges import SESSION_SAMPLE_MS
from rig.cluster.storage import BrokerStorage
from rig.engine import Timer
from rig.scenario.broker_config import BrokerConfig


class Broker:
    def __init__(self, ctx: NodeContext, broker_id: int, rack: str | None,
                 config: BrokerConfig, cache: Any):
        self.ctx = ctx
        self.id = broker_id
        self.rack = rack
        self.config = config
        self.alive = True
        self.machine_down = False  # after a power loss, until the restart
        self.stalled = False
        self.fetch_stuck = False  # its fetchers fetch but cannot append (a fetcher-stuck fault)
        self.incarnation = 0
        self.controller_epoch_seen = 0
        # KRaft: the broker epoch of this process's registration (-1: none yet, or ZooKeeper
        # mode); its follower fetches carry it in ReplicaState (Fetch v15+, KIP-903)
        self.broker_epoch = -1
        # This incarnation's pending timers (a crash cancels them); each holds its own entry
        # and gives it up when it fires, so the set stays as small as the work pending.
        self.tasks: set[Timer] = set()
        self.cache = cache  # the fetch-session cache (FetchSessionCache)
        # The parts, each modelled on the Kafka class it names (docs/architecture.md). Parked
        # fetches wait in the fetch purgatory, and so do idle rounds held in closed form
        # (rig.cluster.coast), under the same slot.
        self.fetch_purgatory: Purgatory[Slot, Any] = Purgatory()
        self.produce_purgatory: Purgatory[TopicPartition, DelayedProduce] = Purgatory()
        self.replicas: dict[TopicPartition, Replica] = {}
        self.storage = BrokerStorage(self, ctx, self.replicas)  # cleaner, retention, samples
        self.fetcher_manager = FetcherManager(self, ctx)
        self.fetchers = self.fetcher_manager.fetchers
        self.log_manager = LogManager(config, ctx)
        self.replica_manager = ReplicaManager(
            self, ctx, fetch_purgatory=self.fetch_purgatory,
            produce_purgatory=self.produce_purgatory, fetcher_manager=self.fetcher_manager,
            log_manager=self.log_manager, cache=cache, touched=self.storage.touched,
            written=self.storage.written, replicas=self.replicas)
        self.storage.log_start_moved = self.replica_manager.log_start_moved
        self.metadata_cache = MetadataCache(broker_id, ctx.emit)
        self.fetch_server = FetchServer(self, ctx, self.replica_manager, self.fetch_purgatory,
                                        cache, self.metadata_cache)
        self.produces = ProduceHandler(self, ctx, self.replica_manager, self.produce_purgatory,
                                       self.metadata_cache)
        self.isr = IsrTasks(self, ctx, self.replica_manager)

    @property
    def now_ms(self) -> float:
        return self.ctx.sim.now_us / 1000

    # -- life cycle ------------------------------------------------------------------------
    def add_replica(self, replica: Replica) -> None:
        self.replicas[replica.key] = replica

    def start_tasks(self) -> None:
        """The periodic tasks of a running broker: ISR expiration, HW checkpoint, flushes."""
        ctx, config = self.ctx, self.config
        self.every(ctx.strategies.isr.check_interval_ms(config.replica_lag_time_max_ms),
                   self.isr.expire)
        self.every(config.replica_high_watermark_checkpoint_interval_ms,
                   self.replica_manager.checkpoint_hw)
        self.isr.start(self.now_ms)
        self.every(ISR_CHANGE_PROPAGATION_INTERVAL_MS, self.isr.maybe_propagate)
        if config.log_flush_interval_ms:
            self.every(config.log_flush_interval_ms, self.log_manager.flush_by_time)
        if ctx.os.dirty_expire_ms and ctx.os.writeback_interval_ms:
            self.every(ctx.os.writeback_interval_ms,
                       lambda: self.log_manager.os_writeback(self.now_ms))
        self.every(SESSION_SAMPLE_MS, self.fetch_server.gauges.sample)
        self.storage.start()

    def schedule(self, delay_us: int, action: Callable[[], None]) -> None:
        """Run `action` once after `delay_us`, unless this incarnation ends first."""
        tasks = self.tasks
        timer: Timer

        def run() -> None:
            tasks.discard(timer)
            action()

        timer = self.ctx.sim.after(delay_us, run)
        tasks.add(timer)

    def every(self, period_ms: int, action: Callable[[], None], *, now: bool = False,
              first_ms: int | None = None) -> None:
        """Run `action` every `period_ms` (first now, with `now`, else `first_ms` or a period
        from now) while this incarnation lives; skipped while the broker is stalled."""
        period_us = period_ms * 1000
        incarnation = self.incarnation
        tasks = self.tasks
        after = self.ctx.sim.after
        pending: list[Timer] = []

        def tick() -> None:
            if pending:
                tasks.discard(pending.pop())
            if self.incarnation != incarnation or not self.alive:
                return
            if not self.stalled:
                action()
            pending.append(after(period_us, tick))
            tasks.add(pending[0])

        if now:
            tick()
        else:
            pending.append(after(period_us if first_ms is None else first_ms * 1000, tick))
            tasks.add(pending[0])

    def crash(self, power_loss: bool) -> int:
        """The process dies (and with `power_loss`, unflushed data too): each part forgets what
        it held in memory. Returns the records lost."""
        self.alive = False
        self.machine_down = power_loss  # a connection to it times out instead of being refused
        self.incarnation += 1
        for timer in self.tasks:
            timer.cancel()
        self.tasks.clear()
        self.fetch_server.reset()
        self.produces.reset()
        self.fetcher_manager.reset()
        self.log_manager.reset(self.replicas)  # before the power loss drops unflushed data
        self.isr.reset()
        self.metadata_cache.reset()
        return self.replica_manager.reset(power_loss)

    def restart(self) -> None:
        self.alive = True
        self.machine_down = False
        self.stalled = False
        self.log_manager.load_logs(self.replicas, self.now_ms)
        self.start_tasks()

    def report_lost_sessions(self) -> None:
        self.fetch_server.gauges.report_lost_sessions()

    # -- requests (KafkaApis) --------------------------------------------------------------
    def on_fetch(self, request: Any) -> None:
        self.fetch_server.on_fetch(request)

    def on_produce(self, batches: Any, acks: int, timeout_ms: int, reply: Any,
                   version: int = 0) -> None:
        self.produces.on_produce(batches, acks, timeout_ms, reply, version)

    def on_epoch_request(self, key: TopicPartition, epoch: int) -> tuple[int, int] | None:
        """OffsetsForLeaderEpoch: the leader's (largest epoch ≤ `epoch`, its end offset), or
        None if not leader; for an epoch older than all it knows, as its Kafka version answers
        (before 2.0 UNDEFINED; a new leader's epoch is known from its election from 2.1, from
        its first append before: Partition.makeLeader, KAFKA-7415)."""
        replica = self.replicas.get(key)
        if replica is None or replica.role is not Role.LEADER:
            return None
        return replica.log.end_offset_for_epoch(epoch, self.config.epoch_end_before_first_known)

    def on_leader_and_isr(self, controller_epoch: int, states: dict[TopicPartition, Any],
                          quiet: bool = False) -> None:
        """LeaderAndIsr. `quiet` is the start-up one, to a broker of a cluster that is already
        up: no events, and each fetcher is woken once, when all its partitions are added
        (a wake-up per partition would queue thousands of sends that find it busy)."""
        if controller_epoch < self.controller_epoch_seen:
            return  # a deposed controller: ignored (no split brain)
        self.controller_epoch_seen = controller_epoch
        replica_manager = self.replica_manager
        to_wake: dict[Any, None] | None = {} if quiet else None
        for key, state in states.items():
            replica = self.replicas.get(key)
            if replica is None or state.leader_epoch <= replica.leader_epoch:
                continue  # stale: this replica already knows a newer epoch
            if state.leader == self.id:
                replica_manager.become_leader(replica, state, quiet)
            elif state.leader >= 0:
                replica_manager.become_follower(replica, state, quiet, to_wake)
        # ReplicaManager.makeFollowers: the fetches parked on a partition made follower are
        # completed once the batch is applied (DelayedFetch Case A), before fetchers start.
        complete_made_followers(self.fetch_purgatory, replica_manager)
        for fetcher in to_wake or ():
            fetcher.wake()

    def on_stop_replica(self, controller_epoch: int, keys: list[TopicPartition]) -> None:
        """StopReplica with deletePartition = false (a controlled shutdown): stop fetching
        these partitions, keep their logs (ReplicaManager.stopReplicas)."""
        if controller_epoch < self.controller_epoch_seen:
            return
        self.controller_epoch_seen = controller_epoch
        for key in keys:
            replica = self.replicas.get(key)
            if replica is not None and replica.role is Role.FOLLOWER:
                self.fetcher_manager.stop_fetching(replica)

    def on_update_metadata(self, controller_epoch: int, leaders: dict[TopicPartition, int],
                           isrs: dict[TopicPartition, tuple[int, ...]] | None = None,
                           quiet: bool = False, alive: frozenset[int] | None = None,
                           controller: int | None = None,
                           epochs: dict[TopicPartition, int] | None = None) -> None:
        """UpdateMetadata from the controller (a deposed one's is ignored): the partitions it
        lists, and the live brokers and the controller (`alive`, `controller`: every
        UpdateMetadata of a ZooKeeper controller names them)."""
        if controller_epoch < self.controller_epoch_seen:
            return
        self.controller_epoch_seen = controller_epoch
        self.metadata_cache.update(leaders, isrs, quiet, epochs)
        if alive is not None and controller is not None:
            self.metadata_cache.brokers(alive, controller)
