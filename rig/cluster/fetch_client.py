"""What every Fetch client shares, follower or consumer: the partitions it fetches, the fetch
session, one request in flight, the socket timeout, and the response's session fields.

Subclasses say who they are (role, replica id, node, whether their sessions are privileged)
and what a response means for them (`_apply`).
"""

from __future__ import annotations

from functools import partial
from typing import ClassVar

from rig.cluster.client_host import ClientHost
from rig.cluster.connection_states import ConnectionStates
from rig.cluster.context import Wakeable
from rig.cluster.messages import FetchRequestMsg, FetchResponseMsg, topic_runs
from rig.cluster.network import Node
from rig.cluster.partition import FetchState, TopicPartition
from rig.engine import Timer
from rig.events import names
from rig.protocol import RequestShape
from rig.strategies.fetch_session import SessionClient


class FetchClient:
    role: ClassVar[str] = ""
    privileged: ClassVar[bool] = False
    rack_id: str = ""  # client.rack, sent as the request's rack_id from Fetch v11 (KIP-392)

    def __init__(self, cluster: ClientHost, node: Node, leader_id: int, client_id: str,
                 version: int, client: SessionClient, max_wait_ms: int, min_bytes: int,
                 timeout_ms: int, backoff_ms: int, *, slot_key: tuple[int | str, int],
                 replica_id: int = -1, fetcher_id: int = 0,
                 connections: ConnectionStates | None = None):
        self.cluster = cluster
        # Its NetworkClient's connections (a consumer's fetchers share their member's)
        self.connections = connections or ConnectionStates.of(cluster, node, client_id)
        self.node = self.source = node
        self.slot_key = slot_key
        self.replica_id = replica_id
        self.fetcher_id = fetcher_id
        self.leader_id = leader_id
        self.client_id = client_id
        self.version = version
        self.client = client
        self.max_wait_ms = max_wait_ms
        self.min_bytes = min_bytes
        self.timeout_ms = timeout_ms
        self.backoff_ms = backoff_ms
        self.max_bytes = 0  # the request's max_bytes; 0: the leader's replica default
        self.partition_max_bytes = 0
        self.partitions: dict[TopicPartition, FetchState] = {}
        self.keys: dict[TopicPartition, None] = {}
        self.dirty: dict[TopicPartition, None] = {}
        self._runs: tuple[tuple[str, int], ...] | None = None
        self._keys_sent = False  # a request in flight holds `keys`: copy before changing it
        self.in_flight = False
        self.stopped = False
        self._timeout: Timer | None = None
        self._sent = 0  # requests sent; an answer to an older one is dropped
        self.sent_at_us = -1  # when the request in flight left
        self.last_sizes: tuple[int, int, int] = (0, 0, 0)  # its body, header and wire bytes
        self._shape_key: tuple[object, ...] = ()  # the last request's shape, and its sizes
        self._shape_sizes = self.last_sizes
        self.last_listed = 0  # how many partitions it listed
        self.coast: Wakeable | None = None  # idle rounds in closed form (rig.cluster.coast)
        # After a coast that ended within its first rounds, the idle rounds to simulate before
        # the next may begin (`coast_wait`), doubling while coasts keep ending early: when
        # something wakes coasts as fast as they begin, each costs more than the rounds it skips.
        self.coast_wait = self.coast_backoff = 0
        self.request_emitter = cluster.log.kind(
            names.FETCH_REQUEST, "version", "session_id", "session_epoch", "full", "partitions",
            "forgotten", "body_bytes", "header_bytes", "wire_bytes", "fetch_offsets",
            role=self.role, client=client_id, replica_id=replica_id, broker=leader_id,
            source=node, fetcher=fetcher_id)
        cluster.clients.append(self)

    # -- who is fetching (the broker reads these, and `slot_key`, `replica_id`, `fetcher_id` and
    # `source`, fixed for the client's life) ---------------------------------------------------
    @property
    def replica_epoch(self) -> int:
        """The broker epoch a follower sends (ReplicaState.ReplicaEpoch); -1 for a consumer."""
        return -1

    def up(self) -> bool:
        return True

    def may_coast(self) -> bool:
        """Whether this client's idle rounds may be advanced in closed form (a subclass that
        knows its rounds repeat says so)."""
        return False

    # -- membership ------------------------------------------------------------------------
    def _own_keys(self) -> None:
        # The request in flight keeps the partitions it was sent with (its topic runs say so).
        if self._keys_sent:
            self.keys = dict(self.keys)
            self._keys_sent = False

    def fetch(self, key: TopicPartition, state: FetchState) -> None:
        if self.coast is not None:
            self.coast.wake()
        self._own_keys()
        self.partitions[key] = state
        self.keys[key] = None
        self.dirty[key] = None
        self._runs = None

    def remove_partition(self, key: TopicPartition) -> None:
        if self.coast is not None:
            self.coast.wake()
        if self.partitions.pop(key, None) is not None:
            self._own_keys()
            del self.keys[key]
            self.dirty[key] = None  # an incremental session forgets it in the next request
            self._runs = None

    def stop(self) -> None:
        if self.coast is not None:
            self.coast.wake()
        self.stopped = True
        if self._timeout:
            self._timeout.cancel()

    # -- the loop ------------------------------------------------------------------------------
    def wake(self) -> None:
        if not self.in_flight and not self.stopped and self.up():
            self.cluster.sim.call_after(0, self.send)

    def send(self) -> None:
        if self.in_flight or self.stopped or not self.up() or not self.partitions:
            return
        self._send_fetch()

    def next_request_msg(self) -> FetchRequestMsg:
        """The next request, as the session client decides it; its sizes and listed count go to
        `last_sizes` and `last_listed`. Nothing is logged or sent."""
        session = self.client.next_request(self.keys, self.dirty, self.version)
        if self._runs is None:
            self._runs = topic_runs(self.keys)
        forgotten: tuple[tuple[str, int], ...]
        if session.full:
            runs, forgotten, listed = self._runs, (), len(self.keys)
        else:
            runs = topic_runs(session.listed or ())
            forgotten = topic_runs(session.forgotten)
            listed = len(session.listed or ())
        updates = {key: self.partitions[key] for key in self.dirty if key in self.partitions}
        self.dirty = {}
        # Idle rounds ask in the same shape round after round: its sizes are kept, and the
        # shape is built and sized (the meter's memo, keyed by the whole shape) only on a change.
        shape_key = (self.version, runs, forgotten, self.rack_id)
        if shape_key != self._shape_key:
            shape = RequestShape(self.version, runs, forgotten if self.version >= 7 else (),
                                 rack_id=self.rack_id if self.version >= 11 else "",
                                 follower=self.replica_id >= 0)
            self._shape_sizes = self.cluster.meter.request(shape, self.client_id)
            self._shape_key = shape_key
        self.last_sizes = self._shape_sizes
        self.last_listed = listed
        self._keys_sent = True
        return FetchRequestMsg(self, self.version, session, self.keys, self._runs, updates,
                               self.max_wait_ms, self.min_bytes, max_bytes=self.max_bytes,
                               partition_max_bytes=self.partition_max_bytes,
                               rack_id=self.rack_id if self.version >= 11 else "",
                               replica_epoch=self.replica_epoch if self.version >= 15 else -1)

    def _send_fetch(self) -> None:
        cluster = self.cluster
        request = self.next_request_msg()
        self.in_flight = True
        sent = self._sent = self._sent + 1
        request.request_id = sent
        self.sent_at_us = cluster.sim.now_us
        if self._refused(sent):
            # Its connection to a dead process fails: built (its session moved), never written
            # nor logged. Kafka's replica fetcher fails in NetworkClientUtils.awaitReady, the
            # consumer's request unsent (ConsumerNetworkClient.checkDisconnects).
            return
        session = request.session
        body, header, wire = self.last_sizes
        offsets = ([[key[0], key[1], state.fetch_offset] for key, state in
                    request.updates.items()],) if request.updates else ()
        self.request_emitter(self.version, session.session_id, session.epoch, session.full,
                           self.last_listed, len(session.forgotten), body, header, wire,
                           *offsets)
        cluster.send(self.node, self.leader_id, wire,
                     partial(cluster.brokers[self.leader_id].on_fetch, request), kind="fetch")
        self._arm_timeout(sent)

    def resume(self, request: FetchRequestMsg, sent_us: int, skipped: int) -> None:
        """A coast woke with `request` under way, sent at `sent_us` as the last of `skipped`
        requests it did not simulate: it is this client's request in flight from now on."""
        self.in_flight = True
        self._sent += skipped
        request.request_id = sent = self._sent
        self.sent_at_us = sent_us
        self._timeout = self.cluster.sim.at(sent_us + self.timeout_ms * 1000,
                                            lambda: self._timed_out(sent), scheduled_us=sent_us)

    def _refused(self, sent: int) -> bool:
        """Whether request `sent` cannot be written now (built, its session moved): its
        connection to the leader fails or is still being made (rig.cluster.connection_states),
        and what comes of it comes later. While a machine that answers nothing is asked (no
        power, or a cut between), the client waits its socket timeout at most
        (`_not_connected`)."""
        connections = self.connections
        if connections.ready_now(self.leader_id) or connections.writable(
                self.leader_id, lambda: self._reconnected(sent), lambda: self._timed_out(sent)):
            return False
        if connections.connecting(self.leader_id):
            self._timeout = self.cluster.sim.after(self.timeout_ms * 1000,
                                                   lambda: self._not_connected(sent))
        return True

    def _reconnected(self, sent: int) -> None:
        """The connection request `sent` waited for is made: it goes (built again)."""
        if self._drop(sent):
            self._disarm()
            self.send()

    def _not_connected(self, sent: int) -> None:
        """No connection within the socket timeout: the replica fetcher's awaitReady gives up
        and closes it (ReplicaFetcherBlockingSend.sendRequest), then backs off."""
        if sent == self._sent and self.in_flight:
            self.connections.close(self.leader_id)
        self._timed_out(sent)

    def connection_reset(self, broker: int) -> None:
        """`broker`'s process died with our request open: the client sees the reset now. (A
        reset of another node — another broker, a KRaft controller — only closes that
        connection: a coasting client of a live leader stays coasting.)"""
        if broker != self.leader_id:
            self.connections.disconnected(broker)
            return
        if self.coast is not None:
            self.coast.wake()
        self.connections.disconnected(broker)
        if self.in_flight and not self.stopped:
            self._timed_out(self._sent)

    def _arm_timeout(self, sent: int) -> None:
        self._timeout = self.cluster.sim.after(self.timeout_ms * 1000,
                                               lambda: self._timed_out(sent))

    def _disarm(self) -> None:
        self.in_flight = False
        if self._timeout:
            self._timeout.cancel()
            self._timeout = None

    def _timed_out(self, sent: int) -> None:
        # No answer (a dead or unreachable leader): drop the connection, back off, retry.
        if self._drop(sent):
            self.connections.disconnected(self.leader_id)
            self._disconnected()

    def _drop(self, sent: int) -> bool:
        """Whether request `sent` was the one in flight; if so it is given up, and the next
        request starts the session over."""
        if sent != self._sent or self.stopped or not self.in_flight:
            return False
        self.in_flight = False
        self._sent += 1
        self.client.on_disconnect()
        self.dirty.update(self.keys)
        return True

    def _disconnected(self) -> None:
        """The connection to the leader failed; by default back off and try again."""
        self._retry_later()

    def _retry_later(self) -> None:
        self.cluster.sim.call_after(self.backoff_ms * 1000, self.send)

    def on_response(self, request: FetchRequestMsg, response: FetchResponseMsg) -> None:
        if request.request_id != self._sent or self.stopped or not self.up():
            return
        self._disarm()
        self.client.on_response(request.session, response.error_code, response.session_id)
        self._apply(response)
        if self.cluster.coasting and self.cluster.begin_coast(self, request, response):
            return
        self.send()

    def _apply(self, response: FetchResponseMsg) -> None:
        raise NotImplementedError
