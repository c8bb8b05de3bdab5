"""The ZooKeeper-era controller: leader elections and LeaderAndIsr / UpdateMetadata.

Clean election: the first live replica in assignment order that is in the ISR (before Kafka 1.1:
the first live one in ISR order, as OfflinePartitionLeaderSelector took it). If none,
`unclean.leader.election.enable` allows the first live replica; otherwise the partition is
offline. Every change bumps the leader epoch and is written to ZooKeeper before it is sent.

A failed broker's replicas go offline as Kafka's replica state machine moves them (after the
elections of the partitions it led): each leaves every ISR it is in, or, as the last member,
stays and loses the leadership (leader −1, a new epoch). A new controller does the same for
every broker it does not see alive before it elects (KafkaController.onControllerFailover:
replicaStateMachine.startup, then partitionStateMachine.startup; docs/kafka.md §10, §11).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any, Protocol

from rig.cluster.controller_channel import ControllerChannelManager
from rig.cluster.controller_wire import (
    leader_and_isr_bytes,
    leader_and_isr_response_bytes,
    update_metadata_bytes,
    update_metadata_response_bytes,
)
from rig.cluster.network import Node
from rig.cluster.rebalance import AutoLeaderRebalance
from rig.cluster.replica import TopicPartition
from rig.cluster.replica_state_machine import NO_LEADER, replicas_offline
from rig.cluster.zk_reassignment import PartitionReassignments
from rig.cluster.zookeeper import NODE as ZK
from rig.cluster.zookeeper import ZK_MESSAGE_BYTES, PartitionState, ZooKeeper
from rig.engine import Simulation
from rig.events import EventLog, names
from rig.scenario.model import VariantSpec


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

    def deliver_leader_and_isr(self, broker_id: int, epoch: int,
                               batch: dict[TopicPartition, PartitionState],
                               replicas: dict[TopicPartition, tuple[int, ...]]) -> None: ...

    def stop_replica(self, broker_id: int, epoch: int, key: TopicPartition,
                     delete: bool) -> None: ...


class Controller:
    def __init__(self, cluster: ControllerHost, broker: int, epoch: int):
        self.cluster = cluster
        self.broker = broker
        self.epoch = epoch
        self.live: set[int] = set(cluster.zk.sessions)
        self.broker_epochs = dict(cluster.zk.broker_epochs)  # as it last read /brokers/ids
        self.shutting_down: set[int] = set()  # in controlled shutdown (controlled_shutdown.py)
        self.active = True
        self.channels = ControllerChannelManager(self)  # one request in flight per broker
        self.rebalance = AutoLeaderRebalance(self)  # preferred leader election, periodic
        self.reassignment = PartitionReassignments(self)  # KIP-455, resumed from ZooKeeper

    @property
    def electable(self) -> set[int]:
        """The brokers that may lead or stay in a new ISR: live and not in controlled shutdown
        (ControllerContext.liveBrokerIds = liveBrokerEpochs less shuttingDownBrokerIds, which
        isReplicaOnline checks unless the controlled-shutdown election asks otherwise)."""
        return self.live - self.shutting_down

    # -- events from ZooKeeper ---------------------------------------------------------------
    def on_elected(self) -> None:
        cluster = self.cluster
        partitions = cluster.zk.partitions
        cluster.log.emit(names.CONTROLLER_ELECTED, broker=self.broker, epoch=self.epoch)
        led_before = {key: state.leader for key, state in partitions.items()}
        # ReplicaStateMachine.startup: the replicas of brokers not alive go OfflineReplica,
        # which takes them out of the ISRs (their LeaderAndIsr is covered by the full one
        # below); then PartitionStateMachine.startup elects where no live leader is left.
        dead = sorted({b for key in partitions for b in cluster.assignment(key)} - self.live)
        replicas_offline(self, dead)
        changed = [key for key, state in partitions.items() if state.leader not in self.live]
        offline = self._elect(changed, "controller-failover")
        self._emit_offline([k for k in offline if led_before[k] != NO_LEADER],
                           "controller-failover")
        # A new controller tells every live broker the whole state.
        self.send_leader_and_isr(cluster.zk.partitions, self.live)
        self.update_metadata()
        # Notifications left from before it was elected: its full UpdateMetadata covers them.
        cluster.zk.take_isr_change_notifications()
        self.reassignment.resume()  # initializePartitionReassignments

    def on_brokers_changed(self) -> None:
        """The watch on /brokers/ids fired: read it and compare with what the controller last
        read (KafkaController.processBrokerChange, 1.1+; BrokerChangeListener before): new
        brokers start, then (2.2+, KIP-380) a broker registered again since, with a newer
        broker epoch, fails and starts, then brokers gone fail. Changes made before the read
        are handled together; before 2.2 a broker that went and came back meanwhile is not
        seen at all (its new process hears nothing until something else changes)."""
        if not self.active:
            return
        current = dict(self.cluster.zk.broker_epochs)
        known, self.broker_epochs = self.broker_epochs, current
        bounced = sorted(b for b in current.keys() & known.keys() if current[b] != known[b])
        config = self.cluster.variant.broker_config(self.broker)
        if bounced and not config.controller_detects_bounce:
            for broker in bounced:
                self.cluster.log.emit(names.CONTROLLER_BOUNCE_UNSEEN, broker=broker,
                                      controller=self.broker, epoch=current[broker])
            bounced = []
        if new := sorted(current.keys() - known.keys()):
            self.on_broker_change(failed=[], started=new)
        if bounced:
            self.on_broker_change(failed=bounced, started=bounced)
        if dead := sorted(known.keys() - current.keys()):
            self.on_broker_change(failed=dead, started=[])

    def on_broker_change(self, failed: Iterable[int], started: Iterable[int]) -> None:
        if not self.active:
            return
        failed, started = list(failed), list(started)
        self.live -= set(failed)
        for b in failed:
            self.channels.remove_broker(b)  # (a bounced broker's is new: addBroker)
        self.shutting_down -= {*failed, *started}
        if failed:
            self._on_failure(failed)
        self.live |= set(started)
        if started:
            self._on_startup(started)

    # -- the controller's work ---------------------------------------------------------------
    def _on_failure(self, dead: list[int]) -> None:
        """KafkaController.onBrokerFailure → onReplicasBecomeOffline: elect new leaders where
        the leader died, then move the dead replicas offline."""
        cluster = self.cluster
        zk = cluster.zk
        lost_leader = [k for k, s in zk.partitions.items() if s.leader in dead]
        offline = self._elect(lost_leader, "broker-failure")
        changed = replicas_offline(self, dead)
        self._emit_offline(offline, "broker-failure")
        self.send_leader_and_isr({k: zk.partitions[k] for k in dict.fromkeys(
            [*lost_leader, *changed])}, self.live)
        self.update_metadata()

    def _emit_offline(self, keys: Iterable[TopicPartition], reason: str) -> None:
        """Partitions left without a leader (no live replica may lead): their ISR is as the
        dead replicas left it, the last leader at least."""
        cluster = self.cluster
        for key in keys:
            cluster.log.emit(names.PARTITION_OFFLINE, topic=key[0], partition=key[1],
                             isr=list(cluster.zk.partitions[key].isr), reason=reason)

    def _on_startup(self, started: list[int]) -> None:
        cluster = self.cluster
        zk = cluster.zk
        offline = [k for k, s in zk.partitions.items()
                   if s.leader == NO_LEADER and any(b in cluster.assignment(k) for b in started)]
        self._elect(offline, "broker-startup")
        hosted = {k: s for k, s in zk.partitions.items()
                  if any(b in cluster.assignment(k) for b in started)}
        self.send_leader_and_isr(hosted, set(started))
        self.send_leader_and_isr({k: zk.partitions[k] for k in offline},
                                  self.live - set(started))
        self.update_metadata()
        # Reassignments whose target names a broker that started (onBrokerStartup).
        self.reassignment.resume(lambda assignment: any(b in assignment.target for b in started))

    def _elect(self, keys: list[TopicPartition], reason: str) -> list[TopicPartition]:
        """Elect a leader for each of `keys`; returns those that had a leader and now have
        none that may lead (Kafka writes nothing for a failed election: the dead leader's
        OfflineReplica transition takes its leadership away)."""
        cluster = self.cluster
        order = cluster.variant.broker_config(self.broker).election_order
        offline: list[TopicPartition] = []
        electable = self.electable
        for key in keys:
            state = cluster.zk.partitions[key]
            replicas = cluster.assignment(key)
            live = [b for b in replicas if b in electable]
            if order == "isr-order":
                clean = [b for b in state.isr if b in live]
            else:
                clean = [b for b in live if b in state.isr]
            if clean:
                leader, isr, how = clean[0], tuple(b for b in state.isr if b in electable), "clean"
            elif live and cluster.unclean_election(key):
                leader, isr, how = live[0], (live[0],), "unclean"
            else:
                if state.leader != NO_LEADER:
                    offline.append(key)
                continue
            self.write_state(key, PartitionState(leader, state.leader_epoch + 1, isr,
                                            state.version + 1))
            cluster.log.emit(names.LEADER_ELECTED, topic=key[0], partition=key[1],
                             leader=leader, epoch=state.leader_epoch + 1, isr=list(isr),
                             previous=state.leader, election=how, reason=reason)
        return offline

    def write_state(self, key: TopicPartition, state: PartitionState) -> None:
        self.cluster.zk.write_state(key, state)

    def send_leader_and_isr(self, states: dict[TopicPartition, PartitionState],
                             brokers: Iterable[int],
                             replicas: dict[TopicPartition, tuple[int, ...]] | None = None,
                             ) -> None:
        """LeaderAndIsr with each partition's state and replica set (`replicas`, default its
        assignment now) to those of its replicas that `brokers` names and that are live."""
        cluster = self.cluster
        per_broker: dict[int, dict[TopicPartition, PartitionState]] = {}
        assigned = {key: replicas[key] if replicas is not None else cluster.assignment(key)
                    for key in states}
        for key, state in states.items():
            for b in assigned[key]:
                if b in brokers and b in self.live:
                    per_broker.setdefault(b, {})[key] = PartitionState(
                        state.leader, state.leader_epoch, state.isr, state.version)
        for b, batch in sorted(per_broker.items()):
            sent = {key: assigned[key] for key in batch}
            self.channels.send(b, leader_and_isr_bytes(self, batch, sent), partial(
                cluster.deliver_leader_and_isr, b, self.epoch, batch, sent),
                leader_and_isr_response_bytes(self, batch))

    def update_metadata(self, keys: Iterable[TopicPartition] | None = None) -> None:
        """UpdateMetadata to every live broker: the state of `keys` (default: every partition)."""
        cluster = self.cluster
        partitions = cluster.zk.partitions
        chosen = list(partitions) if keys is None else [k for k in keys if k in partitions]
        leaders = {k: partitions[k].leader for k in chosen}
        isrs = {k: tuple(partitions[k].isr) for k in chosen}
        epochs = {k: partitions[k].leader_epoch for k in chosen}
        # Every UpdateMetadata names the live brokers (liveOrShuttingDownBrokers) and the
        # controller (ControllerBrokerRequestBatch.sendUpdateMetadataRequests).
        alive = frozenset(self.live)
        size, answer = update_metadata_bytes(self, chosen), update_metadata_response_bytes(self)
        for b in sorted(self.live):
            self.channels.send(b, size, partial(
                cluster.brokers[b].on_update_metadata, self.epoch, leaders, isrs, alive=alive,
                controller=self.broker, epochs=epochs), answer)

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
            self.update_metadata(keys)
            self.reassignment.isr_changed(keys)

        cluster.send(self.broker, ZK, ZK_MESSAGE_BYTES, at_zk)

