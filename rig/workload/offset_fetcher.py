"""A consumer's position when its fetch offset is out of range or its leader changed (Kafka's
consumer: Fetcher / OffsetFetcher with SubscriptionState's AWAIT_RESET and AWAIT_VALIDATION).

- OFFSET_OUT_OF_RANGE, every version: the fetch offset is past the leader's log end (after an
  unclean election, say) or below its log start (retention deleted it: Log.read's range
  check). With auto.offset.reset (a consumer's `start`:
  latest | earliest) the consumer asks the leader with ListOffsets for the offset a
  read_uncommitted consumer may read up to, its high watermark (latest), or its log start
  offset (earliest), and fetches on from there (Fetcher.handleOffsetOutOfRange →
  requestOffsetReset → resetOffsetsIfNeeded; Partition.fetchOffsetForTimestamp).
- Position validation, 2.3+ (KIP-320's consumer half, KAFKA-7747; it needs OffsetsForLeaderEpoch
  v3, so both ends 2.3+: a Fetch v11+ consumer here). A position carries the leader epoch of the
  batch it was read from; when metadata names a leader epoch other than the one the position was
  last validated against, the consumer asks the leader for that epoch's end offset before it
  fetches again (SubscriptionState.maybeValidatePositionForCurrentLeader). An end offset below
  the position means the log it read diverged there, truncated by an unclean election: it goes
  back to the end offset ("Truncation detected", maybeCompleteValidation). Before 2.3 it
  fetches on from its position: if the new leader's log already reaches past it, the records
  between the divergence and the position are never read.

- The reset's ListOffsets is refused (a retriable error) by a leader at another leader epoch
  than the consumer's metadata names, 2.3+ (KIP-320, KAFKA-7747: v4+ carries it; 2.1–2.2
  consumers send none), and for the latest offset by a leader whose HW is still below the start
  of its epoch, 2.2+ (KIP-207: OFFSET_NOT_AVAILABLE; a new leader's HW waits for its ISR's
  followers to fetch, and the offset it would give could be below what the old leader had made
  readable).

Each step is a `consumer.offset_reset` event. The partition is fetched nowhere while its
request is out; a request that finds no leader (or a leader at another epoch: FENCED /
UNKNOWN_LEADER_EPOCH), is refused, or gets no answer within request.timeout.ms, sends the
consumer back to its metadata after retry.backoff.ms, which starts the step again: a
validation with whatever epoch it finds, a reset as it was (the partition still awaits it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from rig.cluster.epoch_cache import UNDEFINED
from rig.cluster.partition import TopicPartition
from rig.cluster.replica import Replica, Role
from rig.events import names
from rig.protocol import (
    LIST_OFFSETS,
    OFFSETS_FOR_LEADER_EPOCH,
    Api,
    list_offsets_request_body_size,
    list_offsets_response_body_size,
    offsets_for_leader_epoch_request_body_size,
    offsets_for_leader_epoch_response_body_size,
    request_wire_size,
    response_wire_size,
)
from rig.scenario.api_versions import consumer_epoch_version, consumer_list_offsets_version
from rig.scenario.profiles import POSITION_VALIDATION_FETCH_VERSION, profile
from rig.workload.member import MemberState

Answer = tuple[int, int | None] | None  # (offset, its leader epoch); None: not the leader


class Member(MemberState, Protocol):
    """The consumer member whose positions these are (rig.workload.consumer.ConsumerMember)."""

    leader_epochs: dict[TopicPartition, int]

    def relocate(self, key: TopicPartition) -> None: ...

    def place(self, key: TopicPartition) -> None: ...

    def fetch_from(self, leader: int, key: TopicPartition) -> None: ...


class OffsetFetcher:
    """The partitions of one consumer member whose position awaits a reset or a validation."""

    def __init__(self, member: Member):
        self.member = member
        # (Fetcher.hasUsableOffsetForLeaderEpochVersion: OffsetsForLeaderEpoch v3, 2.3+)
        self.validates = member.version >= POSITION_VALIDATION_FETCH_VERSION
        self.awaiting: dict[TopicPartition, int] = {}  # partition → its request's number
        self._requests = 0
        # On the wire (docs/kafka.md §1): the release's newest versions, one partition a request,
        # the member's client.id; what the traffic ledger files as control bytes.
        release = member.cluster.variant.kafka
        self._versions = {LIST_OFFSETS: consumer_list_offsets_version(release),
                          OFFSETS_FOR_LEADER_EPOCH: consumer_epoch_version(release)}
        # 2.3+ (KAFKA-7747): ListOffsets v4+ carries the leader epoch of the consumer's metadata.
        self._epoch_in_list_offsets = (profile(release).consumer_leader_epoch
                                       and self._versions[LIST_OFFSETS] >= 4)
        self.resetting: dict[TopicPartition, str] = {}  # awaiting a reset → why (its reason)

    def reset(self, key: TopicPartition, broker: int, reason: str = "out-of-range") -> None:
        """ListOffsets to `broker` for auto.offset.reset's offset; fetch on from there. A
        refusal leaves the partition awaiting its reset (`resetting`): the consumer asks for
        metadata and sends it again after retry.backoff.ms (Fetcher.resetOffsetsAsync)."""
        latest = self.member.spec.start == "latest"
        current = self.member.leader_epochs.get(key) if self._epoch_in_list_offsets else None
        self.resetting[key] = reason

        def answer(leader: Any, replica: Replica) -> Answer:
            if current is not None and current != replica.leader_epoch:
                return None  # FENCED_ / UNKNOWN_LEADER_EPOCH (localLogWithEpochOrException)
            if latest:
                if (leader.config.offset_not_available
                        and replica.epoch_start_offset() > replica.high_watermark):
                    return None  # OFFSET_NOT_AVAILABLE: its HW lags its epoch's start (KIP-207)
                return replica.high_watermark, replica.leader_epoch
            first = replica.log.epochs[0] if replica.log.epochs else None
            start = replica.log.log_start_offset
            return start, (first[0] if first is not None and first[1] <= start else None)

        def done(offset: int, epoch: int | None) -> None:
            if key in self.resetting:
                self._moved(key, broker, offset, epoch, reason)
            else:  # a seek took its place while it was under way: the answer is dropped, and
                self.member.place(key)  # the partition fetched from the seek's position

        self._ask(LIST_OFFSETS, key, broker, None, answer, done)

    def validates_position(self, key: TopicPartition) -> bool:
        """Whether a new leader epoch for `key` sends its position to validation: the broker
        answers OffsetsForLeaderEpoch v3+ and the position's epoch is known
        (SubscriptionState.validatePosition; else it fetches on unvalidated)."""
        return self.validates and self.member.position_epochs.get(key) is not None

    def validate(self, key: TopicPartition, broker: int, leader_epoch: int) -> bool:
        """Whether the position of `key` needs validating against `broker`, which metadata
        names its leader at `leader_epoch`; if so, OffsetsForLeaderEpoch is on its way."""
        if not self.validates_position(key):
            return False
        member = self.member
        asked = member.position_epochs[key]
        position = member.positions[key]

        def answer(leader: Any, _replica: Replica) -> Answer:
            # (the broker's OffsetsForLeaderEpoch answer, as a follower gets it)
            epoch, end = leader.on_epoch_request(key, asked)
            return end, epoch

        def done(end: int, epoch: int | None) -> None:
            if member.positions[key] != position:
                # Moved meanwhile (a group resuming from its committed offsets): the answer is
                # for another position (maybeCompleteValidation skips it); validate the new one.
                if not self.validate(key, broker, leader_epoch):
                    member.fetch_from(broker, key)
            elif end == UNDEFINED:  # no end for that epoch: auto.offset.reset (2.8+'s branch)
                self.reset(key, broker, "unknown-epoch")
            elif end < position:
                self._moved(key, broker, end, epoch, "truncation")
            else:
                member.fetch_from(broker, key)

        self._ask(OFFSETS_FOR_LEADER_EPOCH, key, broker, leader_epoch, answer, done)
        return True

    def _sizes(self, api: Api, topic: str, answered: bool) -> tuple[int, int]:
        """Wire bytes of the request about one partition of `topic`, and of its answer."""
        version = self._versions[api]
        asked = ((topic, 1),)
        if api is LIST_OFFSETS:
            request = list_offsets_request_body_size(version, asked)
            response = list_offsets_response_body_size(version, asked, answered)
        else:
            request = offsets_for_leader_epoch_request_body_size(version, asked)
            response = offsets_for_leader_epoch_response_body_size(version, asked)
        return (request_wire_size(api, version, self.member.client_id, request),
                response_wire_size(api, version, response))

    def _ask(self, api: Api, key: TopicPartition, broker: int, leader_epoch: int | None,
             answer: Callable[[Any, Replica], Answer],
             done: Callable[[int, int | None], None]
             ) -> None:
        """An `api` request about `key` to `broker` (its leader, at `leader_epoch` if given),
        answered by `answer` there; `done` with the answer here, unless a later request replaced
        it. Without an answer the consumer goes back to its metadata; a validation
        (`leader_epoch` given) then starts again whatever epoch it finds (the position still
        awaits validation)."""
        member = self.member
        cluster = member.cluster
        number = self._await(key)

        def at_leader() -> None:
            leader = cluster.brokers[broker]
            replica = leader.replicas.get(key)
            reply: Answer = None
            if (replica is not None and replica.role is Role.LEADER
                    and (leader_epoch is None or replica.leader_epoch == leader_epoch)):
                reply = answer(leader, replica)
            cluster.send(broker, member.node, self._sizes(api, key[0], reply is not None)[1],
                         lambda: back(reply))

        def back(reply: Answer) -> None:
            if self.awaiting.get(key) != number:
                return  # answered too late: a timeout or a later request took over
            del self.awaiting[key]
            if reply is None:
                failed()
            else:
                done(*reply)

        def expire() -> None:
            if self.awaiting.get(key) == number:
                del self.awaiting[key]
                failed()

        def failed() -> None:
            if leader_epoch is not None:
                member.leader_epochs.pop(key, None)
            # SubscriptionState.requestFailed, Metadata.requestUpdate: metadata is asked for
            # now, and the partition's next reset or validation waits retry.backoff.ms.
            waiting = self._await(key)
            member.relocate(key)
            cluster.sim.after(member.spec.retry_backoff_ms * 1000,
                              lambda: self._backed_off(key, waiting))

        cluster.send(member.node, broker, self._sizes(api, key[0], True)[0], at_leader)
        cluster.sim.after(member.spec.request_timeout_ms * 1000, expire)

    def _await(self, key: TopicPartition) -> int:
        """`key` awaits a new request (or its backoff): its number, which replaces any other."""
        self._requests += 1
        self.awaiting[key] = self._requests
        return self._requests

    def _backed_off(self, key: TopicPartition, waiting: int) -> None:
        """A failed request's backoff is over: the partition is placed again from what the
        metadata says now (unless a later request took over)."""
        if self.awaiting.get(key) == waiting:
            del self.awaiting[key]
            self.member.place(key)

    def _moved(self, key: TopicPartition, broker: int, offset: int, epoch: int | None,
               reason: str) -> None:
        member = self.member
        self.resetting.pop(key, None)
        member.cluster.log.emit(
            names.CONSUMER_OFFSET_RESET, group=member.spec.group, client=member.client_id,
            topic=key[0], partition=key[1], broker=broker, offset=member.positions[key],
            to=offset, reason=reason, policy=member.spec.start)
        member.positions[key] = offset
        member.position_epochs[key] = epoch
        member.fetch_from(broker, key)
