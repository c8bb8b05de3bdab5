"""A leader's ISR changes through the controller in ZooKeeper mode, from inter.broker.protocol
.version 2.7 (KIP-497; docs/kafka.md §11): the partition's side of a change (Partition
.sendAlterIsrRequest and handleAlterIsrResponse, which the KRaft leaders' AlterPartition shares),
the broker's AlterIsrManager and the controller's KafkaController.processAlterIsr.

- The leader proposes the new ISR with its leader epoch and the /state version it holds, and
  proposes nothing else for the partition until the answer (Partition.isrState pending). While
  an expansion is pending, the HW and acks=all count the new replica (the maximal ISR); while a
  shrink is pending, they still count the replicas it removes.
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
- The controller checks the broker epoch (STALE_BROKER_EPOCH), each partition's leader epoch
  (FENCED_LEADER_EPOCH), answers an ISR already in place with the current state, from 3.3
  refuses a member not live or shutting down (INELIGIBLE_REPLICA, KIP-841), writes the rest to
  ZooKeeper conditionally on their version (INVALID_UPDATE_VERSION), sends UpdateMetadata for
  the partitions to every live broker and answers with the new ISR and version. No
  /isr_change_notification: the controller has made the change itself.
- The leader takes a confirmed ISR carrying its leader epoch and a version not older than its
  own (2.7.0–2.8.0: newer than its own, KAFKA-12751); FENCED_LEADER_EPOCH,
  INVALID_UPDATE_VERSION and the like leave the change pending until the next LeaderAndIsr;
  INELIGIBLE_REPLICA resets it; other errors send it again (handleAlterPartitionError).
  From 3.1 (KAFKA-13091) it recomputes its HW on the answer.
Events: the controller logs an accepted change (`zk.partition_state`, writer `controller`,
then `isr.shrink` by `leader` or `isr.expand`); the leader logs `alter_partition.rejected`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rig.cluster.kraft.replication_control import (
    ERROR_NAMES,
    FENCED_LEADER_EPOCH,
    INELIGIBLE_REPLICA,
    INVALID_REQUEST,
    INVALID_UPDATE_VERSION,
    NEW_LEADER_ELECTED,
    NONE,
    NOT_CONTROLLER,
    STALE_BROKER_EPOCH,
    AlterPartitionRequest,
)
from rig.cluster.partition import TopicPartition
from rig.cluster.replica import PendingIsr, Replica, Role
from rig.cluster.zk_client import ZkClient
from rig.events import names

UNKNOWN_TOPIC_OR_PARTITION, OPERATION_NOT_ATTEMPTED = 3, 55
REQUEST_BYTES, PARTITION_BYTES = 64, 24  # header, broker id and epoch; each partition
SEND_INTERVAL_MS = 50  # 2.7's send-alter-isr task; 2.8+'s retry after a top-level error
CONTROLLER_POLL_MS = 100  # BrokerToControllerRequestThread.doWork, no controller known
RECONNECT_BACKOFF_MS = 50  # the channel's NetworkClient (reconnect.backoff.ms, its max)
CONNECTION_SETUP_TIMEOUT_MS = 10_000  # socket.connection.setup.timeout.ms (KIP-601, 2.7+)
# Partition.handleAlterPartitionError: what a rejected change does next.
_RESET = frozenset({INELIGIBLE_REPLICA, OPERATION_NOT_ATTEMPTED})  # back to the committed ISR
_GIVE_UP = frozenset({UNKNOWN_TOPIC_OR_PARTITION, FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION,
                      INVALID_REQUEST, NEW_LEADER_ELECTED})  # pending until new metadata
Answer = tuple[int, tuple[int, ...], int]  # leader epoch, ISR, version (partition epoch)


# -- the partition's side (Partition), ZooKeeper AlterIsr and KRaft AlterPartition alike --------
def propose(replica: Replica, isr: tuple[int, ...], expand: list[int] | None) -> PendingIsr:
    """Partition.sendAlterIsrRequest: the partition is pending (PendingExpandIsr with the
    replica it adds, or PendingShrinkIsr) until the answer or a new leader epoch."""
    pending = PendingIsr(isr, expand[0] if expand else None)
    replica.pending_isr = pending
    return pending


def handle_response(broker: Any, emit: Any, replica: Replica, pending: PendingIsr,
                    request: AlterPartitionRequest, error: int, answer: Answer | None) -> bool:
    """Partition.handleAlterIsrResponse for one partition; True when the change must be sent
    again. An answer to a change no longer pending (a LeaderAndIsr or the metadata log came
    first) is ignored."""
    if replica.pending_isr is not pending or replica.role is not Role.LEADER:
        return False
    key = replica.key
    if error:
        emit(names.ALTER_PARTITION_REJECTED, broker=broker.id, topic=key[0], partition=key[1],
             error_code=error, error=ERROR_NAMES.get(error, str(error)),
             isr=list(request.new_isr), leader_epoch=request.leader_epoch,
             partition_epoch=request.partition_epoch)
        if error in _RESET:
            replica.pending_isr = None
            return False
        return error not in _GIVE_UP
    assert answer is not None
    leader_epoch, isr, version = answer
    # A version below the leader's own is stale; one equal to it is the controller's answer
    # for an ISR already in place (processAlterIsr, equalsIgnoreZk), which 2.7.0–2.8.0 ignore
    # as stale too (`leaderAndIsr.zkVersion <= zkVersion`) and 3.0.0, 2.7.2 and 2.8.1 take
    # (KAFKA-12751, Partition.handleAlterIsrResponse). Ignored, the change stays pending until
    # the next LeaderAndIsr.
    newest = replica.zk_version if broker.config.alter_isr_takes_same_version else (
        replica.zk_version + 1)
    if leader_epoch != replica.leader_epoch or version < newest:
        return False
    rm = broker.replica_manager
    rm.set_isr(replica, isr)
    replica.zk_version = version
    replica.pending_isr = None
    if broker.config.hw_on_alter_isr_response:  # 3.1+ (KAFKA-13091)
        rm.maybe_advance_hw(replica)
    return False


# -- the controller's side (KafkaController.processAlterIsr) -------------------------------------
def process_alter_isr(controller: Any, broker_id: int, broker_epoch: int,
                      requests: list[AlterPartitionRequest],
                      ) -> tuple[int, dict[TopicPartition, tuple[int, Answer | None]]]:
    """The controller's answer to one AlterIsr request: a top-level error, or per partition
    (error, (leader epoch, ISR, version)). Accepted changes are written to ZooKeeper and sent
    to every live broker in UpdateMetadata before the answer goes out."""
    cluster = controller.cluster
    zk = cluster.zk
    kip_841 = cluster.variant.broker_config(controller.broker).alter_partition_ineligible
    if not controller.active:
        return NOT_CONTROLLER, {}
    if broker_id not in controller.live or zk.sessions.get(broker_id) != broker_epoch:
        return STALE_BROKER_EPOCH, {}
    results: dict[TopicPartition, tuple[int, Answer | None]] = {}
    for request in requests:
        key = request.key
        state = zk.partitions.get(key)
        if state is None:
            results[key] = (UNKNOWN_TOPIC_OR_PARTITION, None)
        elif request.leader_epoch < state.leader_epoch:
            results[key] = (FENCED_LEADER_EPOCH, None)
        elif (request.broker, request.leader_epoch, request.new_isr) == (
                state.leader, state.leader_epoch, state.isr):
            results[key] = (NONE, (state.leader_epoch, state.isr, state.version))
        elif kip_841 and any(b not in controller.electable for b in request.new_isr):
            results[key] = (INELIGIBLE_REPLICA, None)  # liveBrokerIds: live, not shutting down
        else:
            before = state.isr
            version = zk.update_isr(key, request.leader_epoch, request.new_isr,
                                    request.partition_epoch, writer="controller")
            if version is None:
                results[key] = (INVALID_UPDATE_VERSION, None)
                continue
            results[key] = (NONE, (request.leader_epoch, request.new_isr, version))
            removed = [b for b in before if b not in request.new_isr]
            added = [b for b in request.new_isr if b not in before]
            if removed:
                cluster.log.emit(names.ISR_SHRINK, topic=key[0], partition=key[1],
                                 leader=broker_id, isr=list(request.new_isr), removed=removed,
                                 by="leader")
            if added:
                cluster.log.emit(names.ISR_EXPAND, topic=key[0], partition=key[1],
                                 leader=broker_id, isr=list(request.new_isr), added=added)
    controller.update_metadata([r.key for r in requests])
    return NONE, results


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
            plane.send(target, broker.id, REQUEST_BYTES + PARTITION_BYTES * len(results),
                       lambda: self._answered(broker, channel, items, token, top, results),
                       reliable=True)

        if not node.alive:
            # A connection to a process that is gone: refused after a round trip when its
            # machine is up, the setup timeout when its machine is down (power loss).
            delay_ms = (CONNECTION_SETUP_TIMEOUT_MS if node.machine_down
                        else 2 * plane.link_latency_ms(broker.id, target))
            broker.schedule(max(1, round(delay_ms * 1000)),
                            lambda: self._disconnected(broker, channel, token))
            return
        plane.send(broker.id, target, REQUEST_BYTES + PARTITION_BYTES * len(items),
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
