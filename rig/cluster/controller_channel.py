"""The ZooKeeper-era controller's channel to each broker (Kafka's ControllerChannelManager).

The controller keeps a queue per live broker and one RequestSendThread that takes a request
from it, sends it and waits for the broker's answer (NetworkClientUtils.sendAndReceive) before
it takes the next. So a broker sees the controller's LeaderAndIsr, UpdateMetadata and
StopReplica in the order they were queued, each at least a round trip after the one before it,
and a broker that is slow to answer (a stalled one) holds back everything queued behind its
answer. Every request is answered (LeaderAndIsrResponse, UpdateMetadataResponse,
StopReplicaResponse; a stale controller epoch too, with an error and the same shape), and the
answer's bytes go on the wire.

A broker that fails leaves the channel (KafkaController.onBrokerFailure →
ControllerChannelManager.removeBroker): its queue is dropped and an answer still on its way is
ignored; the broker's next start opens a new queue (addBroker). A controller that resigns
or crashes shuts its channels down (onControllerResignation): nothing queued is sent. One whose
broker stops cleanly sends what it holds as it goes (`drain`): KafkaServer.shutdown stops the
controller only after the socket server, the request handlers and the replica manager, time
enough for queues that take a round trip a request, and rig's shutdown is one instant. Sending
again while
the link is cut is the transport's (`reliable`, RESEND_MS: the thread's 100 ms backoff).
rig's controller does nothing with an answer: what Kafka reads in one (an offline log
directory, a topic deletion's progress) rig does not model.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple


class _Request(NamedTuple):
    nbytes: int
    deliver: Callable[[], None]  # the broker's handling of it
    answer_bytes: int


class ControllerChannelManager:
    """One controller's queues to the brokers, at most one request in flight to each."""

    def __init__(self, controller: Any):
        self._controller = controller  # rig.cluster.controller.Controller
        self._queues: dict[int, deque[_Request]] = {}
        # broker → its request out: only that request's answer lets the next go, so an answer
        # from before a removal (or to a drained request) is recognised and ignored
        self._in_flight: dict[int, _Request] = {}

    def send(self, broker_id: int, nbytes: int, deliver: Callable[[], None],
             answer_bytes: int) -> None:
        """Queue a request of `nbytes` for `broker_id`, answered with `answer_bytes`."""
        self._queues.setdefault(broker_id, deque()).append(
            _Request(nbytes, deliver, answer_bytes))
        if broker_id not in self._in_flight:
            self._next(broker_id)

    def remove_broker(self, broker_id: int) -> None:
        """The broker failed: its queue goes, and an answer still to come is ignored."""
        self._queues.pop(broker_id, None)
        self._in_flight.pop(broker_id, None)

    def drain(self) -> None:
        """The controller's broker stops cleanly: every queued request goes now, in order
        behind the one in flight (the transport keeps a connection's order); the answers find
        the controller gone."""
        for broker_id, queue in sorted(self._queues.items()):
            while queue:
                self._send(broker_id, queue.popleft())

    def _next(self, broker_id: int) -> None:
        queue = self._queues.get(broker_id)
        if not queue or not self._controller.active:
            self._in_flight.pop(broker_id, None)
            return
        request = self._in_flight[broker_id] = queue.popleft()
        self._send(broker_id, request)

    def _send(self, broker_id: int, request: _Request) -> None:
        controller = self._controller
        controller.cluster.send(controller.broker, broker_id, request.nbytes,
                                partial(self._handled, broker_id, request), reliable=True)

    def _handled(self, broker_id: int, request: _Request) -> None:
        """The broker handles the request and answers it."""
        request.deliver()
        controller = self._controller
        controller.cluster.send(broker_id, controller.broker, request.answer_bytes,
                                partial(self.answered, broker_id, request), reliable=True)

    def answered(self, broker_id: int, request: _Request) -> None:
        """The broker's answer is back: the next request to it goes."""
        if self._in_flight.get(broker_id) is request:
            self._next(broker_id)


__all__ = ["ControllerChannelManager"]
