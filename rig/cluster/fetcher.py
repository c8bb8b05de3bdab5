"""A replica fetcher: one follower thread fetching a set of partitions from one leader.

It keeps one request in flight, as Kafka's ReplicaFetcherThread does: send, wait for the
response, send again. Partitions whose fetch data changed are "dirty" until the next request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rig.cluster.messages import FetchRequestMsg, FetchResponseMsg, topic_runs
from rig.cluster.partition import FetchState, TopicPartition
from rig.events import names
from rig.protocol import RequestShape
from rig.strategies.fetch_session import SessionClient

if TYPE_CHECKING:
    from rig.cluster.broker import Broker
    from rig.cluster.cluster import Cluster


class ReplicaFetcher:
    def __init__(self, cluster: Cluster, broker_id: int, leader: Broker, fetcher_id: int,
                 client: SessionClient):
        self.cluster = cluster
        self.broker_id = broker_id
        self.leader = leader
        self.fetcher_id = fetcher_id
        self.client = client
        self.client_id = f"broker-{broker_id}-fetcher-{fetcher_id}"
        self.version = cluster.config.fetch_version
        self.partitions: dict[TopicPartition, FetchState] = {}
        self.keys: dict[TopicPartition, None] = {}
        self.dirty: dict[TopicPartition, None] = {}
        self._runs: tuple[tuple[str, int], ...] | None = None

    def add_partition(self, key: TopicPartition, state: FetchState) -> None:
        self.partitions[key] = state
        self.keys[key] = None
        self.dirty[key] = None
        self._runs = None

    def start(self) -> None:
        self.send()

    def send(self) -> None:
        cluster = self.cluster
        config = cluster.config
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
        shape = RequestShape(self.version, runs, forgotten if self.version >= 7 else ())
        body, header, wire = cluster.meter.request(shape, self.client_id)
        now_us = cluster.sim.now_us
        cluster.log.emit(
            names.FETCH_REQUEST, role="follower", client=self.client_id,
            replica_id=self.broker_id, broker=self.leader.id, source=self.broker_id,
            fetcher=self.fetcher_id, version=self.version, session_id=session.session_id,
            session_epoch=session.epoch, full=session.full, partitions=listed,
            forgotten=len(session.forgotten), body_bytes=body, header_bytes=header,
            wire_bytes=wire)
        request = FetchRequestMsg(self, self.version, session, self.keys, self._runs, updates,
                                  config.replica_fetch_wait_max_ms,
                                  config.replica_fetch_min_bytes, now_us)
        arrival = cluster.network.arrival_us(self.broker_id, self.leader.id, wire, now_us)
        leader = self.leader
        cluster.sim.at(arrival, lambda: leader.on_fetch(request))

    def on_response(self, request: FetchRequestMsg, response: FetchResponseMsg) -> None:
        self.client.on_response(request.session, response.error_code, response.session_id)
        self.send()
