"""More consumers than session slots, in the model: who gets a session, who is evicted, what
the cache gauge says, and that a crash empties the cache (the sessions die with the process)."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise
from pathlib import Path
from typing import Any

import orjson

from rig.scenario.load import load_scenario
from rig.simulate import simulate

SCENARIO = """
name: pressure
seed: 3
duration: 170s
kafka: "3.7"
cluster:
  brokers: 2
  config: {max.incremental.fetch.session.cache.slots: 8}
topics:
  - {name: idle, assignment: [[0, 1]]}
  - {name: wide, assignment: [[0, 1], [0, 1], [0, 1]]}
workload:
  consumers:
    - {group: app, topic: idle, groups: 10, fetch_max_wait: 5s, lag_sample: 0}
    - {group: batch, topic: wide, groups: 3, start_at: 125s, fetch_max_wait: 5s, lag_sample: 0}
faults:
  - {kind: crash, brokers: [0], at: 140s, restart_after: 20s}  # after its 18 s session expired
variants:
  v7: {}
"""


def _events(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    [variant] = load_scenario(path).variants
    out = tmp_path / "v7.jsonl"
    simulate(variant, out, scenario="pressure")
    return [orjson.loads(line) for line in out.read_bytes().splitlines()]


def test_slots_fill_then_wider_sessions_evict_and_a_crash_empties_the_cache(
        tmp_path: Path) -> None:
    events = _events(tmp_path)
    of = Counter(e["event"] for e in events)
    created = [e for e in events if e["event"] == "session.created"]
    # One privileged follower session and 7 of the 10 idle consumers fit in 8 slots.
    early = [e for e in created if e["t_ms"] < 120_000]
    assert len(early) == 8 and sum(e["privileged"] for e in early) == 1
    # At 125 s the idle sessions are older than 120 s: each 3-partition newcomer evicts one.
    evicted = [e for e in events if e["event"] == "session.evicted" and e["t_ms"] < 140_000]
    assert len(evicted) == 3 and {e["by_client"] for e in evicted} == {
        f"consumer-batch-{n}-0" for n in (1, 2, 3)}
    errors = [e for e in events if e["event"] == "session.error"]
    assert {e["error_code"] for e in errors} == {70} and len(errors) == 3
    # Consumers without a slot are answered full, without a session, every round.
    sessionless = [e for e in events if e["event"] == "fetch.response" and e["role"] == "consumer"
                   and e["session_id"] == 0 and e["error_code"] == 0 and e["t_ms"] < 120_000]
    assert {e["client"] for e in sessionless} == {"consumer-app-08-0", "consumer-app-09-0",
                                                  "consumer-app-10-0"}
    # The gauge: sampled on change, never above the slots, zero at the crash.
    gauge = [e for e in events if e["event"] == "session.cache" and e["broker"] == 0]
    assert max(e["sessions"] for e in gauge) == 8
    assert {e["slots"] for e in gauge} == {8}
    at_crash = [e for e in gauge if e["t_ms"] == 140_000]
    assert [e["sessions"] for e in at_crash] == [0]
    assert all(a["sessions"] != b["sessions"] or a["partitions"] != b["partitions"]
               for a, b in pairwise(gauge))
    assert of["broker.crash"] == 1
    # After the restart at 160 s the consumers open sessions again, on whichever broker leads.
    assert any(e["t_ms"] > 160_000 for e in created)
    last = {e["broker"]: e["sessions"] for e in events if e["event"] == "session.cache"}
    assert sum(last.values()) > 0
