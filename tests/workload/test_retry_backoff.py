"""KIP-580 (3.7): a producer's retry backoff grows per attempt to retry.backoff.max.ms, with ±20 %
jitter drawn at each look (Kafka's ExponentialBackoff); before 3.7 it is retry.backoff.ms."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from rig.backoff import ExponentialBackoff
from rig.events import names
from rig.protocol.errors import NOT_ENOUGH_REPLICAS
from rig.scenario.load import load_scenario
from tests.cluster.simulated import checked_run, named


def test_without_jitter_the_backoff_doubles_up_to_its_maximum() -> None:
    # ExponentialBackoffTest's case: 100 ms, base 2, at most 1 s
    backoff = ExponentialBackoff(100, 1000, random.Random(0), jitter=0.0)
    assert [backoff.backoff_ms(n) for n in range(7)] == [100, 200, 400, 800, 1000, 1000, 1000]


def test_a_maximum_at_the_initial_backoff_is_the_constant_before_3_7() -> None:
    rng = random.Random(0)
    backoff = ExponentialBackoff(100, 100, rng)
    assert {backoff.backoff_ms(n) for n in range(10)} == {100}
    assert rng.random() == random.Random(0).random()  # and it draws nothing
    # one look at the backoff's end finds the batch ready; before it, that end is the next look
    assert backoff.next_look_us(3, 5_000, 5_000) == 105_000
    assert backoff.next_look_us(3, 5_000, 104_999) == 105_000
    assert backoff.next_look_us(3, 5_000, 105_000) is None


def test_jitter_draws_within_a_fifth_either_side() -> None:
    backoff = ExponentialBackoff(100, 1000, random.Random(7))
    first = [backoff.backoff_ms(0) for _ in range(2000)]
    assert min(first) >= 80 and max(first) < 120 and len(set(first)) > 30
    third = [backoff.backoff_ms(2) for _ in range(2000)]
    assert min(third) >= 320 and max(third) < 480
    assert max(backoff.backoff_ms(9) for _ in range(2000)) == 1000  # capped
    looks = [backoff.next_look_us(1, 0, 0) for _ in range(200)]
    assert all(look is not None and 80_000 <= look < 120_000 for look in looks)


# Broker 1, the only follower, crashes at 1 s and is back at 6 s: with min.insync.replicas 2,
# from its session's end (about 2.7 s) to its return
# the leader refuses the acks=all produces that start at 3 s NOT_ENOUGH_REPLICAS.
SCENARIO = """
name: refused-until-the-isr-returns
seed: 5
duration: 12s
kafka: "3.6"
cluster: {brokers: 2, config: {min.insync.replicas: 2, zookeeper.session.timeout.ms: 2s}}
topics:
  - {name: t, assignment: [[0, 1]]}
workload:
  producers:
    - {name: app, topic: t, rate: 50, acks: all, start: 3s}
faults:
  - {kind: crash, at: 1s, broker: 1, restart_after: 5s}
variants:
  k3.6: {kafka: "3.6"}
  k3.7: {kafka: "3.7"}
"""


@pytest.mark.parametrize("variant", ["k3.6", "k3.7"])
def test_a_refused_batch_retries_sooner_before_3_7_and_less_often_after(
        variant: str, write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    scenario = load_scenario(write_scenario(SCENARIO, "s.yaml"))
    [spec] = [v for v in scenario.variants if v.name == variant]
    events, _ = checked_run(spec, tmp_path, "refused-until-the-isr-returns")
    refusals = [e for e in named(events, names.PRODUCE_ERROR)
                if e["error_code"] == NOT_ENOUGH_REPLICAS]
    first = [e["t_ms"] for e in refusals if e["id"] == refusals[0]["id"]]
    gaps = [b - a for a, b in itertools.pairwise(first)]
    assert len(gaps) >= 3
    if variant == "k3.6":  # each retry retry.backoff.ms after the refusal, plus a round trip
        assert all(100 <= gap < 110 for gap in gaps)
    else:  # 100, 200, 400, 800, then 1000 ms, each ±20 %, plus a round trip
        for attempt, gap in enumerate(gaps[:5]):
            term = min(100 * 2 ** attempt, 1000)
            assert 0.8 * term <= gap < 1.2 * term + 10, (attempt, gaps)


def test_a_refusal_for_too_few_replicas_asks_for_no_metadata(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    # Sender.completeBatch asks for metadata after an InvalidMetadataException only: the
    # leader is where the producer thinks, so nothing but produce traffic is the producer's.
    scenario = load_scenario(write_scenario(SCENARIO, "s.yaml"))
    [spec] = [v for v in scenario.variants if v.name == "k3.6"]
    events, _ = checked_run(spec, tmp_path, "refused-until-the-isr-returns")
    assert any(e["error_code"] == NOT_ENOUGH_REPLICAS for e in named(events, names.PRODUCE_ERROR))
    mine = [e for e in named(events, names.NET_TRAFFIC) if "producer-app" in (e["src"], e["dst"])]
    assert mine and {e["kind"] for e in mine} == {"produce"}
