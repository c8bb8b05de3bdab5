"""Controlled shutdown, ZooKeeper era: the broker asks the controller to move its leaderships
away before it stops (docs/kafka.md §10, §12).

The broker (KafkaServer.controlledShutdown): sends ControlledShutdown to the controller; the
reply lists the partitions it still leads. Until that list is empty it tries again after
`controlled.shutdown.retry.backoff.ms` (5 s), `controlled.shutdown.max.retries` (3) attempts in
all, an attempt without a reply within `controller.socket.timeout.ms` (30 s) counting as failed;
then it stops whatever the answer ("Proceeding to do an unclean shutdown as all the controlled
shutdown attempts failed": unclean means without the leaders moved, the logs are still flushed).
A stop is clean: every log flushed (LogManager.shutdown), the ZooKeeper session closed, so its
/brokers/ids znode goes at once and the controller hears of it without waiting for a timeout.

The controller (KafkaController.doControlledShutdown, 1.1–3.x; ControlledShutdownLeaderSelector
before): it marks the broker shutting down; of the partitions with more than one replica on the
broker, each it leads gets a new leader — the first replica in assignment order that is live,
in the ISR and not shutting down — with the ISR less the shutting-down brokers at a new leader
epoch (Election.leaderForControlledShutdown), sent in LeaderAndIsr to its live replicas; each
it follows gets StopReplica (deletePartition = false) and the OfflineReplica transition, which
takes it out of the ISR at a new epoch (ZkReplicaStateMachine.doRemoveReplicasFromIsr). The
reply: the partitions with more than one replica it still leads
(ControllerContext.partitionLeadersOnBroker).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from rig.cluster.controller import Controller
from rig.cluster.controller_wire import (
    controlled_shutdown_bytes,
    controlled_shutdown_response_bytes,
    stop_replica_bytes,
    stop_replica_response_bytes,
)
from rig.cluster.replica import TopicPartition
from rig.cluster.replica_state_machine import replicas_offline
from rig.cluster.zookeeper import NODE as ZK
from rig.cluster.zookeeper import ZK_MESSAGE_BYTES, PartitionState
from rig.events import names

if TYPE_CHECKING:
    from rig.cluster.shutdown import ShutdownHandle

CONTROLLER_SOCKET_TIMEOUT_MS = 30_000  # controller.socket.timeout.ms, the request's timeout


def do_controlled_shutdown(controller: Controller, broker: int) -> list[TopicPartition] | None:
    """KafkaController.doControlledShutdown: move `broker`'s leaderships, take it out of the
    ISRs it follows in; returns the partitions it still leads, or None when this controller
    cannot act (ControllerMovedException, BrokerNotAvailableException)."""
    cluster = controller.cluster
    if not controller.active or broker not in controller.live:
        return None
    controller.shutting_down.add(broker)
    zk = cluster.zk
    act_on = [key for key in zk.partitions
              if broker in cluster.assignment(key) and len(cluster.assignment(key)) > 1]
    led = [key for key in act_on if zk.partitions[key].leader == broker]
    followed = [key for key in act_on if zk.partitions[key].leader != broker]
    moved: dict[TopicPartition, PartitionState] = {}
    for key in led:
        state = zk.partitions[key]
        isr = tuple(b for b in state.isr if b not in controller.shutting_down)
        leader = next((b for b in cluster.assignment(key)
                       if b in controller.live and b in isr), None)
        if leader is None:
            continue  # no other ISR member: it keeps leading, and the reply says so
        new = PartitionState(leader, state.leader_epoch + 1, isr, state.version + 1)
        controller.write_state(key, new)
        moved[key] = new
        cluster.log.emit(names.LEADER_ELECTED, topic=key[0], partition=key[1], leader=leader,
                         epoch=new.leader_epoch, isr=list(isr), previous=broker,
                         election="controlled-shutdown", reason="controlled-shutdown")
    controller.send_leader_and_isr(moved, controller.live)
    if followed:
        target = cluster.brokers[broker]
        controller.channels.send(
            broker, stop_replica_bytes(controller, followed, False),
            partial(target.on_stop_replica, controller.epoch, followed),
            stop_replica_response_bytes(controller, followed, False))
    changed = replicas_offline(controller, [broker], only=set(followed))
    controller.send_leader_and_isr({k: zk.partitions[k] for k in changed},
                                    controller.live - {broker})
    controller.update_metadata()
    return [key for key, state in zk.partitions.items()
            if state.leader == broker and len(cluster.assignment(key)) > 1]


class ControlledShutdown:
    """One broker's controlled shutdown, from the first request to the stop."""

    def __init__(self, cluster: Any, broker: int, handle: ShutdownHandle):
        self.cluster = cluster
        self.broker = cluster.brokers[broker]
        self.handle = handle
        self.incarnation = self.broker.incarnation
        config = self.broker.config
        self.retries = config.controlled_shutdown_max_retries
        self.backoff_ms = config.controlled_shutdown_retry_backoff_ms
        self.attempt = 0
        self._answered: set[int] = set()

    def _current(self) -> bool:
        broker = self.broker
        return broker.alive and broker.incarnation == self.incarnation

    def start(self) -> None:
        if self._current():
            self._send()

    def _send(self) -> None:
        """One attempt: the request to the controller the broker knows of, with its timeout."""
        cluster = self.cluster
        self.retries -= 1
        self.attempt += 1
        attempt = self.attempt
        controller = cluster.controller
        cluster.log.emit(names.CONTROLLED_SHUTDOWN_REQUEST, broker=self.broker.id,
                         controller=controller.broker if controller else None, attempt=attempt)
        if controller is not None:
            cluster.send(self.broker.id, controller.broker,
                         controlled_shutdown_bytes(cluster.variant, self.broker),
                         partial(self._at_controller, controller, attempt))
        cluster.sim.after(CONTROLLER_SOCKET_TIMEOUT_MS * 1000 if controller else 0,
                          partial(self._reply, attempt, controller, None, "no-answer"))

    def _at_controller(self, controller: Controller, attempt: int) -> None:
        cluster = self.cluster
        led = do_controlled_shutdown(controller, self.broker.id)
        size = controlled_shutdown_response_bytes(cluster.variant, self.broker, led or ())
        cluster.send(controller.broker, self.broker.id, size,
                     partial(self._reply, attempt, controller, led,
                             None if led is not None else "refused"))

    def _reply(self, attempt: int, controller: Controller | None,
               led: list[TopicPartition] | None, error: str | None) -> None:
        """The answer to `attempt`: the partitions still led, or None with the `error`
        ("refused": the controller moved or does not know the broker; "no-answer")."""
        if attempt in self._answered or not self._current():
            return
        self._answered.add(attempt)
        cluster = self.cluster
        cluster.log.emit(names.CONTROLLED_SHUTDOWN_REPLY, broker=self.broker.id,
                         controller=controller.broker if controller else None,
                         attempt=attempt, remaining=None if led is None else len(led),
                         error=error)
        if led == []:
            self.stop(controlled=True)
        elif self.retries > 0:
            cluster.sim.after(self.backoff_ms * 1000,
                              lambda: self._send() if self._current() else None)
        else:
            self.stop(controlled=False)

    def stop(self, controlled: bool) -> None:
        """KafkaServer.shutdown after the controlled shutdown: every log flushed, the ZooKeeper
        session closed (its ephemeral znodes go now), the process gone."""
        cluster = self.cluster
        broker = self.broker
        broker.log_manager.flush_by_time()
        if cluster.controller is not None and cluster.controller.broker == broker.id:
            cluster.controller.channels.drain()  # (KafkaController.shutdown comes late)
        cluster.send(broker.id, ZK, ZK_MESSAGE_BYTES,
                     partial(cluster.zk.expire, broker.id, "closed"))
        self.handle.stop(controlled)


__all__ = ["ControlledShutdown", "do_controlled_shutdown"]
