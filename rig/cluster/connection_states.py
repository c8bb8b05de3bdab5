"""A client's connections to the brokers, as far as a dead broker makes them matter: Kafka's
ClusterConnectionStates, one per NetworkClient (a replica fetcher thread's own, a consumer's).

A request to a broker goes out at once on an open connection, or on a new one to a live process
(rig models no TCP or ApiVersions handshake). Otherwise what the client meets depends on how the
broker died:

- Its process died and its machine runs: the kernel answers the SYN (or a write on the old
  connection) with a reset, and the client sees the connection fail a round trip later.
- Its machine lost power: nothing answers. A connection open before the power loss stays open
  (no reset comes), so a request written on it waits for its request timeout. A new connection
  waits for a SYN-ACK. Linux sends the SYN again after 1, 3, 7, 15, 31 and 63 s (initial RTO
  1 s, doubled; net.ipv4.tcp_syn_retries = 6) and gives up at 127 s: a machine whose broker is
  listening again by one of those SYNs accepts it. The client gives up sooner from 2.7
  (KIP-601, KAFKA-9893: NetworkClient.handleTimedOutConnections) at
  socket.connection.setup.timeout.ms, 10 s, which doubles with each failed attempt in a row to
  that node up to socket.connection.setup.timeout.max.ms (127 s in 2.7, 30 s from 2.8:
  apache/kafka#10306), drawn ±20 % (ExponentialBackoff's jitter; rig.backoff); a connection
  made, or an open one closed, starts the count again (ClusterConnectionStates.ready,
  .disconnected from READY: resetConnectionSetupTimeout). A client may give up sooner still on
  its own (a replica fetcher's awaitReady at replica.socket.timeout.ms; rig.cluster.fetcher).

A network partition between the client and the broker is met the same way: a connection open
before the cut stays open (its packets are TCP's to send again: rig.cluster.transport), and a
new one waits for a SYN to cross — the SYNs sent again as above, the first after the heal
answered (a SYN-ACK from a live broker, a reset from a dead one's running machine), unless the
client gives up first. rig before 2026-11-30 made a new connection across a cut at once.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from rig.backoff import ExponentialBackoff
from rig.cluster.network import Network, Node
from rig.engine import Simulation
from rig.engine.rng import Streams
from rig.scenario.profiles import profile

OS_CONNECT_TIMEOUT_MS = 127_000  # Linux: the last SYN (at 63 s) is given up 64 s later
SYN_SENT_AT_MS = (0, 1_000, 3_000, 7_000, 15_000, 31_000, 63_000)


class Target(Protocol):
    """A broker as a connection reaches it."""

    alive: bool
    machine_down: bool  # after a power loss, until the restart


class Host(Protocol):
    sim: Simulation
    network: Network
    streams: Streams
    variant: Any  # the scenario's variant (its `kafka` release)

    @property
    def brokers(self) -> Mapping[int, Target]: ...


class _Attempt:
    """A connection being made to a machine that answers nothing, and the requests waiting for
    it: (connected, failed) callbacks."""

    __slots__ = ("waiters",)

    def __init__(self) -> None:
        self.waiters: list[tuple[Callable[[], None], Callable[[], None]]] = []


class ConnectionStates:
    """One client's connections: per broker, open or not, the attempt under way to a machine
    that lost power, and the attempts in a row that failed (failedConnectAttempts)."""

    def __init__(self, host: Host, node: Node, setup_timeout_ms: int | None,
                 setup_timeout_max_ms: int | None, rng: random.Random):
        self.host = host
        self.node = node
        self._setup = (ExponentialBackoff(setup_timeout_ms, setup_timeout_max_ms or 0, rng)
                       if setup_timeout_ms else None)
        self.open: set[int] = set()
        self.failed: dict[int, int] = {}
        self._attempts: dict[int, _Attempt] = {}

    @classmethod
    def of(cls, host: Host, node: Node, client_id: str) -> ConnectionStates:
        """A client's, with the setup timeouts of the variant's release and a random stream of
        its own for their jitter."""
        release = profile(host.variant.kafka)
        return cls(host, node, release.connection_setup_timeout_ms,
                   release.connection_setup_timeout_max_ms,
                   host.streams.get(f"connections/{client_id}"))

    def writable(self, broker_id: int, connected: Callable[[], None],
                 failed: Callable[[], None]) -> bool:
        """Whether a request to `broker_id` may be written now. If not, `failed` runs when the
        connection fails (refused, or given up) or `connected` when it is made."""
        if self.ready_now(broker_id):
            return True
        broker = self.host.brokers[broker_id]
        if broker.machine_down or self._cut(broker_id):
            if broker_id in self.open:
                return True  # written into a socket whose far end answers nothing
            attempt = self._attempts.get(broker_id) or self._attempt(broker_id)
            attempt.waiters.append((connected, failed))
            return False
        # A dead process on a running machine: reset a round trip later.
        self.open.discard(broker_id)
        self.host.sim.call_after(self.host.network.round_trip_us(self.node, broker_id),
                                 lambda: self._failed(broker_id, [failed]))
        return False

    def ready_now(self, broker_id: int) -> bool:
        """Whether `broker_id`'s process is alive and reachable, so that a request goes at
        once: on the open connection (a cut since it opened stops only its packets: TCP's to
        handle), or a new one (made now; the count of failures starts again). The hot path:
        nothing else is looked at or built."""
        if self.host.brokers[broker_id].alive:
            if broker_id not in self.open:
                if self._cut(broker_id):
                    return False
                self.open.add(broker_id)
                self.failed.pop(broker_id, None)
            return True
        return False

    def connecting(self, broker_id: int) -> bool:
        """Whether a connection to `broker_id` waits for a SYN to be answered."""
        return broker_id in self._attempts

    def disconnected(self, broker_id: int) -> None:
        """An open connection broke or timed out (NetworkClient.processDisconnection): closed;
        the next request makes a new one."""
        if broker_id in self.open:
            self.open.discard(broker_id)
            self.failed.pop(broker_id, None)

    def close(self, broker_id: int) -> None:
        """NetworkClient.close: the connection and the attempt under way are dropped, and the
        node's state with them (ClusterConnectionStates.remove: the count starts again)."""
        self.open.discard(broker_id)
        self.failed.pop(broker_id, None)
        self._attempts.pop(broker_id, None)

    # -- an attempt to a machine without power -------------------------------------------------
    def _attempt(self, broker_id: int) -> _Attempt:
        attempt = self._attempts[broker_id] = _Attempt()
        if self._setup is None:
            gives_up_ms = OS_CONNECT_TIMEOUT_MS
        else:
            gives_up_ms = self._setup.backoff_ms(self.failed.get(broker_id, 0))
        sim = self.host.sim
        latency_us = self._latency_us(broker_id)
        for at_ms in SYN_SENT_AT_MS:
            if at_ms < gives_up_ms:
                sim.call_after(at_ms * 1000 + latency_us,
                               lambda: self._syn_arrives(broker_id, attempt))
        sim.call_after(gives_up_ms * 1000, lambda: self._gave_up(broker_id, attempt))
        return attempt

    def _syn_arrives(self, broker_id: int, attempt: _Attempt) -> None:
        """A SYN reaches the machine, unless a cut stops it: its broker listening again makes
        the connection (the SYN-ACK back a one-way trip later); a running machine whose broker
        is dead refuses it so (reached once a cut heals)."""
        if self._attempts.get(broker_id) is not attempt or self._cut(broker_id):
            return
        broker = self.host.brokers[broker_id]
        if broker.alive:
            self.host.sim.call_after(self._latency_us(broker_id),
                                     lambda: self._made(broker_id, attempt))
        elif not broker.machine_down:
            self.host.sim.call_after(self._latency_us(broker_id),
                                     lambda: self._gave_up(broker_id, attempt))

    def _made(self, broker_id: int, attempt: _Attempt) -> None:
        if self._attempts.get(broker_id) is not attempt:
            return
        del self._attempts[broker_id]
        self.open.add(broker_id)
        self.failed.pop(broker_id, None)
        for connected, _ in attempt.waiters:
            connected()

    def _gave_up(self, broker_id: int, attempt: _Attempt) -> None:
        """The attempt ended without a connection (refused, or the client gave up)."""
        if self._attempts.get(broker_id) is attempt:
            del self._attempts[broker_id]
            self._failed(broker_id, [failed for _, failed in attempt.waiters])

    def _failed(self, broker_id: int, callbacks: list[Callable[[], None]]) -> None:
        """An attempt failed (refused, or given up): one more in a row."""
        self.failed[broker_id] = self.failed.get(broker_id, 0) + 1
        for failed in callbacks:
            failed()

    def _cut(self, broker_id: int) -> bool:
        """Whether a network partition separates this client from `broker_id` now (a cut is
        always both ways: Network.cut)."""
        network = self.host.network
        return bool(network.cuts) and network.blocked(self.node, broker_id)

    def _latency_us(self, broker_id: int) -> int:
        return self.host.network.base_link(self.node, broker_id).latency_us


__all__ = ["OS_CONNECT_TIMEOUT_MS", "SYN_SENT_AT_MS", "ConnectionStates"]
