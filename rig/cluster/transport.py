"""The wire between nodes: every message of the model goes through `Transport.send`.

A message is delivered only if, when it arrives, its destination is up, is the same incarnation
it was sent to (a restart resets connections), and no network partition separates the two.
A stalled broker (a GC pause) sends nothing and receives its messages when the stall ends.

The wire also keeps a ledger of the bytes it carried that no event logs one by one: per
(source, destination, kind), where kind is "produce" (produce requests and responses) or
"control" (everything else but fetches, which their own events log). The cluster logs it at the
end of the run (`net.traffic`) for the traffic ledger (rig.analysis.traffic).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Protocol

from rig.cluster.network import Network, Node
from rig.engine import Simulation

# How often a reliable message (a ZooKeeper watch, a controller request) is tried again while
# the link is cut: the reconnect backoff of ZooKeeper's client and the controller's channel.
RESEND_MS = 100


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

    def _incarnation(self, node: Node) -> int:
        broker = self._brokers.get(node) if isinstance(node, int) else None
        return broker.incarnation if broker is not None else 0

    def _up(self, node: Node) -> bool:
        broker = self._brokers.get(node) if isinstance(node, int) else None
        if broker is not None:
            return broker.alive
        return node not in self._control_nodes or self._node_alive(node)

    def send(self, src: Node, dst: Node, nbytes: int, deliver: Callable[[], None], *,
             reliable: bool = False, kind: str = "control") -> None:
        """Carry a message of `nbytes` from `src` to `dst`; `deliver` runs on arrival.

        A message meeting a cut link or a lossy one is lost, unless `reliable`: then it is
        sent again every RESEND_MS while both ends live, as ZooKeeper re-delivers a watch to
        a client that reconnects within its session and the controller's channel retries a
        request until it gets through (each end's incarnation must stay the same: a restarted
        process starts a new conversation). `kind` files its bytes in the ledger ("fetch":
        not filed, the fetch events log each one)."""
        brokers = self._brokers
        sender = brokers.get(src) if isinstance(src, int) else None
        if sender is not None:
            if not sender.alive:
                return
            if sender.stalled:
                # A paused process sends nothing (its purgatory timers fire into the pause
                # too): the message leaves when the stall ends.
                self._stalled_outbox.setdefault(sender.id, []).append(
                    lambda: self.send(src, dst, nbytes, deliver, reliable=reliable, kind=kind))
                return
        elif src in self._control_nodes and not self._node_alive(src):
            return
        receiver = brokers.get(dst) if isinstance(dst, int) else None
        incarnation = receiver.incarnation if receiver is not None else 0
        if kind != "fetch":
            filed = self.traffic.get((src, dst, kind))
            if filed is None:
                filed = self.traffic[(src, dst, kind)] = [0, 0]
            filed[0] += nbytes
            filed[1] += 1
        arrival = self.network.arrival_us(src, dst, nbytes, self.sim.now_us)
        resend = (self._resender(src, dst, nbytes, deliver, incarnation, kind) if reliable
                  else None)
        if arrival is None:  # lost on a lossy link
            if resend is not None:
                self.sim.call_after(RESEND_MS * 1000, resend)
            return
        self.sim.call_at(arrival, partial(self._arrival, src, dst, deliver, receiver,
                                          incarnation, resend))

    def _resender(self, src: Node, dst: Node, nbytes: int, deliver: Callable[[], None],
                  incarnation: int, kind: str) -> Callable[[], None]:
        """What sends a reliable message again, while both ends are the processes it was
        between."""
        source_incarnation = self._incarnation(src)

        def resend() -> None:
            if (self._up(src) and self._incarnation(src) == source_incarnation
                    and self._up(dst) and self._incarnation(dst) == incarnation):
                self.send(src, dst, nbytes, deliver, reliable=True, kind=kind)

        return resend

    def deliver_at(self, arrival_us: int, src: Node, dst: Node, deliver: Callable[[], None],
                   sent_us: int) -> None:
        """A message sent at `sent_us` in closed form (a coasting fetch round, which kept the
        link busy itself) arrives at `arrival_us` under the rules of `send`."""
        receiver = self._brokers.get(dst) if isinstance(dst, int) else None
        self.sim.call_at(arrival_us, partial(self._arrival, src, dst, deliver, receiver,
                                             self._incarnation(dst), None),
                         scheduled_us=sent_us)

    def _arrival(self, src: Node, dst: Node, deliver: Callable[[], None],
                 receiver: Endpoint | None, incarnation: int,
                 resend: Callable[[], None] | None) -> None:
        """A message reaches `dst` (`receiver`: the broker it is, None for another node): it
        is delivered if `dst` still runs as `incarnation` and no cut separates the two ends."""
        if receiver is not None:
            if not receiver.alive or receiver.incarnation != incarnation:
                return
        elif not self._up(dst):
            return
        network = self.network
        if network.cuts and network.blocked(src, dst):  # (asked only while a link is cut)
            if resend is not None:
                self.sim.call_after(RESEND_MS * 1000, resend)
            return
        if receiver is not None and receiver.stalled:
            self._stalled_mail.setdefault(receiver.id, []).append(deliver)
            return
        deliver()

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
