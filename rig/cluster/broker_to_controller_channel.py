"""A broker's channel to the controller: Kafka's BrokerToControllerChannelManager (3.7+
NodeToControllerChannelManager) with its one BrokerToControllerRequestThread, an
InterBrokerSendThread. A broker's AlterPartition queue (rig.cluster.alter_partition_manager:
ZooKeeper mode at inter.broker.protocol.version 2.7+, and KRaft) sends through one, and a KRaft
broker's lifecycle (rig.cluster.kraft.broker_lifecycle) through its "heartbeat" channel, one
request at a time.

- The request goes to the controller the channel has cached (activeController), which it takes
  from the broker's ControllerNodeProvider: in ZooKeeper mode the metadata cache's controller id,
  if that broker is alive in it (none: it looks again every 100 ms); in KRaft the Raft leader
  the broker knows. A NOT_CONTROLLER answer or a request failed as disconnected clears the cache
  and puts the request first again: it goes to the controller the provider names then (in
  ZooKeeper mode the old one until the new controller's UpdateMetadata arrives). A new
  controller is learnt only so.
- Its NetworkClient (rig.cluster.client_connections; the same in every release) reconnects
  after a constant 50 ms and gives a request controller.socket.timeout.ms (InterBrokerSendThread's
  requestTimeoutMs), in flight (then its connection closes: handleTimedOutRequests) or waiting
  unsent for its connection (failExpiredRequests: it fails as disconnected while the attempt
  goes on). A dead process's machine refuses the connection a round trip later, and a reset
  closes a connection open to it; a machine without power answers nothing: a request written
  on a connection open before the power loss waits its timeout, a new connection is given up at
  socket.connection.setup.timeout.ms (10 s doubling per failure in a row, ±20 %; 2.7: up to
  127 s, 2.8+: 30 s) or made by the first SYN its restarted broker answers
  (rig.cluster.connection_states). rig before 2026-11-30 gave up on a powered-off controller
  after a flat 10 s, whatever was open.
- A channel with a retry timeout (the heartbeat channel's) gives a request up once it has been
  that long since it was sent, when it comes to be sent again (generateRequests: after an
  attempt failed, or at a look for a controller), and says so (onTimeout); its attempts may
  wait less than controller.socket.timeout.ms (KAFKA-14392). A request given up closed its
  connection: whatever of it had not arrived by then never does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rig.cluster.client_connections import ClientConnections
from rig.protocol.errors import NOT_CONTROLLER
from rig.scenario.client_config import RECONNECT_BACKOFF_MS

CONTROLLER_POLL_MS = 100  # BrokerToControllerRequestThread.doWork, no controller known

# At the node the request reached: (that node, reply(top error, answer bytes, result)).
Handler = Callable[[Any, Callable[[int, int, Any], None]], None]
Answered = Callable[[int, Any], None]  # (top error, result): the answer, NOT_CONTROLLER aside


@dataclass(frozen=True)
class _Request:
    """NodeToControllerQueueItem: a request, what answers it, and when it was sent."""

    nbytes: int
    handle: Handler
    answered: Answered
    timed_out: Callable[[], None] | None
    created_us: int


class BrokerToControllerChannel:
    """One broker process's channel: the controller it sends to, the request under way (queued
    for a controller, waiting for a connection, or written), and its NetworkClient."""

    def __init__(self, plane: Any, broker: Any, controller: Callable[[], Any],
                 nodes: Any = None, name: str = "", retry_timeout_ms: int | None = None,
                 request_timeout_ms: int | None = None):
        """`controller()`: the node the provider names now (None: none); `nodes`: what the
        connections see of the nodes they reach (sim, network, streams, variant and `brokers`,
        the nodes by id), the plane unless the controllers are not brokers; `name`: the
        channel's (a broker's AlterPartition channel has none); `retry_timeout_ms`: how long
        after it was sent a request is given up (None: never); `request_timeout_ms`: how long
        an attempt waits (None: controller.socket.timeout.ms)."""
        self.plane = plane
        self.broker = broker
        self._controller = controller
        self.incarnation = broker.incarnation
        self.target: Any = None  # activeController (None: ask the provider)
        self.sent = 0  # attempts: an answer to an older one (re-sent since) is ignored
        self.waiting = 0  # the attempt waiting unsent for its connection
        self._request: _Request | None = None
        self._polling = False  # no controller known: a look again is scheduled
        self._retry_timeout_us = None if retry_timeout_ms is None else retry_timeout_ms * 1000
        self.request_timeout_ms = (request_timeout_ms if request_timeout_ms is not None
                                   else broker.config.controller_socket_timeout_ms)
        client = f"broker-{broker.id}-to-controller" + (f"-{name}" if name else "")
        self.network = ClientConnections(nodes or plane, broker.id, client, RECONNECT_BACKOFF_MS,
                                         plane.streams.get(client), self._connect_failed,
                                         self._connectable)
        plane.watch_connections(self)

    @property
    def node(self) -> int:
        return int(self.broker.id)

    @property
    def stopped(self) -> bool:
        """The process this channel belonged to is gone (the cluster stops telling it of
        connection resets)."""
        return self.incarnation != self.broker.incarnation or not self.broker.alive

    def send(self, nbytes: int, handle: Handler, answered: Answered,
             timed_out: Callable[[], None] | None = None) -> None:
        """Send a request of `nbytes` (one at a time: max.in.flight 1): `handle` runs at the
        node it reaches, `answered` when its answer is back, `timed_out` if the channel gives
        it up (its retry timeout)."""
        self._request = _Request(nbytes, handle, answered, timed_out, self.network.sim.now_us)
        self._send()

    def connection_reset(self, dead: int) -> None:
        """`dead`'s process died (its machine is up): the connection to it closes, and a
        request written on it fails now."""
        if self.stopped or dead not in self.network.states.open:
            return
        self.network.disconnected(dead)
        if self._request is not None and self.target == dead and not self.waiting:
            self._disconnected(self.sent)

    # -- internals -------------------------------------------------------------------------
    def _live(self) -> bool:
        return self.incarnation == self.broker.incarnation and self.broker.alive

    def _send(self) -> None:
        """generateRequests and doWork: a request past its retry timeout is given up;
        otherwise the cached controller, or first the provider's, and the request goes if its
        connection takes it now."""
        broker, request = self.broker, self._request
        if not self._live() or request is None:
            return
        retry = self._retry_timeout_us
        if retry is not None and self.network.sim.now_us - request.created_us >= retry:
            self._request = None
            if request.timed_out is not None:
                request.timed_out()
            return
        if self.target is None:
            controller = self._controller()
            if controller is None:
                if not self._polling:
                    self._polling = True
                    broker.schedule(CONTROLLER_POLL_MS * 1000, self._poll)
                return
            self.target = controller
        self.sent += 1
        token = self.sent
        if not self.network.ready(self.target):
            # InterBrokerSendThread.sendRequests: unsent until its connection takes it (made,
            # or the reconnect backoff over: _connectable); failExpiredRequests fails it as
            # disconnected after its timeout, the connection attempt going on.
            self.waiting = token
            broker.schedule(self.request_timeout_ms * 1000, lambda: self._expired(token))
            return
        self._write(token)

    def _poll(self) -> None:
        """doWork's poll of 100 ms without a controller is over: look again."""
        self._polling = False
        if self.target is None:
            self._send()

    def _write(self, token: int) -> None:
        plane, broker, target = self.plane, self.broker, self.target
        request = self._request
        assert request is not None and target is not None
        handle, answered = request.handle, request.answered

        def reply(top: int, answer_bytes: int, result: Any) -> None:
            plane.send(target, broker.id, answer_bytes,
                       lambda: self._answered(token, top, result, answered), reliable=True)

        def arrives() -> None:
            # A request given up closed its connection: what TCP had not delivered by then
            # goes with it (the transport would otherwise carry it after a healed cut). One
            # written before its process died still arrives, as the bytes sent do.
            if token == self.sent:
                handle(target, reply)

        plane.send(broker.id, target, request.nbytes, arrives, reliable=True)
        # No answer (a network partition, a stalled or powered-off controller): the request
        # times out and its connection is closed (NetworkClient.handleTimedOutRequests).
        broker.schedule(self.request_timeout_ms * 1000,
                        lambda: self._disconnected(token, timed_out=True))

    def _answered(self, token: int, top: int, result: Any, answered: Answered) -> None:
        if self.incarnation != self.broker.incarnation or token != self.sent:
            return
        if top == NOT_CONTROLLER:
            # handleResponse: disconnect from it, forget it, and put the request first again;
            # doWork then asks the provider (the same node until the broker learns of another:
            # again after the reconnect backoff).
            assert self.target is not None
            self.network.disconnected(self.target)
            self._forget_controller()
            self._send()
            return
        self._request = None
        answered(top, result)

    def _connectable(self) -> None:
        """A connection was made, or a reconnect backoff ended: a waiting request goes if its
        connection takes it now."""
        token = self.waiting
        if (token and token == self.sent and self._live() and self.target is not None
                and self.network.ready(self.target)):
            self.waiting = 0
            self._write(token)

    def _connect_failed(self, node: int) -> None:
        """The connection to `node` failed (refused, or given up): a request waiting for it
        fails as disconnected (InterBrokerSendThread.checkDisconnects)."""
        if self.waiting and self.target == node:
            self._disconnected(self.waiting)

    def _expired(self, token: int) -> None:
        if self.waiting == token:
            self._disconnected(token)

    def _disconnected(self, token: int, timed_out: bool = False) -> None:
        """The request failed as disconnected (ClientResponse.wasDisconnected; a request that
        timed out closes its connection first): forget the controller and send the request
        again first (handleResponse: putFirst)."""
        if (self.incarnation != self.broker.incarnation or token != self.sent
                or self._request is None):
            return
        if timed_out and self.target is not None:
            self.network.disconnected(self.target)
        self._forget_controller()
        self._send()

    def _forget_controller(self) -> None:
        self.target = None
        self.waiting = 0
        self.sent += 1  # a late answer on the dropped connection is not read


__all__ = ["BrokerToControllerChannel"]
