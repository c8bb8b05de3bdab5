"""The ZooKeeper-era controller: leader elections and LeaderAndIsr / UpdateMetadata.

Clean election: the first live replica in assignment order that is in the ISR. If none,
`unclean.leader.election.enable` allows the first live replica; otherwise the partition is
offline. Every change bumps the leader epoch and is written to ZooKeeper before it is sent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any, Protocol

from rig.cluster.network import Node
from rig.cluster.rebalance import partitions_to_move
from rig.cluster.replica import TopicPartition
from rig.cluster.zookeeper import NODE as ZK
from rig.cluster.zookeeper import ZK_MESSAGE_BYTES, PartitionState, ZooKeeper
from rig.engine import Simulation
from rig.events import EventLog, names
from rig.scenario.model import VariantSpec

CONTROL_MESSAGE_BYTES = 200
NO_LEADER = -1
FIRST_CHECK_MS = 5_000  # KafkaController.onControllerFailover schedules the first run at 5 s


class ControllerHost(Protocol):
    """What the controller uses of the model around it (rig.cluster.cluster.Cluster)."""

    variant: VariantSpec
    sim: Simulation
    log: EventLog
    zk: ZooKeeper
    controller: Controller | None

    @property
    def brokers(self) -> Mapping[int, Any]: ...  # rig.cluster.broker.Broker

    def assignment(self, key: TopicPartition) -> tuple[int, ...]: ...

    def unclean_election(self, key: TopicPartition) -> bool: ...

    def send(self, src: Node, dst: Node, nbytes: int, deliver: Callable[[], None], *,
             reliable: bool = False) -> None: ...

    def after_stall(self, broker_id: int, action: Callable[[], None]) -> None: ...


class Controller:
    def __init__(self, cluster: ControllerHost, broker: int, epoch: int):
        self.cluster = cluster
        self.broker = broker
        self.epoch = epoch
        self.live: set[int] = set(cluster.zk.sessions)
        self.active = True
        self.rebalance = AutoLeaderRebalance(self)  # preferred leader election, periodic

    # -- events from ZooKeeper ---------------------------------------------------------------
    def on_elected(self) -> None:
        cluster = self.cluster
        cluster.log.emit(names.CONTROLLER_ELECTED, broker=self.broker, epoch=self.epoch)
        changed = [key for key, state in cluster.zk.partitions.items()
                   if state.leader not in self.live]
        self._elect(changed, "controller-failover")
        # A new controller tells every live broker the whole state.
        self._send_leader_and_isr(cluster.zk.partitions, self.live)
        self._update_metadata()
        # Notifications left from before it was elected: its full UpdateMetadata covers them.
        cluster.zk.take_isr_change_notifications()

    def on_broker_change(self, failed: Iterable[int], started: Iterable[int]) -> None:
        if not self.active:
            return
        failed, started = list(failed), list(started)
        self.live -= set(failed)
        if failed:
            self._on_failure(failed)
        self.live |= set(started)
        if started:
            self._on_startup(started)

    # -- the controller's work ---------------------------------------------------------------
    def _on_failure(self, dead: list[int]) -> None:
        cluster = self.cluster
        zk = cluster.zk
        lost_leader = [k for k, s in zk.partitions.items() if s.leader in dead]
        self._elect(lost_leader, "broker-failure")
        shrunk = []
        for key, state in zk.partitions.items():
            if key in lost_leader or state.leader == NO_LEADER:
                continue
            if any(b in state.isr for b in dead):
                isr = tuple(b for b in state.isr if b not in dead)
                self._write(key, PartitionState(state.leader, state.leader_epoch + 1, isr,
                                                state.version + 1))
                cluster.log.emit(names.ISR_SHRINK, topic=key[0], partition=key[1],
                                 leader=state.leader, isr=list(isr), removed=[
                                     b for b in dead if b in state.isr], by="controller")
                shrunk.append(key)
        self._send_leader_and_isr({k: zk.partitions[k] for k in lost_leader + shrunk},
                                  self.live)
        self._update_metadata()

    def _on_startup(self, started: list[int]) -> None:
        cluster = self.cluster
        zk = cluster.zk
        offline = [k for k, s in zk.partitions.items()
                   if s.leader == NO_LEADER and any(b in cluster.assignment(k) for b in started)]
        self._elect(offline, "broker-startup")
        hosted = {k: s for k, s in zk.partitions.items()
                  if any(b in cluster.assignment(k) for b in started)}
        self._send_leader_and_isr(hosted, set(started))
        self._send_leader_and_isr({k: zk.partitions[k] for k in offline},
                                  self.live - set(started))
        self._update_metadata()

    def _elect(self, keys: list[TopicPartition], reason: str) -> None:
        cluster = self.cluster
        for key in keys:
            state = cluster.zk.partitions[key]
            replicas = cluster.assignment(key)
            live = [b for b in replicas if b in self.live]
            clean = [b for b in live if b in state.isr]
            if clean:
                leader, isr, how = clean[0], tuple(b for b in state.isr if b in self.live), "clean"
            elif live and cluster.unclean_election(key):
                leader, isr, how = live[0], (live[0],), "unclean"
            else:
                if state.leader != NO_LEADER:
                    self._write(key, PartitionState(NO_LEADER, state.leader_epoch, state.isr,
                                                    state.version + 1))
                    cluster.log.emit(names.PARTITION_OFFLINE, topic=key[0], partition=key[1],
                                     isr=list(state.isr), reason=reason)
                continue
            self._write(key, PartitionState(leader, state.leader_epoch + 1, isr,
                                            state.version + 1))
            cluster.log.emit(names.LEADER_ELECTED, topic=key[0], partition=key[1],
                             leader=leader, epoch=state.leader_epoch + 1, isr=list(isr),
                             previous=state.leader, election=how, reason=reason)

    def _write(self, key: TopicPartition, state: PartitionState) -> None:
        self.cluster.zk.write_state(key, state)

    def _send_leader_and_isr(self, states: dict[TopicPartition, PartitionState],
                             brokers: Iterable[int]) -> None:
        cluster = self.cluster
        per_broker: dict[int, dict[TopicPartition, PartitionState]] = {}
        for key, state in states.items():
            for b in cluster.assignment(key):
                if b in brokers and b in self.live:
                    per_broker.setdefault(b, {})[key] = PartitionState(
                        state.leader, state.leader_epoch, state.isr, state.version)
        for b, batch in sorted(per_broker.items()):
            cluster.send(self.broker, b, CONTROL_MESSAGE_BYTES + 30 * len(batch),
                         partial(cluster.brokers[b].on_leader_and_isr, self.epoch, batch),
                         reliable=True)

    def _update_metadata(self, keys: Iterable[TopicPartition] | None = None) -> None:
        """UpdateMetadata to every live broker: the state of `keys` (default: every partition)."""
        cluster = self.cluster
        partitions = cluster.zk.partitions
        chosen = list(partitions) if keys is None else [k for k in keys if k in partitions]
        leaders = {k: partitions[k].leader for k in chosen}
        isrs = {k: tuple(partitions[k].isr) for k in chosen}
        for b in sorted(self.live):
            cluster.send(self.broker, b, CONTROL_MESSAGE_BYTES + (0 if keys is None else
                                                                  30 * len(chosen)),
                         partial(cluster.brokers[b].on_update_metadata, self.epoch, leaders,
                                 isrs), reliable=True)

    # -- ISR change notifications (the leaders' /isr_change_notification children) -------------
    def on_isr_change_notification(self) -> None:
        """The watch on /isr_change_notification fired: read the children and the /state of
        their partitions from ZooKeeper (a round trip), delete them, and send UpdateMetadata
        for those partitions to every live broker (Kafka's IsrChangeNotification event)."""
        cluster = self.cluster

        def at_zk() -> None:
            taken = cluster.zk.take_isr_change_notifications()
            if taken:
                cluster.send(ZK, self.broker, ZK_MESSAGE_BYTES, lambda: read(taken))

        def read(taken: dict[int, tuple[TopicPartition, ...]]) -> None:
            if not self.active:
                return
            keys = list(dict.fromkeys(k for seq in sorted(taken) for k in taken[seq]))
            cluster.log.emit(names.ISR_CHANGE_PROPAGATED, broker=self.broker,
                             notifications=sorted(taken), partitions=len(keys))
            self._update_metadata(keys)

        cluster.send(self.broker, ZK, ZK_MESSAGE_BYTES, at_zk)


class AutoLeaderRebalance:
    """The controller's periodic task; it dies with the controller that scheduled it."""

    def __init__(self, controller: Controller):
        self.controller = controller
        cluster = controller.cluster
        config = cluster.variant.broker_config(controller.broker)
        self.enabled = config.auto_leader_rebalance_enable
        self.interval_ms = config.leader_imbalance_check_interval_ms
        self.percentage = config.leader_imbalance_per_broker_percentage
        self._preferred_as_of = -1  # ZooKeeper's write count when all were on preferred
        if self.enabled:
            cluster.sim.after(FIRST_CHECK_MS * 1000, self._tick)

    def _tick(self) -> None:
        controller = self.controller
        cluster = controller.cluster
        if not controller.active or cluster.controller is not controller:
            return  # resigned: the next controller runs its own task
        broker = cluster.brokers[controller.broker]
        if not broker.alive:
            return  # the process is gone; a new controller will be elected
        if broker.stalled:
            cluster.after_stall(broker.id, self._tick)  # the paused scheduler runs it late
            return
        self.check()
        cluster.sim.after(self.interval_ms * 1000, self._tick)

    def check(self) -> list[TopicPartition]:
        """One run of checkAndTriggerAutoLeaderRebalance; returns the partitions moved."""
        controller = self.controller
        cluster = controller.cluster
        zk = cluster.zk
        if zk.state_writes == self._preferred_as_of:
            return []  # no leader changed since every partition was on its preferred replica
        if all(state.leader == cluster.assignment(key)[0] for key, state in zk.partitions.items()):
            self._preferred_as_of = zk.state_writes
            return []  # nothing is imbalanced
        assignments = {key: cluster.assignment(key) for key in zk.partitions}
        moves = partitions_to_move(assignments, zk.partitions, controller.live, self.percentage)
        for key in moves:
            state = zk.partitions[key]
            leader = assignments[key][0]
            new = PartitionState(leader, state.leader_epoch + 1, state.isr, state.version + 1)
            controller._write(key, new)
            cluster.log.emit(names.LEADER_ELECTED, topic=key[0], partition=key[1],
                             leader=leader, epoch=new.leader_epoch, isr=list(new.isr),
                             previous=state.leader, election="preferred",
                             reason="auto-leader-rebalance")
        if moves:
            controller._send_leader_and_isr({k: zk.partitions[k] for k in moves},
                                            controller.live)
            controller._update_metadata()
        return moves
