"""A slow producer skips the linger ticks that would draw no record: the records come at the
same ticks as when every tick runs, and the kernel does a fraction of the work."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from rig.scenario.load import load_scenario
from rig.simulate import simulate
from rig.workload.producer import Producer

SLOW = """
name: slow
seed: 5
duration: 60s
kafka: "2.4"
cluster: {brokers: 1}
topics: [{name: t, partitions: 1, replication_factor: 1}]
workload:
  producers: [{name: p, topic: t, rate: RATE, acks: 1, linger: 5ms}]
"""


def _requests(write_scenario: Callable[[str, str], Path], tmp_path: Path,
              rate: str) -> tuple[list[float], int]:
    variant = load_scenario(write_scenario(SLOW.replace("RATE", rate), "s.yaml")).variants[0]
    result = simulate(variant, tmp_path / "e.jsonl")
    times = [e["t_ms"] for e in map(orjson.loads, (tmp_path / "e.jsonl").read_bytes().splitlines())
             if e["event"] == "produce.request"]
    return times, result.steps


def test_records_come_at_the_ticks_the_rate_gives(write_scenario: Callable[[str, str], Path],
                                                  tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    times, steps = _requests(write_scenario, tmp_path, "0.3")
    # The first record at 0; then one each time 0.3/s × 5 ms per tick adds up to a record:
    # about every 667th tick, on the 5 ms grid.
    assert times[:4] == [0.0, 3330.0, 6665.0, 10_000.0]
    assert len(times) == 19  # 0 … 59.97 s
    # The same times with every tick run, at many times the kernel steps.
    monkeypatch.setattr(Producer, "_ticks_until_due", lambda self, tick_ms: 1)
    every_tick, all_steps = _requests(write_scenario, tmp_path, "0.3")
    assert every_tick == times
    assert all_steps > 12_000 > 10 * steps  # 12,000 ticks in a simulated minute


def test_a_fast_producer_ticks_every_linger(write_scenario: Callable[[str, str], Path],
                                            tmp_path: Path) -> None:
    times, _ = _requests(write_scenario, tmp_path, "400")
    gaps = {round(b - a, 3) for a, b in itertools.pairwise(times)}
    assert gaps == {5.0}  # two records per 5 ms tick, one request each tick
