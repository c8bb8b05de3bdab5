"""Storage events stay few: a broker.storage per broker every 2 s while its logs change, a
log.sample only for compacted logs; an idle cluster writes none."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import orjson

from rig.scenario.load import load_scenario
from rig.simulate import simulate

Write = Callable[..., Path]

TEXT = """
name: samples
seed: 2
duration: {duration}
cluster: {{brokers: 3}}
topics:
  - {{name: plain, partitions: 60, replication_factor: 3}}
  - {{name: kv, partitions: 2, replication_factor: 3,
     config: {{cleanup.policy: compact, segment.bytes: 64KiB}}}}
workload:
  producers:
    - {{name: a, topic: plain, rate: {rate}, keys: {{uniform: 1000}}, acks: all}}
    - {{name: b, topic: kv, rate: {rate}, keys: {{uniform: 100}}, acks: all}}
"""


def _events(write: Write, tmp_path: Path, rate: int, duration: str = "10s") -> list[dict]:
    text = TEXT.format(rate=rate, duration=duration)
    if not rate:
        text = text[:text.index("workload:")]
    variant = load_scenario(write(text)).variants[0]
    simulate(variant, tmp_path / "e.jsonl")
    return [orjson.loads(line) for line in (tmp_path / "e.jsonl").read_bytes().splitlines()]


def test_samples_follow_brokers_and_compacted_logs_not_partitions(write_scenario: Write,
                                                                  tmp_path: Path) -> None:
    events = _events(write_scenario, tmp_path, 500)
    kinds = Counter(e["event"] for e in events)
    assert {e["topic"] for e in events if e["event"] == "log.sample"} == {"kv"}
    per_broker = Counter(e["broker"] for e in events if e["event"] == "broker.storage")
    assert set(per_broker) == {0, 1, 2} and max(per_broker.values()) <= 10 // 2 + 1
    assert kinds["log.sample"] <= 2 * 3 * (10 // 2 + 1)  # 2 partitions × 3 replicas × samples
    last = {e["broker"]: e for e in events if e["event"] == "broker.storage"}
    assert all(e["size_bytes"] > 0 and e["logs"] > 0 for e in last.values())


def test_an_idle_cluster_writes_no_storage_events(write_scenario: Write, tmp_path: Path) -> None:
    events = _events(write_scenario, tmp_path, 0, "30s")
    assert not [e for e in events if e["event"] in ("broker.storage", "log.sample",
                                                      "cleaner.pass")]
