"""The broker's side of AlterIsr in ZooKeeper mode (inter.broker.protocol.version 2.7+, KIP-497;
docs/kafka.md §11): Kafka's AlterIsrManager (2.7 AlterIsrManagerImpl, 2.8+ DefaultAlterIsrManager)
and the BrokerToControllerChannelManager it sends through. The partition's and the controller's
sides are rig.cluster.alter_isr.

- Each broker keeps one AlterIsr request in flight and batches the partitions queued meanwhile
  (2.7, AlterIsrManagerImpl: the queue goes out every 50 ms; 2.8+, DefaultAlterIsrManager: at
  once, and again as soon as the answer comes, or 50 ms after a top-level error). The request
  goes to the controller the broker's channel has cached (BrokerToControllerRequestThread
  .activeController), which it takes from its metadata cache: the controller id and live
  brokers of the last UpdateMetadata (none: it looks again every 100 ms). A NOT_CONTROLLER
  answer or a dropped connection (the process died: reset after a round trip; its machine is
  down: the connection setup timeout; no answer: controller.socket.timeout.ms) clears the
  cache and puts the request first again: it goes to the controller the metadata cache names
  then, which is the old one until the new controller's UpdateMetadata arrives (reconnecting
  to the same node waits the 50 ms reconnect backoff). A new controller is learnt only so.
- From 3.3 (KIP-841) a leader proposes no follower its metadata cache does not list alive
  (Partition.isReplicaIsrEligible: ZkMetadataCache.hasAliveBroker), at any IBP.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rig.cluster.alter_isr import Answer, handle_response, process_alter_isr, propose
from rig.cluster.controller_wire import alter_partition_bytes, alter_partition_response_bytes
from rig.cluster.kraft.replication_control import AlterPartitionRequest
from rig.cluster.partition import TopicPartition
from rig.cluster.replica import PendingIsr, Replica
from rig.cluster.zk_client import ZkClient
from rig.protocol.errors import NONE, NOT_CONTROLLER
from rig.scenario.client_config import RECONNECT_BACKOFF_MS  # the channel's NetworkClient

SEND_INTERVAL_MS = 50  # 2.7's send-alter-isr task; 2.8+'s retry after a top-level error
CONTROLLER_POLL_MS = 100  # BrokerToControllerRequestThread.doWork, no controller known
CONNECTION_SETUP_TIMEOUT_MS = 10_000  # socket.connection.setup.timeout.ms (KIP-601, 2.7+)


# -- the broker's side (AlterIsrManager) ---------------------------------------------------------
@dataclass(eq=False)
class _Item:
    """AlterIsrItem: one partition's proposal, as queued and sent."""

    replica: Replica
    pending: PendingIsr
    request: AlterPartitionRequest


@dataclass(eq=False)
class _Channel:
    """One broker process's AlterIsrManager: the queue, the request in flight."""

    incarnation: int
    started_ms: float
    unsent: dict[TopicPartition, _Item] = field(default_factory=dict)
    inflight: list[_Item] | None = None  # the items of the request in flight
    tick: bool = False  # 2.7: a send-alter-isr tick is scheduled
    sent: int = 0  # requests sent: an answer to an older one (re-sent since) is ignored
    # BrokerToControllerRequestThread.activeController: the node requests go to (None: read
    # the metadata cache), and the node and time of the last dropped connection.
    target: int | None = None
    dropped: tuple[int, float] | None = None
    broker: Any = None  # the broker process the channel belongs to

    @property
    def node(self) -> int:
        return int(self.broker.id)

    @property
    def stopped(self) -> bool:
        """The process this channel belonged to is gone (the cluster stops telling it of
        connection resets)."""
        return self.incarnation != self.broker.incarnation or not self.broker.alive

    def connection_reset(self, dead: int) -> None:
        """`dead`'s process died (its machine is up): a request open to it fails now."""
        if self.inflight is not None and self.target == dead and not self.stopped:
            self.on_disconnect(self.sent)

    on_disconnect: Any = None  # set by the manager: (token) → the request's connection dropped


class AlterIsrManager:
    """The ISR writer of a ZooKeeper cluster (rig.cluster.context.IsrWriter): AlterIsr for the
    brokers at inter.broker.protocol.version 2.7+, the leader's own ZooKeeper write
    (rig.cluster.zk_client) before."""

    def __init__(self, plane: Any):
        self.plane = plane
        self.zk_client = ZkClient(plane)
        self._channels: dict[int, _Channel] = {}

    def broker_started(self, broker: Any) -> None:
        """A broker process starts (its send-alter-isr task's clock starts with it)."""
        self._channels[broker.id] = self._new_channel(broker)

    def _new_channel(self, broker: Any) -> _Channel:
        channel = _Channel(broker.incarnation, broker.now_ms, broker=broker)
        channel.on_disconnect = lambda token: self._disconnected(broker, channel, token)
        if broker.config.isr_update != "zookeeper-write":  # a leader before IBP 2.7 sends none
            self.plane.watch_connections(channel)
        return channel

    def propagate_isr_changes(self, broker: Any, keys: tuple[TopicPartition, ...]) -> None:
        self.zk_client.propagate_isr_changes(broker, keys)  # before 2.7 only

    def change_isr(self, broker: Any, replica: Replica, isr: tuple[int, ...],
                   shrink: list[int] | None = None, expand: list[int] | None = None) -> None:
        if (expand and broker.config.alter_partition_ineligible
                and not all(broker.metadata_cache.has_alive_broker(b) for b in expand)):
            # 3.3+ (KIP-841, KAFKA-13916): Partition.canAddReplicaToIsr asks
            # isReplicaIsrEligible, which in ZooKeeper mode is ZkMetadataCache.hasAliveBroker;
            # shutting down is the controller's to refuse (INELIGIBLE_REPLICA). Whatever the
            # inter.broker.protocol.version: the leader proposes nothing.
            return
        if broker.config.isr_update == "zookeeper-write":
            self.zk_client.change_isr(broker, replica, isr, shrink, expand)
            return
        channel = self._channel(broker)
        pending = propose(replica, isr, expand)
        request = AlterPartitionRequest(replica.key, broker.id, broker.incarnation,
                                        replica.leader_epoch, replica.zk_version, isr)
        # An item still queued for this partition belongs to a change a LeaderAndIsr ended
        # (clearPending): this one replaces it.
        channel.unsent[replica.key] = _Item(replica, pending, request)
        self._wake(broker, channel)

    # -- internals -------------------------------------------------------------------------
    def _channel(self, broker: Any) -> _Channel:
        channel = self._channels.get(broker.id)
        if channel is None or channel.incarnation != broker.incarnation:
            channel = self._channels[broker.id] = self._new_channel(broker)
        return channel

    def _wake(self, broker: Any, channel: _Channel) -> None:
        """Queued work: 2.8+ sends now (if nothing is in flight); 2.7 at the next tick."""
        if broker.config.isr_update != "alter-isr-every-50ms":
            self._maybe_propagate(broker, channel)
            return
        if channel.tick or not channel.unsent:
            return
        channel.tick = True
        now = broker.now_ms
        ticks = int((now - channel.started_ms) // SEND_INTERVAL_MS) + 1
        delay_ms = channel.started_ms + ticks * SEND_INTERVAL_MS - now

        def tick() -> None:
            channel.tick = False
            self._maybe_propagate(broker, channel)

        broker.schedule(max(1, round(delay_ms * 1000)), tick)

    def _maybe_propagate(self, broker: Any, channel: _Channel) -> None:
        """Send every queued change, unless a request is in flight."""
        if channel.inflight is not None or channel.incarnation != broker.incarnation:
            return
        items = [i for i in channel.unsent.values() if i.replica.pending_isr is i.pending]
        channel.unsent = {i.replica.key: i for i in items}
        if items:
            channel.inflight = items
            self._send(broker, channel, items)

    def _send(self, broker: Any, channel: _Channel, items: list[_Item]) -> None:
        """BrokerToControllerRequestThread: send the request to the cached controller, or
        first find it in the metadata cache (getControllerId, getAliveBroker)."""
        plane = self.plane
        if channel.incarnation != broker.incarnation or not broker.alive:
            return
        if channel.target is None:
            cache = broker.metadata_cache
            controller_id = cache.controller_id
            if controller_id is None or not cache.has_alive_broker(controller_id):
                broker.schedule(CONTROLLER_POLL_MS * 1000,
                                lambda: self._send(broker, channel, items))
                return
            channel.target = controller_id
        target = channel.target
        if channel.dropped is not None and channel.dropped[0] == target:
            wait_ms = channel.dropped[1] + RECONNECT_BACKOFF_MS - broker.now_ms
            if wait_ms > 0:  # NetworkClient: the node is blacked out after a disconnect
                broker.schedule(max(1, round(wait_ms * 1000)),
                                lambda: self._send(broker, channel, items))
                return
        channel.sent += 1
        token = channel.sent
        requests = [i.request for i in items]
        epoch = broker.incarnation
        node = plane.brokers[target]

        def at_target() -> None:
            # KafkaController.processAlterIsr on the broker the request reached: NOT_CONTROLLER
            # unless that process is the active controller now.
            controller = plane.controller
            results: dict[TopicPartition, tuple[int, Answer | None]] = {}
            if controller is None or controller.broker != target or not controller.active:
                top = NOT_CONTROLLER
            else:
                top, results = process_alter_isr(controller, broker.id, epoch, requests)
            answers = [(key, len(answer[1]) if answer else 0)
                       for key, (_, answer) in results.items()]
            plane.send(target, broker.id,
                       alter_partition_response_bytes(plane.variant, broker, answers),
                       lambda: self._answered(broker, channel, items, token, top, results),
                       reliable=True)
            if controller is not None and not top:
                # After the answer: reassignments the accepted changes complete.
                controller.reassignment.isr_changed(
                    [key for key, (error, _) in results.items() if not error])

        if not node.alive:
            # A connection to a process that is gone: refused after a round trip when its
            # machine is up, the setup timeout when its machine is down (power loss).
            delay_ms = (CONNECTION_SETUP_TIMEOUT_MS if node.machine_down
                        else 2 * plane.link_latency_ms(broker.id, target))
            broker.schedule(max(1, round(delay_ms * 1000)),
                            lambda: self._disconnected(broker, channel, token))
            return
        proposed = [(r.key, len(r.new_isr)) for r in requests]
        plane.send(broker.id, target, alter_partition_bytes(plane.variant, broker, proposed),
                   at_target, reliable=True)
        # No answer (a network partition, a stalled or powered-off controller): the request
        # times out and its connection is dropped (InterBrokerSendThread, requestTimeoutMs =
        # controller.socket.timeout.ms).
        broker.schedule(broker.config.controller_socket_timeout_ms * 1000,
                        lambda: self._disconnected(broker, channel, token))

    def _disconnected(self, broker: Any, channel: _Channel, token: int) -> None:
        """The request's connection dropped (ClientResponse.wasDisconnected): forget the
        controller and send the request again first (handleResponse: putFirst)."""
        if (channel.incarnation != broker.incarnation or token != channel.sent
                or channel.inflight is None):
            return
        self._forget_controller(broker, channel)
        self._send(broker, channel, channel.inflight)

    def _forget_controller(self, broker: Any, channel: _Channel) -> None:
        if channel.target is not None:
            channel.dropped = (channel.target, broker.now_ms)
        channel.target = None
        channel.sent += 1  # a late answer on the dropped connection is not read

    def _answered(self, broker: Any, channel: _Channel, items: list[_Item], token: int,
                  top: int, results: dict[TopicPartition, tuple[int, Answer | None]]) -> None:
        if channel.incarnation != broker.incarnation or token != channel.sent:
            return
        if top == NOT_CONTROLLER:
            # handleResponse: disconnect from it, forget it, and put the request first again;
            # doWork then reads the metadata cache (the same node until UpdateMetadata says
            # otherwise: again after the reconnect backoff).
            self._forget_controller(broker, channel)
            self._send(broker, channel, items)
            return
        channel.inflight = None
        if top != NONE:  # STALE_BROKER_EPOCH: the queue is sent again after the backoff
            if broker.config.isr_update == "alter-isr-every-50ms":
                self._wake(broker, channel)
            else:
                broker.schedule(SEND_INTERVAL_MS * 1000,
                                lambda: self._maybe_propagate(broker, channel))
            return
        emit = self.plane.log.emit
        for item in items:
            key = item.replica.key
            if channel.unsent.get(key) is item:
                del channel.unsent[key]
            error, answer = results.get(key, (NONE, None))
            if key not in results:
                channel.unsent.setdefault(key, item)  # left out of the answer: sent again
            elif handle_response(broker, emit, item.replica, item.pending, item.request, error,
                                 answer):
                channel.unsent.setdefault(key, item)
        self._wake(broker, channel)
