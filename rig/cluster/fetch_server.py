"""Fetch at a leader: open the session, read, answer at once or park the fetch in purgatory
(Kafka's handleFetchRequest, ReplicaManager.fetchMessages and DelayedFetch; docs/kafka.md §1–§3,
§8).

The leader reads first and then records the follower's fetch offset, so a response carries the
HW from before that fetch (a follower learns of a commit one round later). A fetch finding less
than min_bytes is parked under its client's slot up to its max wait: an append that alone
brings a follower's min bytes completes it; a HW advance completes a consumer's once min bytes
are readable below the HW (never a follower's).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from rig.cluster import diverging_epoch
from rig.cluster.context import NodeContext, Process, Wakeable
from rig.cluster.current_leader import NO_LEADERS, fetch_current_leaders
from rig.cluster.delayed_fetch import DelayedFetch, fetch_segments
from rig.cluster.endpoints import node_endpoints
from rig.cluster.fetch_epochs import Verdicts
from rig.cluster.fetch_progress import fetch_offset, mark_past_end, update_fetch_state
from rig.cluster.log import Batch
from rig.cluster.messages import (
    FetchRequestMsg,
    FetchResponseMsg,
    listed_incremental,
    response_sizes,
)
from rig.cluster.metadata_cache import MetadataCache
from rig.cluster.partition import TopicPartition
from rig.cluster.purgatory import Purgatory
from rig.cluster.read_replica import RACK_AWARE, answers, preferred_read_replicas
from rig.cluster.replica_manager import ReplicaManager, Slot
from rig.cluster.session_gauges import SessionCacheGauges
from rig.errors import InternalError
from rig.events import names
from rig.protocol.errors import NOT_LEADER_OR_FOLLOWER, OFFSET_OUT_OF_RANGE
from rig.strategies.fetch_session import FINAL_EPOCH, NONE, SessionContext


class FetchServer:
    """A broker's Fetch requests: its session cache, reads, and the fetch purgatory."""

    def __init__(self, broker: Process, ctx: NodeContext, replica_manager: ReplicaManager,
                 purgatory: Purgatory[Slot, Any], cache: Any, metadata_cache: MetadataCache):
        self.broker = broker
        self.metadata_cache = metadata_cache
        self.ctx = ctx
        self.config = broker.config
        self.replica_manager = replica_manager
        self.purgatory = purgatory
        self.cache = cache
        self.gauges = SessionCacheGauges(broker.id, ctx, cache,
                                         self.config.max_incremental_fetch_session_cache_slots)
        # fetch.response's emitter per client slot, with the client it was made for.
        self._emitters: dict[Slot, tuple[Any, Callable[..., None]]] = {}
        self.coasts: dict[Wakeable, None] = {}  # clients coasting here, oldest first
        self.session_asked_us: int | None = None  # when a full fetch last asked for a session

    def reset(self) -> None:
        """The process died: parked fetches and sessions die with it."""
        for delayed in self.purgatory.clear():
            delayed.cancel_timer()
        self.cache.clear()

    def parked(self, slot: Slot) -> bool:  # something waits in purgatory on `slot`
        return slot in self.purgatory

    # -- a request arrives ---------------------------------------------------------------------
    def on_fetch(self, request: FetchRequestMsg) -> None:
        broker = self.broker
        emit = self.ctx.emit
        now_us = self.ctx.sim.now_us
        fetcher = request.fetcher
        request.arrived_us = now_us
        if request.session.full and request.session.epoch != FINAL_EPOCH:
            # A session may be created, evicting by last use: the coasts here (idle rounds in
            # closed form, sessions not used as they would have been) wake first.
            self.session_asked_us = now_us
            for coast in list(self.coasts):
                coast.wake()
        context = self.cache.open(request.session, request.partitions,
                                  privileged=fetcher.privileged, now_ms=broker.now_ms)
        if context.created:
            emit(names.SESSION_CREATED, broker=broker.id, client=fetcher.client_id,
                 session_id=context.session_id, partitions=len(context.partitions),
                 privileged=fetcher.privileged)
        for evicted in context.evicted:
            emit(names.SESSION_EVICTED, broker=broker.id, session_id=evicted,
                 by_client=fetcher.client_id)
        if context.error_code != NONE:
            emit(names.SESSION_ERROR, broker=broker.id, client=fetcher.client_id,
                 session_id=request.session.session_id, session_epoch=request.session.epoch,
                 error_code=context.error_code)
            self._respond(request, context, now_us)
            return
        slot = fetcher.slot_key
        fenced = request.fenced = self.replica_manager.fetch_epochs.arrived(slot, request)
        request.diverging = diverging_epoch.check(self.replica_manager, request)
        if fenced and request.diverging:  # the epoch is checked first (Partition.fetchRecords)
            request.diverging = {k: v for k, v in request.diverging.items() if k not in fenced}
        # A consumer's fetch offsets are its session's before anything is read (the session
        # cache takes them in newContext); a follower's progress is recorded after the read
        # (Partition.updateFollowerFetchState), so its response carries the HW from before.
        consumer = fetcher.role == "consumer"
        if consumer:
            update_fetch_state(self.replica_manager, slot, request)
        else:
            mark_past_end(self.replica_manager, slot, request)
        readable = self.readable(slot, request, request.min_bytes)
        if not consumer:
            update_fetch_state(self.replica_manager, slot, request)
        # ReplicaManager.fetchMessages answers at once when a partition has an error, a
        # preferred read replica or a diverging epoch (errorReadingData, hasPreferredReadReplica,
        # hasDivergingEpoch): NOT_LEADER_OR_FOLLOWER for one it does not lead (see _respond),
        # an epoch error for one whose epoch it fences (rig.cluster.fetch_epochs).
        if (readable >= request.min_bytes or request.max_wait_ms <= 0 or not context.partitions
                or request.diverging or fenced or self._preferred(slot, request)
                or self._not_led(slot, request)):
            self._respond(request, context, self.ctx.sim.now_us)
            return
        self._park(slot, request, context, self.ctx.sim.now_us)

    def _park(self, slot: Slot, request: FetchRequestMsg, context: SessionContext,
              arrived_us: int) -> None:
        """Hold the fetch in purgatory until data comes or its max wait ends."""
        delayed = DelayedFetch(self, slot, request, context, arrived_us, self.broker.incarnation)
        if request.min_bytes > 1:  # (at 1, any byte completes it before Case F could)
            delayed.segments = fetch_segments(self.replica_manager, slot, request)
        delayed.timer = self.ctx.sim.at(arrived_us + request.max_wait_ms * 1000,
                                        delayed.max_wait_over, scheduled_us=arrived_us)
        # One parked fetch per client: an older one (its request timed out) is dropped.
        self.purgatory.take(slot)
        self.purgatory.watch((slot,), delayed)

    def park_again(self, request: FetchRequestMsg, arrived_us: int) -> None:
        """A coasting fetcher's idle request that arrived at `arrived_us` is in purgatory now:
        its session opens it as it did then (nothing else about an idle fetch changes state)."""
        request.arrived_us = arrived_us
        context = self.cache.open(request.session, request.partitions,
                                  privileged=request.fetcher.privileged, now_ms=arrived_us / 1000)
        if context.error_code != NONE:
            raise InternalError(f"the idle fetch of {request.fetcher.client_id} held since "
                                f"{arrived_us} µs met error {context.error_code}: its session "
                                "changed while it coasted")
        self._park(request.fetcher.slot_key, request, context, arrived_us)

    def _not_led(self, slot: Slot, request: FetchRequestMsg) -> bool:
        """Whether the request carries a partition this broker does not answer for, added or
        changed, or one it stopped leading (the NOT_LEADER_OR_FOLLOWER of _respond)."""
        replicas = self.replica_manager.replicas
        return (any(not answers(request, replicas.get(key)) for key in request.updates)
                or bool(self.replica_manager.unled_carried(slot, request)))

    def _preferred(self, slot: Slot, request: FetchRequestMsg) -> dict[TopicPartition, int]:
        """The partitions of a consumer's fetch a rack-aware leader sends elsewhere (KIP-392)."""
        if request.fetcher.role != "consumer" or self.config.replica_selector_class != RACK_AWARE:
            return {}  # every follower fetch, and every fetch without a selector: nothing to do
        rm = self.replica_manager
        return preferred_read_replicas(
            self.config.replica_selector_class, request, rm.replicas, rm.pending.get(slot, {}),
            lambda replica: fetch_offset(rm, request, replica, slot[0]), self.broker.now_ms,
            self.ctx.racks.get)

    def readable(self, slot: Slot, request: FetchRequestMsg, enough: int) -> int:
        """Bytes the fetch would read now, counted up to `enough`.

        What a fetch may read (here and in _respond): followers to the log end, consumers only
        below the (this replica's) HW. An offset past the log end, or below the log start
        (retention deleted it), is OFFSET_OUT_OF_RANGE (Log.read's range check)."""
        replica_manager = self.replica_manager
        replicas = replica_manager.replicas
        consumer = request.fetcher.role == "consumer"
        total = 0
        for key in replica_manager.pending.get(slot, ()):
            replica = replicas[key]
            if key not in request.partitions or not answers(request, replica):
                continue
            offset = fetch_offset(replica_manager, request, replica, slot[0])
            if offset > replica.leo or offset < replica.log.log_start_offset:
                return enough  # an error to report: answer at once
            total += replica.log.bytes_after(offset, enough,
                                             replica.high_watermark if consumer else replica.leo)
            if total >= enough:
                break
        return total

    def complete(self, delayed: DelayedFetch) -> bool:
        """Answer a parked fetch now (unless a stall holds the purgatory's threads, or it was
        answered or replaced already); True if it was answered."""
        if self.broker.stalled:
            # The purgatory reaper is paused with everything else: it fires when the stall ends.
            self.ctx.after_stall(self.broker.id, delayed.expire)
            return False
        if not self.purgatory.is_watched(delayed):
            return False
        self.purgatory.forget(delayed)
        delayed.cancel_timer()
        self._respond(delayed.request, delayed.context, delayed.arrived_us)
        return True

    # -- the response --------------------------------------------------------------------------
    def _respond(self, request: FetchRequestMsg, context: SessionContext, arrived_us: int) -> None:
        broker = self.broker
        replica_manager = self.replica_manager
        replicas = replica_manager.replicas
        fetcher = request.fetcher
        slot = fetcher.slot_key
        records: dict[TopicPartition, tuple[list[Batch], int]] = {}
        hws: dict[TopicPartition, int] = {}
        errors: dict[TopicPartition, int] = {}
        preferred: dict[TopicPartition, int] = {}
        diverging: dict[TopicPartition, tuple[int, int]] = {}
        fenced: Verdicts = {}
        if context.error_code == NONE:
            fenced = replica_manager.fetch_epochs.fenced(slot, request)
            for key, (error, _epoch) in fenced.items():
                errors[key] = error  # not read (localLogWithEpochOrException)
            diverging = diverging_epoch.answer(request, replica_manager, hws, errors)
            # A partition with a preferred read replica is not read (readFromLog): no records.
            preferred = self._preferred(slot, request)
            for key in preferred:
                hws[key] = replicas[key].high_watermark
            budget = request.max_bytes or self.config.replica_fetch_response_max_bytes
            partition_max = request.partition_max_bytes or self.config.replica_fetch_max_bytes
            touched = replica_manager.touched
            consumer = fetcher.role == "consumer"  # its end: see readable
            for key in replica_manager.pending.get(slot, ()):
                if (key not in request.partitions or key in preferred or key in hws
                        or key in errors):
                    continue  # (the last-fetched-epoch check answered it without a read)
                replica = replicas[key]
                if not answers(request, replica):
                    continue
                offset = fetch_offset(replica_manager, request, replica, slot[0])
                if offset > replica.leo or offset < replica.log.log_start_offset:
                    errors[key] = OFFSET_OUT_OF_RANGE
                    continue
                end = replica.high_watermark if consumer else replica.leo
                batches, size = replica.log.read(offset, min(partition_max, max(budget, 1)), end)
                if batches:
                    touched[key] = replica
                if batches and (size <= budget or not records):
                    records[key] = (batches, size)
                    budget -= size
                hws[key] = replica.high_watermark
            for key in replica_manager.hw_unseen.pop(slot, {}):
                led = replicas.get(key)
                if (key in request.partitions and key not in errors
                        and answers(request, led)):  # (an error carries no HW: −1 in Kafka)
                    hws[key] = led.high_watermark  # type: ignore[union-attr]
            # A partition the client adds (or changes) that this broker does not lead, or one
            # it stopped leading that the client's fetches still carry (`stopped_leading`).
            for key in request.updates:
                if key not in fenced and not answers(request, replicas.get(key)):
                    errors[key] = NOT_LEADER_OR_FOLLOWER
            for key in replica_manager.unled_carried(slot, request):
                errors.setdefault(key, NOT_LEADER_OR_FOLLOWER)  # (a fenced one keeps its)
        listed_changed = listed_incremental(self.cache, context, records, errors, preferred,
                                            diverging)
        current = (fetch_current_leaders(request.version, errors, replicas, self.metadata_cache)
                   if errors else NO_LEADERS)
        body, header, wire = response_sizes(
            self.ctx.meter, request, context, records, listed_changed, diverging, current.leaders,
            node_endpoints(current.nodes, self.ctx.racks) if current.nodes else ())
        listed = (len(request.partitions) if context.full and context.error_code == NONE
                  else len(listed_changed))
        records_bytes = sum(size for _, size in records.values()) if records else 0
        now_us = self.ctx.sim.now_us
        emit = self.response_emitter(fetcher)
        # The partitions answered with an error, when there are any (a follower backs off
        # replica.fetch.backoff.ms on most: the log shows why its next fetch waits).
        refused = ([[key[0], key[1], code] for key, code in sorted(errors.items())],
                   ) if errors else ()
        emit(request.version, context.session_id, context.error_code, listed, records_bytes,
             (now_us - arrived_us) / 1000, body, header, wire, *refused)
        starts = ({key: start for key in hws if (start := replicas[key].log.log_start_offset)}
                  if request.version >= 5 and fetcher.role != "consumer" else {})  # (v5+: KIP-107)
        response = FetchResponseMsg(context.error_code, context.session_id, listed,
                                    records_bytes, records, hws, errors, body, header, wire,
                                    now_us, preferred, diverging,
                                    {key: epoch for key, (_error, epoch) in fenced.items()},
                                    starts, current)
        self.ctx.send(broker.id, fetcher.node, wire,
                      partial(fetcher.on_response, request, response), kind="fetch")

    def response_emitter(self, fetcher: Any) -> Callable[..., None]:
        """fetch.response's emitter for `fetcher` (kept per client slot), its ids rendered once."""
        emitter = self._emitters.get(slot := fetcher.slot_key)
        if emitter is None or emitter[0] is not fetcher:
            emitter = self._emitters[slot] = (fetcher, self.ctx.emitter(
                names.FETCH_RESPONSE, "version", "session_id", "error_code", "partitions",
                "records_bytes", "waited_ms", "body_bytes", "header_bytes", "wire_bytes",
                "errors", role=fetcher.role, client=fetcher.client_id,
                replica_id=fetcher.replica_id, broker=self.broker.id, source=fetcher.source,
                fetcher=fetcher.fetcher_id))
        return emitter[1]
