"""OffsetFetcher's requests on their own: what the leader answers, and what happens without an
answer (a leader that moved on, a request lost, an answer that comes after its timeout)."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from rig.cluster.log import Log
from rig.cluster.replica import Role
from rig.protocol import (
    LIST_OFFSETS,
    OFFSETS_FOR_LEADER_EPOCH,
    RequestHeader,
    ResponseHeader,
    encode_request_header,
    encode_response_header,
    frame,
)
from rig.protocol.offsets import (
    EpochEndOffsetResponse,
    ListOffsetsPartition,
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopic,
    ListOffsetsTopicResponse,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
    OffsetForLeaderTopicResult,
    encode_list_offsets_request,
    encode_list_offsets_response,
    encode_offset_for_leader_epoch_request,
    encode_offset_for_leader_epoch_response,
)
from rig.protocol.records import Batch
from rig.scenario.api_versions import consumer_epoch_version, consumer_list_offsets_version
from rig.scenario.model import ConsumerSpec
from rig.workload.offset_fetcher import OffsetFetcher

KEY = ("t", 0)


class _Cluster:
    """Messages delivered at once unless `lost`; timers kept until `fire`."""

    def __init__(self, leader: Any, kafka: str = "2.4"):
        self.brokers = {1: leader}
        self.variant = SimpleNamespace(kafka=kafka)  # the release: its clients' versions
        self.sizes: list[int] = []
        self.lost = False
        self.held: list[Callable[[], None]] | None = None  # messages kept, to deliver later
        self.timers: list[Callable[[], None]] = []
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.sim = SimpleNamespace(after=lambda _us, fn: self.timers.append(fn))
        self.log = SimpleNamespace(emit=lambda name, **fields: self.events.append((name, fields)))

    def send(self, _src: Any, _dst: Any, nbytes: int, deliver: Callable[[], None]) -> None:
        self.sizes.append(nbytes)
        if self.held is not None:
            self.held.append(deliver)
        elif not self.lost:
            deliver()

    def fire(self) -> None:
        timers, self.timers = self.timers, []
        for timer in timers:
            timer()


class _Member:
    def __init__(self, cluster: _Cluster, version: int = 11):
        self.cluster = cluster
        self.spec = ConsumerSpec(group="g", topic="t")
        self.node = self.client_id = "consumer-g-0"
        self.version = version
        self.positions = {KEY: 30}
        self.position_epochs: dict[Any, int | None] = {KEY: 0}
        self.leader_epochs = {KEY: 2}
        self.relocated: list[Any] = []  # metadata asked for: the partition fetched nowhere
        self.placed: list[Any] = []  # placed again from the metadata
        self.fetching: list[tuple[int, int]] = []

    def relocate(self, key: Any) -> None:
        self.relocated.append(key)

    def place(self, key: Any) -> None:
        self.placed.append(key)

    def fetch_from(self, leader: int, key: Any) -> None:
        self.fetching.append((leader, self.positions[key]))


def _leader(epoch: int = 2) -> Any:
    """Broker 1 leading KEY at `epoch`: epoch 0 wrote offsets 0..9, `epoch` 10..39 (HW 40)."""
    log = Log()
    for base, count, written in ((0, 10, 0), (10, 30, epoch)):
        log.assign_epoch(written)
        log.append(Batch(base_offset=base, count=count, epoch=written, size=100, producer=0,
                         sequence=base), now_ms=0.0)
    replica = SimpleNamespace(role=Role.LEADER, leader_epoch=epoch, log=log, high_watermark=40,
                              epoch_start_offset=lambda: 10)
    return SimpleNamespace(replicas={KEY: replica},  # (Broker.on_epoch_request, 2.0+)
                           on_epoch_request=lambda key, epoch: log.end_offset_for_epoch(epoch),
                           config=SimpleNamespace(offset_not_available=True))  # (2.2+)


def _fetcher(leader: Any | None = None, version: int = 11,
             kafka: str = "2.4") -> tuple[OffsetFetcher, _Member]:
    member = _Member(_Cluster(leader if leader is not None else _leader(), kafka), version)
    return OffsetFetcher(member), member


def _wire(api: Any, version: int, request: bytes, response: bytes) -> list[int]:
    header = encode_request_header(RequestHeader(version, 0, "consumer-g-0", api.key))
    return [len(frame(header, request)),
            len(frame(encode_response_header(ResponseHeader(0), version, api), response))]


@pytest.mark.parametrize(("kafka", "version"), [("2.3", 3), ("2.8", 4), ("4.1", 4)])
def test_a_validation_is_counted_at_its_wire_bytes(kafka: str, version: int) -> None:
    offsets, member = _fetcher(kafka=kafka)
    assert offsets.validate(KEY, 1, 2)
    request = OffsetForLeaderEpochRequest(-1, (OffsetForLeaderTopic("t", (
        OffsetForLeaderPartition(0, 2, 0),)),))
    response = OffsetForLeaderEpochResponse(0, (OffsetForLeaderTopicResult("t", (
        EpochEndOffsetResponse(0, 0, 0, 10),)),))
    assert member.cluster.sizes == _wire(
        OFFSETS_FOR_LEADER_EPOCH, version, encode_offset_for_leader_epoch_request(request, version),
        encode_offset_for_leader_epoch_response(response, version))


@pytest.mark.parametrize(("kafka", "version"), [("0.10", 0), ("0.11", 2), ("2.4", 5),
                                                ("3.9", 9), ("4.0", 10)])
def test_a_reset_is_counted_at_its_wire_bytes(kafka: str, version: int) -> None:
    offsets, member = _fetcher(kafka=kafka)
    offsets.reset(KEY, 1)
    request = ListOffsetsRequest(-1, 0, (ListOffsetsTopic("t", (
        ListOffsetsPartition(0, 2, -1),)),))
    response = ListOffsetsResponse(0, (ListOffsetsTopicResponse("t", (
        ListOffsetsPartitionResponse(0, 0, (40,), -1, 40, 2),)),))
    assert member.cluster.sizes == _wire(
        LIST_OFFSETS, version, encode_list_offsets_request(request, version),
        encode_list_offsets_response(response, version))


def test_a_position_past_the_epochs_end_goes_back_to_it() -> None:
    offsets, member = _fetcher()
    assert offsets.validate(KEY, 1, 2)
    assert member.fetching == [(1, 10)]  # epoch 0 ends at 10, below the position 30
    ((name, event),) = member.cluster.events
    assert name == "consumer.offset_reset"
    assert (event["offset"], event["to"], event["reason"]) == (30, 10, "truncation")
    assert member.position_epochs[KEY] == 0 and offsets.awaiting == {}


def test_a_position_within_the_epoch_fetches_on() -> None:
    offsets, member = _fetcher()
    member.positions[KEY] = 8
    assert offsets.validate(KEY, 1, 2)
    assert member.fetching == [(1, 8)] and member.cluster.events == []


def test_no_validation_before_fetch_v11_or_without_a_position_epoch() -> None:
    offsets, member = _fetcher(version=10)
    assert not offsets.validate(KEY, 1, 2)
    offsets, member = _fetcher()
    member.position_epochs[KEY] = None  # nothing read since the last reset without an epoch
    assert not offsets.validate(KEY, 1, 2)
    assert member.fetching == [] and offsets.awaiting == {}


def test_a_leader_at_another_epoch_sends_the_consumer_back_to_its_metadata() -> None:
    offsets, member = _fetcher(_leader(epoch=3))  # metadata said 2: FENCED_LEADER_EPOCH
    assert offsets.validate(KEY, 1, 2)
    assert member.relocated == [KEY] and member.fetching == []
    assert KEY not in member.leader_epochs  # whatever epoch it finds next, it validates again
    # The metadata is asked for at once; the partition is placed again after retry.backoff.ms
    # (SubscriptionState.requestFailed), not when the metadata answers.
    assert KEY in offsets.awaiting and member.placed == []
    member.cluster.fire()
    assert member.placed == [KEY] and offsets.awaiting == {}


def test_a_lost_request_times_out_and_the_late_answer_is_ignored() -> None:
    offsets, member = _fetcher()
    member.cluster.lost = True
    assert offsets.validate(KEY, 1, 2)
    assert KEY in offsets.awaiting
    member.cluster.fire()  # request.timeout.ms
    assert member.relocated == [KEY] and KEY in offsets.awaiting  # backing off
    member.cluster.lost = False
    offsets.reset(KEY, 1)  # a later request; the first one's timers are spent
    assert member.fetching == [(1, 40)]  # latest: the HW
    member.cluster.fire()
    assert member.relocated == [KEY] and member.placed == []  # its timers find it answered


def test_earliest_resets_to_the_log_start_with_its_epoch() -> None:
    offsets, member = _fetcher()
    member.spec = ConsumerSpec(group="g", topic="t", start="earliest")
    offsets.reset(KEY, 1)
    assert member.fetching == [(1, 0)] and member.position_epochs[KEY] == 0
    ((_, event),) = member.cluster.events
    assert (event["reason"], event["policy"], event["to"]) == ("out-of-range", "earliest", 0)


def test_an_answer_for_a_position_that_moved_meanwhile_is_not_applied() -> None:
    offsets, member = _fetcher()
    sent: list[Callable[[], None]] = []  # messages held until the test delivers them
    member.cluster.send = lambda _s, _d, _n, deliver: sent.append(deliver)  # type: ignore
    assert offsets.validate(KEY, 1, 2)
    member.positions[KEY] = 8  # a resume from the committed offset, meanwhile
    sent.pop()()  # the request reaches the leader, which answers for 30: epoch 0 ends at 10
    sent.pop()()  # the answer: for a position no longer held, so validated again
    assert member.fetching == [] and KEY in offsets.awaiting
    sent.pop()()
    sent.pop()()
    assert member.fetching == [(1, 8)] and member.cluster.events == []  # 8 < 10: in the log


def test_a_seek_while_a_reset_is_under_way_drops_its_answer_and_places_the_partition() -> None:
    offsets, member = _fetcher()
    sent: list[Callable[[], None]] = []  # messages held until the test delivers them
    member.cluster.send = lambda _s, _d, _n, deliver: sent.append(deliver)  # type: ignore
    offsets.reset(KEY, 1)
    offsets.resetting.pop(KEY)  # a group resuming from its committed offset, meanwhile
    member.positions[KEY] = 8
    sent.pop()()  # the ListOffsets reaches the leader
    sent.pop()()  # its answer: for a reset no longer wanted
    assert member.fetching == [] and offsets.awaiting == {} and member.positions[KEY] == 8
    assert member.placed == [KEY]  # (the seek found the reset under way and placed nothing)


def test_a_consumer_sends_its_releases_newest_versions() -> None:
    # (ListOffsets, OffsetsForLeaderEpoch): ApiKeys / the JSON's validVersions at each tag;
    # 0.11–1.1 consumers send ListOffsets v2 where their brokers' followers still send v1.
    assert {v: (consumer_list_offsets_version(v), consumer_epoch_version(v))
            for v in ("0.10", "0.11", "1.1", "2.0", "2.1", "2.3", "2.8", "3.0", "3.5", "3.9",
                      "4.0", "4.2")} == {
        "0.10": (0, 0), "0.11": (2, 0), "1.1": (2, 0), "2.0": (3, 1), "2.1": (4, 2),
        "2.3": (5, 3), "2.8": (6, 4), "3.0": (7, 4), "3.5": (8, 4), "3.9": (9, 4),
        "4.0": (10, 4), "4.2": (11, 4)}


@pytest.mark.parametrize(("kafka", "refused"), [("2.1", False), ("2.3", True), ("3.9", True)])
def test_from_2_3_a_reset_at_another_leader_epoch_is_refused_and_stays_awaiting(
        kafka: str, refused: bool) -> None:
    # The consumer's metadata says epoch 2; the leader is at 3 (KIP-320: a 2.3+ consumer's
    # ListOffsets v4+ carries the epoch; a 2.1–2.2 one sends none and is answered).
    offsets, member = _fetcher(_leader(epoch=3), kafka=kafka)
    offsets.reset(KEY, 1)
    if refused:
        assert member.relocated == [KEY] and member.fetching == []
        assert offsets.resetting == {KEY: "out-of-range"} and member.positions[KEY] == 30
        member.leader_epochs[KEY] = 3  # the metadata it asked for: tried again, answered
        offsets.reset(KEY, 1, offsets.resetting[KEY])
    assert member.fetching == [(1, 40)] and offsets.resetting == {}


@pytest.mark.parametrize(("kafka", "start", "refused"), [
    ("2.1", "latest", False), ("2.3", "latest", True), ("4.1", "latest", True),
    ("2.3", "earliest", False)])
def test_from_2_2_latest_waits_for_the_new_leaders_hw_to_reach_its_epochs_start(
        kafka: str, start: str, refused: bool) -> None:
    leader = _leader()
    leader.replicas[KEY].high_watermark = 7  # below 10, where epoch 2 began (KIP-207)
    leader.config.offset_not_available = kafka != "2.1"  # (the brokers' rule, by release)
    offsets, member = _fetcher(leader, kafka=kafka)
    member.spec = ConsumerSpec(group="g", topic="t", start=start)
    offsets.reset(KEY, 1)
    if refused:  # OFFSET_NOT_AVAILABLE: metadata, and again after retry.backoff.ms
        assert member.relocated == [KEY] and member.fetching == [] and KEY in offsets.resetting
    else:
        assert member.fetching == [(1, 7 if start == "latest" else 0)]


def test_a_seek_meanwhile_drops_the_resets_answer() -> None:
    offsets, member = _fetcher()
    member.cluster.held = []
    offsets.reset(KEY, 1)
    offsets.resetting.pop(KEY)  # the group resumed from its committed offset (Committer)
    (request,) = member.cluster.held
    member.cluster.held = None
    request()  # the leader answers 40: too late, the position is the committed one
    assert member.fetching == [] and member.cluster.events == []
