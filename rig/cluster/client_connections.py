"""Which brokers a client may write to now: Kafka's NetworkClient.ready with the reconnect
backoff of its ClusterConnectionStates (the connections themselves, and what a dead broker
does to them, are rig.cluster.connection_states). A producer's Sender (rig.workload.sender) and a
broker's channel to the controller (rig.cluster.broker_to_controller_channel) ask it.

A request goes only over a connection that takes it: open, or just made to a live process.
Otherwise the client starts a connection and the request waits (the Sender drains nothing for
that leader: its batches stay queued, no attempt counted, no request written): a dead process's
machine refuses it a round trip later, a machine without power leaves it waiting. A failed
connection is reported (a producer asks for metadata: NetworkClient.handleDisconnections, "we
got a disconnect so we should probably refresh our metadata") once its backoff is in place
(processDisconnection: ClusterConnectionStates.disconnected first), and the next attempt waits
reconnect.backoff.ms, 50 ms, doubled with each failure in a row up to reconnect.backoff.max.ms
(a producer's 1 s from 0.11, KIP-144, constant before; a broker's channels 50 ms: a constant
backoff without jitter), ±20 %; a connection that closes (reset, or a request timed out) waits
it too (ClusterConnectionStates.disconnected). Before 2026-11-29 rig's producer drained batches
for a dead leader, logged each request and failed it a round trip later with NETWORK_EXCEPTION."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from rig.backoff import ExponentialBackoff
from rig.cluster.connection_states import ConnectionStates
from rig.cluster.network import Node
from rig.scenario.client_config import RECONNECT_BACKOFF_MS


class ClientConnections:
    def __init__(self, cluster: Any, node: Node, client_id: str, reconnect_backoff_max_ms: int,
                 rng: random.Random, failed: Callable[[int], None],
                 ready_again: Callable[[], None]):
        self.sim = cluster.sim
        self.states = ConnectionStates.of(cluster, node, client_id)
        self._reconnect = ExponentialBackoff(RECONNECT_BACKOFF_MS, reconnect_backoff_max_ms,
                                             rng)
        self._failed = failed  # (the broker): what a failed connection means to the client
        self._ready_again = ready_again  # the client's loop (a producer's Sender)
        self._not_ready: set[int] = set()  # being connected to, or backing off
        self._failures: dict[int, int] = {}  # per broker: connections failed in a row
        self._waits: dict[int, int] = {}  # per broker: its latest backoff (older ones end nothing)

    def ready(self, broker: int) -> bool:
        """Whether a request may be written to `broker` now; if not, the Sender's loop runs
        again once a connection is made or its reconnect backoff ends."""
        if broker in self._not_ready:
            return False
        states = self.states
        if states.ready_now(broker) or states.writable(
                broker, lambda: self._made(broker), lambda: self._connect_failed(broker)):
            if self._failures:  # (the drain's hot path: nothing to forget, no lookup)
                self._failures.pop(broker, None)
            return True
        self._not_ready.add(broker)
        return False

    def disconnected(self, broker: int) -> None:
        """The connection to `broker` closed (its process reset it, or a request timed out)."""
        self.states.disconnected(broker)
        self._back_off(broker)

    def _made(self, broker: int) -> None:
        self._failures.pop(broker, None)
        self._not_ready.discard(broker)
        self._ready_again()

    def _connect_failed(self, broker: int) -> None:
        self._back_off(broker)  # first: the client's next look finds the broker backing off
        self._failed(broker)

    def _back_off(self, broker: int) -> None:
        failures = self._failures.get(broker, 0)
        self._failures[broker] = failures + 1
        self._not_ready.add(broker)
        wait = self._waits[broker] = self._waits.get(broker, 0) + 1

        def again() -> None:
            if self._waits[broker] == wait:
                self._not_ready.discard(broker)
                self._ready_again()

        self.sim.call_after(self._reconnect.backoff_ms(failures) * 1000, again)


__all__ = ["ClientConnections"]
