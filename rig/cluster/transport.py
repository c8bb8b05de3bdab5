"""The wire between nodes: every message of the model goes through `Transport.send`.

A message is delivered only if, when it arrives, its destination is up, is the same incarnation
it was sent to (a restart resets connections), and no network partition separates the two.
A stalled broker (a GC pause) sends nothing and receives its messages when the stall ends.

Kafka's connections are TCP: a message the network drops (a cut link, a lossy one) is sent
again when the connection's retransmission timer fires, RTO_MIN_MS after it went and doubling
each time (RFC 6298 §5.5; Linux's 200 ms floor, which a data-centre round trip never lifts), and
what the connection carried after it waits behind it, in order. A Kafka client closes a
connection whose request has waited request.timeout.ms (30 s by default): what is not through
by then goes with it. ZooKeeper's client handles its own connection (sessions, reconnects:
`reliable` below), so its traffic is left out. Simplified: a lost message waits for the timer
(no fast retransmit), and retransmitted bytes are not filed in the ledger.

The wire also keeps a ledger of the bytes it carried that no event logs one by one: per
(source, destination, kind), where kind is "produce" (produce requests and responses) or
"control" (everything else but fetches, which their own events log). The cluster logs it at the
end of the run (`net.traffic`) for the traffic ledger (rig.analysis.traffic).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import NamedTuple, Protocol

from rig.cluster.in_order import InOrder
from rig.cluster.network import Network, Node
from rig.cluster.zookeeper import NODE as ZOOKEEPER
from rig.engine import Simulation

# How often a reliable message (a ZooKeeper watch, a controller request) is tried again while
# the link is cut: the reconnect backoff of ZooKeeper's client and the controller's channel.
RESEND_MS = 100
RTO_MIN_MS = 200  # TCP's first retransmission timeout (Linux TCP_RTO_MIN)
RTO_MAX_MS = 120_000  # … and its ceiling (TCP_RTO_MAX)
CONNECTION_TIMEOUT_MS = 30_000  # request.timeout.ms / replica.socket.timeout.ms defaults


class _Unacked(NamedTuple):
    """A message TCP must send again, with what delivering it needs."""

    nbytes: int
    deliver: Callable[[], None]
    receiver: Endpoint | None
    incarnation: int  # the receiver's, when it was sent
    source_incarnation: int
    sent_us: int


class _Backlog:
    """One direction of a connection waiting for its retransmission timer: its unacknowledged
    messages, oldest first, and the timeout it backs off."""

    __slots__ = ("queue", "rto_us")

    def __init__(self) -> None:
        self.queue: list[_Unacked] = []
        self.rto_us = RTO_MIN_MS * 1000


class Endpoint(Protocol):
    """A broker as the wire sees it."""

    id: int
    alive: bool
    stalled: bool
    incarnation: int


class Transport:
    def __init__(self, sim: Simulation, network: Network, brokers: Mapping[int, Endpoint],
                 control_nodes: Iterable[Node], node_alive: Callable[[Node], bool]):
        self.sim = sim
        self.network = network
        self._brokers = brokers
        # The control plane's own nodes (ZooKeeper, dedicated controllers) can be down; a
        # client's node always is up, so a client's message asks nobody.
        self._control_nodes = frozenset(control_nodes)
        self._node_alive = node_alive
        self._stalled_mail: dict[int, list[Callable[[], None]]] = {}
        self._stalled_outbox: dict[int, list[Callable[[], None]]] = {}
        # (src, dst, kind) → [bytes, messages] put on the wire, fetches left out.
        self.traffic: dict[tuple[Node, Node, str], list[int]] = {}
        # (src, dst) → what TCP must send again on it (absent: nothing).
        self._backlogs: dict[tuple[Node, Node], _Backlog] = {}
        self._in_order = InOrder()  # reliable messages between two Kafka processes

    def _incarnation(self, node: Node) -> int:
        broker = self._brokers.get(node) if isinstance(node, int) else None
        return broker.incarnation if broker is not None else 0

    def _up(self, node: Node) -> bool:
        broker = self._brokers.get(node) if isinstance(node, int) else None
        if broker is not None:
            return broker.alive
        return node not in self._control_nodes or self._node_alive(node)

    def send(self, src: Node, dst: Node, nbytes: int, deliver: Callable[[], None], *,
             reliable: bool = False, kind: str = "control", sequenced: bool = False,
             resent: bool = False) -> None:
        """Carry a message of `nbytes` from `src` to `dst`; `deliver` runs on arrival.

        A message meeting a cut link or a lossy one is sent again by TCP between Kafka
        processes (the module's docstring); if `reliable`, every RESEND_MS while both ends
        live, as ZooKeeper re-delivers a watch to a client that reconnects within its session
        and the controller's channel retries a request until it gets through (each end's
        incarnation must stay the same: a restarted process starts a new conversation), and
        between two Kafka processes delivered in the order sent (rig.cluster.in_order); else,
        to or from ZooKeeper, it is lost. `kind` files its bytes in the ledger ("fetch": not
        filed, the fetch events log each one). `sequenced`: a reliable message sent again,
        its place in the order taken already; `resent`: … because a cut or a lossy link
        stopped it (its bytes were filed when it was first sent, as TCP's retransmissions are
        not filed again; rig before 2026-11-30 filed each try)."""
        if (reliable and not sequenced and src != ZOOKEEPER and dst != ZOOKEEPER
                and self._up(src) and self._up(dst)):  # (a dead process's: never arrives)
            deliver = self._in_order.wrap(
                (src, dst, self._incarnation(src), self._incarnation(dst)), deliver)
        brokers = self._brokers
        sender = brokers.get(src) if isinstance(src, int) else None
        if sender is not None:
            if not sender.alive:
                return
            if sender.stalled:
                # A paused process sends nothing (its purgatory timers fire into the pause
                # too): the message leaves when the stall ends.
                self._stalled_outbox.setdefault(sender.id, []).append(
                    lambda: self.send(src, dst, nbytes, deliver, reliable=reliable, kind=kind,
                                      sequenced=True))
                return
        elif src in self._control_nodes and not self._node_alive(src):
            return
        receiver = brokers.get(dst) if isinstance(dst, int) else None
        incarnation = receiver.incarnation if receiver is not None else 0
        if kind != "fetch" and not resent:
            filed = self.traffic.get((src, dst, kind))
            if filed is None:
                filed = self.traffic[(src, dst, kind)] = [0, 0]
            filed[0] += nbytes
            filed[1] += 1
        tcp = not reliable and src != ZOOKEEPER and dst != ZOOKEEPER
        if tcp and self._backlogs and (src, dst) in self._backlogs:
            # An earlier message waits to be sent again: this one goes after it, in order.
            self._backlogs[(src, dst)].queue.append(_Unacked(
                nbytes, deliver, receiver, incarnation, self._incarnation(src), self.sim.now_us))
            return
        arrival = self.network.arrival_us(src, dst, nbytes, self.sim.now_us)
        resend = (self._resender(src, dst, nbytes, deliver, incarnation, kind) if reliable
                  else None)
        if arrival is None:  # lost on a lossy link
            if resend is not None:
                self.sim.call_after(RESEND_MS * 1000, resend)
            elif tcp:
                self._lost(src, dst, _Unacked(nbytes, deliver, receiver, incarnation,
                                              self._incarnation(src), self.sim.now_us))
            return
        self.sim.call_at(arrival, partial(self._arrival, src, dst, deliver, receiver,
                                          incarnation, resend,
                                          (nbytes, self.sim.now_us) if tcp else None))

    def backlogged(self, src: Node, dst: Node) -> bool:
        """Whether TCP holds messages from `src` to `dst` behind one waiting to be sent again
        (a later message, sent now, would wait for its retransmission)."""
        return (src, dst) in self._backlogs

    def _resender(self, src: Node, dst: Node, nbytes: int, deliver: Callable[[], None],
                  incarnation: int, kind: str) -> Callable[[], None]:
        """What sends a reliable message again, while both ends are the processes it was
        between."""
        source_incarnation = self._incarnation(src)

        def resend() -> None:
            if (self._up(src) and self._incarnation(src) == source_incarnation
                    and self._up(dst) and self._incarnation(dst) == incarnation):
                self.send(src, dst, nbytes, deliver, reliable=True, kind=kind, sequenced=True,
                          resent=True)

        return resend

    def deliver_at(self, arrival_us: int, src: Node, dst: Node, deliver: Callable[[], None],
                   sent_us: int, nbytes: int) -> None:
        """A TCP message of `nbytes` sent at `sent_us` in closed form (a coasting fetch round,
        which kept the link busy itself) arrives at `arrival_us` under the rules of `send`: a
        cut met on arrival makes TCP send it again, as it does the messages `send` sent."""
        receiver = self._brokers.get(dst) if isinstance(dst, int) else None
        self.sim.call_at(arrival_us, partial(self._arrival, src, dst, deliver, receiver,
                                             self._incarnation(dst), None, (nbytes, sent_us)),
                         scheduled_us=sent_us)

    def _arrival(self, src: Node, dst: Node, deliver: Callable[[], None],
                 receiver: Endpoint | None, incarnation: int,
                 resend: Callable[[], None] | None, tcp: tuple[int, int] | None) -> None:
        """A message reaches `dst` (`receiver`: the broker it is, None for another node): it
        is delivered if `dst` still runs as `incarnation` and no cut separates the two ends; a
        TCP message (`tcp`: its size and when it was sent) a cut stopped is sent again."""
        if receiver is not None:
            if not receiver.alive or receiver.incarnation != incarnation:
                return
        elif not self._up(dst):
            return
        network = self.network
        if network.cuts and network.blocked(src, dst):  # (asked only while a link is cut)
            if resend is not None:
                self.sim.call_after(RESEND_MS * 1000, resend)
            elif tcp is not None and self._up(src):
                self._lost(src, dst, _Unacked(tcp[0], deliver, receiver, incarnation,
                                              self._incarnation(src), tcp[1]))
            return
        if receiver is not None and receiver.stalled:
            self._stalled_mail.setdefault(receiver.id, []).append(deliver)
            return
        deliver()

    def _lost(self, src: Node, dst: Node, unacked: _Unacked) -> None:
        """TCP will send `unacked` again when the connection's retransmission timer fires."""
        backlog = self._backlogs.get((src, dst))
        if backlog is None:
            backlog = self._backlogs[(src, dst)] = _Backlog()
            self._arm(src, dst, backlog, unacked.sent_us + backlog.rto_us, unacked.sent_us)
        queue = backlog.queue
        queue.append(unacked)
        if len(queue) > 1 and queue[-2].sent_us > unacked.sent_us:
            # It was in flight when the backlog began and later sends queued: the connection
            # keeps the order they were sent in.
            queue.sort(key=lambda m: m.sent_us)

    def _arm(self, src: Node, dst: Node, backlog: _Backlog, at_us: int, oldest_us: int) -> None:
        """The next retransmission, or the client's timeout on the oldest message if sooner."""
        at_us = min(at_us, oldest_us + CONNECTION_TIMEOUT_MS * 1000)
        self.sim.call_at(max(self.sim.now_us, at_us), partial(self._retransmit, src, dst))

    def _retransmit(self, src: Node, dst: Node) -> None:
        """The timer fired. If the oldest message has waited the client's request timeout, the
        client has closed the connection: everything it carried is gone (NetworkClient fails
        every request in flight on it). Else the backlog goes again in order, unless the link
        is still cut or a message is lost again (then back off)."""
        now = self.sim.now_us
        backlog = self._backlogs[(src, dst)]
        queue = [m for m in backlog.queue if self._carried(src, dst, m)]
        if queue and now - queue[0].sent_us >= CONNECTION_TIMEOUT_MS * 1000:
            queue = []
        blocked = bool(queue) and self.network.blocked(src, dst)
        for i, message in enumerate(queue):
            arrival = None if blocked else self.network.arrival_us(src, dst, message.nbytes, now)
            if arrival is None:
                backlog.queue = queue[i:]
                backlog.rto_us = min(2 * backlog.rto_us, RTO_MAX_MS * 1000)
                self._arm(src, dst, backlog, now + backlog.rto_us, queue[0].sent_us)
                return
            self.sim.call_at(arrival, partial(self._arrival_again, src, dst, message))
        del self._backlogs[(src, dst)]

    def _carried(self, src: Node, dst: Node, message: _Unacked) -> bool:
        """Whether the connection still carries `message`: both ends the processes it was
        between (a restart resets it)."""
        return (self._up(src) and self._incarnation(src) == message.source_incarnation
                and self._up(dst) and self._incarnation(dst) == message.incarnation)

    def _arrival_again(self, src: Node, dst: Node, message: _Unacked) -> None:
        """A message sent again arrives: as any other, but its age counts from its first send."""
        if self.network.cuts and self.network.blocked(src, dst) and self._up(src):
            self._lost(src, dst, message)
            return
        self._arrival(src, dst, message.deliver, message.receiver, message.incarnation, None,
                      None)

    def stall_ended(self, broker_id: int) -> None:
        """Broker `broker_id` runs again: what it sent leaves, then what it received arrives."""
        for send in self._stalled_outbox.pop(broker_id, []):
            send()
        mail = self._stalled_mail.pop(broker_id, [])
        for deliver in mail:
            deliver()

    def forget(self, broker_id: int) -> None:
        """Broker `broker_id`'s process died: what waited for its stall to end goes with it."""
        self._stalled_mail.pop(broker_id, None)
        self._stalled_outbox.pop(broker_id, None)

    def after_stall(self, broker_id: int, action: Callable[[], None]) -> None:
        """Run `action` when broker `broker_id`'s stall ends (work its paused threads would have
        done)."""
        self._stalled_mail.setdefault(broker_id, []).append(action)
