"""rig.testing: the built-ins pass the conformance kit, and planted contract violations fail it
(a check that cannot fail is worse than none)."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import pytest

from rig.scenario.model import BrokerSpec, TopicSpec
from rig.strategies.fetch_session import SessionContext, SessionRequest
from rig.strategies.fetch_session.incremental import (
    Incremental,
    IncrementalCache,
    IncrementalClient,
)
from rig.strategies.fetch_session.sessionless import Sessionless
from rig.strategies.placement import PlacementError
from rig.strategies.placement.kafka import KafkaPlacement, kafka_assignment
from rig.strategies.placement.kraft import KraftStripedPlacement
from rig.testing import ConformanceError, check_fetch_session, check_placement, check_strategy

# -- the built-ins pass ------------------------------------------------------------------------


@pytest.mark.parametrize("cls", [KafkaPlacement, KraftStripedPlacement])
def test_builtin_placements_pass(cls: type) -> None:
    report = check_strategy("placement", cls)
    assert len(report.cases) >= 10 and "fenced" in str(report)


@pytest.mark.parametrize("cls", [Incremental, Sessionless])
def test_builtin_fetch_sessions_pass(cls: type) -> None:
    report = check_strategy("fetch_session", cls)
    assert any("slot pressure" in case for case in report.cases)


def test_kinds_without_a_kit_are_refused_not_passed() -> None:
    class Whatever:
        name = "whatever"
        description = "d"

    with pytest.raises((NotImplementedError, ConformanceError)):
        check_strategy("compaction", Whatever)


# -- planted placement bugs --------------------------------------------------------------------


class _Placement:
    name: ClassVar[str] = "planted"
    description: ClassVar[str] = "a planted bug"

    def assign(self, brokers: Sequence[BrokerSpec], topic: TopicSpec,
               rng: random.Random) -> list[tuple[int, ...]]:
        live = [b for b in brokers if not b.fenced]
        if topic.replication_factor > len(live):
            raise PlacementError("too few")
        return kafka_assignment(live, topic.partitions, topic.replication_factor, rng)


class DuplicateBroker(_Placement):
    def assign(self, brokers: Sequence[BrokerSpec], topic: TopicSpec,
               rng: random.Random) -> list[tuple[int, ...]]:
        result = super().assign(brokers, topic, rng)
        if topic.partitions >= 8 and topic.replication_factor >= 2:
            result[7] = (result[7][0], *[result[7][0]] * (topic.replication_factor - 1))
        return result


class FencedLeader(_Placement):
    def assign(self, brokers: Sequence[BrokerSpec], topic: TopicSpec,
               rng: random.Random) -> list[tuple[int, ...]]:
        ordered = sorted(brokers, key=lambda b: not b.fenced)  # fenced brokers first
        return [tuple(b.id for b in ordered[:topic.replication_factor])] * topic.partitions


class GlobalRandom(_Placement):
    def assign(self, brokers: Sequence[BrokerSpec], topic: TopicSpec,
               rng: random.Random) -> list[tuple[int, ...]]:
        return super().assign(brokers, topic, random.Random(random.random()))


class RefusesRacks(_Placement):
    def assign(self, brokers: Sequence[BrokerSpec], topic: TopicSpec,
               rng: random.Random) -> list[tuple[int, ...]]:
        if any(b.rack for b in brokers):
            raise PlacementError("racks are not supported")
        return super().assign(brokers, topic, rng)


class ShortAssignment(_Placement):
    def assign(self, brokers: Sequence[BrokerSpec], topic: TopicSpec,
               rng: random.Random) -> list[tuple[int, ...]]:
        return super().assign(brokers, topic, rng)[:-1]


@pytest.mark.parametrize(("cls", "expected"), [
    (DuplicateBroker, "partition 7 lists a broker twice"),
    (FencedLeader, "has fenced broker 2 as its leader"),
    (GlobalRandom, "not deterministic"),
    (RefusesRacks, "refused a placement Kafka would make: racks are not supported"),
    (ShortAssignment, "replica lists for 8 partitions"),
])
def test_planted_placement_bugs_are_caught(cls: type, expected: str) -> None:
    assert check_placement(_Placement).cases  # the planted classes differ only in their bug
    with pytest.raises(ConformanceError) as caught:
        check_placement(cls)
    assert expected in str(caught.value)
    assert str(caught.value).startswith(f"{cls.__qualname__} does not honour the placement "
                                        "contract")


def test_a_wrong_signature_is_caught_before_anything_runs() -> None:
    class NoRng(_Placement):
        def assign(self, brokers, topic):  # type: ignore[override]
            raise AssertionError("never called")

    with pytest.raises(ConformanceError, match=r"\[load\] method assign takes \(brokers, topic\)"):
        check_placement(NoRng)


# -- planted fetch-session bugs ----------------------------------------------------------------


class OverfullSessions(Incremental):
    """Planted: the cache takes ten times its slots."""

    def new_cache(self, broker: int, slots: int, rng: random.Random) -> IncrementalCache:
        return IncrementalCache(slots * 10, rng)


class SkippingClient(IncrementalClient):
    """Planted: after the first incremental fetch, it skips an epoch."""

    def on_response(self, request: SessionRequest, error_code: int, session_id: int) -> None:
        super().on_response(request, error_code, session_id)
        if not request.full and not error_code and self.epoch > 1:
            self.epoch += 1


class SkippingSessions(Incremental):
    def new_client(self) -> IncrementalClient:
        return SkippingClient()


class DictClient(IncrementalClient):
    """Planted: returns a plain dict instead of a SessionRequest."""

    def next_request(self, partitions: Mapping[Any, None], dirty: Mapping[Any, None],
                     version: int) -> Any:
        return {"session_id": 0, "epoch": -1, "full": True}


class DictSessions(Incremental):
    def new_client(self) -> IncrementalClient:
        return DictClient()


class SilentCache(IncrementalCache):
    """Planted: evicts sessions without saying so."""

    def open(self, request: SessionRequest, request_partitions: Mapping[Any, None],
             privileged: bool, now_ms: float) -> SessionContext:
        context = super().open(request, request_partitions, privileged, now_ms)
        context.evicted = ()
        return context


class SilentSessions(Incremental):
    def new_cache(self, broker: int, slots: int, rng: random.Random) -> IncrementalCache:
        return SilentCache(slots, rng)


class GlobalRandomCache(IncrementalCache):
    """Planted: session ids from the global random module."""

    def __init__(self, slots: int, rng: random.Random):
        super().__init__(slots, random.Random(random.getrandbits(64)))


class GlobalRandomSessions(Incremental):
    def new_cache(self, broker: int, slots: int, rng: random.Random) -> IncrementalCache:
        return GlobalRandomCache(slots, rng)


@pytest.mark.parametrize(("cls", "expected"), [
    (OverfullSessions, "more than its slots"),
    (SkippingSessions, "expected (777, 2)"),
    (DictSessions, "next_request returned a dict, expected a SessionRequest"),
    (SilentSessions, "it did not report evicting"),
    (GlobalRandomSessions, "not deterministic"),
])
def test_planted_fetch_session_bugs_are_caught(cls: type, expected: str) -> None:
    with pytest.raises(ConformanceError) as caught:
        check_fetch_session(cls)
    assert expected in str(caught.value)


def test_the_simulated_runs_catch_what_the_direct_checks_cannot_see() -> None:
    """The skipping client breaks the session in the real model too: the broker answers
    INVALID_FETCH_SESSION_EPOCH and the epoch sequence of the run is reported."""
    with pytest.raises(ConformanceError) as caught:
        check_fetch_session(SkippingSessions)
    text = str(caught.value)
    assert "[idle:" in text and "fetch-session-protocol check failed" in text
    assert "[slot pressure:" in text
