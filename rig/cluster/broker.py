"""A broker: the partitions it leads, its fetch-session cache, and how it answers a Fetch.

A fetch that finds less than `min_bytes` waits in purgatory up to `max_wait_ms` (the long poll);
the response is built when the wait ends, so it reflects the partitions' state at that moment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rig.cluster.messages import FetchRequestMsg, FetchResponseMsg, topic_runs
from rig.cluster.partition import LeaderPartition, TopicPartition
from rig.events import names
from rig.protocol import ResponseShape, ResponseTopicShape
from rig.strategies.fetch_session import NONE, SessionCache, SessionContext

if TYPE_CHECKING:
    from rig.cluster.cluster import Cluster


class Broker:
    def __init__(self, cluster: Cluster, broker_id: int, rack: str | None, cache: SessionCache):
        self.cluster = cluster
        self.id = broker_id
        self.rack = rack
        self.cache = cache
        self.leading: dict[TopicPartition, LeaderPartition] = {}

    def on_fetch(self, request: FetchRequestMsg) -> None:
        cluster = self.cluster
        fetcher = request.fetcher
        context = self.cache.open(request.session, request.partitions, privileged=True,
                                  now_ms=cluster.sim.now_us / 1000)
        if context.created:
            cluster.log.emit(names.SESSION_CREATED, broker=self.id, client=fetcher.client_id,
                             session_id=context.session_id, partitions=len(context.partitions),
                             privileged=True)
        for evicted in context.evicted:
            cluster.log.emit(names.SESSION_EVICTED, broker=self.id, session_id=evicted,
                             by_client=fetcher.client_id)
        if context.error_code != NONE:
            cluster.log.emit(names.SESSION_ERROR, broker=self.id, client=fetcher.client_id,
                             session_id=request.session.session_id,
                             session_epoch=request.session.epoch, error_code=context.error_code)
            self._respond(request, context, cluster.sim.now_us)
            return
        follower = fetcher.broker_id
        for key, state in request.updates.items():
            partition = self.leading.get(key)
            if partition is not None:
                partition.follower_offsets[follower] = state.fetch_offset
        readable = 0  # no partition has records for this follower: the cluster is idle
        if readable >= request.min_bytes or request.max_wait_ms <= 0 or not context.partitions:
            self._respond(request, context, cluster.sim.now_us)
        else:
            arrived_us = cluster.sim.now_us
            cluster.sim.after(request.max_wait_ms * 1000,
                              lambda: self._respond(request, context, arrived_us))

    def _respond(self, request: FetchRequestMsg, context: SessionContext, arrived_us: int) -> None:
        cluster = self.cluster
        fetcher = request.fetcher
        if context.error_code != NONE:
            runs: tuple[tuple[str, int], ...] = ()
            listed = 0
        elif context.full:
            runs = request.topic_runs
            listed = len(request.partitions)
        else:
            changed = dict(context.changed or {})
            runs = topic_runs(changed)
            listed = len(changed)
            self.cache.sent(context, changed)
        shape = ResponseShape(request.version,
                              tuple(ResponseTopicShape(topic, idle=n) for topic, n in runs))
        body, header, wire = cluster.meter.response(shape)
        now_us = cluster.sim.now_us
        cluster.log.emit(
            names.FETCH_RESPONSE, role="follower", client=fetcher.client_id,
            replica_id=fetcher.broker_id, broker=self.id, source=fetcher.broker_id,
            fetcher=fetcher.fetcher_id, version=request.version, session_id=context.session_id,
            error_code=context.error_code, partitions=listed, records_bytes=0,
            waited_ms=(now_us - arrived_us) / 1000, body_bytes=body, header_bytes=header,
            wire_bytes=wire)
        response = FetchResponseMsg(context.error_code, context.session_id, listed, 0)
        arrival = cluster.network.arrival_us(self.id, fetcher.broker_id, wire, now_us)
        cluster.sim.at(arrival, lambda: fetcher.on_response(request, response))
