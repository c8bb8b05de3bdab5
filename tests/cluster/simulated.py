"""A whole-cluster test's run: one variant simulated into `tmp_path`, every safety check passed,
its event log read back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from rig.scenario.model import VariantSpec
from rig.simulate import SimulationResult, simulate

# One partition of three replicas under acks=all load, reassigned to `target` at 5 s.
REASSIGN = """
name: reassign
duration: {duration}
kafka: "{kafka}"
cluster: {{brokers: {brokers}, config: {{min.insync.replicas: 2{config}}}}}
topics:
  - {{name: t, partitions: 1, replication_factor: 3, assignment: [{origin}]}}
workload:
  producers:
    - {{name: app, topic: t, rate: 300, keys: {{uniform: 100}}, acks: all, linger: 20ms}}
faults:
  - {{kind: reassign, topic: t, partition: 0, replicas: {target}, at: 5s}}
{more}
"""


def reassign_scenario(*, kafka: str, target: str, more: str = "", duration: str = "30s",
                      brokers: int = 4, origin: str = "[0, 1, 2]", config: str = "") -> str:
    return REASSIGN.format(kafka=kafka, target=target, more=more, duration=duration,
                           brokers=brokers, origin=origin, config=config)


def checked_run(variant: VariantSpec, tmp_path: Path, scenario: str,
                ) -> tuple[list[dict[str, Any]], SimulationResult]:
    """The variant's events, in order, and its result; fails the test on any failed check."""
    log = tmp_path / "events.jsonl"
    result = simulate(variant, log, scenario=scenario)
    failed = [(c.name, len(c.violations), c.violations[:1]) for c in result.checks
              if c.status.value != "ok"]
    assert not failed, failed
    return [orjson.loads(line) for line in log.read_bytes().splitlines()], result


def named(events: list[dict[str, Any]], *wanted: str) -> list[dict[str, Any]]:
    """The events of the kinds `wanted`, in order."""
    return [e for e in events if e["event"] in wanted]
