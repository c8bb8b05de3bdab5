"""The ZooKeeper-era control plane as one piece (the `zookeeper` controller kind): ZooKeeper,
the controller elected through it, the brokers' sessions, and the leaders' ZooKeeper writes
(docs/kafka.md §10, §11). It is the host ZooKeeper, the Controller and the ZkClient see; the
cluster asks it only what every controller kind answers (rig.strategies.controller)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, ClassVar

from rig.cluster import replica_set
from rig.cluster.alter_isr_manager import AlterIsrManager
from rig.cluster.controlled_shutdown import ControlledShutdown
from rig.cluster.controller import Controller
from rig.cluster.partition import TopicPartition
from rig.cluster.zookeeper import NODE as ZK
from rig.cluster.zookeeper import ZK_MESSAGE_BYTES, PartitionState, ZooKeeper
from rig.events import names
from rig.protocol.errors import NOT_CONTROLLER


class ZooKeeperControlPlane:
    """ZooKeeper and its controller for one variant; `cluster` is rig.cluster.cluster.Cluster."""

    nodes = (ZK,)  # the nodes besides the brokers that network faults may name

    def __init__(self, cluster: Any):
        self.cluster = cluster
        self.variant = cluster.variant
        self.sim = cluster.sim
        self.log = cluster.log
        self.zk = ZooKeeper(self)
        self.controller: Controller | None = None
        # The leaders' ISR changes: their own ZooKeeper writes before IBP 2.7, AlterIsr after.
        self.isr_writer = AlterIsrManager(self)

    # -- what ZooKeeper, the controller and the ZK client use of their host -------------------
    @property
    def brokers(self) -> Mapping[int, Any]:
        return self.cluster.brokers

    def send(self, *args: Any, **kwargs: Any) -> None:
        self.cluster.send(*args, **kwargs)

    def after_stall(self, broker_id: int, action: Callable[[], None]) -> None:
        self.cluster.after_stall(broker_id, action)

    def watch_connections(self, client: Any) -> None:
        """`client` (a broker's channel to the controller) hears of connection resets."""
        self.cluster.clients.append(client)

    @property
    def network(self) -> Any:
        return self.cluster.network

    @property
    def streams(self) -> Any:
        return self.cluster.streams

    def assignment(self, key: TopicPartition) -> tuple[int, ...]:
        return self.cluster.assignment(key)

    def unclean_election(self, key: TopicPartition) -> bool:
        return self.cluster.unclean_election(key)

    # -- what the cluster asks of every control plane -----------------------------------------
    @property
    def partitions(self) -> Mapping[TopicPartition, PartitionState]:
        return self.zk.partitions

    def current_replicas(self, key: TopicPartition) -> tuple[int, ...]:
        """The partition's replicas: as a reassignment wrote them to /brokers/topics (during
        one, the target followed by the origin's others), else its placement."""
        written = self.zk.assignments.get(key)
        return written.replicas if written is not None else (
            self.cluster.assignments[key[0]][key[1]])

    def node_alive(self, node: object) -> bool:
        return self.zk.alive if node == ZK else True

    def has_controller(self) -> bool:
        return self.controller is not None

    def create_partition(self, key: TopicPartition, replicas: tuple[int, ...]) -> None:
        self.zk.partitions[key] = PartitionState(replicas[0], 0, tuple(replicas))

    def start(self) -> None:
        """Start as a running cluster: every broker registered with ZooKeeper, the lowest id
        controller, each partition led by its first replica at epoch 0 with a full ISR. No
        election happens at t=0: the scenario describes a cluster that is already up."""
        zk = self.zk
        zk.register_running(sorted(self.brokers))
        self.controller = Controller(self, zk.controller or 0, zk.controller_epoch)
        self.log.emit(names.CONTROLLER_ELECTED, broker=self.controller.broker,
                      epoch=self.controller.epoch)
        # Every broker keeps these maps as its metadata cache (see on_update_metadata).
        leaders = {key: state.leader for key, state in zk.partitions.items()}
        isrs = {key: tuple(state.isr) for key, state in zk.partitions.items()}
        epochs = {key: state.leader_epoch for key, state in zk.partitions.items()}
        for broker in self.brokers.values():
            states = {key: zk.partitions[key] for key in broker.replicas}
            broker.on_leader_and_isr(self.controller.epoch, states, quiet=True)
            broker.on_update_metadata(self.controller.epoch, leaders, isrs, quiet=True,
                                      alive=frozenset(zk.sessions),
                                      controller=self.controller.broker, epochs=epochs)
            broker.start_tasks()
            self._heartbeats(broker)

    def controlled_shutdown(self, broker: Any, handle: Any) -> None:
        """The `controlled-shutdown` fault in ZooKeeper mode: KafkaServer.controlledShutdown
        (rig.cluster.controlled_shutdown), which stops the broker through `handle`."""
        ControlledShutdown(self.cluster, broker.id, handle).start()

    def reassign(self, key: TopicPartition, target: tuple[int, ...]) -> int:
        """The `reassign` fault: AlterPartitionReassignments reaches the controller (none, or
        its broker's process is down: NOT_CONTROLLER, and nothing is reassigned). Returns the
        error code."""
        controller = self.controller
        if controller is None or not self.brokers[controller.broker].alive:
            return NOT_CONTROLLER
        return controller.reassignment.alter(key, target)

    def deliver_leader_and_isr(self, broker_id: int, epoch: int,
                               batch: dict[TopicPartition, Any],
                               replicas: dict[TopicPartition, tuple[int, ...]]) -> None:
        """A LeaderAndIsr reaches `broker_id` (ReplicaManager.becomeLeaderOrFollower): a
        partition it does not hold but whose replicas name it is created, empty
        (getOrCreatePartition); one whose replica set changed at a newer leader epoch takes it
        (Partition.makeLeader / makeFollower → updateAssignmentAndIsr); then each becomes
        leader or follower."""
        broker = self.brokers[broker_id]
        if epoch >= broker.controller_epoch_seen:
            for key, state in batch.items():
                replica, now = broker.replicas.get(key), replicas[key]
                if replica is None and broker_id in now:
                    replica_set.create(self.cluster, broker, key, now)
                elif (replica is not None and now != replica.assignment
                      and state.leader_epoch > replica.leader_epoch):
                    replica_set.update_assignment(self.cluster, broker, replica, now)
        broker.on_leader_and_isr(epoch, batch)

    def stop_replica(self, broker_id: int, epoch: int, key: TopicPartition,
                     delete: bool) -> None:
        """StopReplica for one partition: stop fetching it; with delete = true (a reassignment
        removed the replica) the replica and its log are gone (ReplicaManager.stopReplicas)."""
        broker = self.brokers[broker_id]
        if not delete or epoch < broker.controller_epoch_seen:
            broker.on_stop_replica(epoch, [key])
            return
        broker.controller_epoch_seen = epoch
        replica = broker.replicas.get(key)
        if replica is not None:
            replica_set.delete(self.cluster, broker, replica)

    def broker_restarted(self, broker: Any) -> None:
        self._heartbeats(broker)

    def broker_crashed(self, broker: Any) -> None:
        """Nothing: ZooKeeper hears of it when the session expires."""

    def min_isr_altered(self, topic: str | None) -> None:
        """Nothing: the brokers read the new value from /config (no ELR before KRaft)."""

    def _heartbeats(self, broker: Any) -> None:
        """The broker's ZooKeeper session: register now, then heartbeat every timeout/3. A
        registration refused because the previous process's session still holds the broker's
        node (`_node_exists`) stops this process, or holds its beats while it waits."""
        incarnation = broker.incarnation
        self.isr_writer.broker_started(broker)
        waiting: list[bool] = []  # 0.8.2: between a refused create and the retry

        def beat() -> None:
            if not waiting:
                self.send(broker.id, ZK, ZK_MESSAGE_BYTES, at_zk)

        def at_zk() -> None:
            if not self.zk.heartbeat(broker.id, incarnation):
                owner = self.zk.sessions[broker.id]
                self.send(ZK, broker.id, ZK_MESSAGE_BYTES,
                          partial(self._node_exists, broker, incarnation, owner, waiting, retry))

        def retry() -> None:
            waiting.clear()
            beat()

        broker.every(max(1, broker.config.zookeeper_session_timeout_ms // 3), beat, now=True)

    def _node_exists(self, broker: Any, incarnation: int, owner: int, waiting: list[bool],
                     retry: Callable[[], None]) -> None:
        """The create of /brokers/ids/<id> failed: the node belongs to the session of the
        process before, which ZooKeeper has not expired. 0.9+: KafkaServer.startup fails ("A
        broker is already registered on the path …", from 1.1 KafkaZkClient's NODEEXISTS) and
        the process exits. 0.8.2: the node holds this broker's own host and port, so it sleeps
        zookeeper.session.timeout.ms and creates again, until the node is gone
        (ZkUtils.createEphemeralPathExpectConflictHandleZKBug)."""
        if broker.incarnation != incarnation or not broker.alive or waiting:
            return
        if not broker.config.registration_waits_for_old_session:
            self.cluster.startup_failed(broker.id, owner)
            return
        timeout_ms = broker.config.zookeeper_session_timeout_ms
        waiting.append(True)
        self.log.emit(names.ZK_REGISTRATION_RETRY, broker=broker.id, incarnation=incarnation,
                      owner=owner, retry_ms=timeout_ms)
        broker.schedule(timeout_ms * 1000, retry)

    # -- the controller -----------------------------------------------------------------------
    def notify_controller(self, action: Callable[[Controller], None]) -> None:
        """ZooKeeper fires the controller's watch: the news reaches it over the network."""
        controller = self.controller
        if controller is None:
            return
        self.send(ZK, controller.broker, ZK_MESSAGE_BYTES,
                  lambda: action(controller) if controller.active else None, reliable=True)

    def controller_elected(self, broker: int, epoch: int) -> None:
        if self.controller is not None:
            self.controller.active = False
        self.controller = Controller(self, broker, epoch)
        self.controller.on_elected()

    def controller_gone(self) -> None:
        if self.controller is not None:
            self.controller.active = False
        self.controller = None

    def run_for_controller(self, broker: int) -> None:
        """The broker's create of /controller; its ZooKeeper client retries a request the
        connection lost until it is connected again (KafkaZkClient
        .retryRequestsUntilConnected): sent reliably."""
        self.send(broker, ZK, ZK_MESSAGE_BYTES, lambda: self.zk.try_become_controller(broker),
                  reliable=True)


class ZooKeeperMode:
    """The `zookeeper` controller kind: Kafka up to 3.9 (docs/kafka.md §10, §11)."""

    name: ClassVar[str] = "zookeeper"
    description: ClassVar[str] = ("ZooKeeper-era controller: ZK sessions, one controller "
                                  "elected through /controller, LeaderAndIsr (Kafka ≤ 3.9)")
    api_version: ClassVar[int] = 1
    mode: ClassVar[str] = "zookeeper"

    def control_plane(self, cluster: Any) -> ZooKeeperControlPlane:
        return ZooKeeperControlPlane(cluster)
